"""Output allocation and the backend of a device: the one place ops get memory from."""
from .. import _dtype
from .._device import CPU, device as _device_cls, canonical
from .. import _C
from .._storage import Storage, cpu_alloc, cpu_oom
from .._tensor import ROW_MAJOR_STRIDES, Tensor
from . import args
from ..autograd.grad_mode import _mode as _grad_mode, mark_inference

_make = Tensor._make
_host_alloc = _C.host_alloc
_default_devices = [CPU]
_INT64_MAX = args.INT64_MAX


def push_default_device(d):
    _default_devices.append(canonical(d))


def pop_default_device():
    _default_devices.pop()


def default_device():
    return _default_devices[-1]


def set_default_device(d):
    # the bottom of the stack: `with device(...)` blocks push above it
    _default_devices[0] = d


def remember(cache, key, value, limit=4096):
    """Stores ``value`` in a memo dict of layouts (emptied when it reaches ``limit``: a
    program uses a few layouts again and again, and an odd one must not grow it forever)."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


def remember_filled(cache, key, value, limit=4096):
    """``remember`` for a device constant the caller has just filled; while a CUDA graph
    captures, the fill runs only at replay, so the value is not kept for eager calls."""
    from ..cuda import graphs
    if graphs._captures:
        return value
    return remember(cache, key, value, limit)


def contiguous_strides(shape):
    """Row-major strides (in elements) of a shape."""
    st = ROW_MAJOR_STRIDES.get(shape)
    if st is None:
        acc, out = 1, []
        for n in reversed(shape):
            out.append(acc)
            acc *= n if n > 1 else 1
        st = remember(ROW_MAJOR_STRIDES, shape, tuple(reversed(out)))
    return st


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def storage(nbytes, device):
    """A new uninitialised buffer of ``nbytes`` bytes on ``device``; a size no storage can
    have raises PyTorch's RuntimeError, a failed allocation framework.OutOfMemoryError."""
    if not 0 <= nbytes <= _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with nbytes={nbytes}")
    if device.type == "cpu":
        st = cpu_alloc(nbytes)
    elif device.type == "cuda":
        st = _cuda_runtime().alloc_storage(nbytes, device)
    elif device.type == "meta":
        st = Storage(0, nbytes, device, None)   # shape and dtype only: no memory
    else:
        raise RuntimeError(f"unsupported device {device}")
    if _grad_mode.inference:
        mark_inference(st)
    return st


_runtime = None


def _cuda_runtime():
    """framework.cuda._runtime, imported once (every cuda allocation goes through here)."""
    global _runtime
    if _runtime is None:
        from ..cuda import _runtime as r
        _runtime = r
    return _runtime


def empty(shape, dtype, device):
    """A new contiguous tensor (uninitialised). ``shape`` is a tuple of ints."""
    n = dtype.itemsize
    for s in shape:
        n *= s
    if not 0 <= n <= _INT64_MAX:   # raises PyTorch's error before any allocation is tried
        _bad_size(shape, dtype.itemsize)
    if device is CPU:  # the per-op hot path: inlined
        try:
            buf = _host_alloc(n)
        except MemoryError:
            raise cpu_oom(n) from None
        st = Storage(buf.ptr, n, CPU, buf)
    elif device.type == "cuda":  # the other hot path: straight to the cuda runtime
        runtime = _runtime if _runtime is not None else _cuda_runtime()
        st = runtime.alloc_storage(n, device)
    else:
        st = storage(n, device)
    if _grad_mode.inference:    # what inference mode allocates makes inference tensors
        mark_inference(st)
    stride = ROW_MAJOR_STRIDES.get(shape)
    if stride is None:
        stride = contiguous_strides(shape)
    return _make(st, shape, stride, 0, dtype)


def _bad_size(shape, itemsize):
    """Raises PyTorch's error for a shape whose byte count is negative or beyond int64."""
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    args.storage_nbytes(shape, itemsize)


def resolve_device(d):
    """A user's ``device=`` argument as a canonical device (default device for None)."""
    if d is None:
        return _default_devices[-1]
    if d.__class__ is _device_cls and (d.type != "cuda" or d.index is not None):
        return d
    return canonical(d)


def resolve_dtype(d, default=None):
    if d is None:
        return default if default is not None else _dtype.get_default_dtype()
    if not isinstance(d, _dtype.dtype):
        from .. import _pytypes
        return _pytypes.from_python_type(d)
    return d


_backends = {}


def _meta_noop(*args, **kwargs):
    return None


class _MetaKernels:
    """The kernels of the meta device. A meta tensor has a shape and a dtype, no data: the
    dispatcher has already given every result its shape, dtype and layout, so a kernel has
    nothing to do (``with torch.device("meta")`` module construction, shape inference
    through whole models, as PyTorch's meta kernels). The kernels whose result is read on the
    host (a count, a range, the unique values) raise NotImplementedError naming the kernel:
    their output shape depends on data, as PyTorch's meta device refuses them too."""

    _HOST_RESULTS = {("index", "mask_count"), ("index", "nonzero"), ("index", "nonzero_count"),
                     ("index", "tri_indices_count"), ("shape", "repeat_interleave_total"),
                     ("sort", "unique_flat"), ("sort", "unique_rows"), ("sort", "int_range"),
                     ("sort", "float_range"), ("grad_norm", "total_norm")}

    _NONZERO = {"nonzero", "nonzero_count", "mask_count"}   # torch.nonzero, t[bool mask]

    def __init__(self, family=None):
        self._family = family

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._family is None:
            return _MetaKernels(name)
        if (self._family, name) not in self._HOST_RESULTS:
            return _meta_noop
        if self._family == "index" and name in self._NONZERO:
            raise NotImplementedError(META_NONZERO)
        raise NotImplementedError(f"Could not run '{self._family}.{name}' with arguments from "
                                  "the 'meta' device: its output's shape depends on data, "
                                  "which meta tensors do not hold")


_META_KERNELS = _MetaKernels()

META_NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by "
                "default, as a correct data-independent implementation does not exist. This "
                "implementation returns a fake value, assuming all elements of the tensor are "
                "non-zero. To enable this registration, please set "
                "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def meta_unsupported(aten_op):
    """PyTorch's error for an op with no meta kernel (its output's shape depends on data),
    e.g. ``meta_unsupported("aten::masked_select")``."""
    return NotImplementedError(
        f"{aten_op}: attempted to run this operator with Meta tensors, but there was no fake "
        "impl or Meta kernel registered. You may have run into this message while using an "
        "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
        "operator with those APIs you'll need to add a fake impl. Please see the following "
        "for next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def backend(device):
    """The kernel package of a device: framework._cpu, or framework.kernels (Triton)."""
    b = _backends.get(device.type)
    if b is None:
        if device.type == "cpu":
            from .. import _cpu as b
        elif device.type == "meta":
            return _META_KERNELS
        else:
            from .. import kernels as b
        _backends[device.type] = b
    return b
