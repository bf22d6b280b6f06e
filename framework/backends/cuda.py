"""framework.backends.cuda: ``matmul.allow_tf32`` (PyTorch's ``torch.backends.cuda``)."""
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
