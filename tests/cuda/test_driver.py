"""CUDA driver binding: error formatting and loading without a GPU (fake library); on a
machine with a driver, a smoke test of every wrapped call family."""
import contextlib
import ctypes

import numpy as np
import pytest

from framework.cuda import allocator as A
from framework.cuda import driver as D


class FakeLib:
    """Stands in for libcuda: cuGetErrorName/String fill the out-pointer, cuMemAlloc_v2
    fails with OUT_OF_MEMORY, cuDeviceGetCount succeeds."""

    def cuGetErrorName(self, code, out):
        out.contents.value = {2: b"CUDA_ERROR_OUT_OF_MEMORY"}.get(code)
        return 0 if code == 2 else 1

    def cuGetErrorString(self, code, out):
        out.contents.value = b"out of memory"
        return 0

    def cuMemAlloc_v2(self, ptr, size):
        return 2

    def cuDeviceGetCount(self, n):
        n._obj.value = 3
        return 0

    def cuMemFree_v2(self, ptr):
        return 700


def test_driver_error_formatting():
    d = D.Driver(FakeLib())
    with pytest.raises(D.CudaError) as ei:
        d.mem_alloc(1 << 30)
    e = ei.value
    assert isinstance(e, RuntimeError)
    assert e.code == 2 and e.call == "cuMemAlloc_v2"
    assert str(e) == ("CUDA driver error: cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY "
                      "(out of memory)")
    # a code cuGetErrorName does not know falls back to the table
    with pytest.raises(D.CudaError, match="cuMemFree_v2 failed: CUDA_ERROR_ILLEGAL_ADDRESS"):
        d.mem_free(0x1000)
    assert d.device_count() == 3
    with pytest.raises(RuntimeError, match="cuInit is missing"):
        d.init()


def test_driver_oom_maps_to_raw_out_of_memory():
    backend = A.DriverRawBackend(D.Driver(FakeLib()))
    with pytest.raises(A.RawOutOfMemory):
        backend.raw_alloc(1 << 30)


def test_driver_missing_library_is_a_clear_error():
    with pytest.raises(RuntimeError, match="could not load the CUDA driver library "
                                           "libcuda-does-not-exist.so"):
        D.load("libcuda-does-not-exist.so")


def test_driver_signatures_set_on_real_functions():
    libc = ctypes.CDLL(None)
    # a real CFUNCPTR gets argtypes and restype from the table (any symbol stands in)
    fake = type("L", (), {"cuMemFree_v2": libc.free})()
    D.Driver(fake)
    assert fake.cuMemFree_v2.argtypes == [D.CUdeviceptr]
    assert fake.cuMemFree_v2.restype is D.CUresult


needs_driver = pytest.mark.skipif(not D.is_loadable(), reason="no CUDA driver")


@pytest.fixture
def drv():
    d = D.get()
    dev = d.device_get(0)
    d.ctx_set_current(d.primary_ctx_retain(dev))
    yield d
    d.primary_ctx_release(dev)


@needs_driver
def test_real_driver_device_queries(drv):
    assert drv.device_count() >= 1
    dev = drv.device_get(0)
    assert drv.device_name(dev)
    major, minor = drv.compute_capability(dev)
    assert major >= 3 and minor >= 0
    assert drv.multiprocessor_count(dev) > 0
    free, total = drv.mem_get_info()
    assert 0 < free <= total == drv.device_total_mem(dev)
    with pytest.raises(D.CudaError, match="cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE"):
        drv.device_get(drv.device_count())


@needs_driver
def test_real_driver_copies_streams_events(drv):
    n = 1 << 20
    src = np.arange(n, dtype=np.uint8)
    dst = np.zeros(n, dtype=np.uint8)
    a, b = drv.mem_alloc(n), drv.mem_alloc(n)
    stream = drv.stream_create()
    start, end = drv.event_create(), drv.event_create()
    try:
        drv.memcpy_htod(a, src.ctypes.data, n)
        drv.event_record(start, stream)
        drv.memcpy_dtod(b, a, n, stream)
        drv.event_record(end, stream)
        drv.event_synchronize(end)
        assert drv.event_query(end)
        assert drv.event_elapsed_time(start, end) >= 0
        drv.memcpy_dtoh(dst.ctypes.data, b, n)
        np.testing.assert_array_equal(dst, src)
        drv.memset_d8(b, 7, n, stream)
        drv.stream_synchronize(stream)
        assert drv.stream_query(stream)
        pinned = drv.mem_host_alloc(n)
        try:
            drv.memcpy_dtoh(pinned, b, n, stream)
            drv.stream_wait_event(0, end)
            drv.stream_synchronize(stream)
            host = np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(pinned))
            assert (host == 7).all()
        finally:
            drv.mem_free_host(pinned)
    finally:
        drv.event_destroy(start)
        drv.event_destroy(end)
        drv.stream_destroy(stream)
        drv.mem_free(a)
        drv.mem_free(b)


@needs_driver
def test_real_driver_allocator_oom_and_reuse(drv):
    alloc = A.CachingAllocator(A.DriverRawBackend(drv))
    stream = drv.stream_create()
    blk = alloc.malloc(1000)
    alloc.record_stream(blk, stream)
    alloc.free(blk)                     # records a real event on `stream`
    drv.stream_synchronize(stream)
    blk = alloc.malloc(1000)            # the event has completed: the block is reused
    assert alloc.segments()[0][2][0] == (1024, True) and len(alloc.segments()) == 1
    drv.stream_destroy(stream)
    _, total = drv.mem_get_info()
    with pytest.raises(A.OutOfMemoryError, match="CUDA out of memory. Tried to allocate"):
        alloc.malloc(2 * total)
    assert alloc.memory_stats()["num_ooms"] == 1
    alloc.free_ptr(blk.ptr)
    alloc.empty_cache()
    assert alloc.memory_reserved() == 0


def test_async_copies_keep_pinned_memory_alive_until_done():
    """_runtime.keep_alive holds a pinned buffer until its copy's event has completed, and
    recycles the events (a fake driver decides when events complete)."""
    from framework.cuda import _runtime as R

    class FakeDriver:
        def __init__(self):
            self.done, self.created, self.recorded = set(), 0, []

        def event_create(self, flags):
            self.created += 1
            return self.created

        def event_record(self, ev, stream):
            self.recorded.append((ev, stream))

        def event_query(self, ev):
            return ev in self.done

    class Host:
        pass

    import weakref
    d = FakeDriver()
    saved = list(R._inflight), dict(R._event_pools)
    R._inflight.clear()
    R._event_pools.clear()
    try:
        h1 = Host()
        w1 = weakref.ref(h1)
        R.keep_alive(d, 0, 7, h1)
        del h1
        assert w1() is not None              # the copy is still running
        R.keep_alive(d, 0, 7, Host())
        assert d.created == 2 and d.recorded == [(1, 7), (2, 7)]
        d.done.add(1)
        R.keep_alive(d, 0, 7, Host())         # event 1 done: buffer released, event reused
        assert w1() is None and d.created == 2 and d.recorded[-1] == (1, 7)
        assert len(R._inflight) == 2
    finally:
        R._inflight.clear()
        R._inflight.extend(saved[0])
        R._event_pools.clear()
        R._event_pools.update(saved[1])


@pytest.mark.parametrize("direction,non_blocking,waits", [
    ("htod", False, True), ("htod", True, False), ("dtoh", False, True), ("dtoh", True, True)])
def test_pageable_copies_wait_only_where_pytorch_does(monkeypatch, direction, non_blocking,
                                                      waits):
    """copy_bytes with the driver: a non-blocking copy from pageable host memory to the
    device does not wait for the stream (the driver has staged the source when the call
    returns, as PyTorch relies on); a blocking one, and any copy into pageable host memory,
    does."""
    from framework import device
    from framework.cuda import _runtime as R
    from framework._storage import Storage

    calls = []

    class FakeDriver:
        def memcpy_htod(self, dst, src, n, stream):
            calls.append(("htod", n, stream))

        def memcpy_dtoh(self, dst, src, n, stream):
            calls.append(("dtoh", n, stream))

        def stream_synchronize(self, stream):
            calls.append(("sync", stream))

    class State:
        mode, driver = "driver", FakeDriver()

    monkeypatch.setattr(R, "state", lambda: State)
    monkeypatch.setattr(R, "on_device", lambda index: contextlib.nullcontext())
    monkeypatch.setattr(R, "stream_handle", lambda index: 5)
    host = Storage(4096, 64, device("cpu"), None)
    dev = Storage(8192, 64, device("cuda", 0), None)
    dst, src = (dev, host) if direction == "htod" else (host, dev)
    R.copy_bytes(dst, src, 64, non_blocking=non_blocking)
    assert calls[0] == (direction, 64, 5)
    assert (("sync", 5) in calls) == waits
