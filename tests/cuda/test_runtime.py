"""framework.cuda's runtime as a user sees it: devices and their errors, moving tensors between
host and device (every dtype, non-contiguous views), pinned memory, streams and events, the
memory API and out-of-memory errors. PyTorch's documented behaviour is the reference.

Runs on a real GPU, or on the simulator (TRITON_INTERPRET=1). Tests that need a small device
memory or two devices run a script in a subprocess with FRAMEWORK_SIM_MEMORY /
FRAMEWORK_SIM_DEVICES set (simulator only: a real GPU has the memory and count it has)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import framework as fw
from tests.helpers import child_env

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MB = 1024 * 1024
DTYPES = [fw.float16, fw.bfloat16, fw.float32, fw.float64, fw.int8, fw.uint8, fw.int16,
          fw.int32, fw.int64, fw.bool]


def simulated():
    return fw.cuda.is_available() and fw.cuda.is_simulated()


needs_sim = pytest.mark.skipif(not simulated(), reason="sets the simulator's memory/devices")


def run_script(code, **env):
    """Runs ``code`` in a fresh simulated process with extra environment variables; fails
    the test with its output unless it exits 0."""
    full = child_env(ROOT, TRITON_INTERPRET="1")
    full.update({k: str(v) for k, v in env.items()})
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"script failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def sample(shape, dtype, seed=0):
    """Random data of ``dtype`` as a cpu tensor (never zeros: they hide unwritten output)."""
    rng = np.random.default_rng(seed)
    if dtype is fw.bool:
        return fw.tensor(rng.random(shape) > 0.5)
    if dtype.is_floating_point:
        return fw.tensor(rng.standard_normal(shape) * 10, dtype=dtype)
    lo, hi = (0, 256) if dtype is fw.uint8 else (-100, 100)
    return fw.tensor(rng.integers(lo, hi, shape), dtype=dtype)


def same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(np.asarray(a.cpu().float() if a.dtype is fw.bfloat16 else
                                             a.cpu()),
                                  np.asarray(b.cpu().float() if b.dtype is fw.bfloat16 else
                                             b.cpu()))


# ---- devices -------------------------------------------------------------------------------

def test_availability_and_current_device():
    assert fw.cuda.is_available()
    assert fw.cuda.is_initialized()
    assert fw.cuda.device_count() >= 1
    assert fw.cuda.current_device() == 0
    fw.cuda.synchronize()
    fw.cuda.synchronize(0)
    fw.cuda.synchronize("cuda:0")


def test_set_device_and_device_context_on_one_device():
    fw.cuda.set_device(0)
    fw.cuda.set_device("cuda:0")
    fw.cuda.set_device(fw.device("cuda", 0))
    fw.cuda.set_device(-1)  # negative: a no-op, as in PyTorch
    assert fw.cuda.current_device() == 0
    with fw.cuda.device(0):
        assert fw.cuda.current_device() == 0
    with fw.cuda.device(-1):
        assert fw.cuda.current_device() == 0
    with fw.cuda.device(None):
        assert fw.cuda.current_device() == 0
    with fw.cuda.device_of(fw.zeros(2, device="cuda")):
        assert fw.cuda.current_device() == 0
    with fw.cuda.device_of(fw.zeros(2)):  # a cpu tensor: no-op
        assert fw.cuda.current_device() == 0


def test_device_properties():
    p = fw.cuda.get_device_properties(0)
    assert isinstance(p.name, str) and p.name
    assert p.total_memory > 0 and p.multi_processor_count >= 1
    assert (p.major, p.minor) == fw.cuda.get_device_capability()
    assert fw.cuda.get_device_name() == p.name == fw.cuda.get_device_name("cuda:0")
    assert fw.cuda.get_device_properties(fw.device("cuda")) is p
    major, minor = fw.cuda.get_device_capability(0)
    assert isinstance(major, int) and isinstance(minor, int) and major >= 1
    assert "total_memory" in repr(p)


def test_invalid_ordinals_raise_pytorchs_errors():
    bad = fw.cuda.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        fw.zeros(2, device=f"cuda:{bad}")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        fw.arange(3).to(f"cuda:{bad}")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        fw.cuda.set_device(bad)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        with fw.cuda.device(bad):
            pass
    assert fw.cuda.current_device() == 0
    with pytest.raises(AssertionError, match="Invalid device id"):
        fw.cuda.get_device_properties(bad)
    with pytest.raises(AssertionError, match="Invalid device id"):
        fw.cuda.get_device_name(bad)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        fw.cuda.memory_allocated(bad)
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:-1'"):
        fw.device("cuda:-1")
    with pytest.raises(RuntimeError, match="Device index must not be negative"):
        fw.device("cuda", -1)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        fw.device("gpu:0")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        fw.cuda.set_device("cpu")
    with pytest.raises(ValueError, match="with a specified index"):
        fw.cuda.set_device(None)


def test_device_strings_are_one_object():
    assert fw.device("cuda:0") is fw.device("cuda", 0)
    assert fw.device("cuda:0") == "cuda:0" and str(fw.device("cuda", 0)) == "cuda:0"
    t = fw.zeros(2, device="cuda")
    assert t.device == fw.device("cuda:0") and t.device.index == 0
    assert t.is_cuda and not t.is_cpu and t.get_device() == 0
    assert t.type() == "framework.cuda.FloatTensor"
    assert fw.zeros(2).get_device() == -1 and fw.zeros(2).type() == "framework.FloatTensor"


# ---- moving tensors ------------------------------------------------------------------------

def test_to_cuda_cpu_and_identity():
    x = sample((3, 5), fw.float32)
    y = x.to("cuda")
    assert y.device == fw.device("cuda:0") and y.dtype is fw.float32
    same(y, x)
    # nothing to do: the same tensor, whichever way the device is spelt
    for spec in ("cuda", "cuda:0", fw.device("cuda", 0), fw.device("cuda"), 0):
        assert y.to(spec) is y
    assert y.cuda() is y and y.cuda(0) is y
    assert x.cpu() is x and x.to("cpu") is x
    assert y.to("cuda", copy=True) is not y
    z = y.cpu()
    assert z.device == fw.device("cpu")
    same(z, x)
    # device and dtype together, and the tensor form
    w = x.to("cuda", fw.float64)
    assert w.device.type == "cuda" and w.dtype is fw.float64
    np.testing.assert_array_equal(np.asarray(w.cpu()), np.asarray(x).astype(np.float64))
    assert x.to(w).device == w.device and x.to(w).dtype is fw.float64
    assert x.to(device="cuda", dtype=fw.float16).dtype is fw.float16
    assert x.cuda(non_blocking=True).device.type == "cuda"
    v = y.to("cpu", non_blocking=True)  # PyTorch gives pinned memory here
    fw.cuda.synchronize()
    assert v.is_pinned()
    same(v, x)


def test_factories_on_cuda():
    with fw.device("cuda"):
        assert fw.zeros(2).device.type == "cuda"
    t = fw.full((2, 3), 7, device="cuda")
    assert t.device.type == "cuda" and t.dtype is fw.int64
    assert np.asarray(t.cpu()).tolist() == [[7] * 3] * 2
    assert fw.tensor([1.5, 2.5], device="cuda").cpu().tolist() == [1.5, 2.5]
    e = fw.empty(0, device="cuda")
    assert e.numel() == 0 and e.cpu().shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_round_trip_every_dtype(dtype):
    x = sample((4, 37), dtype)
    d = x.cuda()
    assert d.dtype is dtype and d.is_contiguous()
    same(d, x)
    d2 = d.to("cuda", copy=True)  # device to device
    assert d2.data_ptr() != d.data_ptr()
    same(d2, x)
    same(d.cpu(), x)
    s = fw.tensor(True if dtype is fw.bool else 3, dtype=dtype)  # 0-d
    assert s.cuda().shape == () and s.cuda().item() == s.item()


@pytest.mark.parametrize("dtype", [fw.float32, fw.bfloat16, fw.int8, fw.bool, fw.float64],
                         ids=lambda d: d.name)
def test_non_contiguous_transfers(dtype):
    x = sample((6, 8, 5), dtype, seed=1)
    views = {
        "transpose": x.transpose(0, 2),                # dense: keeps its strides
        "permute": x.permute(1, 2, 0),
        "step": x[::2, 1:7:3],                          # gaps: made contiguous
        "expand": x[:, :1, :].expand(6, 4, 5),          # stride 0
        "flip": fw.flip(x, [1]) if dtype is not fw.bool else x[1:, 2:, :3],
        "narrow": x[:, 2:5, 1:4],
        "scalar_index": x[3],
    }
    for name, v in views.items():
        d = v.cuda()
        same(d, v)
        back = d.cpu()
        same(back, v)
        # device to device from a non-contiguous cuda view
        dv = x.cuda().transpose(0, 2)[1:, ::2]
        same(dv.to("cuda", copy=True), x.transpose(0, 2)[1:, ::2])
        same(dv.cpu(), x.transpose(0, 2)[1:, ::2])
    # PyTorch's preserve_format: dense layouts keep their strides, others become contiguous
    t = x.transpose(0, 2).cuda()
    assert t.stride() == x.transpose(0, 2).stride() and not t.is_contiguous()
    assert t.cpu().stride() == t.stride()
    assert x[::2].cuda().is_contiguous() and x[:, :1].expand(6, 3, 5).cuda().is_contiguous()


@pytest.mark.parametrize("src_dev,dst_dev", [("cpu", "cuda"), ("cuda", "cpu"),
                                             ("cuda", "cuda")])
def test_copy_across_devices(src_dev, dst_dev):
    x = sample((5, 7), fw.float32, seed=2)
    src = x.to(src_dev).t()                       # non-contiguous source
    dst = fw.zeros(7, 5, dtype=fw.float64, device=dst_dev)[:, :]
    out = dst.copy_(src)                          # converts float32 -> float64
    assert out is dst and dst.device.type == dst_dev
    np.testing.assert_array_equal(np.asarray(dst.cpu()), np.asarray(x).T.astype(np.float64))
    # into a non-contiguous destination, broadcasting a row
    big = fw.zeros(4, 6, dtype=fw.int32, device=dst_dev)
    big[:, ::2].copy_(fw.tensor([1, 2, 3], dtype=fw.int32, device=src_dev))
    assert np.asarray(big.cpu()).tolist() == [[1, 0, 2, 0, 3, 0]] * 4
    dst.copy_(src, non_blocking=True)
    fw.cuda.synchronize()
    np.testing.assert_array_equal(np.asarray(dst.cpu()), np.asarray(x).T.astype(np.float64))


# ---- pinned memory -------------------------------------------------------------------------

def test_pin_memory():
    x = sample((3, 4), fw.float32)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu" and p.data_ptr() != x.data_ptr()
    same(p, x)
    assert p.pin_memory() is p  # already pinned
    # numpy() shares the pinned memory
    arr = p.numpy()
    arr[0, 0] = 123.0
    assert p[0, 0].item() == 123.0
    # a dense transposed layout keeps its strides, a strided view becomes contiguous
    assert x.t().pin_memory().stride() == x.t().stride()
    same(x.t().pin_memory(), x.t())
    assert x[:, ::2].pin_memory().is_contiguous()
    same(x[:, ::2].pin_memory(), x[:, ::2])
    # factories
    e = fw.empty(5, 2, dtype=fw.int16, pin_memory=True)
    assert e.is_pinned() and e.shape == (5, 2) and e.dtype is fw.int16
    t = fw.tensor([1.0, 2.0], pin_memory=True)
    assert t.is_pinned() and t.tolist() == [1.0, 2.0]
    assert fw.empty(0, pin_memory=True).is_pinned()
    # pinned to device without blocking, then back
    d = p.to("cuda", non_blocking=True)
    fw.cuda.current_stream().synchronize()
    same(d, p)
    c = d.cuda()
    assert not c.is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        c.pin_memory()


# ---- streams and events --------------------------------------------------------------------

def test_streams():
    default = fw.cuda.default_stream()
    assert fw.cuda.current_stream() == default and default.cuda_stream == 0
    assert default.device == fw.device("cuda:0") and default == fw.cuda.default_stream(0)
    s = fw.cuda.Stream()
    assert s != default and s.cuda_stream != 0 and s.device_index == 0
    assert fw.cuda.Stream(priority=-1).priority == -1
    x = fw.arange(10, dtype=fw.float32, device="cuda")
    s.wait_stream(fw.cuda.current_stream())  # x is made on the default stream
    with fw.cuda.stream(s) as entered:
        assert entered is s
        assert fw.cuda.current_stream() == s
        s2 = fw.cuda.Stream("cuda:0")
        with fw.cuda.stream(s2):
            assert fw.cuda.current_stream() == s2
        assert fw.cuda.current_stream() == s
        y = x * 2  # queued on s
    assert fw.cuda.current_stream() == default
    with fw.cuda.stream(None):  # no-op, as in PyTorch
        assert fw.cuda.current_stream() == default
    default.wait_stream(s)
    assert y.cpu().tolist() == [2.0 * i for i in range(10)]
    s.synchronize()
    assert s.query() and default.query()
    fw.cuda.set_stream(s)
    assert fw.cuda.current_stream() == s
    fw.cuda.set_stream(default)
    assert fw.cuda.current_stream() == default
    assert "cuda_stream" in repr(s) and len({s, default, s}) == 2


def test_events():
    start, end = fw.cuda.Event(enable_timing=True), fw.cuda.Event(enable_timing=True)
    assert start.query()  # not recorded yet: nothing to wait for
    with pytest.raises(RuntimeError, match="must be recorded"):
        start.elapsed_time(end)
    x = fw.ones(1000, device="cuda")
    start.record()
    for _ in range(3):
        x = x + 1
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0
    assert x[0].item() == 4.0
    plain = fw.cuda.Event()
    plain.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        plain.elapsed_time(end)
    s = fw.cuda.Stream()
    ev = s.record_event()
    assert isinstance(ev, fw.cuda.Event)
    ev.wait()                       # the current stream waits for s
    fw.cuda.current_stream().wait_event(ev)
    ev.synchronize()
    e2 = fw.cuda.Event()
    e2.record(s)
    e2.record(fw.cuda.current_stream())  # re-recording on the same device is allowed


def test_record_stream_delays_reuse_not_accounting():
    s = fw.cuda.Stream()
    before = fw.cuda.memory_allocated()
    x = fw.empty(256 * 1024, device="cuda")  # 1 MiB
    s.wait_stream(fw.cuda.current_stream())
    with fw.cuda.stream(s):
        y = x * 2
    x.record_stream(s)
    del x, y
    # freed for the accounting at once, as in PyTorch; reusable once s's work is done
    assert fw.cuda.memory_allocated() == before
    s.synchronize()
    z = fw.ones(256 * 1024, device="cuda")
    assert z[-1].item() == 1.0
    with pytest.raises(RuntimeError, match="record_stream"):
        fw.zeros(2).record_stream(s)


# ---- memory API ----------------------------------------------------------------------------

def test_memory_allocated_follows_tensor_lifetime():
    fw.cuda.synchronize()
    base = fw.cuda.memory_allocated()
    x = fw.empty(1000, dtype=fw.float32, device="cuda")       # 4000 bytes -> 4096
    assert fw.cuda.memory_allocated() - base == 4096
    v = x[10:20]                                              # a view shares the block
    del x
    assert fw.cuda.memory_allocated() - base == 4096
    del v
    assert fw.cuda.memory_allocated() == base
    y = fw.empty(3 * MB, dtype=fw.uint8, device="cuda")
    assert fw.cuda.memory_allocated(0) - base == 3 * MB
    assert fw.cuda.memory_allocated("cuda:0") == fw.cuda.memory_allocated(fw.device("cuda"))
    del y
    assert fw.cuda.memory_allocated() == base
    assert fw.empty(0, device="cuda").numel() == 0 and fw.cuda.memory_allocated() == base


def test_peak_reserved_stats_summary_and_empty_cache():
    fw.cuda.empty_cache()
    fw.cuda.reset_peak_memory_stats()
    base = fw.cuda.memory_allocated()
    assert fw.cuda.max_memory_allocated() == base
    a = fw.empty(12 * MB, dtype=fw.uint8, device="cuda")     # a large segment of its own
    b = fw.empty(1024, dtype=fw.uint8, device="cuda")         # small pool
    peak = fw.cuda.max_memory_allocated()
    assert peak == base + 12 * MB + 1024
    assert fw.cuda.memory_reserved() >= fw.cuda.memory_allocated() + 0
    assert fw.cuda.max_memory_reserved() >= fw.cuda.memory_reserved()
    del a
    assert fw.cuda.max_memory_allocated() == peak             # the peak stays
    reserved = fw.cuda.memory_reserved()
    assert reserved >= 12 * MB                                # cached, not given back
    fw.cuda.reset_peak_memory_stats()
    assert fw.cuda.max_memory_allocated() == fw.cuda.memory_allocated() == base + 1024
    fw.cuda.empty_cache()
    assert fw.cuda.memory_reserved() <= reserved - 12 * MB    # the free segment went back
    assert fw.cuda.memory_reserved() >= fw.cuda.memory_allocated()
    stats = fw.cuda.memory_stats()
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                "allocated_bytes.small_pool.current", "allocated_bytes.large_pool.allocated",
                "reserved_bytes.all.current", "active_bytes.all.current",
                "requested_bytes.all.current", "allocation.all.current", "segment.all.current",
                "inactive_split.all.current", "num_alloc_retries", "num_ooms",
                "num_device_alloc", "num_device_free"):
        assert key in stats, key
    assert stats["allocated_bytes.all.current"] == fw.cuda.memory_allocated()
    assert stats["reserved_bytes.all.current"] == fw.cuda.memory_reserved()
    assert stats["requested_bytes.all.current"] <= stats["allocated_bytes.all.current"]
    assert list(stats) == sorted(stats)
    text = fw.cuda.memory_summary()
    for row in ("Allocated memory", "GPU reserved memory", "Allocations", "CUDA OOMs"):
        assert row in text
    assert fw.cuda.memory_summary(0, abbreviated=True)
    free, total = fw.cuda.mem_get_info()
    assert 0 <= free <= total
    assert abs(total - fw.cuda.get_device_properties(0).total_memory) <= total // 100
    del b


# ---- a small device: out of memory (simulator) ---------------------------------------------

@needs_sim
def test_out_of_memory_message_and_recovery():
    out = run_script("""
        import framework as fw
        MB = 1 << 20
        assert fw.cuda.get_device_properties(0).total_memory == 64 * MB
        a = fw.empty(40 * MB, dtype=fw.uint8, device="cuda")
        try:
            fw.empty(30 * MB, dtype=fw.uint8, device="cuda")
        except fw.cuda.OutOfMemoryError as e:
            msg = str(e)
        else:
            raise SystemExit("no OOM")
        assert fw.OutOfMemoryError is fw.cuda.OutOfMemoryError
        assert issubclass(fw.cuda.OutOfMemoryError, RuntimeError)
        print(msg)
        assert msg.startswith("CUDA out of memory. Tried to allocate 30.00 MiB."), msg
        assert "GPU 0 has a total capacity of 64.00 MiB of which 24.00 MiB is free" in msg, msg
        assert "40.00 MiB is allocated by framework" in msg, msg
        assert "0 bytes is reserved by framework but unallocated" in msg, msg
        st = fw.cuda.memory_stats()
        assert st["num_ooms"] == 1 and st["num_alloc_retries"] == 1, st
        # the allocator is still usable: what fits still fits, freeing makes room
        small = fw.ones(1000, device="cuda")
        assert small.cpu().tolist() == [1.0] * 1000
        assert fw.cuda.memory_allocated() == 40 * MB + 4096
        del a
        b = fw.empty(30 * MB, dtype=fw.uint8, device="cuda")
        c = fw.empty(20 * MB, dtype=fw.uint8, device="cuda")
        # an op whose output does not fit raises the same error, and nothing leaks
        before = fw.cuda.memory_allocated()
        x = fw.ones(2 * MB, dtype=fw.float32, device="cuda")  # 8 MiB, in b's segment
        try:
            x + x
        except fw.cuda.OutOfMemoryError as e:
            # as PyTorch, the size asked of the device: 8 MiB needs a 20 MiB segment
            assert "Tried to allocate 20.00 MiB" in str(e), str(e)
        else:
            raise SystemExit("no OOM from the op")
        assert fw.cuda.memory_allocated() == before + 8 * MB
        del c
        y = x + x
        assert y[-1].item() == 2.0
        print("OK", fw.cuda.memory_stats()["num_ooms"])
    """, FRAMEWORK_SIM_MEMORY=64 * MB)
    assert out.strip().endswith("OK 2")


@needs_sim
def test_out_of_memory_frees_the_cache_and_retries():
    out = run_script("""
        import framework as fw
        MB = 1 << 20
        a = fw.empty(40 * MB, dtype=fw.uint8, device="cuda")
        del a                                    # cached: 40 MiB reserved, 0 allocated
        assert fw.cuda.memory_reserved() == 40 * MB and fw.cuda.memory_allocated() == 0
        b = fw.empty(50 * MB, dtype=fw.uint8, device="cuda")   # needs the cache back
        st = fw.cuda.memory_stats()
        assert st["num_alloc_retries"] == 1 and st["num_ooms"] == 0, st
        assert fw.cuda.memory_reserved() == 50 * MB
        # cached but unallocated memory shows in the message
        s = fw.empty(1 * MB, dtype=fw.uint8, device="cuda")   # a 2 MiB small segment
        del s
        try:
            fw.empty(20 * MB, dtype=fw.uint8, device="cuda")
        except fw.cuda.OutOfMemoryError as e:
            msg = str(e)
        assert "50.00 MiB is allocated by framework" in msg, msg
        # the small segment was given back by the retry before the error
        assert "0 bytes is reserved by framework but unallocated" in msg, msg
        # many small tensors up to the cap, then the error, then all usable again
        keep = []
        try:
            while True:
                keep.append(fw.empty(512 * 1024, dtype=fw.uint8, device="cuda"))
        except fw.cuda.OutOfMemoryError as e:
            assert "Tried to allocate 2.00 MiB" in str(e), str(e)
        assert len(keep) == 28, len(keep)     # 14 small segments of 2 MiB in 14 MiB free
        keep.clear()
        fw.cuda.empty_cache()
        assert fw.cuda.memory_reserved() == 50 * MB
        print("OK")
    """, FRAMEWORK_SIM_MEMORY=64 * MB)
    assert out.strip().endswith("OK")


# ---- two devices (simulator) ---------------------------------------------------------------

@needs_sim
def test_two_devices():
    out = run_script("""
        import numpy as np
        import framework as fw
        assert fw.cuda.device_count() == 2
        x = fw.arange(6, dtype=fw.float32).reshape(2, 3)
        a0 = x.to("cuda:0")
        base1 = fw.cuda.memory_allocated(1)
        a1 = x.to("cuda:1")
        assert a1.device == fw.device("cuda:1") and a1.get_device() == 1
        assert fw.cuda.memory_allocated(1) - base1 == 512
        assert a1.to("cuda:1") is a1 and a1.cuda(1) is a1
        # between devices, both ways, non-contiguous too
        b = a1.to("cuda:0")
        assert b.device == fw.device("cuda:0") and b.cpu().tolist() == x.tolist()
        c = a0.t().to("cuda:1")
        assert c.device.index == 1 and c.cpu().tolist() == x.t().tolist()
        d = fw.zeros(3, 2, device="cuda:1")
        d.copy_(a0.t())
        assert d.cpu().tolist() == x.t().tolist()
        e = fw.empty(2, 3, dtype=fw.float64, device="cuda:0")
        e.copy_(a1)
        assert e.cpu().tolist() == x.tolist()
        # ops run on the inputs' device; mixing devices is an error
        y = a1 * 2 + 1
        assert y.device.index == 1 and y.cpu().tolist() == (x * 2 + 1).tolist()
        try:
            a0 + a1
        except RuntimeError as err:
            assert "same device" in str(err), str(err)
        else:
            raise SystemExit("mixed devices accepted")
        # the current device
        assert fw.cuda.current_device() == 0
        with fw.cuda.device(1):
            assert fw.cuda.current_device() == 1
            z = fw.zeros(2, device="cuda")
            assert z.device == fw.device("cuda:1")
            assert fw.tensor([1.0], device="cuda").device.index == 1
            with fw.cuda.device(0):
                assert fw.cuda.current_device() == 0
            assert fw.cuda.current_device() == 1
        assert fw.cuda.current_device() == 0
        with fw.cuda.device_of(a1):
            assert fw.cuda.current_device() == 1
        with fw.cuda.device("cuda:1"):
            assert fw.cuda.current_device() == 1
        fw.cuda.set_device(1)
        assert fw.cuda.current_device() == 1 and fw.zeros(1, device="cuda").get_device() == 1
        fw.cuda.set_device(0)
        # streams and events belong to a device
        s1 = fw.cuda.Stream(1)
        assert s1.device == fw.device("cuda:1")
        assert fw.cuda.current_stream(1) == fw.cuda.default_stream(1) != fw.cuda.default_stream(0)
        with fw.cuda.stream(s1):      # makes its device current, as in PyTorch
            assert fw.cuda.current_device() == 1
            assert fw.cuda.current_stream() == s1 and fw.cuda.current_stream(0).cuda_stream == 0
        assert fw.cuda.current_device() == 0 and fw.cuda.current_stream(1).cuda_stream == 0
        ev = fw.cuda.Event()
        ev.record(s1)
        try:
            ev.record(fw.cuda.default_stream(0))
        except RuntimeError as err:
            assert "does not match recording stream's device" in str(err)
        else:
            raise SystemExit("event recorded on two devices")
        # memory is counted per device
        m0 = fw.cuda.memory_allocated(0)
        big = fw.empty(1 << 20, dtype=fw.uint8, device="cuda:1")
        assert fw.cuda.memory_allocated(0) == m0
        assert fw.cuda.memory_allocated(1) >= 1 << 20
        assert fw.cuda.memory_stats(1)["allocated_bytes.all.current"] == fw.cuda.memory_allocated(1)
        del big
        fw.cuda.synchronize(1)
        assert fw.cuda.get_device_properties(1).name
        for bad in (lambda: fw.zeros(1, device="cuda:2"), lambda: fw.cuda.set_device(2)):
            try:
                bad()
            except RuntimeError as err:
                assert "invalid device ordinal" in str(err)
            else:
                raise SystemExit("device 2 accepted")
        print("OK")
    """, FRAMEWORK_SIM_DEVICES=2)
    assert out.strip().endswith("OK")


@needs_sim
def test_out_of_memory_on_one_device_only():
    out = run_script("""
        import framework as fw
        MB = 1 << 20
        a = fw.empty(40 * MB, dtype=fw.uint8, device="cuda:1")
        try:
            fw.empty(40 * MB, dtype=fw.uint8, device="cuda:1")
        except fw.cuda.OutOfMemoryError as e:
            assert "GPU 1 has a total capacity of 64.00 MiB" in str(e), str(e)
        else:
            raise SystemExit("no OOM")
        b = fw.empty(40 * MB, dtype=fw.uint8, device="cuda:0")   # device 0 has its own memory
        assert fw.cuda.memory_stats(1)["num_ooms"] == 1 and fw.cuda.memory_stats(0)["num_ooms"] == 0
        print("OK")
    """, FRAMEWORK_SIM_MEMORY=64 * MB, FRAMEWORK_SIM_DEVICES=2)
    assert out.strip().endswith("OK")


def test_external_stream_and_capabilities():
    s = fw.cuda.Stream()
    ext = fw.cuda.ExternalStream(s.cuda_stream)
    assert ext == s and ext.device_index == 0
    with fw.cuda.stream(ext):
        assert fw.cuda.current_stream() == s
    del ext                                  # not destroyed: still usable through s
    s.synchronize()
    assert fw.cuda.is_bf16_supported() == (fw.cuda.get_device_capability()[0] >= 8)


def test_storages_of_cuda_without_index_know_their_device():
    # a storage allocated for device("cuda") is on the current device and says so: its later
    # copies ask for that device's context (on a GPU a device of index None has none)
    from framework._ops import alloc
    for n in (0, 3):
        t = alloc.empty((n,), fw.float32, fw.device("cuda"))
        assert t._storage.device is fw.device("cuda", fw.cuda.current_device())
        assert t.device == fw.device("cuda:0")


def test_untyped_storage_cpu_copies_on_a_gpu(monkeypatch):
    # a simulated cuda storage's cpu() aliases its host memory (Triton's interpreter runs in
    # place); on a GPU it is a copy, as PyTorch's. The GPU branch, with the simulator's
    # copy underneath:
    x = fw.arange(6.0, device="cuda")
    if fw.cuda.is_simulated():
        alias = x.untyped_storage().cpu()
        assert alias.host_alias and alias.data_ptr() == x.untyped_storage().data_ptr()
    monkeypatch.setattr(fw.cuda, "is_simulated", lambda: False)
    copy = x.untyped_storage().cpu()
    assert not copy.host_alias and copy.device == fw.device("cpu")
    assert copy.data_ptr() != x.untyped_storage().data_ptr() and copy.nbytes() == 24
    got = fw.empty(0).set_(copy, 0, (6,), (1,))
    assert got.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    x.add_(1)  # the copy does not follow the device memory
    assert got.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
