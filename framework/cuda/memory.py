"""The memory API of framework.cuda: statistics and control of each device's caching
allocator (framework/cuda/allocator.py), with PyTorch's names."""
from . import _runtime


def _alloc(device):
    from . import _device_index
    s = _runtime.state()
    return s.allocator(_runtime.check_index(_device_index(device)))


def memory_allocated(device=None):
    """Bytes occupied by tensors on a device."""
    return _alloc(device).memory_allocated()


def max_memory_allocated(device=None):
    """Peak of memory_allocated since start (or the last reset_peak_memory_stats)."""
    return _alloc(device).max_memory_allocated()


def memory_reserved(device=None):
    """Bytes held by the caching allocator (allocated plus cached)."""
    return _alloc(device).memory_reserved()


def max_memory_reserved(device=None):
    return _alloc(device).max_memory_reserved()


def reset_peak_memory_stats(device=None):
    _alloc(device).reset_peak_memory_stats()


def reset_max_memory_allocated(device=None):
    _alloc(device).reset_peak_memory_stats()


def reset_accumulated_memory_stats(device=None):
    _alloc(device).reset_accumulated_memory_stats()


def memory_stats(device=None):
    """The allocator's statistics, keyed as PyTorch's (``"allocated_bytes.all.current"``...)."""
    return _alloc(device).memory_stats()


def memory_summary(device=None, abbreviated=False):
    """A printable table of the allocator's statistics."""
    return _alloc(device).memory_summary()


def memory_snapshot():
    """Every segment of every device's allocator and its blocks."""
    s = _runtime.state()
    out = []
    for i in range(s.count):
        if s.allocators[i] is not None:
            out.extend(s.allocators[i].segments())
    return out


def empty_cache():
    """Gives the cached, unused memory of every device back to the driver."""
    s = _runtime.state()
    for a in s.allocators:
        if a is not None:
            a.empty_cache()


def mem_get_info(device=None):
    """(free, total) bytes of a device, as the driver reports them."""
    return _alloc(device).backend.mem_get_info()


def set_per_process_memory_fraction(fraction, device=None):
    """Caps this process's allocations on a device at ``fraction`` of its total memory."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    a = _alloc(device)
    a.memory_fraction_limit = int(fraction * a.backend.mem_get_info()[1])
