"""The smaller parts of framework.cuda's PyTorch API (framework/cuda/_compat.py, nvtx.py):
nvtx ranges (depths, context manager/decorator, recorded by framework.profiler), the
deprecated memory aliases and their FutureWarnings, memory_stats_as_nested_dict,
default_generators, the per-process memory fraction, is_tf32_supported, has_half,
ipc_collect, the sync debug mode (warnings/errors at blocking host<->device copies),
can_device_access_peer, caching_allocator_alloc/delete and the pynvml queries (PyTorch's
messages without pynvml; a fake pynvml for what they read).

Runs on a real GPU or on the simulator (TRITON_INTERPRET=1); the two-device checks run a
script in a simulated subprocess."""
import sys
import threading
import types
import warnings

import pytest

import framework as fw
from framework.cuda import _runtime, nvtx
from tests.cuda.test_runtime import needs_sim, run_script

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")


# ---- nvtx ----------------------------------------------------------------------------------

def test_nvtx_depths():
    assert nvtx.range_push("a") == 0
    assert nvtx.range_push("b") == 1
    assert nvtx.range_pop() == 1
    assert nvtx.range_pop() == 0
    assert nvtx.range_pop() == -1          # nothing open
    assert nvtx.mark("here") is None
    with nvtx.range("outer {} {x}", 1, x=2):
        assert nvtx.range_push("inner") == 1
        assert nvtx.range_pop() == 1
    assert nvtx.range_push("again") == 0
    assert nvtx.range_pop() == 0

    @nvtx.range("decorated")
    def f(v):
        assert nvtx.range_push("in f") == 1
        nvtx.range_pop()
        return v + 1
    assert f(1) == 2 and f(2) == 3
    assert nvtx.range_pop() == -1

    a, b = nvtx.range_start("s1"), nvtx.range_start("s2")
    assert isinstance(a, int) and a != b
    assert nvtx.range_end(b) is None and nvtx.range_end(a) is None
    with pytest.raises(TypeError):
        nvtx.range_push(3)
    assert fw.cuda.nvtx is nvtx
    assert sorted(nvtx.__all__) == sorted(["range_push", "range_pop", "range_start",
                                           "range_end", "mark", "range"])


def test_nvtx_depth_per_thread():
    assert nvtx.range_push("main") == 0
    seen = []
    th = threading.Thread(target=lambda: (seen.append(nvtx.range_push("t")),
                                          seen.append(nvtx.range_pop())))
    th.start()
    th.join()
    assert seen == [0, 0]
    assert nvtx.range_pop() == 0


def test_nvtx_ranges_in_profile():
    x = fw.ones(4, device="cuda")
    with fw.profiler.profile(activities=[fw.profiler.ProfilerActivity.CPU]) as prof:
        nvtx.range_push("pushed")
        y = fw.add(x, x)
        nvtx.range_pop()
        with nvtx.range("ctx{}", 7):
            nvtx.mark("instant")
        h = nvtx.range_start("started")
        z = fw.mul(y, y)
        nvtx.range_end(h)
    events = prof.events()
    by_name = {e.name: e for e in events}
    for name in ("pushed", "ctx7", "instant", "started"):
        assert name in by_name, [e.name for e in events]
        assert by_name[name].is_user_annotation
    # an op inside a pushed range is its child; a range_start range parents nothing
    adds = [e for e in events if e.cpu_parent is by_name["pushed"]]
    assert adds and all("add" in e.name for e in adds)
    assert by_name["instant"].cpu_parent is by_name["ctx7"]
    assert not any(e.cpu_parent is by_name["started"] for e in events)
    assert by_name["started"].time_range.end >= by_name["started"].time_range.start
    del z


# ---- memory --------------------------------------------------------------------------------

def test_deprecated_memory_aliases():
    x = fw.empty(1000, device="cuda")
    with pytest.warns(FutureWarning, match="^`torch.cuda.memory_cached` has been renamed to "
                                           "`torch.cuda.memory_reserved`$"):
        assert fw.cuda.memory_cached() == fw.cuda.memory_reserved()
    with pytest.warns(FutureWarning, match="^`torch.cuda.max_memory_cached` has been renamed "
                                           "to `torch.cuda.max_memory_reserved`$"):
        assert fw.cuda.max_memory_cached(0) == fw.cuda.max_memory_reserved(0)
    with pytest.warns(FutureWarning) as rec:
        assert fw.cuda.reset_max_memory_cached() is None
    assert str(rec[0].message) == ("torch.cuda.reset_max_memory_cached now calls "
                                   "torch.cuda.reset_peak_memory_stats, which resets /all/ "
                                   "peak memory stats.")
    assert rec[0].filename == __file__
    assert fw.cuda.max_memory_reserved() == fw.cuda.memory_reserved()
    del x


def test_memory_stats_as_nested_dict():
    x = fw.empty(300, device="cuda")
    flat = fw.cuda.memory_stats()
    nested = fw.cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"]
    assert nested["allocated_bytes"]["all"]["current"] >= 1200
    assert nested["num_ooms"] == flat["num_ooms"]

    def walk(d, prefix=""):
        for k, v in d.items():
            if isinstance(v, dict):
                yield from walk(v, prefix + k + ".")
            else:
                yield prefix + k, v
    assert dict(walk(nested)) == flat
    assert fw.cuda.memory_stats_as_nested_dict("cuda:0")["segment"].keys() == \
        {"all", "large_pool", "small_pool"}
    del x


def test_per_process_memory_fraction():
    assert fw.cuda.get_per_process_memory_fraction() == 1.0
    try:
        fw.cuda.set_per_process_memory_fraction(0.3)
        assert fw.cuda.get_per_process_memory_fraction() == 0.3
        assert fw.cuda.get_per_process_memory_fraction(0) == 0.3
        fw.cuda.memory.set_per_process_memory_fraction(0.5)   # the plain setter too
        assert fw.cuda.get_per_process_memory_fraction("cuda") == pytest.approx(0.5)
        with pytest.raises(ValueError, match="Invalid fraction value: 2"):
            fw.cuda.set_per_process_memory_fraction(2)
    finally:
        fw.cuda.set_per_process_memory_fraction(1.0)
    assert fw.cuda.get_per_process_memory_fraction() == 1.0


def test_caching_allocator_alloc():
    before = fw.cuda.memory_allocated()
    p = fw.cuda.caching_allocator_alloc(1000)
    assert isinstance(p, int) and p != 0
    assert fw.cuda.memory_allocated() >= before + 1000
    q = fw.cuda.caching_allocator_alloc(64, device=0, stream=fw.cuda.current_stream())
    r = fw.cuda.caching_allocator_alloc(64, "cuda:0", fw.cuda.current_stream().cuda_stream)
    assert len({p, q, r}) == 3
    for ptr in (p, q, r):
        fw.cuda.caching_allocator_delete(ptr)
    assert fw.cuda.memory_allocated() == before
    with pytest.raises(RuntimeError, match=f"invalid device pointer: {p:#x}"):
        fw.cuda.caching_allocator_delete(p)
    assert fw.cuda.caching_allocator_alloc(0) == 0
    fw.cuda.caching_allocator_delete(0)
    with pytest.raises(TypeError, match="Invalid type for stream argument, must be "
                                        "`torch.cuda.Stream` or `int`"):
        fw.cuda.caching_allocator_alloc(10, stream="s")
    if fw.cuda.is_simulated():   # host memory: the block can be written
        import ctypes
        p = fw.cuda.caching_allocator_alloc(16)
        ctypes.memmove(p, b"0123456789abcdef", 16)
        assert ctypes.string_at(p, 16) == b"0123456789abcdef"
        fw.cuda.caching_allocator_delete(p)


# ---- device queries ------------------------------------------------------------------------

def test_small_queries():
    assert fw.cuda.has_half is True
    assert fw.cuda.is_tf32_supported() == (fw.cuda.get_device_capability() >= (8, 0))
    assert fw.cuda.ipc_collect() is None
    assert fw.cuda.can_device_access_peer(0, 0) is False
    n = fw.cuda.device_count()
    with pytest.raises(AssertionError, match="^Invalid device id$"):
        fw.cuda.can_device_access_peer(n, 0)
    with pytest.raises(AssertionError, match="^Invalid peer device id$"):
        fw.cuda.can_device_access_peer(0, n)


def test_default_generators():
    gens = fw.cuda.default_generators
    assert isinstance(gens, tuple) and len(gens) == fw.cuda.device_count()
    assert gens[0] is fw.random.get_generator(fw.device("cuda", 0))
    assert gens[0].device == fw.device("cuda", 0)
    fw.cuda.manual_seed(1234)
    assert gens[0].initial_seed() == 1234
    from framework.cuda import default_generators
    assert default_generators == gens
    with pytest.raises(AttributeError, match="has no attribute 'not_a_thing'"):
        fw.cuda.not_a_thing  # noqa: B018


# ---- sync debug mode -----------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Synchronization debug mode is a prototype feature")
def test_sync_debug_mode():
    plain = _runtime.copy_bytes
    x = fw.ones(4, device="cuda")
    assert fw.cuda.get_sync_debug_mode() == 0
    try:
        fw.cuda.set_sync_debug_mode("warn")
        assert fw.cuda.get_sync_debug_mode() == 1
        with pytest.warns(UserWarning, match="^called a synchronizing CUDA operation$") as rec:
            assert x.sum().item() == 4.0
        assert rec[0].filename == __file__           # the line that called .item()
        with pytest.warns(UserWarning, match="synchronizing"):
            fw.ones(2).to("cuda")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = x + 1                              # kernels alone do not synchronize
            y.to("cpu", non_blocking=True)
            fw.cuda.synchronize()
        fw.cuda.set_sync_debug_mode(2)
        assert fw.cuda.get_sync_debug_mode() == 2
        with pytest.raises(RuntimeError, match="^called a synchronizing CUDA operation$"):
            x.cpu()
        with pytest.raises(RuntimeError, match="synchronizing"):
            x.tolist()
        fw.cuda.set_sync_debug_mode(1)
        assert _runtime.copy_bytes is not plain
        with pytest.raises(RuntimeError, match="^invalid value of debug_mode, expected one of "
                                               "`default`, `warn`, `error`$"):
            fw.cuda.set_sync_debug_mode("loud")
        with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected one "
                                               "of 0,1,2"):
            fw.cuda.set_sync_debug_mode(3)
        for bad in (1.0, True, None):
            with pytest.raises(RuntimeError, match="^invalid argument to set_sync_debug_mode$"):
                fw.cuda.set_sync_debug_mode(bad)
        assert fw.cuda.get_sync_debug_mode() == 1
    finally:
        fw.cuda.set_sync_debug_mode("default")
    assert fw.cuda.get_sync_debug_mode() == 0
    assert _runtime.copy_bytes is plain            # nothing stays hooked in
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.sum().item() == 4.0


# ---- pynvml --------------------------------------------------------------------------------

NVML_FUNCS = ["utilization", "temperature", "power_draw", "clock_rate", "memory_usage",
              "device_memory_used"]


def test_nvml_without_pynvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)   # import pynvml fails
    for name in NVML_FUNCS:
        with pytest.raises(ModuleNotFoundError, match="^nvidia-ml-py does not seem to be "
                                                      "installed or it can't be imported.$"):
            getattr(fw.cuda, name)()
    assert fw.cuda.list_gpu_processes() == "pynvml module not found, please install nvidia-ml-py"


def _fake_pynvml(driver_loaded=True):
    m = types.ModuleType("pynvml")
    calls = []

    class NVMLError_DriverNotLoaded(Exception):
        pass

    def init():
        if not driver_loaded:
            raise NVMLError_DriverNotLoaded()
    m.NVMLError_DriverNotLoaded = NVMLError_DriverNotLoaded
    m.nvmlInit = init
    m.nvmlDeviceGetHandleByIndex = lambda i: calls.append(("handle", i)) or f"h{i}"
    m.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=37, memory=12)
    m.nvmlDeviceGetTemperature = lambda h, sensor: calls.append(("temp", sensor)) or 55
    m.nvmlDeviceGetPowerUsage = lambda h: 123456
    m.nvmlDeviceGetClockInfo = lambda h, kind: calls.append(("clock", kind)) or 1980
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=4096)
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: [
        types.SimpleNamespace(pid=42, usedGpuMemory=3 * 1024 * 1024)]
    return m, calls


def test_nvml_with_fake_pynvml(monkeypatch):
    m, calls = _fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", m)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert fw.cuda.utilization() == 37
    assert fw.cuda.memory_usage() == 12
    assert fw.cuda.temperature(0) == 55 and ("temp", 0) in calls
    assert fw.cuda.power_draw() == 123456
    assert fw.cuda.clock_rate() == 1980 and ("clock", 1) in calls
    assert fw.cuda.device_memory_used() == 4096
    assert fw.cuda.list_gpu_processes() == \
        "GPU:0\nprocess         42 uses        3.000 MB GPU memory"
    calls.clear()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    fw.cuda.utilization()
    assert calls == [("handle", 3)]                # NVML counts every GPU of the machine
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(driver_loaded=False)[0])
    with pytest.raises(RuntimeError, match="cuda driver can't be loaded, is cuda enabled?"):
        fw.cuda.temperature()
    assert fw.cuda.list_gpu_processes() == "cuda driver can't be loaded, is cuda enabled?"


# ---- two devices (simulated) ---------------------------------------------------------------

@needs_sim
def test_two_devices():
    out = run_script("""
        import framework as fw
        assert fw.cuda.memory_stats_as_nested_dict() == {}      # before CUDA starts
        gens = fw.cuda.default_generators
        assert len(gens) == 2 and gens[0] is not gens[1]
        assert gens[1].device == fw.device("cuda", 1)
        assert fw.cuda.can_device_access_peer(0, 1) and fw.cuda.can_device_access_peer(1, 0)
        assert not fw.cuda.can_device_access_peer(1, 1)
        p = fw.cuda.caching_allocator_alloc(4096, device=1)
        assert fw.cuda.memory_allocated(1) >= 4096 and fw.cuda.memory_allocated(0) == 0
        fw.cuda.caching_allocator_delete(p)
        assert fw.cuda.memory_allocated(1) == 0
        fw.cuda.set_per_process_memory_fraction(0.25, 1)
        assert fw.cuda.get_per_process_memory_fraction(1) == 0.25
        assert fw.cuda.get_per_process_memory_fraction(0) == 1.0
        with fw.cuda.device(1):
            assert fw.cuda.nvtx.range_push("x") == 0
        import warnings
        with warnings.catch_warnings(record=True) as w:      # PyTorch's TORCH_WARN_ONCE
            warnings.simplefilter("always")
            fw.cuda.set_sync_debug_mode(0)
            fw.cuda.set_sync_debug_mode(0)
        assert [str(x.message) for x in w] == [
            "Synchronization debug mode is a prototype feature and does not yet detect all "
            "synchronizing operations"], w
        print("ok")
    """, FRAMEWORK_SIM_DEVICES=2)
    assert out.strip() == "ok"
