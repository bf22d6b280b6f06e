"""Memory pools of the caching allocator (PyTorch's ``torch.cuda.MemPool`` and
``torch.cuda.use_mem_pool``), and the allocator switches around them.

A pool is the mechanism of CUDA graph pools (framework/cuda/graphs.py): a negative stream
tag of the caching allocator. Blocks allocated with the tag are cached under it when freed,
so they serve only the pool's later allocations, and its segments stay reserved while the
pool has users (the ``MemPool`` object, each open ``use_mem_pool`` context, each graph
captured into it). A MemPool and graphs can share one pool: ``g.capture_begin(pool=p.id)``.
"""
import contextlib
import functools
import threading

from . import _runtime, allocator as _allocator, graphs as _graphs

__all__ = ["MemPool", "use_mem_pool", "caching_allocator_enable",
           "caching_allocator_disabled", "CUDAPluggableAllocator", "change_current_allocator"]

_local = threading.local()   # .stacks: {device index: [pool tag, ...]} of this thread
_open = {}                   # device index -> use_mem_pool contexts open, all threads


class MemPool:
    r"""MemPool represents a pool of memory in a caching allocator.

    ``allocator``: must be None (the caching allocator); ``use_on_oom``: whether the pool's
    free blocks may serve an allocation outside the pool that would otherwise run out of
    memory; ``no_split``: not supported (must be False)."""

    def __init__(self, allocator=None, use_on_oom=False, no_split=False):
        if allocator is not None:
            raise NotImplementedError("MemPool: a custom allocator (CUDAPluggableAllocator) "
                                      "is not supported by framework; pass allocator=None")
        if no_split:
            raise NotImplementedError("MemPool(no_split=True) is not supported by framework")
        from . import current_device
        self._device = current_device()
        self._id = _graphs.graph_pool_handle()
        self._use_on_oom = bool(use_on_oom)
        self._alive = True
        _graphs._incref_pool(self._device, self._tag)
        if self._use_on_oom:
            _runtime.state().allocator(self._device).oom_pools.append(self._tag)

    @property
    def _tag(self):
        return _graphs._tag(self._id)

    @property
    def id(self):
        """The ID of this pool as a tuple of two ints."""
        return self._id

    @property
    def allocator(self):
        """The allocator of this pool (None: the caching allocator)."""
        return None

    def use_count(self):
        """The reference count of this pool."""
        return _graphs._pool_users.get((self._device, self._tag), 0)

    def snapshot(self, include_traces=True):
        """A snapshot of this pool's segments (as :func:`memory_snapshot`)."""
        from .memory import memory_snapshot
        return memory_snapshot(self._id, include_traces=include_traces)

    def __del__(self):
        try:
            if getattr(self, "_alive", False):
                self._alive = False
                a = _runtime.state().allocator(self._device)
                if self._tag in a.oom_pools:
                    a.oom_pools.remove(self._tag)
                _release(self._device, self._tag)
        except Exception:   # interpreter shutdown
            pass


def _release(device, tag):
    """Drops one user of a pool; the last one gives its free segments back."""
    if _graphs._decref_pool(device, tag) == 0:
        _runtime.state().allocator(device).empty_cache(tag)


def _routed(a, name):
    """``a.malloc``/``a.alloc_owned`` routed to the innermost pool this thread opened on the
    allocator's device (an allocation already tagged, by a graph capture, stays so)."""
    plain = functools.partial(getattr(type(a), name), a)

    def alloc(nbytes, stream=0):
        if stream >= 0:
            stack = getattr(_local, "stacks", {}).get(a.device)
            if stack:
                stream = stack[-1]
        return plain(nbytes, stream)
    return alloc


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    r"""A context manager that routes allocations to a given pool.

    Only the current thread's allocations on ``device`` (default: the current device) go
    to the pool; a thread started inside the context allocates outside it."""
    from . import _device_index
    if not isinstance(pool, MemPool):
        raise TypeError(f"use_mem_pool(): pool must be a framework.cuda.MemPool, got "
                        f"{type(pool).__name__}")
    index = _runtime.check_index(_device_index(device))
    a = _runtime.state().allocator(index)
    tag = pool._tag
    with _graphs._lock:
        _graphs._incref_pool(index, tag)
        if not _open.get(index):
            # instance attributes shadow the methods only while a context is open: no cost
            # to allocations otherwise
            a.malloc = _routed(a, "malloc")
            a.alloc_owned = _routed(a, "alloc_owned")
        _open[index] = _open.get(index, 0) + 1
    stacks = _local.__dict__.setdefault("stacks", {})
    stack = stacks.setdefault(index, [])
    stack.append(tag)
    try:
        yield
    finally:
        # the last entry of the tag: generators may close contexts out of order
        del stack[len(stack) - 1 - stack[::-1].index(tag)]
        with _graphs._lock:
            _open[index] -= 1
            if not _open[index]:
                del a.malloc, a.alloc_owned
        _release(index, tag)


def caching_allocator_enable(value=True):
    r"""Enable or disable the CUDA memory allocator. On by default.

    Disabled, memory freed goes back to the driver at once (each segment as soon as none of
    its blocks is in use). Does nothing before CUDA is initialized, as in PyTorch."""
    if _runtime._state is None:
        return
    _allocator.set_caching_enabled(value, _runtime.state().allocators)


def _caching_allocator_is_enabled():
    return _allocator._caching_enabled


@contextlib.contextmanager
def caching_allocator_disabled():
    r"""Context manager that temporarily disables the CUDA caching allocator."""
    prev = _caching_allocator_is_enabled()
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(prev)


_NO_PLUGGABLE = ("{}: custom CUDA allocators are not supported by framework (its caching "
                 "allocator is built in); use MemPool/use_mem_pool to control where memory "
                 "comes from")


class CUDAPluggableAllocator:
    r"""CUDA memory allocator loaded from a so file (not supported by framework)."""

    def __init__(self, path_to_so_file, alloc_fn_name, free_fn_name):
        raise NotImplementedError(_NO_PLUGGABLE.format("CUDAPluggableAllocator"))


def change_current_allocator(allocator):
    r"""Change the currently used memory allocator (not supported by framework)."""
    raise NotImplementedError(_NO_PLUGGABLE.format("change_current_allocator"))
