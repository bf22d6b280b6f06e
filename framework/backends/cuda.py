"""framework.backends.cuda: ``matmul.allow_tf32`` (PyTorch's ``torch.backends.cuda``)."""
import enum

from .. import _matmul_precision


class _CuBLASModule:
    """``matmul.allow_tf32``: True when float32 GEMMs may use TF32; setting it is
    ``set_float32_matmul_precision("high" if value else "highest")``, as in PyTorch."""

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _matmul_precision.allow_tf32()
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name != "allow_tf32":
            raise AttributeError(f"Unknown attribute {name}")
        if not isinstance(value, bool):
            raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                               f"{type(value).__name__}")
        _matmul_precision.set_float32_matmul_precision("high" if value else "highest")


matmul = _CuBLASModule()


# -- scaled_dot_product_attention's backend switches ------------------------------------------
# The framework has one attention kernel, the fused flash-attention op, and it computes what
# each of PyTorch's backends computes: it runs while any of them is enabled, and with all of
# them off sdpa raises PyTorch's error. framework.nn.attention.sdpa_kernel sets these.

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _set_sdp(name, enabled):
    if not isinstance(enabled, bool):
        raise RuntimeError(f"set_sdp_use_{name} expects a bool, but got "
                           f"{type(enabled).__name__}")
    _sdp[name] = enabled


def enable_flash_sdp(enabled):
    """Enables or disables the flash scaled dot product attention backend."""
    _set_sdp("flash", enabled)


def flash_sdp_enabled():
    """Whether the flash scaled dot product attention backend is enabled."""
    return _sdp["flash"]


def enable_mem_efficient_sdp(enabled):
    """Enables or disables the memory-efficient scaled dot product attention backend."""
    _set_sdp("mem_efficient", enabled)


def mem_efficient_sdp_enabled():
    """Whether the memory-efficient scaled dot product attention backend is enabled."""
    return _sdp["mem_efficient"]


def enable_math_sdp(enabled):
    """Enables or disables the math scaled dot product attention backend."""
    _set_sdp("math", enabled)


def math_sdp_enabled():
    """Whether the math scaled dot product attention backend is enabled."""
    return _sdp["math"]


def enable_cudnn_sdp(enabled):
    """Enables or disables the cuDNN scaled dot product attention backend."""
    _set_sdp("cudnn", enabled)


def cudnn_sdp_enabled():
    """Whether the cuDNN scaled dot product attention backend is enabled."""
    return _sdp["cudnn"]


def any_sdp_enabled():
    return any(_sdp.values())


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated: framework.nn.attention.sdpa_kernel with the backends given as flags."""
    import warnings
    from ..nn.attention import SDPBackend, sdpa_kernel
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=2)
    chosen = [b for b, on in ((SDPBackend.FLASH_ATTENTION, enable_flash),
                              (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                              (SDPBackend.MATH, enable_math),
                              (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    return sdpa_kernel(chosen)


def is_built():
    """Whether the framework was built with cuda support: its cuda backend is Triton's,
    always present."""
    return True


def is_flash_attention_available():
    """Whether the flash attention kernel can run: on any cuda device here (Triton)."""
    from .. import cuda
    return cuda.is_available()


# -- which backend scaled_dot_product_attention can use ---------------------------------------

class SDPAParams:
    """The arguments of one scaled_dot_product_attention call, for ``can_use_*``."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa):
        self.query, self.key, self.value = query, key, value
        self.attn_mask, self.dropout = attn_mask, dropout
        self.is_causal, self.enable_gqa = is_causal, enable_gqa


def _can_use(params, debug, flag, name):
    """The one fused attention kernel serves every backend: it runs on cuda tensors of one
    floating dtype, 3-D or 4-D, with any mask, dropout below 1 and any head size."""
    import warnings
    q, k, v = params.query, params.key, params.value
    checks = (
        (_sdp[flag], f"{name} attention has been runtime disabled."),
        (all(t.device.type == "cuda" for t in (q, k, v)),
         f"{name} attention requires query, key and value to be on a cuda device."),
        (q.dtype == k.dtype == v.dtype and q.dtype.is_floating_point,
         f"{name} attention requires query, key and value to share one floating point dtype."),
        (q.dim() in (3, 4) and k.dim() == q.dim() and v.dim() == q.dim(),
         f"{name} attention requires query, key and value to be 3-D or 4-D."),
        (0 <= params.dropout < 1, f"{name} attention requires 0 <= dropout < 1."),
    )
    for ok, reason in checks:
        if not ok:
            if debug:
                warnings.warn(reason, stacklevel=3)
            return False
    return True


def can_use_flash_attention(params, debug=False):
    """Whether the flash attention kernel can compute ``params`` (with ``debug``: warns
    why not)."""
    return _can_use(params, debug, "flash", "Flash")


def can_use_efficient_attention(params, debug=False):
    """Whether the memory-efficient backend can compute ``params``."""
    return _can_use(params, debug, "mem_efficient", "Memory efficient")


def can_use_cudnn_attention(params, debug=False):
    """Whether the cuDNN backend (here: the same fused kernel) can compute ``params``."""
    return _can_use(params, debug, "cudnn", "CuDNN")


_math_reduced_precision = [False]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Enables or disables fp16/bf16 reduction in math scaled dot product attention."""
    _math_reduced_precision[0] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    """Whether fp16/bf16 reduction in math scaled dot product attention is allowed."""
    return _math_reduced_precision[0]


def is_ck_sdpa_available():
    """Whether the composable-kernel (ROCm) attention backend is available: never."""
    return False


# -- preferred libraries: recorded (GEMMs, LAPACK calls and attention are the framework's
# own kernels whatever the choice) -------------------------------------------------------------

class _Backend(enum.IntEnum):
    """A value of a preferred-library setting; printed as torch's enums print."""

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self):
        return f"<{type(self).__name__}.{self.name}: {int(self)}>"


def _backend_kind(kind, names):
    return _Backend(kind, [(n, i) for i, n in enumerate(names)])


_BlasBackend = _backend_kind("_BlasBackend", ["Default", "Cublas", "Cublaslt", "Ck"])
_LinalgBackend = _backend_kind("_LinalgBackend", ["Default", "Cusolver", "Magma"])
_ROCmFABackend = _backend_kind("_ROCmFABackend", ["Default", "AOTriton", "Ck"])

_BLAS = {"default": _BlasBackend.Cublas, "cublas": _BlasBackend.Cublas,
         "hipblas": _BlasBackend.Cublas, "cublaslt": _BlasBackend.Cublaslt,
         "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
_LINALG = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver,
           "magma": _LinalgBackend.Magma}
_ROCM_FA = {"default": _ROCmFABackend.Default, "aotriton": _ROCmFABackend.AOTriton,
            "ck": _ROCmFABackend.Ck}
_preferred = {"blas": _BlasBackend.Cublas, "linalg": _LinalgBackend.Default,
              "rocm_fa": _ROCmFABackend.Default}


def _prefer(which, table, backend):
    if backend is None:
        pass
    elif isinstance(backend, str):
        if backend not in table:
            raise RuntimeError(f"Unknown input value. Choose from: {', '.join(table)}.")
        _preferred[which] = table[backend]
    elif isinstance(backend, _Backend) and backend in set(table.values()):
        _preferred[which] = backend
    elif which == "rocm_fa":   # torch's rocm_fa check raises ValueError here
        raise ValueError(f"Unknown input value. Choose from: {', '.join(table)}.")
    else:
        raise RuntimeError("Unknown input value type.")
    return _preferred[which]


def preferred_blas_library(backend=None):
    """Sets (with ``backend``) and returns the preferred BLAS library setting."""
    return _prefer("blas", _BLAS, backend)


def preferred_linalg_library(backend=None):
    """Sets (with ``backend``) and returns the preferred linear algebra library setting."""
    return _prefer("linalg", _LINALG, backend)


def preferred_rocm_fa_library(backend=None):
    """Sets (with ``backend``) and returns the preferred ROCm flash attention library."""
    return _prefer("rocm_fa", _ROCM_FA, backend)


# -- cufft_plan_cache: FFTs are Triton kernels without plans, so every cache is empty -------

class cuFFTPlanCache:
    """The (empty) plan cache of one device: ``size``, ``max_size``, ``clear()``."""

    def __init__(self, device_index):
        self.device_index = device_index
        self._max_size = 4096

    @property
    def size(self):
        return 0

    @size.setter
    def size(self, value):
        raise RuntimeError(".size is a read-only property showing the number of plans "
                           "currently in the cache. To change the cache capacity, set "
                           "cufft_plan_cache.max_size.")

    @property
    def max_size(self):
        return self._max_size

    @max_size.setter
    def max_size(self, value):
        if not isinstance(value, int) or value < 0:
            raise RuntimeError(f"cuFFT plan cache size must be non-negative, but got {value}")
        self._max_size = value

    def clear(self):
        pass


class cuFFTPlanCacheManager:
    """The plan caches of all devices (``cufft_plan_cache[i]``); used directly, that of
    the current device."""

    def __init__(self):
        object.__setattr__(self, "caches", [])

    def __getitem__(self, device):
        from .. import cuda
        from ..accelerator import _get_device_index
        index = _get_device_index(device, optional=True)
        count = cuda.device_count()
        if index < 0 or index >= count:
            raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < {count}, but "
                               f"got device with index {index}")
        if not self.caches:
            self.caches.extend(cuFFTPlanCache(i) for i in range(count))
        return self.caches[index]

    def __getattr__(self, name):
        from .. import cuda
        return getattr(self[cuda.current_device()], name)

    def __setattr__(self, name, value):
        from .. import cuda
        setattr(self[cuda.current_device()], name, value)


cufft_plan_cache = cuFFTPlanCacheManager()
