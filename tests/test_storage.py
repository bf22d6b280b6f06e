"""CPU storage: alignment, the large-block cache, and memory lifetime with NumPy views."""
import gc

import numpy as np
import pytest

import framework as fw
from framework import _C


def test_alignment():
    for n in (1, 3, 17, 1000, 300_000):
        assert fw.empty(n, dtype=fw.uint8).data_ptr() % 64 == 0


def test_large_blocks_are_reused():
    _C.host_cache_clear()
    before = _C.host_cache_stats()
    a = fw.empty(1 << 20)          # 4 MiB: cached size class
    ptr = a.data_ptr()
    del a
    gc.collect()
    assert _C.host_cache_stats()["cached_bytes"] >= 4 << 20
    b = fw.empty(1 << 20)
    assert b.data_ptr() == ptr
    assert _C.host_cache_stats()["hits"] == before["hits"] + 1
    _C.host_cache_clear()
    assert _C.host_cache_stats()["cached_bytes"] == 0


def test_mid_size_blocks_are_reused():
    """256 KiB (a 256x256 float32 gradient) is cached too: glibc would unmap or trim it and
    the next one would take fresh page faults."""
    _C.host_cache_clear()
    a = fw.empty(256, 256)
    ptr = a.data_ptr()
    del a
    gc.collect()
    assert _C.host_cache_stats()["cached_bytes"] >= 256 << 10
    b = fw.empty(250, 260)         # 260,000 bytes: the same 16 KiB size class
    assert b.data_ptr() == ptr
    _C.host_cache_clear()


def test_small_blocks_not_cached():
    _C.host_cache_clear()
    a = fw.empty(16)
    del a
    assert _C.host_cache_stats()["cached_bytes"] == 0


def test_numpy_view_keeps_memory_alive():
    t = fw.arange(1 << 20, dtype=fw.int32)
    arr = t.numpy()
    del t
    gc.collect()
    fw.empty(1 << 20, dtype=fw.int32).fill_(-1)   # would reuse the block if it were freed
    np.testing.assert_array_equal(arr[:5], np.arange(5))
    assert arr[-1] == (1 << 20) - 1


def test_large_ops_release_the_gil_safely():
    """Kernels above the GIL-release threshold, run from several Python threads at once."""
    import threading
    n = 300_000
    errors = []

    def work(k):
        try:
            for _ in range(5):
                x = fw.full((n,), float(k))
                y = (x + x) * 2 - x.clone()
                z = fw.empty(n, dtype=fw.int64).fill_(k).copy_(y)
                assert z[-1].item() == 3 * k and float(y.sum()) == 3.0 * k * n
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---- sizes beyond memory or the address space ------------------------------------------

def test_cpu_out_of_memory_is_framework_error():
    from framework._storage import cpu_alloc
    with pytest.raises(fw.OutOfMemoryError, match="DefaultCPUAllocator: can't allocate memory"):
        cpu_alloc(2**47)
    assert issubclass(fw.OutOfMemoryError, RuntimeError)


@pytest.mark.parametrize("nbytes", [-1, 2**63])
def test_storage_of_impossible_size_raises_before_allocating(nbytes, device):
    from framework._ops import alloc
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        alloc.storage(nbytes, fw.device(device))


@pytest.mark.parametrize("shape,match", [
    ((2**62,), "Storage size calculation overflowed with sizes=\\[4611686018427387904\\]"),
    ((2**31, 2**31, 4), "Storage size calculation overflowed"),
    ((-1, 3), "Trying to create tensor with negative dimension -1: \\[-1, 3\\]"),
])
def test_alloc_empty_checks_sizes(shape, match, device):
    from framework._ops import alloc
    with pytest.raises(RuntimeError, match=match):
        alloc.empty(shape, fw.float32, fw.device(device))


def test_huge_empty_raises_out_of_memory(device):
    with pytest.raises(fw.OutOfMemoryError):
        fw.empty(2**45, device=device)
    x = fw.arange(6.0, device=device)
    with pytest.raises(fw.OutOfMemoryError):
        x.resize_(2**45)
    assert x.shape == (6,) and x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
