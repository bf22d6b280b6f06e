"""framework.accelerator (PyTorch's torch.accelerator) and framework.cpu (torch.cpu)."""
import warnings

import pytest

import framework as fw
from framework import accelerator as acc
from framework import cpu

HAS_CUDA = fw.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no cuda (nor TRITON_INTERPRET=1)")


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(fw.cuda, "is_available", lambda: False)


# -- framework.accelerator -------------------------------------------------------------

@needs_cuda
def test_accelerator_is_cuda():
    assert acc.is_available() is True
    assert acc.current_accelerator() == fw.device("cuda")
    assert acc.current_accelerator().index is None
    assert acc.current_accelerator(check_available=True) == fw.device("cuda")
    assert acc.device_count() == fw.cuda.device_count() >= 1
    assert acc.current_device_index() == fw.cuda.current_device()


@needs_cuda
def test_set_device_index_and_context():
    prev = acc.current_device_index()
    acc.set_device_index(0)
    acc.set_device_index("cuda:0")
    acc.set_device_index(fw.device("cuda", 0))
    acc.set_device_index(-1)                 # negative: no-op
    assert acc.current_device_index() == 0
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    with acc.device_index(None):
        pass
    assert acc.current_device_index() == prev
    with pytest.raises(ValueError, match="Expected a framework.device with a specified index"):
        acc.set_device_index("cuda")
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        acc.set_device_index("cpu")
    with pytest.warns(FutureWarning, match="Use `set_device_index` instead."):
        acc.set_device_idx(0)
    with pytest.warns(FutureWarning, match="Use `current_device_index` instead."):
        assert acc.current_device_idx() == 0


@needs_cuda
def test_streams_and_synchronize():
    s = acc.current_stream()
    assert s == fw.cuda.current_stream()
    assert acc.current_stream(0) == s == acc.current_stream("cuda:0")
    assert acc.current_stream(fw.device("cuda")) == s
    s2 = fw.cuda.Stream()
    acc.set_stream(s2)
    try:
        assert acc.current_stream() == s2
        assert fw.cuda.current_stream() == s2
    finally:
        acc.set_stream(s)
    assert acc.current_stream() == s
    x = fw.ones(8, device="cuda") * 2
    acc.synchronize()
    acc.synchronize(0)
    acc.synchronize("cuda")
    assert float(x.sum()) == 16.0
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.current_stream("cpu")


@needs_cuda
def test_memory_functions():
    x = fw.empty(1 << 16, dtype=fw.uint8, device="cuda")
    stats = acc.memory_stats()
    assert list(stats) == sorted(stats)
    assert acc.memory_allocated() == fw.cuda.memory_allocated() >= 1 << 16
    assert acc.memory_allocated() == stats["allocated_bytes.all.current"]
    assert acc.max_memory_allocated() >= acc.memory_allocated()
    assert acc.memory_reserved() == fw.cuda.memory_reserved() >= acc.memory_allocated()
    assert acc.max_memory_reserved() >= acc.memory_reserved()
    assert acc.memory_allocated(0) == acc.memory_allocated("cuda:0")
    del x
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == acc.memory_allocated()
    acc.reset_accumulated_memory_stats()
    acc.empty_cache()
    assert acc.memory_reserved() == fw.cuda.memory_reserved()
    free, total = acc.get_memory_info()
    assert 0 <= free <= total
    acc.empty_host_cache()
    assert fw.float32 in acc.get_device_capability()["supported_dtypes"]


def test_without_accelerator(no_cuda):
    assert acc.current_accelerator() is None
    assert acc.current_accelerator(check_available=True) is None
    assert acc.is_available() is False
    assert acc.device_count() == 0
    msg = "Cannot access accelerator device when none is available."
    for fn in (acc.current_device_index, acc.synchronize, acc.current_stream, acc.empty_cache,
               acc.memory_stats, acc.memory_allocated, acc.get_memory_info,
               acc.reset_peak_memory_stats, acc.empty_host_cache, acc.get_device_capability):
        with pytest.raises(RuntimeError, match=msg):
            fn()
    with pytest.raises(RuntimeError, match=msg):
        acc.set_device_index(0)
    with pytest.raises(RuntimeError, match=msg):
        with acc.device_index(0):
            pass
    with acc.device_index(None):
        pass


def test_accelerator_all():
    for name in acc.__all__:
        assert callable(getattr(acc, name)), name


def test_accelerator_names_match_torch():
    torch = pytest.importorskip("torch")
    mine = set(acc.__all__)
    theirs = set(torch.accelerator.__all__) - {"Graph"}
    assert theirs <= mine, theirs - mine


# -- framework.cpu ---------------------------------------------------------------------

def test_cpu_module():
    assert cpu.is_available() is True
    assert cpu.is_initialized() is True
    assert cpu.device_count() == 1
    assert cpu.current_device() == "cpu"
    assert cpu.synchronize() is None and cpu.synchronize("cpu") is None
    assert cpu.set_device("cpu") is None
    s0 = cpu.current_stream()
    assert isinstance(s0, cpu.Stream)
    s = cpu.Stream(priority=0)
    with cpu.stream(s):
        assert cpu.current_stream() is s
        with cpu.stream(None):
            assert cpu.current_stream() is s
    assert cpu.current_stream() is s0
    s.wait_stream(s0)
    s.wait_event(cpu.Event())
    s.record_event()
    e = cpu.Event()
    e.record()
    e.wait()
    e.synchronize()
    assert e.query() is True


def test_cpu_amp_autocast_deprecated():
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated. "
                      r"Please use `torch.amp.autocast\('cpu', args...\)` instead."):
        ctx = cpu.amp.autocast()
    assert not fw.is_autocast_enabled("cpu")
    with ctx:
        assert fw.is_autocast_enabled("cpu")
        assert fw.get_autocast_dtype("cpu") == fw.bfloat16
        assert (fw.ones(2, 2) @ fw.ones(2, 2)).dtype == fw.bfloat16
    assert not fw.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning):
        with cpu.amp.autocast(dtype=fw.float16):
            assert fw.get_autocast_dtype("cpu") == fw.float16
    with pytest.warns(FutureWarning):
        with cpu.amp.autocast(enabled=False):
            assert not fw.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning):
        @cpu.amp.autocast()
        def f(a):
            return a @ a
    assert f(fw.ones(2, 2)).dtype == fw.bfloat16


def test_cpu_amp_grad_scaler_deprecated():
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.GradScaler\(args...\)` is "
                      r"deprecated. Please use `torch.amp.GradScaler\('cpu', args...\)`"):
        g = cpu.amp.GradScaler(init_scale=8.0)
    assert isinstance(g, fw.amp.GradScaler)
    assert g.get_scale() == 8.0
    w = fw.ones(2, requires_grad=True)
    opt = fw.optim.SGD([w], lr=0.1)
    g.scale((w * 3).sum()).backward()
    g.step(opt)
    g.update()
    assert abs(float(w[0]) - 0.7) < 1e-6


def test_cpu_names_match_torch():
    torch = pytest.importorskip("torch")
    assert set(torch.cpu.__all__) <= set(cpu.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.cpu.amp.autocast().fast_dtype == torch.bfloat16


def test_cpu_capabilities():
    torch = pytest.importorskip("torch")
    caps, theirs = cpu.get_capabilities(), torch.cpu.get_capabilities()
    assert caps is cpu.get_capabilities()
    with pytest.raises(TypeError):
        caps["avx2"] = False
    assert caps["architecture"] == theirs["architecture"]
    assert caps["num_logical_cores"] == theirs["num_logical_cores"]
    for k in ("sse", "sse2", "sse3", "ssse3", "sse4_2", "avx", "avx2", "fma3", "avx512_f"):
        if k in theirs:
            assert caps[k] == theirs[k], k
