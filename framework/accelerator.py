"""framework.accelerator: PyTorch's device-agnostic ``torch.accelerator`` API. The
framework's one accelerator is ``cuda`` (a GPU, or Triton's interpreter with
TRITON_INTERPRET=1); every call goes to framework.cuda."""
import warnings

__all__ = [
    "current_accelerator", "current_device_idx", "current_device_index", "current_stream",
    "device_count", "device_index", "empty_cache", "get_memory_info", "is_available",
    "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
    "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
    "get_device_capability", "empty_host_cache",
    "set_device_idx", "set_device_index", "set_stream", "synchronize",
]


def _cuda():
    import framework.cuda as cuda
    return cuda


def _device_type_built():
    """The accelerator this build has (cuda when a GPU or the simulator can be used)."""
    return "cuda" if _cuda().is_available() else None


def _get_device_index(device, optional=False):
    from ._device import device as _dev
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _dev(device)
    idx = None
    if isinstance(device, _dev):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        idx = device.index
    if idx is None:
        if not optional:
            raise ValueError("Expected a framework.device with a specified index or an "
                             f"integer, but got:{device}")
        return current_device_index()
    return idx


def current_accelerator(check_available=False):
    """framework.device("cuda") when cuda can be used, else None."""
    from ._device import device as _dev
    t = _device_type_built()
    if t is None or (check_available and not is_available()):
        return None
    return _dev(t)


def is_available():
    """Whether an accelerator (cuda, or its simulator) is available."""
    return current_accelerator() is not None and _cuda().is_available()


def device_count():
    """The number of accelerator devices (0 without one)."""
    return _cuda().device_count() if current_accelerator() is not None else 0


def _require():
    if current_accelerator() is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index():
    """The index of the current accelerator device."""
    _require()
    return _cuda().current_device()


def current_device_idx():
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Makes ``device`` (int, "cuda:N", framework.device) current; negative: no-op."""
    _require()
    i = _get_device_index(device, optional=False)
    if i >= 0:
        _cuda().set_device(i)


def set_device_idx(device, /):
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


def current_stream(device=None, /):
    """The current stream of ``device`` (the current device when None)."""
    _require()
    return _cuda().current_stream(_get_device_index(device, optional=True))


def set_stream(stream):
    """Makes ``stream`` current (and its device the current device)."""
    _require()
    cuda = _cuda()
    dev = getattr(stream, "device_index", None)
    if dev is None:
        d = getattr(stream, "device", None)
        dev = getattr(d, "index", None)
    if dev is not None and dev >= 0 and dev != cuda.current_device():
        cuda.set_device(dev)
    cuda.set_stream(stream)


def synchronize(device=None, /):
    """Waits for all work on ``device`` (all streams)."""
    _require()
    _cuda().synchronize(_get_device_index(device, optional=True))


class device_index:
    """``with framework.accelerator.device_index(i):`` makes device ``i`` current for the
    block (None: nothing changes)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _require()
            self.prev_idx = current_device_index()
            if self.idx != self.prev_idx:
                _cuda().set_device(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None and self.prev_idx != self.idx:
            _cuda().set_device(self.prev_idx)
        return False


# -- memory ----------------------------------------------------------------------------

def _initialized():
    _require()
    return _cuda().is_initialized()


def empty_cache():
    """Releases the caching allocator's unused blocks (no-op before it is initialised)."""
    if _initialized():
        _cuda().empty_cache()


def memory_stats(device_index=None, /):
    """The allocator's statistics (framework.cuda.memory_stats), an empty dict before the
    accelerator is initialised."""
    from collections import OrderedDict
    if not _initialized():
        return OrderedDict()
    return OrderedDict(sorted(_cuda().memory_stats(
        _get_device_index(device_index, optional=True)).items()))


def memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /):
    if _initialized():
        _cuda().reset_accumulated_memory_stats(_get_device_index(device_index, optional=True))


def reset_peak_memory_stats(device_index=None, /):
    if _initialized():
        _cuda().reset_peak_memory_stats(_get_device_index(device_index, optional=True))


def get_memory_info(device_index=None, /):
    """(free, total) bytes of the device."""
    _require()
    return _cuda().mem_get_info(_get_device_index(device_index, optional=True))


def empty_host_cache():
    """Releases cached pinned host memory (the framework keeps no such cache: nothing to
    do)."""
    _require()


def get_device_capability(device=None, /):
    """{"supported_dtypes": the dtypes tensors on the device can have}."""
    _require()
    _get_device_index(device, optional=True)
    import framework as fw
    return {"supported_dtypes": {fw.bool, fw.uint8, fw.int8, fw.int16, fw.int32, fw.int64,
                                 fw.float16, fw.bfloat16, fw.float32, fw.float64,
                                 fw.complex64, fw.complex128}}
