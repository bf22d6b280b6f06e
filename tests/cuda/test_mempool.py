"""framework.cuda.MemPool / use_mem_pool and the allocator switches (torch.cuda.memory):
allocations in a pool's context come from the pool's own segments and its freed memory
serves only the pool; a pool shared with a CUDA graph; empty_cache and
caching_allocator_enable(False) give memory back to the device."""
import gc
import inspect
import threading

import numpy as np
import pytest

import framework as fw

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")

MB = 1 << 20


def _seg_bases(snapshot):
    return {s["address"] for s in snapshot}


def _segment_of(t):
    ptr = t.data_ptr()
    for s in fw.cuda.memory_snapshot():
        if s["address"] <= ptr < s["address"] + s["total_size"]:
            return s
    raise AssertionError("no segment holds the tensor")


def test_signatures_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("MemPool", "use_mem_pool", "caching_allocator_enable",
                 "change_current_allocator"):
        ours, theirs = getattr(fw.cuda, name), getattr(torch.cuda, name)
        ours = ours.__init__ if inspect.isclass(ours) else ours
        theirs = theirs.__init__ if inspect.isclass(theirs) else theirs
        assert list(inspect.signature(ours).parameters) == \
            list(inspect.signature(theirs).parameters), name
    assert fw.cuda.memory.MemPool is fw.cuda.MemPool


def test_allocations_in_the_pool_use_its_segments_only():
    fw.cuda.empty_cache()
    outside = fw.empty(1000, device="cuda")
    pool = fw.cuda.MemPool()
    assert pool.use_count() == 1 and pool.allocator is None
    assert pool.id[0] == 0 and pool.id != fw.cuda.MemPool().id
    with fw.cuda.use_mem_pool(pool):
        assert pool.use_count() == 2
        a = fw.ones(3000, device="cuda")
        b = a * 2.0                     # an op's output: allocated in the pool too
    assert pool.use_count() == 1
    np.testing.assert_array_equal(b.cpu().numpy(), np.full(3000, 2.0, np.float32))
    own = pool.snapshot()
    assert own and all(s["segment_pool_id"] == pool.id for s in own)
    assert _segment_of(a)["address"] in _seg_bases(own)
    assert _segment_of(b)["address"] in _seg_bases(own)
    assert _segment_of(outside)["address"] not in _seg_bases(own)
    assert _segment_of(outside)["segment_pool_id"] == (0, 0)
    # pool memory counts in the device's statistics
    assert fw.cuda.memory_allocated() >= 2 * 3000 * 4 + 1000 * 4

    # memory freed in the pool is reused only by the pool's allocations
    ptr = a.data_ptr()
    del a
    c = fw.empty(3000, device="cuda")
    assert c.data_ptr() != ptr and _segment_of(c)["address"] not in _seg_bases(own)
    with fw.cuda.use_mem_pool(pool):
        d = fw.empty(3000, device="cuda")
    assert d.data_ptr() == ptr
    # other threads allocate outside the pool, even while it is in use here
    got = []
    with fw.cuda.use_mem_pool(pool):
        t = threading.Thread(target=lambda: got.append(fw.empty(10, device="cuda")))
        t.start()
        t.join()
    assert _segment_of(got[0])["address"] not in _seg_bases(pool.snapshot())
    del b, c, d, got, outside


def test_nested_pools_route_to_the_innermost():
    p1, p2 = fw.cuda.MemPool(), fw.cuda.MemPool()
    with fw.cuda.use_mem_pool(p1):
        x1 = fw.empty(100, device="cuda")
        with fw.cuda.use_mem_pool(p2):
            assert (p1.use_count(), p2.use_count()) == (2, 2)
            x2 = fw.empty(100, device="cuda")
        x3 = fw.empty(100, device="cuda")
    y = fw.empty(100, device="cuda")
    s1, s2 = _seg_bases(p1.snapshot()), _seg_bases(p2.snapshot())
    assert s1 and s2 and not s1 & s2
    assert _segment_of(x1)["address"] in s1 and _segment_of(x3)["address"] in s1
    assert _segment_of(x2)["address"] in s2
    assert _segment_of(y)["address"] not in s1 | s2
    del x1, x2, x3, y


def test_empty_cache_keeps_a_pool_in_use_and_frees_it_after():
    fw.cuda.empty_cache()
    pool = fw.cuda.MemPool()
    with fw.cuda.use_mem_pool(pool):
        x = fw.empty(3 * MB // 4, device="cuda")
    reserved = fw.cuda.memory_reserved()
    del x
    fw.cuda.empty_cache()      # the MemPool still holds the pool: its segment stays
    assert len(pool.snapshot()) == 1
    assert fw.cuda.memory_reserved() == reserved
    tag = pool.id
    del pool                   # the last user gone: the pool's free segments go back
    gc.collect()
    assert fw.cuda.memory_snapshot(tag) == []
    assert fw.cuda.memory_reserved() < reserved


def test_pool_shared_with_a_graph_capture():
    x = fw.from_numpy(np.arange(1500, dtype=np.float64)).to("cuda")
    pool = fw.cuda.MemPool()
    g = fw.cuda.CUDAGraph()
    s = fw.cuda.Stream()
    with fw.cuda.stream(s):
        g.capture_begin(pool=pool.id)
        y = x * 2.0 + 1.0
        g.capture_end()
    assert g.pool() == pool.id
    assert pool.use_count() == 2          # the MemPool and the graph
    assert _segment_of(y)["address"] in _seg_bases(pool.snapshot())
    x.fill_(3.0)
    g.replay()
    np.testing.assert_array_equal(y.cpu().numpy(), np.full(1500, 7.0))
    with fw.cuda.use_mem_pool(pool):      # eager allocations share the graph's pool
        z = fw.empty(10, device="cuda")
    assert _segment_of(z)["address"] in _seg_bases(pool.snapshot())
    g.reset()
    assert pool.use_count() == 1
    del y, z


def test_use_on_oom_pool_serves_an_allocation_that_would_fail():
    a = fw.cuda.memory._alloc(None)
    pool = fw.cuda.MemPool(use_on_oom=True)
    with fw.cuda.use_mem_pool(pool):
        x = fw.empty(12 * MB // 4, device="cuda")   # a segment of its own
    ptr = x.data_ptr()
    del x
    fw.cuda.empty_cache()
    saved = a.memory_fraction_limit
    a.memory_fraction_limit = a.memory_reserved()   # no new segment may be made
    try:
        y = fw.empty(12 * MB // 4, device="cuda")
        assert y.data_ptr() == ptr
        with pytest.raises(fw.cuda.OutOfMemoryError):
            fw.empty(12 * MB // 4, device="cuda")
    finally:
        a.memory_fraction_limit = saved
    del y, pool


def test_caching_allocator_disabled_returns_memory_at_once():
    seg = 20 * MB      # the segment size of a 5 MiB request
    with fw.cuda.caching_allocator_disabled():
        assert not fw.cuda.mempool._caching_allocator_is_enabled()
        x = fw.ones(3000, device="cuda")
        np.testing.assert_array_equal((x + 1.0).cpu().numpy(), np.full(3000, 2.0, np.float32))
        base = fw.cuda.memory_reserved()
        y = fw.empty(5 * MB // 4, device="cuda")
        assert fw.cuda.memory_reserved() == base + seg
        del y
        assert fw.cuda.memory_reserved() == base      # given back at once
        del x
        assert all(s["allocated_size"] > 0 for s in fw.cuda.memory_snapshot())
    assert fw.cuda.mempool._caching_allocator_is_enabled()
    base = fw.cuda.memory_reserved()
    y = fw.empty(5 * MB // 4, device="cuda")
    del y
    assert fw.cuda.memory_reserved() == base + seg    # cached again
    fw.cuda.empty_cache()
    assert fw.cuda.memory_reserved() == base


def test_errors():
    with pytest.raises(NotImplementedError, match="CUDAPluggableAllocator"):
        fw.cuda.CUDAPluggableAllocator("x.so", "alloc", "free")
    with pytest.raises(NotImplementedError, match="change_current_allocator"):
        fw.cuda.change_current_allocator(None)
    with pytest.raises(NotImplementedError, match="no_split"):
        fw.cuda.MemPool(no_split=True)
    with pytest.raises(TypeError, match="MemPool"):
        with fw.cuda.use_mem_pool((0, 1)):
            pass
    set_settings = fw.cuda.memory._set_allocator_settings
    with pytest.raises(ValueError, match="max_split_size_mb too small, must be >= 20"):
        set_settings("max_split_size_mb:10")
    set_settings("garbage_collection_threshold:0.5,expandable_segments:False")
