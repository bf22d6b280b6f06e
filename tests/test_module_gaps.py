"""Small submodules PyTorch has: ``nn.grad``, ``utils.module_tracker``, ``utils.weak``,
``utils.collect_env``, ``utils.throughput_benchmark``, ``cuda.comm`` / ``profiler`` /
``nccl`` / ``tunable``, the ``backends`` flags, ``nn.common_types``; against PyTorch."""
import gc
import subprocess
import sys

import numpy as np
import pytest

import framework as fw
import framework.nn as nn

torch = pytest.importorskip("torch")


# ---- nn.grad ------------------------------------------------------------------------------

@pytest.mark.parametrize("n,x_shape,w_shape,kw", [
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, dilation=1, groups=2)),
    (2, (1, 3, 8, 7), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    (3, (1, 2, 5, 4, 6), (2, 2, 2, 3, 2), dict(stride=2, padding=1)),
])
def test_nn_grad_matches_torch(device, n, x_shape, w_shape, kw):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    conv = getattr(torch.nn.functional, f"conv{n}d")
    out_shape = conv(torch.tensor(x), torch.tensor(w), **kw).shape
    go = rng.standard_normal(out_shape).astype(np.float32)
    args = (kw.get("stride", 1), kw.get("padding", 0), kw.get("dilation", 1),
            kw.get("groups", 1))

    def f(a):
        return fw.tensor(a, device=device)
    gi = getattr(fw.nn.grad, f"conv{n}d_input")(x.shape, f(w), f(go), *args)
    ti = getattr(torch.nn.grad, f"conv{n}d_input")(x.shape, torch.tensor(w),
                                                   torch.tensor(go), *args)
    np.testing.assert_allclose(gi.cpu().numpy(), ti.numpy(), rtol=1e-4, atol=1e-4)
    gw = getattr(fw.nn.grad, f"conv{n}d_weight")(f(x), w.shape, f(go), *args)
    tw = getattr(torch.nn.grad, f"conv{n}d_weight")(torch.tensor(x), w.shape,
                                                    torch.tensor(go), *args)
    np.testing.assert_allclose(gw.cpu().numpy(), tw.numpy(), rtol=1e-4, atol=1e-4)
    assert not gi.requires_grad and not gw.requires_grad


def test_nn_grad_errors_and_double_backward():
    w = fw.randn(4, 3, 3, 3)
    with pytest.raises(RuntimeError, match=r"conv2d_input: grad_output size \[1, 4, 5, 5\]"):
        fw.nn.grad.conv2d_input((1, 3, 8, 8), w, fw.randn(1, 4, 5, 5))
    go = fw.randn(1, 4, 6, 6, requires_grad=True)
    gi = fw.nn.grad.conv2d_input((1, 3, 8, 8), w, go)
    assert gi.requires_grad      # differentiable in grad_output, as PyTorch's
    (g,) = fw.autograd.grad(gi.sum(), go)
    assert tuple(g.shape) == (1, 4, 6, 6)


# ---- utils.module_tracker -----------------------------------------------------------------

def _tracked_run(lib, tracker_cls):
    seen = []

    class Inner(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            seen.append(("fw", sorted(tracker.parents), tracker.is_bw))
            y.register_hook(lambda g: seen.append(("bw", sorted(tracker.parents),
                                                   tracker.is_bw)))
            return y

    class Outer(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x).relu()

    lib.manual_seed(0)
    m = Outer()
    with tracker_cls() as tracker:
        m(lib.ones(2, 3, requires_grad=True)).sum().backward()
        seen.append(("after", sorted(tracker.parents), None))
    return seen


def test_module_tracker_matches_torch():
    from framework.utils.module_tracker import ModuleTracker
    from torch.utils.module_tracker import ModuleTracker as TModuleTracker
    ours = _tracked_run(fw, ModuleTracker)
    theirs = _tracked_run(torch, TModuleTracker)
    assert ours[:2] == theirs[:2]
    assert ours[0] == ("fw", ["Global", "Outer", "Outer.inner"], False)
    assert ours[1][2] is True


# ---- utils.weak ---------------------------------------------------------------------------

def test_weak_id_key_dictionary():
    from framework.utils.weak import (TensorWeakRef, WeakIdKeyDictionary, WeakIdRef,
                                      WeakTensorKeyDictionary)
    assert WeakTensorKeyDictionary is WeakIdKeyDictionary
    a, b = fw.ones(2), fw.ones(2)        # equal values, distinct keys
    d = WeakTensorKeyDictionary()
    d[a] = 1
    d[b] = 2
    assert len(d) == 2 and d[a] == 1 and d[b] == 2 and a in d
    assert fw.zeros(1) not in d and d.get(fw.zeros(1), 7) == 7
    assert WeakIdRef(a) == WeakIdRef(a) and WeakIdRef(a) != WeakIdRef(b)
    assert hash(WeakIdRef(a)) == id(a)
    r = TensorWeakRef(a)
    assert r() is a
    del b
    gc.collect()
    assert len(d) == 1 and d.keys()[0] is a
    del a
    gc.collect()
    assert len(d) == 0 and len(d.data) == 0 and r() is None
    with pytest.raises(AssertionError, match="expected torch.Tensor"):
        TensorWeakRef(3)


# ---- utils.collect_env, utils.throughput_benchmark ----------------------------------------

def test_collect_env_runs():
    from framework.utils import collect_env
    info = collect_env.get_env_info()
    assert info.framework_version == str(fw.__version__)
    text = collect_env.get_pretty_env_info()
    assert f"Framework version: {fw.__version__}" in text and "Is CUDA available" in text
    r = subprocess.run([sys.executable, "-m", "framework.utils.collect_env"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Framework version:" in r.stdout, r.stderr


def test_throughput_benchmark():
    from framework.utils.throughput_benchmark import format_time
    from torch.utils.throughput_benchmark import format_time as tformat
    for kw in (dict(time_us=12.5), dict(time_ms=3.25), dict(time_s=2.0)):
        assert format_time(**kw) == tformat(**kw)
    calls = []
    m = nn.Linear(4, 2)

    def module(x, scale=1):
        calls.append(scale)
        return m(x) * scale
    b = fw.utils.ThroughputBenchmark(module)
    x = fw.randn(3, 4)
    b.add_input(x, scale=2)
    np.testing.assert_allclose(b.run_once(x, scale=2).numpy(), (m(x) * 2).detach().numpy())
    stats = b.benchmark(num_calling_threads=2, num_warmup_iters=3, num_iters=10)
    assert stats.num_iters == 10 and len(calls) == 1 + 2 * 3 + 10
    assert stats.latency_avg_ms > 0 and "Total number of iterations: 10" in str(stats)
    with pytest.raises(RuntimeError, match="add_input"):
        fw.utils.ThroughputBenchmark(module).benchmark()


# ---- cuda.comm, cuda.nccl, cuda.profiler, cuda.tunable ------------------------------------

def test_cuda_comm(device):
    from framework.cuda import comm
    if device != "cuda":
        pytest.skip("cuda.comm copies between cuda devices")
    x = fw.arange(12.0).reshape(6, 2)
    (b,) = comm.broadcast(x, [0])
    assert b.device.type == "cuda" and np.array_equal(b.cpu().numpy(), x.numpy())
    b.add_(1)            # a copy, not an alias of the source
    assert x[0, 0].item() == 0
    out = [fw.empty(6, 2, device="cuda")]
    assert comm.broadcast(x, out=out)[0] is out[0]
    with pytest.raises(RuntimeError, match="Exactly one of 'devices' and 'out'"):
        comm.broadcast(x, [0], out=out)
    (parts,) = comm.broadcast_coalesced([x, x[0]], [0])
    assert [tuple(p.shape) for p in parts] == [(6, 2), (2,)]
    (s,) = comm.scatter(x, [0], chunk_sizes=[6], dim=0)
    assert np.array_equal(s.cpu().numpy(), x.numpy())
    g = comm.gather([x.cuda(), x[:2].cuda()], dim=0, destination="cpu")
    assert g.device.type == "cpu" and np.array_equal(g.numpy(),
                                                    np.concatenate([x.numpy(), x[:2].numpy()]))
    # torch's reduce_add with one input returns it; sums keep torch's errors
    xc = x.cuda()
    assert comm.reduce_add([xc]) is xc
    with pytest.raises(AssertionError, match="input 0 is on CPU"):
        comm.reduce_add([x])
    with pytest.raises(RuntimeError, match="'devices' must not be specified"):
        comm.scatter(x, [0], out=[xc])
    (r,) = comm.reduce_add_coalesced([[xc, xc[0]]])[:1]
    assert r is xc


def test_cuda_nccl_tunable_profiler(device):
    from framework.cuda import nccl, profiler, tunable
    import torch.cuda.tunable as ttunable
    assert tunable.__all__ == ttunable.__all__
    assert not tunable.is_enabled() and tunable.tuning_is_enabled()
    tunable.enable(True)
    tunable.set_max_tuning_iterations(7)
    try:
        assert tunable.is_enabled() and tunable.get_max_tuning_iterations() == 7
    finally:
        tunable.enable(False)
        tunable.set_max_tuning_iterations(100)
    with pytest.raises(TypeError, match="Inputs should be a collection of tensors"):
        nccl.all_reduce(fw.ones(2))
    if device == "cuda":
        xs = [fw.arange(4.0, device="cuda")]
        outs = [fw.empty(4, device="cuda")]
        nccl.all_reduce(xs, outs)
        assert np.array_equal(outs[0].cpu().numpy(), [0, 1, 2, 3])
        gathered = [fw.empty(4, device="cuda")]
        nccl.all_gather(xs, gathered)
        nccl.reduce_scatter(xs, gathered)
        assert np.array_equal(gathered[0].cpu().numpy(), [0, 1, 2, 3])
        with profiler.profile():
            pass
        assert nccl.is_available(xs) is False or not fw.cuda.is_simulated()
    with pytest.raises(TypeError, match="must be a CUDA tensor"):
        nccl.broadcast([fw.ones(2)])


# ---- backends, nn.common_types ------------------------------------------------------------

def test_backends_match_torch_api():
    import framework.backends.xnnpack as fx
    import torch.backends.xnnpack  # noqa: F401
    b, tb = fw.backends, torch.backends
    assert b.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
    if b.cpu.get_cpu_capability() != "DEFAULT":     # the native build is -march=native
        assert b.cpu.get_cpu_capability() == tb.cpu.get_cpu_capability()
    assert b.quantized.engine == tb.quantized.engine
    assert b.quantized.supported_engines == tb.quantized.supported_engines
    with pytest.raises(RuntimeError, match="foo is not a valid value for quantized engine"):
        b.quantized.engine = "foo"
    b.quantized.engine = "qnnpack"
    assert b.quantized.engine == "qnnpack"
    b.quantized.engine = "x86"
    with pytest.raises(RuntimeError, match="Assignment not supported"):
        fx.enabled = True
    assert fx.enabled is False and not b.mps.is_available() and not b.mps.is_built()
    assert not b.mkl.is_available() and not b.mkldnn.is_available()
    assert not b.openmp.is_available()      # the cpu library threads with std::thread
    assert b.mkldnn.enabled is tb.mkldnn.enabled
    with b.mkldnn.flags(enabled=False):
        assert b.mkldnn.enabled is False
    assert b.mkldnn.enabled is True
    with b.nnpack.flags(enabled=False):
        pass
    with b.mkl.verbose(b.mkl.VERBOSE_OFF):
        pass
    for mod in ("cpu", "mkl", "mkldnn", "openmp", "nnpack", "mps"):
        ours = {n for n in getattr(b, mod).__all__}
        tmod = getattr(tb, mod)
        theirs = {n for n in dir(getattr(tmod, "m", tmod)) if not n.startswith("_")}
        assert ours <= theirs, (mod, ours - theirs)


def test_common_types_and_nn_backends():
    from framework.nn import common_types as ct
    from framework.nn.backends import thnn
    import torch.nn.common_types as tct
    ours = {n for n in vars(ct) if n.startswith("_") and n.endswith("_t")}
    theirs = {n for n in vars(tct) if n.startswith("_") and n.endswith("_t")}
    assert ours == theirs
    assert thnn._get_thnn_function_backend() is None
