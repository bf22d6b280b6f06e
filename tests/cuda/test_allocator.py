"""Caching allocator: reuse, rounding, pools, splitting, coalescing, stats, OOM, streams
(on the simulator's host backend, with fake events where work must stay pending)."""
import pytest

from framework.cuda import allocator as A

MB = 1024 * 1024


class FakeEvents:
    """Events whose completion the test decides (simulates work pending on a stream)."""

    def __init__(self):
        self.events = []

    def record(self, stream):
        ev = {"stream": stream, "done": False}
        self.events.append(ev)
        return ev

    def query(self, ev):
        return ev["done"]

    def synchronize(self, ev):
        ev["done"] = True

    def complete(self, stream=None):
        for ev in self.events:
            if stream is None or ev["stream"] == stream:
                ev["done"] = True


def make(capacity=None, events=None, max_split_size=None):
    backend = A.HostRawBackend(capacity)
    if events is None:
        return A.CachingAllocator(backend, max_split_size=max_split_size), backend
    return A.CachingAllocator(backend, record_event=events.record, query_event=events.query,
                              synchronize_event=events.synchronize,
                              max_split_size=max_split_size), backend


def check_consistent(alloc, backend):
    """Segments tile their memory exactly; pools hold exactly the free blocks; stats match."""
    allocated = reserved = 0
    free_keys = set()
    for base, parts in alloc._core.blocks():
        ptr = base
        for p, size, stream, small, is_allocated, event_count, _requested in parts:
            assert p == ptr
            ptr += size
            if is_allocated:
                allocated += size
            elif event_count == 0:
                free_keys.add((stream, size, p, small))
        reserved += ptr - base
    keys = alloc._core.pool_keys()
    assert len(keys) == len(set(keys))
    # each pool is in best-fit order
    for small in (True, False):
        pool = [k for k in keys if k[3] == small]
        assert pool == sorted(pool)
    assert set(keys) == free_keys
    assert alloc.memory_allocated() == allocated
    assert alloc.memory_reserved() == reserved == backend.used


def test_round_and_allocation_size():
    assert A.round_size(0) == 512
    assert A.round_size(1) == 512
    assert A.round_size(512) == 512
    assert A.round_size(513) == 1024
    assert A.allocation_size(512) == 2 * MB
    assert A.allocation_size(MB) == 2 * MB
    assert A.allocation_size(MB + 512) == 20 * MB
    assert A.allocation_size(10 * MB - 512) == 20 * MB
    assert A.allocation_size(10 * MB) == 10 * MB
    assert A.allocation_size(11 * MB - 512) == 12 * MB


def test_reuse_of_freed_block():
    alloc, backend = make()
    b = alloc.malloc(1000)
    ptr = b.ptr
    assert b.size == 1024 and b.requested == 1000
    alloc.free(b)
    assert alloc.memory_allocated() == 0
    assert alloc.memory_reserved() == 2 * MB  # cached, not returned
    b2 = alloc.malloc(700)
    assert b2.ptr == ptr  # the freed block (merged back into its segment) is reused
    assert alloc.memory_stats()["segment.all.current"] == 1
    check_consistent(alloc, backend)


def test_small_and_large_pools_are_separate():
    alloc, backend = make()
    small = alloc.malloc(4096)
    large = alloc.malloc(2 * MB)
    s = alloc.memory_stats()
    assert s["reserved_bytes.small_pool.current"] == 2 * MB
    assert s["reserved_bytes.large_pool.current"] == 20 * MB
    assert s["allocated_bytes.small_pool.current"] == 4096
    assert s["allocated_bytes.large_pool.current"] == 2 * MB
    alloc.free(large)
    # a free 20 MiB large segment is never used for a small request
    small2 = alloc.malloc(MB)
    assert alloc.memory_stats()["segment.small_pool.current"] == 1
    assert not (large.ptr <= small2.ptr < large.ptr + 20 * MB)
    # the cached 20 MiB segment fits a 10 MiB request: best fit takes it, no new segment
    big = alloc.malloc(10 * MB + 1)
    assert big.ptr == large.ptr
    assert alloc.memory_stats()["reserved_bytes.large_pool.current"] == 20 * MB
    for b in (small, small2, big):
        alloc.free(b)
    check_consistent(alloc, backend)


def test_large_request_gets_own_rounded_segment():
    alloc, backend = make()
    b = alloc.malloc(11 * MB - 100)
    # a 1 MiB tail is not split off a large block (only tails > 1 MiB are): it stays
    # part of the allocation
    assert b.size == 12 * MB and b.requested == 11 * MB - 100
    assert alloc.memory_reserved() == 12 * MB
    assert alloc.memory_allocated() == 12 * MB
    assert alloc.memory_stats()["requested_bytes.all.current"] == 11 * MB - 100
    alloc.free(b)
    # a tail of more than 1 MiB is split off
    b = alloc.malloc(11 * MB - 1024)
    assert b.size == 11 * MB - 1024
    assert alloc.segments()[0][2] == [(11 * MB - 1024, True), (MB + 1024, False)]
    check_consistent(alloc, backend)


def test_split_and_coalesce_small_pool():
    alloc, backend = make()
    a = alloc.malloc(1000)
    b = alloc.malloc(3000)
    c = alloc.malloc(512)
    base = a.ptr
    assert (b.ptr, c.ptr) == (base + 1024, base + 1024 + 3072)
    parts = alloc.segments()[0][2]
    assert parts == [(1024, True), (3072, True), (512, True), (2 * MB - 4608, False)]
    alloc.free(b)
    check_consistent(alloc, backend)
    # the hole is reused by best fit: a 2048-byte request prefers the 3072 hole to the tail
    d = alloc.malloc(2048)
    assert d.ptr == base + 1024
    assert alloc.segments()[0][2][1:3] == [(2048, True), (1024, False)]
    alloc.free(d)
    assert alloc.segments()[0][2][1] == (3072, False)  # coalesced with the 1024 remainder
    alloc.free(a)
    assert alloc.segments()[0][2][0] == (4096, False)  # coalesced with the next free block
    alloc.free(c)
    # all three neighbours merged back into one whole free segment
    assert alloc.segments() == [(base, 2 * MB, [(2 * MB, False)])]
    s = alloc.memory_stats()
    assert s["inactive_split.all.current"] == 0
    check_consistent(alloc, backend)


def test_small_pool_splits_down_to_512_bytes():
    alloc, backend = make()
    c = alloc.malloc(MB)          # small pool: split into 1 MiB + 1 MiB
    d = alloc.malloc(MB - 512)    # takes the 1 MiB tail, leaving exactly 512 bytes split off
    assert d.ptr == c.ptr + MB
    assert alloc.segments()[0][2] == [(MB, True), (MB - 512, True), (512, False)]
    e = alloc.malloc(1)
    assert e.ptr == d.ptr + MB - 512
    assert alloc.memory_stats()["segment.small_pool.current"] == 1
    for x in (c, d, e):
        alloc.free(x)
    check_consistent(alloc, backend)


def test_stats_and_peaks():
    alloc, backend = make()
    blocks = [alloc.malloc(MB) for _ in range(3)]   # 2 small segments
    assert alloc.memory_allocated() == 3 * MB
    assert alloc.memory_reserved() == 4 * MB
    alloc.free(blocks.pop())
    assert alloc.memory_allocated() == 2 * MB
    assert alloc.max_memory_allocated() == 3 * MB
    assert alloc.max_memory_reserved() == 4 * MB
    s = alloc.memory_stats()
    assert s["allocation.all.current"] == 2
    assert s["allocation.all.allocated"] == 3
    assert s["allocation.all.freed"] == 1
    assert s["allocated_bytes.all.peak"] == 3 * MB
    assert s["allocated_bytes.small_pool.freed"] == MB
    assert s["active_bytes.all.current"] == 2 * MB
    assert s["reserved_bytes.all.peak"] == 4 * MB
    assert s["segment.all.current"] == 2
    assert s["num_alloc_retries"] == 0 and s["num_ooms"] == 0
    assert s["num_device_alloc"] == 2
    alloc.reset_peak_memory_stats()
    assert alloc.max_memory_allocated() == 2 * MB
    assert alloc.max_memory_reserved() == 4 * MB
    alloc.free(blocks.pop())
    alloc.free(blocks.pop())
    alloc.reset_peak_memory_stats()
    assert alloc.max_memory_allocated() == 0
    alloc.reset_accumulated_memory_stats()
    s = alloc.memory_stats()
    assert s["allocation.all.allocated"] == 0 and s["allocation.all.freed"] == 0
    check_consistent(alloc, backend)


def test_empty_cache_releases_only_free_segments():
    alloc, backend = make()
    a = alloc.malloc(MB)
    b = alloc.malloc(MB)
    c = alloc.malloc(MB)     # second segment, shared with nothing else
    big = alloc.malloc(30 * MB)
    alloc.free(c)
    alloc.free(big)
    alloc.free(a)            # its segment still holds b: not releasable
    assert alloc.memory_reserved() == 4 * MB + 30 * MB
    alloc.empty_cache()
    assert alloc.memory_reserved() == 2 * MB
    assert backend.used == 2 * MB
    assert alloc.memory_stats()["num_device_free"] == 2
    alloc.free(b)
    alloc.empty_cache()
    assert alloc.memory_reserved() == 0 and backend.used == 0
    check_consistent(alloc, backend)


def test_oom_message_and_consistent_state():
    alloc, backend = make(capacity=24 * MB)
    a = alloc.malloc(2 * MB)          # 20 MiB segment
    s0 = alloc.memory_stats()
    with pytest.raises(A.OutOfMemoryError) as ei:
        alloc.malloc(2 * MB)          # fits in a's segment's tail: no OOM expected
        alloc.malloc(40 * MB)
    msg = str(ei.value)
    assert isinstance(ei.value, RuntimeError)
    assert "CUDA out of memory. Tried to allocate 40.00 MiB." in msg
    assert "GPU 0 has a total capacity of 24.00 MiB of which 4.00 MiB is free." in msg
    assert "4.00 MiB is allocated by framework" in msg
    assert "16.00 MiB is reserved by framework but unallocated" in msg
    s = alloc.memory_stats()
    # more than the device's capacity: refused without asking the backend or emptying the
    # cache first (PyTorch would retry once)
    assert s["num_ooms"] == 1 and s["num_alloc_retries"] == 0
    assert s["allocated_bytes.all.current"] == 4 * MB
    assert s["reserved_bytes.all.current"] == s0["reserved_bytes.all.current"] == 20 * MB
    check_consistent(alloc, backend)
    # the allocator still works after the failure
    alloc.free(a)
    b = alloc.malloc(MB)
    alloc.free(b)
    check_consistent(alloc, backend)


def test_oom_retry_frees_cache_then_succeeds():
    alloc, backend = make(capacity=32 * MB)
    a = alloc.malloc(MB)              # 2 MiB small segment
    big = alloc.malloc(20 * MB)       # 20 MiB large segment
    alloc.free(a)
    alloc.free(big)
    assert backend.used == 22 * MB    # both cached
    c = alloc.malloc(24 * MB)         # needs the cache released first
    assert c.size == 24 * MB
    s = alloc.memory_stats()
    assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0
    assert alloc.memory_reserved() == backend.used == 24 * MB
    check_consistent(alloc, backend)
    with pytest.raises(A.OutOfMemoryError, match="Tried to allocate 10.00 MiB"):
        alloc.malloc(10 * MB)
    alloc.free(c)
    check_consistent(alloc, backend)


def test_oom_waits_for_pending_frees_before_giving_up():
    events = FakeEvents()
    alloc, backend = make(capacity=20 * MB, events=events)
    a = alloc.malloc(12 * MB)
    alloc.record_stream(a, 7)
    alloc.free(a)                      # pending: stream 7 may still read it
    assert backend.used == 12 * MB
    b = alloc.malloc(16 * MB)          # the retry synchronizes the event, frees, reallocates
    assert events.events[0]["done"]
    assert backend.used == 16 * MB
    alloc.free(b)
    check_consistent(alloc, backend)


def test_streams_do_not_share_cached_blocks():
    alloc, backend = make()
    a = alloc.malloc(4096, stream=1)
    alloc.free(a)
    b = alloc.malloc(4096, stream=2)
    assert alloc.memory_stats()["segment.all.current"] == 2
    assert not (a.ptr <= b.ptr < a.ptr + 2 * MB)
    c = alloc.malloc(4096, stream=1)
    assert c.ptr == a.ptr
    assert c.stream == 1 and b.stream == 2
    alloc.free(b)
    alloc.free(c)
    check_consistent(alloc, backend)


def test_record_stream_defers_reuse():
    events = FakeEvents()
    alloc, backend = make(events=events)
    a = alloc.malloc(4096, stream=0)
    alloc.record_stream(a, 0)          # its own stream: nothing to wait for
    alloc.record_stream(a, 5)
    alloc.record_stream(a, 6)
    ptr = a.ptr
    alloc.free(a)
    assert [e["stream"] for e in events.events] == [5, 6]
    assert alloc.memory_allocated() == 0                     # freed for accounting...
    assert alloc.memory_stats()["active_bytes.all.current"] == 4096  # ...but still in use
    b = alloc.malloc(4096)
    assert b.ptr != ptr                # not reused while stream 5 and 6 work is pending
    events.complete(5)
    c = alloc.malloc(4096)
    assert c.ptr not in (ptr, b.ptr)   # stream 6 still pending
    events.complete(6)
    d = alloc.malloc(4096)
    assert d.ptr == ptr                # now reusable
    assert alloc.memory_stats()["active_bytes.all.current"] == 3 * 4096
    # record_stream applies to one free only
    alloc.free(d)
    assert len(events.events) == 2
    e = alloc.malloc(4096)
    assert e.ptr == ptr
    for x in (b, c, e):
        alloc.free(x)
    check_consistent(alloc, backend)


def test_pending_block_is_not_coalesced():
    events = FakeEvents()
    alloc, backend = make(events=events)
    a = alloc.malloc(1024)
    b = alloc.malloc(1024)
    alloc.record_stream(a, 3)
    alloc.free(a)
    alloc.free(b)                       # must not merge into pending a
    assert alloc.segments()[0][2][0] == (1024, False)
    alloc.empty_cache()                 # waits for the event, then frees the whole segment
    assert alloc.memory_reserved() == 0 and backend.used == 0
    check_consistent(alloc, backend)


def test_max_split_size_guards_oversize_blocks():
    alloc, backend = make(max_split_size=24 * MB)
    assert alloc.memory_stats()["max_split_size"] == 24 * MB
    a = alloc.malloc(50 * MB)
    alloc.free(a)
    # a request below max_split_size never takes an oversize block
    b = alloc.malloc(6 * MB)
    assert b.ptr != a.ptr and alloc.memory_reserved() == 70 * MB
    parts = next(parts for base, _, parts in alloc.segments() if base == b.ptr)
    assert parts == [(6 * MB, True), (14 * MB, False)]
    # an oversize request takes it whole, unsplit (50 < 32 + 20 MiB)
    c = alloc.malloc(32 * MB)
    assert c.ptr == a.ptr and c.size == 50 * MB
    alloc.free(c)
    # ...but not when it is 20 MiB or more too large: a new segment is cheaper
    d = alloc.malloc(30 * MB)
    assert d.ptr != a.ptr and d.size == 30 * MB
    for x in (b, d):
        alloc.free(x)
    check_consistent(alloc, backend)
    assert make()[0].memory_stats()["max_split_size"] == -1


def test_max_split_size_oom_frees_oversize_blocks_first():
    alloc, backend = make(capacity=100 * MB, max_split_size=8 * MB)
    s = alloc.malloc(1000)
    alloc.free(s)                     # a cached small segment, 2 MiB
    x, y = alloc.malloc(40 * MB), alloc.malloc(50 * MB)
    alloc.free(x)
    alloc.free(y)
    assert backend.used == 92 * MB
    # the smallest oversize segment that is big enough (40 MiB) is released, nothing else
    z = alloc.malloc(12 * MB)
    assert backend.used == 2 * MB + 50 * MB + 12 * MB
    assert alloc.memory_stats()["num_alloc_retries"] == 0
    alloc.free(z)
    # none is big enough alone: the largest ones are released until enough is free
    w = alloc.malloc(60 * MB)
    assert backend.used == 2 * MB + 60 * MB
    assert alloc.memory_stats()["segment.small_pool.current"] == 1
    assert alloc.memory_stats()["num_alloc_retries"] == 0
    alloc.free(w)
    # and when that cannot help either, the whole cache goes
    v = alloc.malloc(98 * MB)
    assert backend.used == 98 * MB
    assert alloc.memory_stats()["num_alloc_retries"] == 1
    alloc.free(v)
    check_consistent(alloc, backend)


def test_free_errors():
    alloc, _ = make()
    a = alloc.malloc(100)
    alloc.free(a)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        alloc.free(a)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        alloc.free_ptr(12345)
    with pytest.raises(RuntimeError, match="negative"):
        alloc.malloc(-1)
    b = alloc.malloc(100)
    alloc.free_ptr(b.ptr)
    assert alloc.memory_allocated() == 0


def test_memory_summary():
    alloc, _ = make()
    a = alloc.malloc(3 * MB)
    text = alloc.memory_summary()
    lines = text.splitlines()
    assert "framework CUDA memory summary, device ID 0" in text
    assert "CUDA OOMs: 0" in text and "cudaMalloc retries: 0" in text
    assert len({len(ln) for ln in lines}) == 1     # a rectangular table
    row = next(ln for ln in lines if "Allocated memory" in ln)
    assert row.split("|")[2].strip() == "3072 KiB"
    row = next(ln for ln in lines if "GPU reserved memory" in ln)
    assert row.split("|")[2].strip() == "20480 KiB"
    row = next(ln for ln in lines if "Allocations" in ln)
    assert row.split("|")[2].strip() == "1"
    alloc.free(a)


def test_format_size():
    assert A.format_size(512) == "512 bytes"
    assert A.format_size(1024) == "1024 bytes"
    assert A.format_size(1536) == "1.50 KiB"
    assert A.format_size(2 * MB) == "2.00 MiB"
    assert A.format_size(3 * 1024 * MB) == "3.00 GiB"


@pytest.mark.parametrize("max_split_size", [None, 4 * MB])
def test_random_workload_stays_consistent(max_split_size):
    # a seeded mix of sizes, streams, record_stream, pending events, OOMs and empty_cache
    import random

    rng = random.Random(0)
    events = FakeEvents()
    alloc, backend = make(capacity=64 * MB, events=events, max_split_size=max_split_size)
    live = []
    ooms = 0
    for step in range(600):
        op = rng.random()
        if op < 0.55:
            size = rng.choice([rng.randint(0, 4096), rng.randint(4096, 2 * MB),
                               rng.randint(2 * MB, 24 * MB)])
            try:
                blk = alloc.malloc(size, stream=rng.randint(0, 2))
            except A.OutOfMemoryError:
                ooms += 1
            else:
                assert blk.size >= size and blk.ptr % 512 == backend_base_mod(alloc, blk)
                live.append(blk)
        elif op < 0.9 and live:
            blk = live.pop(rng.randrange(len(live)))
            if rng.random() < 0.3:
                alloc.record_stream(blk, rng.randint(0, 3))
            alloc.free(blk)
        elif op < 0.95:
            events.complete(rng.randint(0, 3))
        else:
            alloc.empty_cache()
        check_consistent(alloc, backend)
        # live blocks never overlap
        spans = sorted((b.ptr, b.ptr + b.size) for b in live)
        assert all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:]))
        assert alloc.memory_allocated() == sum(b.size for b in live)
    assert ooms > 0  # the cap was reached, so the OOM path ran in the mix
    s = alloc.memory_stats()
    assert s["num_ooms"] == ooms
    for blk in live:
        alloc.free(blk)
    alloc.empty_cache()
    assert alloc.memory_reserved() == 0 and backend.used == 0


def backend_base_mod(alloc, blk):
    """ptr % 512 of the block's segment base: blocks sit at 512-byte steps from it."""
    base = max(b for b, _, _ in alloc.segments() if b <= blk.ptr)
    return base % 512


def test_owned_block_frees_itself_when_collected():
    alloc, backend = make()
    a = alloc.alloc_owned(1000)
    b = alloc.alloc_owned(3000)
    kept = alloc.malloc(100)         # malloc's blocks are freed only by free()
    assert alloc.memory_allocated() == 1024 + 3072 + 512
    ptr = a.ptr
    del a
    assert alloc.memory_allocated() == 3072 + 512
    assert alloc.alloc_owned(700).ptr == ptr   # reused, then collected again at once
    alloc.free_ptr(b.ptr)            # freed by address: the handle's collection does nothing
    c = alloc.alloc_owned(3000)      # takes b's memory again...
    del b                            # ...which b's handle must not free
    assert alloc.memory_allocated() == 3072 + 512
    alloc.free(kept)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        alloc.free(kept)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        alloc.record_stream(kept, 3)
    del c
    assert alloc.memory_allocated() == 0
    check_consistent(alloc, backend)


def test_owned_block_with_other_stream_waits_for_its_event():
    events = FakeEvents()
    alloc, backend = make(events=events)
    a = alloc.alloc_owned(4096, stream=0)
    alloc.record_stream(a, 9)
    ptr = a.ptr
    del a                            # recorded an event on stream 9: not reusable yet
    assert [e["stream"] for e in events.events] == [9]
    assert alloc.memory_stats()["active_bytes.all.current"] == 4096
    b = alloc.malloc(4096)
    assert b.ptr != ptr
    events.complete(9)
    c = alloc.malloc(4096)
    assert c.ptr == ptr
    alloc.free(b)
    alloc.free(c)
    check_consistent(alloc, backend)


def test_threads_allocating_and_freeing_stay_consistent():
    # the native hot path holds the GIL throughout; the slow path (new segments, releases)
    # runs under the allocator's lock: four threads mixing both leave a consistent cache
    import threading

    events = FakeEvents()
    alloc, backend = make(capacity=256 * MB, events=events)
    errors = []

    def work(seed):
        import random
        rng = random.Random(seed)
        live = []
        try:
            for _ in range(400):
                if (rng.random() < 0.5 or not live) and len(live) < 16:
                    size = rng.choice([rng.randint(1, 8192), rng.randint(8192, 3 * MB)])
                    live.append(alloc.alloc_owned(size, stream=rng.randint(0, 1)))
                else:
                    blk = live.pop(rng.randrange(len(live)))
                    if rng.random() < 0.2:
                        alloc.record_stream(blk, 5)
                    del blk
                if rng.random() < 0.02:
                    events.complete()
                    alloc.empty_cache()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        live.clear()

    import sys

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors
    events.complete()
    alloc.empty_cache()
    check_consistent(alloc, backend)
    assert alloc.memory_allocated() == 0 and alloc.memory_reserved() == backend.used == 0


def test_event_hook_that_lets_another_thread_in_sees_the_block_pending():
    # the record_event hook is Python: another thread may run inside it, e.g. empty_cache.
    # The block being freed must count as pending by then, not as a free whole segment
    events = FakeEvents()
    alloc = None

    def record(stream):
        alloc.empty_cache()          # what another thread could do at this moment
        return events.record(stream)

    backend = A.HostRawBackend()
    alloc = A.CachingAllocator(backend, record_event=record, query_event=events.query,
                               synchronize_event=events.synchronize)
    a = alloc.malloc(12 * MB)        # a segment of its own, unsplit
    alloc.record_stream(a, 7)
    alloc.free(a)
    assert backend.used == 12 * MB   # still there: stream 7 may be using it
    assert alloc.memory_stats()["active_bytes.all.current"] == 12 * MB
    events.complete(7)
    alloc.empty_cache()
    assert backend.used == 0
    check_consistent(alloc, backend)
