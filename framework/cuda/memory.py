"""The memory API of framework.cuda: statistics and control of each device's caching
allocator (framework/cuda/allocator.py), with PyTorch's names."""
import pickle
import sys

from . import _memory_history, _runtime, allocator as _allocator


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


def memory_snapshot(mempool_id=None, include_traces=True):
    """A snapshot of the CUDA memory allocator state across all devices: the "segments" of
    :func:`_snapshot`; with ``mempool_id`` (a :class:`MemPool`'s ``id``), only that pool's.
    A pool's segments carry its id as ``segment_pool_id``."""
    s = _runtime.state()
    want = None if mempool_id is None or tuple(mempool_id) == (0, 0) else \
        -int(mempool_id[1])
    out = []
    for a in s.allocators:
        if a is not None:
            for seg in _memory_history.segment_dicts(a, _allocator._history):
                if seg["stream"] < 0:   # a pool's tag (framework/cuda/graphs.py)
                    seg["segment_pool_id"] = (0, -seg["stream"])
                if want is None or seg["stream"] == want:
                    out.append(seg)
    return out


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize,
                           device=None, clear_history=False, compile_context=False,
                           global_record_annotations=False, skip_actions=None):
    """Records the stack traces of allocations (and with ``enabled="all"`` a history of
    every alloc/free, up to the last ``max_entries``) for :func:`_snapshot`.
    ``enabled=None`` stops recording and drops what was recorded. Only Python frames are
    recorded (``stacks="all"`` adds no C++ frames)."""
    _memory_history.check_args(enabled, context, stacks, max_entries)
    s = _runtime.state()
    if enabled is None:
        _allocator.set_history(None, s.allocators)
        return
    h = _allocator._history
    if h is None or clear_history:
        h = _memory_history.History(enabled, context, max_entries)
    else:
        h.configure(enabled, context, max_entries)
    _allocator.set_history(h, s.allocators)


def _snapshot(device=None, augment_with_fx_traces=False):
    """The state of every device's caching allocator: ``{"segments": [...],
    "device_traces": [[trace entry, ...] per device], "allocator_settings": {...}}`` in
    PyTorch's format (pytorch.org/memory_viz reads its pickle). Frames carry no FX
    information (``augment_with_fx_traces`` is accepted and ignored)."""
    s = _runtime.state()
    h = _allocator._history
    traces = [list(h.traces.get(i, ())) if h is not None else [] for i in range(s.count)]
    return {"segments": memory_snapshot(), "device_traces": traces,
            "allocator_settings": _memory_history.allocator_settings(s.allocators),
            "external_annotations": []}


def _dump_snapshot(filename="dump_snapshot.pickle", augment_with_fx_traces=False):
    """Pickles :func:`_snapshot` into ``filename`` (for pytorch.org/memory_viz)."""
    snap = _snapshot()
    with open(filename, "wb") as f:
        pickle.dump(snap, f)


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


def _set_allocator_settings(env):
    """Sets PYTORCH_CUDA_ALLOC_CONF-style options ("key:value,..."). Only
    ``max_split_size_mb`` matters here, and only as PYTORCH_CUDA_ALLOC_CONF sets it
    already (another value raises NotImplementedError). Other keys are accepted, as PyTorch
    accepts keys it does not know."""
    for item in env.split(","):
        key, _, value = item.partition(":")
        if key.strip() != "max_split_size_mb" or not value.strip():
            continue
        try:
            mb = int(value)
        except ValueError:
            raise ValueError("stoull") from None
        if mb < 20:
            raise ValueError("CachingAllocator option max_split_size_mb too small, must "
                             "be >= 20")
        if _runtime._alloc_conf().get("max_split_size") != mb * _allocator.MB:
            raise NotImplementedError(
                "_set_allocator_settings: framework reads max_split_size_mb from "
                "PYTORCH_CUDA_ALLOC_CONF when the caching allocator is made; set it there "
                "before the first cuda allocation")


from .mempool import (  # noqa: E402,F401  (torch.cuda.memory's names too)
    caching_allocator_disabled, caching_allocator_enable, change_current_allocator,
    CUDAPluggableAllocator, MemPool, use_mem_pool,
)
