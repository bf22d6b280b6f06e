"""The CUDA caching allocator, with the semantics of PyTorch's.

Memory comes from a raw backend in whole segments (``raw_alloc(nbytes) -> ptr``, raising
:class:`RawOutOfMemory` when the device is full; ``raw_free(ptr)``; ``mem_get_info() ->
(free, total)``). :class:`DriverRawBackend` gets it from ``cuMemAlloc``; the simulator's
:class:`HostRawBackend` from host memory. Freed blocks stay cached for reuse on the stream
they were allocated on; ``empty_cache()`` gives fully free segments back.

Streams are ints (the ``CUstream`` handle; 0 is the default stream). Events come from the
backend's ``record_event(stream)``, ``query_event(event) -> bool`` and
``synchronize_event(event)`` (or from hooks given to the allocator, as tests do).
"""
import functools
import os
import threading

from .. import _C

KB = 1024
MB = 1024 * KB
GB = 1024 * MB


class OutOfMemoryError(RuntimeError):
    """Out of memory: on cuda raised after the cache was freed and the allocation retried;
    the CPU allocator raises it too (``framework.OutOfMemoryError``)."""


class RawOutOfMemory(Exception):
    """Raised by a raw backend when the device has no room for a new segment."""


# PyTorch's sizes, defined in native/device_alloc.cpp: requests are rounded up to a multiple
# of 512 bytes; up to 1 MiB they come from the small pool's 2 MiB segments, below 10 MiB
# from 20 MiB segments, from there on from a segment of their own (a multiple of 2 MiB)
def round_size(size):
    """The size a request of ``size`` bytes is given (a multiple of 512, at least 512)."""
    return _C.alloc_sizes(size)[0]


def allocation_size(size):
    """The size of the segment allocated for a rounded request of ``size`` bytes."""
    return _C.alloc_sizes(size)[1]


def format_size(nbytes):
    """PyTorch's size format in OOM messages: '512 bytes', '2.00 MiB', '1.50 GiB'."""
    if nbytes <= 1024:
        return f"{nbytes} bytes"
    if nbytes <= MB:
        return f"{nbytes / KB:.2f} KiB"
    if nbytes <= GB:
        return f"{nbytes / MB:.2f} MiB"
    return f"{nbytes / GB:.2f} GiB"


_STAT_NAMES = ("allocation", "segment", "active", "allocated_bytes", "reserved_bytes",
               "active_bytes", "requested_bytes")   # the order of native/device_alloc.cpp's
_POOL_NAMES = ("all", "small_pool", "large_pool")
_FIELDS = ("current", "peak", "allocated", "freed")
_ALLOCATED_BYTES, _RESERVED_BYTES = 3, 4
_NO_LIMIT = (1 << 63) - 1

# framework/cuda/_memory_history.History while _record_memory_history records, else None
# (the only cost of recording off on the slow path; the native hot path tests a pointer)
_history = None
# caching_allocator_enable(False) makes it False: each free gives a segment that became
# wholly free back to the driver at once (through the native free hook, like _history)
_caching_enabled = True


def set_history(history, allocators):
    """Starts (a History) or stops (None) recording on ``allocators`` and on every one made
    later."""
    global _history
    _history = history
    for a in allocators:
        if a is not None:
            a._set_trace(history)


def set_caching_enabled(value, allocators):
    """Turns caching on or off in ``allocators`` and in every one made later."""
    global _caching_enabled
    _caching_enabled = bool(value)
    for a in allocators:
        if a is not None:
            a._set_trace(_history)


def _capture_underway():
    from . import graphs
    return bool(graphs._captures)


class CachingAllocator:
    """Caching allocator of one device. ``malloc(nbytes, stream) -> block`` (``.ptr``,
    ``.size``, ``.requested``, ``.stream``), ``free(block)``, ``record_stream(block,
    stream)``, stats and ``empty_cache()``.

    The blocks, pools and stats live in native code (``_C.AllocatorCore``): a cache hit and
    a free never run Python. Here is what goes to the raw backend: new segments, the
    retries before an OOM, and giving segments back."""

    def __init__(self, backend, device=0, record_event=None, query_event=None,
                 synchronize_event=None, max_split_size=None):
        self.backend = backend
        self.device = device
        # PYTORCH_CUDA_ALLOC_CONF's max_split_size_mb (in bytes): blocks this large are
        # never split, and small requests never take them (a fragmentation guard)
        self.max_split_size = max_split_size if max_split_size is not None else float("inf")
        hooks = (record_event or getattr(backend, "record_event", None),
                 query_event or getattr(backend, "query_event", None),
                 synchronize_event or getattr(backend, "synchronize_event", None))
        self._core = _C.AllocatorCore(
            _NO_LIMIT if max_split_size is None else int(max_split_size), *hooks)
        # the slow path (new segments, retries, releases) runs one thread at a time; the
        # native hot path needs no lock (it holds the GIL throughout)
        self._lock = threading.RLock()
        self.memory_fraction_limit = None   # bytes, from set_per_process_memory_fraction
        self._total = None                  # the device's capacity, asked for once
        # the private pools of live CUDA graphs (framework/cuda/graphs.py): a pool is a
        # negative stream tag, so its blocks serve only allocations made with that tag, and
        # its segments stay reserved (not given back by empty_cache) while a graph uses it
        self.graph_pools = set()
        # tags of the MemPools made with use_on_oom=True: a last resort for other requests
        self.oom_pools = []
        if _history is not None or not _caching_enabled:
            self._set_trace(_history)

    def _set_trace(self, history):
        # a partial, not a lambda: no frame of its own in the recorded stacks
        hook = None if history is None else functools.partial(history.on_block, self.device)
        if not _caching_enabled:
            hook = functools.partial(self._free_uncached, hook)
        self._core.set_trace(hook)

    def _free_uncached(self, history_hook, code, ptr, size, stream):
        """The native hook while caching is off: after a completed free (code 2), the
        segment holding the block goes back to the driver if it is wholly free (a live
        pool keeps its segments)."""
        if history_hook is not None:
            history_hook(code, ptr, size, stream)
        if code != 2 or stream in self.graph_pools:
            return
        for base, parts in self._core.blocks():
            total = sum(p[1] for p in parts)
            if base <= ptr < base + total:
                if self._core.release_segment(base):
                    self._synchronize_backend()
                    self._raw_free(base, total, stream)
                return

    # -- allocation --------------------------------------------------------------------------
    def malloc(self, nbytes, stream=0):
        """A block of at least ``nbytes`` bytes for use on ``stream``; it stays allocated
        until ``free(block)``."""
        return self._core.alloc(nbytes, stream, False) or self._malloc_new(nbytes, stream,
                                                                            False)

    def alloc_owned(self, nbytes, stream=0):
        """Like ``malloc``, but the block frees itself when the returned handle is collected
        (the buffer of a storage)."""
        return self._core.alloc(nbytes, stream, True) or self._malloc_new(nbytes, stream, True)

    def _malloc_new(self, nbytes, stream, owned):
        """No cached block fits: a new segment, after freeing cache if the device is full."""
        core = self._core
        with self._lock:
            block = core.alloc(nbytes, stream, owned)  # another thread may have freed one
            if block is not None:
                return block
            size, alloc_size, small = _C.alloc_sizes(nbytes)
            if self._total is None:
                self._total = self.backend.mem_get_info()[1]
            if alloc_size > self._total:
                # more than the device holds: refused without the driver or emptying the
                # cache (a real driver was seen to take over a minute to refuse 8 TiB)
                self._record_oom(size, stream)
                raise OutOfMemoryError(self._oom_message(alloc_size))
            ptr = self._raw_alloc(alloc_size)
            if ptr is None and stream < 0 and _capture_underway():
                # a graph is being captured: freeing cache means synchronizing the device,
                # which capture forbids
                self._record_oom(size, stream)
                raise OutOfMemoryError(self._oom_message(alloc_size))
            if ptr is None and self._release_available_cached_blocks(small, stream, size):
                ptr = self._raw_alloc(alloc_size)
            if ptr is None:
                # free every cached segment (after pending frees land), then retry
                self._release_cached_blocks()
                core.num_alloc_retries += 1
                ptr = self._raw_alloc(alloc_size)
            if ptr is None:
                # MemPool(use_on_oom=True): a free block of such a pool, as a last resort
                for tag in self.oom_pools if stream >= 0 else ():
                    block = core.alloc(nbytes, tag, owned)
                    if block is not None:
                        return block
                self._record_oom(size, stream)
                raise OutOfMemoryError(self._oom_message(alloc_size))
            if _history is not None:
                _history.record(self.device, "segment_alloc", ptr, alloc_size, stream)
            return core.alloc_in_segment(ptr, alloc_size, nbytes, stream, owned)

    def _record_oom(self, size, stream):
        self._core.num_ooms += 1
        if _history is not None:
            _history.record(self.device, "oom", 0, size, stream,
                            device_free=self.backend.mem_get_info()[0])

    def _raw_free(self, ptr, size, stream):
        """Gives a released segment back to the backend."""
        self.backend.raw_free(ptr)
        if _history is not None:
            _history.record(self.device, "segment_free", ptr, size, stream)

    def _raw_alloc(self, alloc_size):
        """A new segment's address from the backend, or None when the device is full (or
        the set_per_process_memory_fraction cap would be passed)."""
        limit = self.memory_fraction_limit
        if limit is not None and self.memory_reserved() + alloc_size > limit:
            return None
        try:
            return self.backend.raw_alloc(alloc_size)
        except RawOutOfMemory:
            return None

    def _release_available_cached_blocks(self, small, stream, size):
        """Frees cached oversize segments of ``stream`` (the smallest one that is big
        enough, else the largest ones until enough is freed). False if that cannot help."""
        if self.max_split_size == float("inf"):
            return False
        need = max(size, self.max_split_size)
        candidates = self._core.oversize_segments(small, stream, self.max_split_size)
        fits = [c for c in candidates if c[1] >= need]
        if fits:
            chosen = fits[:1]
        else:
            chosen, total = [], 0
            for c in reversed(candidates):
                if total >= need:
                    break
                chosen.append(c)
                total += c[1]
            if total < need:
                return False
        self._synchronize_backend()
        for ptr, seg_size in chosen:
            if self._core.release_segment(ptr):
                self._raw_free(ptr, seg_size, stream)
        return True

    # -- freeing -----------------------------------------------------------------------------
    def free(self, block):
        """Returns a block to the cache. If other streams used it (record_stream), it is
        reused only after the work queued on them so far has completed."""
        self._core.free(block)

    def free_ptr(self, ptr):
        """Frees the allocated block that starts at ``ptr``."""
        self._core.free_ptr(ptr)

    def record_stream(self, block, stream):
        """Marks ``block`` as used by ``stream``: after ``free`` it is reused only once the
        work queued on ``stream`` up to that free has completed."""
        self._core.record_stream(block, stream)

    # -- releasing the cache -------------------------------------------------------------------
    def _release_cached_blocks(self, pool=None):
        """Gives every fully free segment back to the backend (with ``pool``, a pool's
        tag: only that pool's)."""
        self._core.sync_events()
        self._synchronize_backend()
        segs = {} if _history is None and not self.graph_pools and pool is None else {
            base: (sum(p[1] for p in parts), parts[0][2]) for base, parts in self._core.blocks()}
        if pool is not None:
            ptrs = [ptr for ptr, (_, tag) in segs.items()
                    if tag == pool and self._core.release_segment(ptr)]
        elif self.graph_pools:   # a live graph's or MemPool's pool keeps its segments
            keep = self.graph_pools
            ptrs = [ptr for ptr, (_, tag) in segs.items()
                    if tag not in keep and self._core.release_segment(ptr)]
        else:
            ptrs = self._core.release_free_segments()
        for ptr in ptrs:
            self._raw_free(ptr, *segs.get(ptr, (0, 0)))

    def _synchronize_backend(self):
        # a cached block may still be in use by kernels queued on its stream: wait for the
        # device before giving memory back
        sync = getattr(self.backend, "synchronize", None)
        if sync is not None:
            sync()

    def empty_cache(self, pool=None):
        """Releases all unoccupied cached memory (whole free segments); with ``pool`` (a
        pool's negative tag), only that pool's."""
        with self._lock:
            self._release_cached_blocks(pool)

    # -- stats -----------------------------------------------------------------------------
    def memory_allocated(self):
        return self._core.current(_ALLOCATED_BYTES)

    def max_memory_allocated(self):
        return self._core.peak(_ALLOCATED_BYTES)

    def memory_reserved(self):
        return self._core.current(_RESERVED_BYTES)

    def max_memory_reserved(self):
        return self._core.peak(_RESERVED_BYTES)

    def reset_peak_memory_stats(self):
        self._core.reset_peak()

    def reset_accumulated_memory_stats(self):
        self._core.reset_accumulated()

    @property
    def num_alloc_retries(self):
        return self._core.num_alloc_retries

    @property
    def num_ooms(self):
        return self._core.num_ooms

    def memory_stats(self):
        """A flat dict with PyTorch's keys ("allocated_bytes.all.current", ...)."""
        core = self._core
        out = {}
        for name, pools in zip(_STAT_NAMES, core.stats()):
            for pool_name, values in zip(_POOL_NAMES, pools):
                for field, v in zip(_FIELDS, values):
                    out[f"{name}.{pool_name}.{field}"] = v
        for pool_name, (n, nbytes) in zip(_POOL_NAMES, core.inactive_split()):
            out[f"inactive_split.{pool_name}.current"] = n
            out[f"inactive_split_bytes.{pool_name}.current"] = nbytes
        out["num_alloc_retries"] = core.num_alloc_retries
        out["num_ooms"] = core.num_ooms
        out["num_device_alloc"] = core.num_device_alloc
        out["num_device_free"] = core.num_device_free
        out["max_split_size"] = (-1 if self.max_split_size == float("inf")
                                 else self.max_split_size)
        return dict(sorted(out.items()))

    def segments(self):
        """[(base ptr, total size, [(size, allocated), ...]), ...] by address."""
        return [(base, sum(p[1] for p in parts), [(p[1], p[4]) for p in parts])
                for base, parts in self._core.blocks()]

    def memory_summary(self):
        """A table of the memory stats, like torch.cuda.memory_summary()."""
        s = self.memory_stats()
        width = 75
        lines = ["=" * width,
                 f" {'framework CUDA memory summary, device ID ' + str(self.device):^73} ",
                 "-" * width,
                 f" {'CUDA OOMs: ' + str(s['num_ooms']):^35} | "
                 f"{'cudaMalloc retries: ' + str(s['num_alloc_retries']):^35} ",
                 "=" * width,
                 f" {'Metric':^21} | {'Cur Usage':^10} | {'Peak Usage':^10} | "
                 f"{'Tot Alloc':^10} | {'Tot Freed':^10} "]
        rows = [("allocated_bytes", "Allocated memory", _format_bytes),
                ("active_bytes", "Active memory", _format_bytes),
                ("requested_bytes", "Requested memory", _format_bytes),
                ("reserved_bytes", "GPU reserved memory", _format_bytes),
                ("allocation", "Allocations", _format_count),
                ("active", "Active allocs", _format_count),
                ("segment", "GPU reserved segments", _format_count)]
        for key, title, fmt in rows:
            lines.append("-" * width)
            for pool_name, label in (("all", title), ("large_pool", "      from large pool"),
                                     ("small_pool", "      from small pool")):
                vals = [s[f"{key}.{pool_name}.{f}"] for f in _FIELDS]
                lines.append(f" {label:<21} | " + " | ".join(fmt(v, v) for v in vals) + " ")
        lines.append("=" * width)
        return "\n".join("|" + ln + "|" for ln in lines) + "\n"

    def _oom_message(self, alloc_size):
        free, total = self.backend.mem_get_info()
        allocated = self.memory_allocated()
        reserved = self.memory_reserved()
        return (f"CUDA out of memory. Tried to allocate {format_size(alloc_size)}. "
                f"GPU {self.device} has a total capacity of {format_size(total)} of which "
                f"{format_size(free)} is free. Of the allocated memory "
                f"{format_size(allocated)} is allocated by framework, and "
                f"{format_size(reserved - allocated)} is reserved by framework but "
                "unallocated. If reserved but unallocated memory is large, free tensors or "
                "call framework.cuda.empty_cache() to avoid fragmentation.")


def _format_bytes(nbytes, pref):
    # like torch.cuda.memory._format_size: the unit follows the magnitude of `pref`
    units = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    unit = units[0]
    for nxt in units[1:]:
        if pref < 768 * 1024:
            break
        unit = nxt
        nbytes //= 1024
        pref /= 1024
    return f"{nbytes:6d} {unit}"


def _format_count(cnt, pref):
    units = [" ", "K", "M"]
    unit = units[0]
    for nxt in units[1:]:
        if pref < 750 * 1000:
            break
        unit = nxt
        cnt //= 1000
        pref /= 1000
    return f"{cnt:7d} {unit} "


class HostRawBackend:
    """Raw memory for simulated CUDA: 64-byte aligned host buffers. ``capacity`` caps the
    bytes it hands out (an artificial device size, for OOM tests)."""

    def __init__(self, capacity=None):
        self.capacity = capacity
        self.used = 0
        self._bufs = {}
        self._lock = threading.Lock()

    def raw_alloc(self, nbytes):
        with self._lock:
            if self.capacity is not None and self.used + nbytes > self.capacity:
                raise RawOutOfMemory(nbytes)
            try:
                buf = _C.host_alloc(nbytes)
            except MemoryError:
                raise RawOutOfMemory(nbytes) from None
            self._bufs[buf.ptr] = buf
            self.used += nbytes
            return buf.ptr

    def raw_free(self, ptr):
        with self._lock:
            buf = self._bufs.pop(ptr)
            self.used -= buf.nbytes

    def mem_get_info(self):
        if self.capacity is not None:
            return self.capacity - self.used, self.capacity
        pages = os.sysconf("SC_PHYS_PAGES")
        avail = os.sysconf("SC_AVPHYS_PAGES")
        page = os.sysconf("SC_PAGE_SIZE")
        return avail * page, pages * page

    # the simulator runs everything synchronously: recorded work is always complete
    def record_event(self, stream):
        return None

    def query_event(self, event):
        return True

    def synchronize_event(self, event):
        pass


class _NoGuard:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


class DriverRawBackend:
    """Raw memory from the CUDA driver (``cuMemAlloc``). ``guard()`` returns a context
    manager that makes this device's context current around each call that needs one
    (framework/cuda/_runtime.on_device); without it, the thread's current context is used."""

    def __init__(self, driver, guard=None):
        self.driver = driver
        self._guard = guard or _NoGuard
        self._event_pool = []

    def raw_alloc(self, nbytes):
        from .driver import CUDA_ERROR_OUT_OF_MEMORY, CudaError

        try:
            with self._guard():
                return self.driver.mem_alloc(nbytes)
        except CudaError as e:
            if e.code == CUDA_ERROR_OUT_OF_MEMORY:
                raise RawOutOfMemory(nbytes) from None
            raise

    def raw_free(self, ptr):
        with self._guard():
            self.driver.mem_free(ptr)

    def mem_get_info(self):
        with self._guard():
            return self.driver.mem_get_info()

    def synchronize(self):
        with self._guard():
            self.driver.ctx_synchronize()

    def record_event(self, stream):
        from .driver import CU_EVENT_DISABLE_TIMING

        # events are recycled: creating one per free would cost a driver call each time
        with self._guard():
            ev = self._event_pool.pop() if self._event_pool else \
                self.driver.event_create(CU_EVENT_DISABLE_TIMING)
            self.driver.event_record(ev, stream)
        return ev

    def query_event(self, event):
        if self.driver.event_query(event):
            self._event_pool.append(event)
            return True
        return False

    def synchronize_event(self, event):
        self.driver.event_synchronize(event)
        self._event_pool.append(event)
