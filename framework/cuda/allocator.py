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
from bisect import bisect_left, insort
import os
import threading

KB = 1024
MB = 1024 * KB
GB = 1024 * MB

kMinBlockSize = 512          # every size is rounded up to a multiple of this
kSmallSize = 1 * MB          # requests up to this size come from the small pool
kSmallBuffer = 2 * MB        # segment size of the small pool
kLargeBuffer = 20 * MB       # segment size for large requests below kMinLargeAlloc
kMinLargeAlloc = 10 * MB     # requests from here on get their own segment...
kRoundLarge = 2 * MB         # ...rounded up to a multiple of this


class OutOfMemoryError(RuntimeError):
    """Out of memory: on cuda raised after the cache was freed and the allocation retried;
    the CPU allocator raises it too (``framework.OutOfMemoryError``)."""


class RawOutOfMemory(Exception):
    """Raised by a raw backend when the device has no room for a new segment."""


def round_size(size):
    """The size a request of ``size`` bytes is given (a multiple of 512, at least 512)."""
    if size < kMinBlockSize:
        return kMinBlockSize
    return kMinBlockSize * ((size + kMinBlockSize - 1) // kMinBlockSize)


def allocation_size(size):
    """The size of the segment allocated for a rounded request of ``size`` bytes."""
    if size <= kSmallSize:
        return kSmallBuffer
    if size < kMinLargeAlloc:
        return kLargeBuffer
    return kRoundLarge * ((size + kRoundLarge - 1) // kRoundLarge)


def format_size(nbytes):
    """PyTorch's size format in OOM messages: '512 bytes', '2.00 MiB', '1.50 GiB'."""
    if nbytes <= 1024:
        return f"{nbytes} bytes"
    if nbytes <= MB:
        return f"{nbytes / KB:.2f} KiB"
    if nbytes <= GB:
        return f"{nbytes / MB:.2f} MiB"
    return f"{nbytes / GB:.2f} GiB"


class Block:
    """A piece of a segment; blocks of one segment form a doubly linked list by address."""

    __slots__ = ("ptr", "size", "requested", "stream", "small", "allocated", "prev", "next",
                 "stream_uses", "event_count", "__weakref__")

    def __init__(self, ptr, size, stream, small):
        self.ptr = ptr
        self.size = size
        self.requested = 0
        self.stream = stream
        self.small = small
        self.allocated = False
        self.prev = None
        self.next = None
        self.stream_uses = None      # the set of other streams, made by record_stream
        self.event_count = 0

    def is_split(self):
        return self.prev is not None or self.next is not None

    def key(self):
        return (self.stream, self.size, self.ptr)

    def __repr__(self):
        return (f"Block(ptr={self.ptr:#x}, size={self.size}, stream={self.stream}, "
                f"allocated={self.allocated})")


class _Pool:
    """Free blocks ordered by (stream, size, ptr), for best-fit search on one stream.

    One sorted list of ``(stream, size, ptr, block)``: no two free blocks share a ptr, so
    comparisons never reach the block, and no dict is needed beside the list."""

    def __init__(self, small):
        self.small = small
        self.entries = []

    def insert(self, block):
        insort(self.entries, (block.stream, block.size, block.ptr, block))

    def remove(self, block):
        entries = self.entries
        i = bisect_left(entries, (block.stream, block.size, block.ptr))
        assert i < len(entries) and entries[i][3] is block, "block not in pool"
        del entries[i]

    def __iter__(self):
        return iter([entry[3] for entry in self.entries])


class Stat:
    """current / peak / allocated (total increase) / freed (total decrease)."""

    __slots__ = ("current", "peak", "allocated", "freed")

    def __init__(self):
        self.current = self.peak = self.allocated = self.freed = 0

    def update(self, amount):
        self.current += amount
        if amount > 0:
            self.allocated += amount
            self.peak = max(self.peak, self.current)
        else:
            self.freed -= amount


_STAT_NAMES = ("allocation", "segment", "active", "allocated_bytes", "reserved_bytes",
               "active_bytes", "requested_bytes")
_POOL_NAMES = ("all", "small_pool", "large_pool")
# the stats every malloc and free changes, in the order of the unrolled updates
_HOT_NAMES = ("allocation", "allocated_bytes", "active", "active_bytes", "requested_bytes")


class CachingAllocator:
    """Caching allocator of one device. ``malloc(nbytes, stream) -> Block``,
    ``free(block)``, ``record_stream(block, stream)``, stats and ``empty_cache()``."""

    def __init__(self, backend, device=0, record_event=None, query_event=None,
                 synchronize_event=None, max_split_size=None):
        self.backend = backend
        self.device = device
        # PYTORCH_CUDA_ALLOC_CONF's max_split_size_mb (in bytes): blocks this large are
        # never split, and small requests never take them (a fragmentation guard)
        self.max_split_size = max_split_size if max_split_size is not None else float("inf")
        self._record_event = record_event or getattr(backend, "record_event", None)
        self._query_event = query_event or getattr(backend, "query_event", None)
        self._sync_event = synchronize_event or getattr(backend, "synchronize_event", None)
        self._lock = threading.RLock()
        self._small = _Pool(small=True)
        self._large = _Pool(small=False)
        self._segments = {}          # segment base ptr -> head block
        self._active = {}            # ptr -> allocated Block
        self._events = []            # [event, block] awaiting completion, in record order
        # name -> [all, small_pool, large_pool]. Of "all" only the peak is kept, the other
        # fields are the pools' sums (added when read): half the updates of malloc and free
        self._stats = {name: [Stat() for _ in _POOL_NAMES] for name in _STAT_NAMES}
        # the _HOT_NAMES Stats of the large and small pool (index: small) and of "all"
        self._pool_stats = tuple(tuple(self._stats[name][i] for name in _HOT_NAMES)
                                 for i in (2, 1))
        self._all_stats = tuple(self._stats[name][0] for name in _HOT_NAMES)
        self.memory_fraction_limit = None   # bytes, from set_per_process_memory_fraction
        self._total = None                  # the device's capacity, asked for once
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_device_alloc = 0
        self.num_device_free = 0

    # -- stats helpers ---------------------------------------------------------------------
    def _update(self, name, small, amount):
        """Changes stat ``name`` of one pool by ``amount`` (segments: off the hot path)."""
        arr = self._stats[name]
        arr[1 if small else 2].update(amount)
        arr[0].peak = max(arr[0].peak, arr[1].current + arr[2].current)

    def _count_malloc(self, small, size, requested):
        """Counts a new allocation of ``size`` bytes (``requested`` asked for): unrolled,
        since a call per stat costs more than the updates themselves."""
        n, b, a, ab, r = self._pool_stats[small]
        n_o, b_o, a_o, ab_o, r_o = self._pool_stats[not small]
        n_all, b_all, a_all, ab_all, r_all = self._all_stats
        # each stat: the pool's current, allocated and peak, then the peak of "all"
        c = n.current = n.current + 1
        n.allocated += 1
        if c > n.peak:
            n.peak = c
        c += n_o.current
        if c > n_all.peak:
            n_all.peak = c
        c = b.current = b.current + size
        b.allocated += size
        if c > b.peak:
            b.peak = c
        c += b_o.current
        if c > b_all.peak:
            b_all.peak = c
        c = a.current = a.current + 1
        a.allocated += 1
        if c > a.peak:
            a.peak = c
        c += a_o.current
        if c > a_all.peak:
            a_all.peak = c
        c = ab.current = ab.current + size
        ab.allocated += size
        if c > ab.peak:
            ab.peak = c
        c += ab_o.current
        if c > ab_all.peak:
            ab_all.peak = c
        c = r.current = r.current + requested
        r.allocated += requested
        if c > r.peak:
            r.peak = c
        c += r_o.current
        if c > r_all.peak:
            r_all.peak = c

    # -- allocation --------------------------------------------------------------------------
    def malloc(self, nbytes, stream=0):
        """A block of at least ``nbytes`` bytes for use on ``stream``."""
        if nbytes < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension: {nbytes}")
        with self._lock:
            if self._events:  # blocks wait for other streams (record_stream): rare
                self._process_events()
            size = round_size(nbytes)
            small = size <= kSmallSize
            pool = self._small if small else self._large
            # the best fit: the first entry from (stream, size) on (which sorts before all of
            # that stream and size) is the smallest block holding size bytes, lowest address
            # on ties. One over max_split_size serves only an oversize request (oversize
            # blocks are kept for those) it does not exceed by kLargeBuffer (that would
            # waste it); being the smallest fit, if it breaks a rule every larger one does
            entries = pool.entries
            i = bisect_left(entries, (stream, size))
            if i < len(entries) and entries[i][0] == stream and (
                    entries[i][1] < self.max_split_size
                    or (self.max_split_size <= size and entries[i][1] < size + kLargeBuffer)):
                block = entries.pop(i)[3]  # out of the pool by its index
            else:
                alloc_size = allocation_size(size)
                if self._total is None:
                    self._total = self.backend.mem_get_info()[1]
                if alloc_size > self._total:
                    # more than the device holds: refused without the driver or emptying
                    # the cache (a real driver was seen to take over a minute to refuse 8 TiB)
                    self.num_ooms += 1
                    raise OutOfMemoryError(self._oom_message(alloc_size))
                block = self._alloc_segment(alloc_size, stream, small)
                if block is None and self._release_available_cached_blocks(pool, stream,
                                                                           size):
                    block = self._alloc_segment(alloc_size, stream, small)
                if block is None:
                    # free every cached segment (after pending frees land), then retry
                    self._release_cached_blocks()
                    self.num_alloc_retries += 1
                    block = self._alloc_segment(alloc_size, stream, small)
                if block is None:
                    self.num_ooms += 1
                    raise OutOfMemoryError(self._oom_message(alloc_size))
            # split off the tail the request does not need. A large block keeps its tail
            # only if the tail is large too, so that the large pool does not fill up with
            # slivers small requests can never use
            remaining = block.size - size
            if (remaining >= kMinBlockSize if small else
                    size < self.max_split_size and remaining > kSmallSize):
                rest = Block(block.ptr + size, block.size - size, block.stream, small)
                rest.prev = block
                rest.next = block.next
                if rest.next is not None:
                    rest.next.prev = rest
                block.next = rest
                block.size = size
                pool.insert(rest)
            block.allocated = True
            block.requested = nbytes
            self._active[block.ptr] = block
            self._count_malloc(small, block.size, nbytes)
            return block

    def _release_available_cached_blocks(self, pool, stream, size):
        """Frees cached oversize segments of ``stream`` (the smallest one that is big
        enough, else the largest ones until enough is freed). False if that cannot help."""
        if self.max_split_size == float("inf"):
            return False
        need = max(size, self.max_split_size)
        candidates = sorted((b for b in pool if b.stream == stream and not b.is_split()
                             and b.size >= self.max_split_size), key=Block.key)
        fits = [b for b in candidates if b.size >= need]
        if fits:
            chosen = fits[:1]
        else:
            chosen, total = [], 0
            for b in reversed(candidates):
                if total >= need:
                    break
                chosen.append(b)
                total += b.size
            if total < need:
                return False
        self._synchronize_backend()
        for b in chosen:
            self._release_segment(pool, b)
        return True

    def _alloc_segment(self, alloc_size, stream, small):
        """A new free segment from the backend, or None when the device is full (or the
        set_per_process_memory_fraction cap would be passed)."""
        limit = self.memory_fraction_limit
        if limit is not None and self.memory_reserved() + alloc_size > limit:
            return None
        try:
            ptr = self.backend.raw_alloc(alloc_size)
        except RawOutOfMemory:
            return None
        block = Block(ptr, alloc_size, stream, small)
        self._segments[ptr] = block
        self.num_device_alloc += 1
        self._update("segment", small, 1)
        self._update("reserved_bytes", small, alloc_size)
        return block

    # -- freeing -----------------------------------------------------------------------------
    def free(self, block):
        """Returns a block to the cache. If other streams used it (record_stream), it is
        reused only after the work queued on them so far has completed."""
        with self._lock:
            if not block.allocated or self._active.get(block.ptr) is not block:
                raise RuntimeError(f"invalid device pointer: {block.ptr:#x}")
            del self._active[block.ptr]
            block.allocated = False
            # the pool's allocation, allocated_bytes and requested_bytes ("all": the sums)
            n, b, _, _, r = self._pool_stats[block.small]
            n.current -= 1
            n.freed += 1
            b.current -= block.size
            b.freed += block.size
            r.current -= block.requested
            r.freed += block.requested
            block.requested = 0
            if block.stream_uses:
                for s in sorted(block.stream_uses):
                    self._events.append([self._record_event(s) if self._record_event else None,
                                         block])
                    block.event_count += 1
                block.stream_uses = None
            else:
                self._free_block(block)

    def free_ptr(self, ptr):
        """Frees the allocated block that starts at ``ptr``."""
        with self._lock:
            block = self._active.get(ptr)
            if block is None:
                raise RuntimeError(f"invalid device pointer: {ptr:#x}")
            self.free(block)

    def _free_block(self, block):
        """Puts an inactive block back in its pool, merged with free neighbours."""
        small = block.small
        pool = self._small if small else self._large
        # the pool's active and active_bytes ("all": the sums)
        _, _, a, ab, _ = self._pool_stats[small]
        a.current -= 1
        a.freed += 1
        ab.current -= block.size
        ab.freed += block.size
        prev = block.prev
        if prev is not None and not prev.allocated and prev.event_count == 0:
            # the merged block starts where the previous one did
            pool.remove(prev)
            block.ptr = prev.ptr
            block.size += prev.size
            block.prev = prev.prev
            if block.prev is not None:
                block.prev.next = block
            elif prev.ptr in self._segments:
                self._segments[prev.ptr] = block
        nxt = block.next
        if nxt is not None and not nxt.allocated and nxt.event_count == 0:
            pool.remove(nxt)
            block.size += nxt.size
            block.next = nxt.next
            if block.next is not None:
                block.next.prev = block
        pool.insert(block)

    def record_stream(self, block, stream):
        """Marks ``block`` as used by ``stream``: after ``free`` it is reused only once the
        work queued on ``stream`` up to that free has completed."""
        with self._lock:
            if stream != block.stream:
                if block.stream_uses is None:
                    block.stream_uses = set()
                block.stream_uses.add(stream)

    def _process_events(self):
        """Frees blocks whose recorded events have all completed."""
        if not self._events:
            return
        pending = []
        for entry in self._events:
            event, block = entry
            if self._query_event is None or self._query_event(event):
                block.event_count -= 1
                if block.event_count == 0:
                    self._free_block(block)
            else:
                pending.append(entry)
        self._events = pending

    def _synchronize_and_free_events(self):
        for event, block in self._events:
            if self._sync_event is not None:
                self._sync_event(event)
            block.event_count -= 1
            if block.event_count == 0:
                self._free_block(block)
        self._events = []

    # -- releasing the cache -------------------------------------------------------------------
    def _release_cached_blocks(self):
        """Gives every fully free segment back to the backend."""
        self._synchronize_and_free_events()
        self._synchronize_backend()
        for pool in (self._small, self._large):
            for block in pool:
                if not block.is_split():
                    self._release_segment(pool, block)

    def _synchronize_backend(self):
        # a cached block may still be in use by kernels queued on its stream: wait for the
        # device before giving memory back
        sync = getattr(self.backend, "synchronize", None)
        if sync is not None:
            sync()

    def _release_segment(self, pool, block):
        """Gives a whole free segment back to the backend."""
        pool.remove(block)
        del self._segments[block.ptr]
        self.backend.raw_free(block.ptr)
        self.num_device_free += 1
        self._update("segment", block.small, -1)
        self._update("reserved_bytes", block.small, -block.size)

    def empty_cache(self):
        """Releases all unoccupied cached memory (whole free segments)."""
        with self._lock:
            self._release_cached_blocks()

    # -- stats -----------------------------------------------------------------------------
    def memory_allocated(self):
        st = self._stats["allocated_bytes"]
        return st[1].current + st[2].current

    def max_memory_allocated(self):
        return self._stats["allocated_bytes"][0].peak

    def memory_reserved(self):
        st = self._stats["reserved_bytes"]
        return st[1].current + st[2].current

    def max_memory_reserved(self):
        return self._stats["reserved_bytes"][0].peak

    def reset_peak_memory_stats(self):
        with self._lock:
            for all_, small, large in self._stats.values():
                small.peak = small.current
                large.peak = large.current
                all_.peak = small.current + large.current

    def reset_accumulated_memory_stats(self):
        with self._lock:
            for arr in self._stats.values():
                for st in arr:
                    st.allocated = st.freed = 0
            self.num_alloc_retries = self.num_ooms = 0
            self.num_device_alloc = self.num_device_free = 0

    def memory_stats(self):
        """A flat dict with PyTorch's keys ("allocated_bytes.all.current", ...)."""
        with self._lock:
            out = {}
            for name, (all_, small, large) in self._stats.items():
                for field in ("current", "allocated", "freed"):
                    out[f"{name}.all.{field}"] = getattr(small, field) + getattr(large, field)
                out[f"{name}.all.peak"] = all_.peak
                for pool_name, st in (("small_pool", small), ("large_pool", large)):
                    for field in Stat.__slots__:
                        out[f"{name}.{pool_name}.{field}"] = getattr(st, field)
            inactive = [b for p in (self._small, self._large) for b in p if b.is_split()]
            for pool_name, sel in (("all", None), ("small_pool", True), ("large_pool", False)):
                blocks = [b for b in inactive if sel is None or b.small == sel]
                out[f"inactive_split.{pool_name}.current"] = len(blocks)
                out[f"inactive_split_bytes.{pool_name}.current"] = sum(b.size for b in blocks)
            out["num_alloc_retries"] = self.num_alloc_retries
            out["num_ooms"] = self.num_ooms
            out["num_device_alloc"] = self.num_device_alloc
            out["num_device_free"] = self.num_device_free
            out["max_split_size"] = (-1 if self.max_split_size == float("inf")
                                     else self.max_split_size)
            return dict(sorted(out.items()))

    def segments(self):
        """[(base ptr, total size, [(size, allocated), ...]), ...] by address."""
        with self._lock:
            out = []
            for base in sorted(self._segments):
                parts, b, total = [], self._segments[base], 0
                while b is not None:
                    parts.append((b.size, b.allocated))
                    total += b.size
                    b = b.next
                out.append((base, total, parts))
            return out

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
                vals = [s[f"{key}.{pool_name}.{f}"] for f in Stat.__slots__]
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
        from .. import _C  # imported late: the allocator module itself needs no extension

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
