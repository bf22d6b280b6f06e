"""Lazy modules, SyncBatchNorm, DataParallel, FractionalMaxPool2d/3d, NLLLoss2d,
LinearCrossEntropyLoss, AdaptiveLogSoftmaxWithLoss and CrossMapLRN2d against PyTorch: shapes inferred at the first forward and the class that the module becomes, the
state dicts of uninitialized modules and loading into them, PyTorch's errors for using an
uninitialized parameter, the init distribution; SyncBatchNorm as BatchNorm without a process
group, its conversion, and on two processes (mpiexec) against one BatchNorm on the whole
batch; DataParallel's wrapping."""
import copy
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import child_env
from tests.nn.common import copy_state, fw_tensor, to_np

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _msg(e):
    return str(e.value)


# ---- lazy modules ---------------------------------------------------------------------------
# (class name, args, kwargs, input shape)
LAZY_CASES = [
    ("LazyLinear", (3,), {}, (2, 5)),
    ("LazyLinear", (4,), dict(bias=False), (2, 3, 5)),
    ("LazyConv1d", (4, 3), dict(padding=1), (2, 2, 6)),
    ("LazyConv2d", (4, 3), dict(groups=2, stride=2), (1, 2, 5, 5)),
    ("LazyConv3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyConvTranspose1d", (3, 2), dict(stride=2), (2, 4, 5)),
    ("LazyConvTranspose2d", (4, 3), dict(groups=2), (1, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), dict(bias=False), (1, 2, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), dict(affine=False), (2, 3, 3, 3)),
    ("LazyBatchNorm3d", (), dict(momentum=None), (2, 2, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), dict(track_running_stats=False), (2, 3, 3, 3)),
    ("LazyInstanceNorm3d", (), dict(affine=False), (1, 2, 2, 2, 3)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(LAZY_CASES)])
def test_lazy_module_matches_torch(device, name, args, kwargs, shape):
    t_mod = getattr(torch.nn, name)(*args, **kwargs)
    f_mod = getattr(nn, name)(*args, **kwargs)
    assert repr(f_mod) == repr(t_mod)
    assert f_mod.has_uninitialized_params() and t_mod.has_uninitialized_params()
    t_sd, f_sd = t_mod.state_dict(), f_mod.state_dict()
    assert list(f_sd) == list(t_sd)
    assert [repr(v) for v in f_sd.values() if nn.parameter.is_lazy(v)] == \
        [repr(v) for v in t_sd.values() if torch.nn.parameter.is_lazy(v)]
    f_mod.to(device)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    t_out = t_mod(torch.tensor(x))
    f_out = f_mod(fw_tensor(x, device))
    # the class it becomes, its repr, its parameters' classes and shapes
    assert type(f_mod).__name__ == type(t_mod).__name__
    assert type(f_mod) is getattr(nn, type(t_mod).__name__)
    assert repr(f_mod) == repr(t_mod)
    assert not hasattr(f_mod, "has_uninitialized_params")
    assert tuple(f_out.shape) == tuple(t_out.shape)
    for (fk, fv), (tk, tv) in zip(f_mod.state_dict(keep_vars=True).items(),
                                  t_mod.state_dict(keep_vars=True).items()):
        assert fk == tk and tuple(fv.shape) == tuple(tv.shape), (fk, fv.shape, tv.shape)
        assert type(fv).__name__ == type(tv).__name__, fk
        assert fv.device.type == device
    for p in f_mod.parameters():
        assert type(p) is nn.Parameter and p.requires_grad
    # with torch's values copied, the same outputs
    copy_state(f_mod, t_mod)
    x2 = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(to_np(f_mod(fw_tensor(x2, device))),
                               to_np(t_mod(torch.tensor(x2))), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("lazy,regular,x_shape", [
    (lambda: nn.LazyLinear(4), lambda: nn.Linear(6, 4), (2, 6)),
    (lambda: nn.LazyConv2d(3, 2, bias=True), lambda: nn.Conv2d(2, 3, 2), (1, 2, 4, 4)),
    (lambda: nn.LazyConvTranspose1d(3, 2), lambda: nn.ConvTranspose1d(4, 3, 2), (1, 4, 3)),
    (lambda: nn.LazyBatchNorm1d(), lambda: nn.BatchNorm1d(3), (4, 3)),
])
def test_lazy_init_same_as_regular(lazy, regular, x_shape):
    """The lazy module draws its init from the same distribution, in the same order, as the
    regular one: with the same seed, the same values."""
    x = fw.randn(*x_shape)
    fw.manual_seed(7)
    r = regular()
    m = lazy()
    fw.manual_seed(7)
    m.eval()
    m(x)
    for (k, a), (_, b) in zip(m.state_dict().items(), r.state_dict().items()):
        np.testing.assert_array_equal(to_np(a), to_np(b), err_msg=k)


def test_lazy_linear_init_bounds():
    m = nn.LazyLinear(50)
    m(fw.ones(2, 16))
    w, b = to_np(m.weight), to_np(m.bias)
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2 and w.std() > 0.1
    assert np.abs(b).max() <= 0.25


def test_uninitialized_parameter_errors():
    f = nn.LazyLinear(3)
    t = torch.nn.LazyLinear(3)
    fp, tp = f.weight, t.weight
    assert isinstance(fp, nn.UninitializedParameter) and isinstance(fp, nn.Parameter)
    assert repr(fp) == repr(tp) == "<UninitializedParameter>"
    assert tuple(fp.size()) == tuple(tp.size()) == (0,)
    assert fp.requires_grad and fp.is_leaf and fp.grad is None
    assert fp.dtype is fw.float32 and fp.is_floating_point()
    # the shape: RuntimeError, PyTorch's message
    with pytest.raises(RuntimeError) as te:
        tp.shape
    with pytest.raises(RuntimeError) as fe:
        fp.shape
    assert _msg(fe) == _msg(te)
    # using it in an op: ValueError, PyTorch's message (up to the op's name)
    with pytest.raises(ValueError) as te:
        tp + 1
    tail = _msg(te).split(">. ", 1)[1]
    head = "Attempted to use an uninitialized parameter in "
    for use in (lambda p: p + 1, lambda p: p.numel(), lambda p: p.detach(),
                lambda p: F.linear(fw.ones(2, 3), p), lambda p: fw.add(p, 1),
                lambda p: p.sum(), lambda p: p.requires_grad_(False)):
        with pytest.raises(ValueError) as fe:
            use(fp)
        assert _msg(fe).startswith(head) and _msg(fe).endswith(tail), _msg(fe)
    with pytest.raises(ValueError, match="uninitialized parameter in <function linear>"):
        F.linear(fw.ones(2, 3), fp)
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized"):
        f.share_memory()
    b = nn.UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    assert isinstance(b, nn.Buffer) and nn.parameter.is_lazy(b) and not nn.parameter.is_lazy(
        fw.ones(1))
    with pytest.raises(ValueError, match=r"torch\.nn\.parameter\.UninitializedBuffer"):
        b * 2


def test_lazy_dtype_device_moves_before_forward(device):
    m = nn.LazyLinear(3).double().to(device)
    t = torch.nn.LazyLinear(3).double()
    assert m.weight.dtype is fw.float64 and m.weight.device.type == device
    assert isinstance(m.weight, nn.UninitializedParameter)
    m(fw.ones(2, 4, dtype=fw.float64, device=device))
    t(torch.ones(2, 4, dtype=torch.float64))
    assert m.weight.dtype is fw.float64 and m.weight.device.type == device
    assert tuple(m.weight.shape) == tuple(t.weight.shape)
    p = nn.UninitializedParameter(requires_grad=False, dtype=fw.float64)
    assert p.dtype is fw.float64 and not p.requires_grad
    assert p.double() is p and p.cpu() is p      # no change: the same object (PyTorch too)
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype is fw.float64


def test_lazy_optimizer_built_before_forward():
    """PyTorch builds an optimizer on uninitialized parameters without an error; the
    parameters keep their identity through initialization, so it then trains them."""
    m = nn.LazyLinear(2)
    tm = torch.nn.LazyLinear(2)
    opt = fw.optim.SGD(m.parameters(), lr=0.5)
    torch.optim.SGD(tm.parameters(), lr=0.5)
    ids = [id(p) for p in m.parameters()]
    opt.step()                  # no gradients yet: nothing to do (as PyTorch)
    m(fw.ones(3, 4)).sum().backward()
    assert [id(p) for p in m.parameters()] == ids
    before = to_np(m.weight).copy()
    opt.step()
    np.testing.assert_allclose(to_np(m.weight), before - 0.5 * 3, rtol=1e-6)
    # an optimizer whose constructor reads the parameters (Adagrad's state): ValueError
    with pytest.raises(ValueError) as te:
        torch.optim.Adagrad(torch.nn.LazyLinear(2).parameters())
    with pytest.raises(ValueError) as fe:
        fw.optim.Adagrad(nn.LazyLinear(2).parameters())
    head = "Attempted to use an uninitialized parameter in "
    assert _msg(te).startswith(head) and _msg(fe).startswith(head)
    assert _msg(fe).split(">. ", 1)[1] == _msg(te).split(">. ", 1)[1]


def test_lazy_state_dict_load_initializes():
    t_src = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.LazyBatchNorm1d())
    t_src(torch.randn(5, 3))
    sd = t_src.state_dict()
    f = nn.Sequential(nn.LazyLinear(4), nn.LazyBatchNorm1d())
    t = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.LazyBatchNorm1d())
    f.load_state_dict({k: fw.tensor(v.numpy()) for k, v in sd.items()})
    t.load_state_dict(sd)
    # materialized by the load; the class changes at the first forward (as PyTorch)
    assert not f[0].has_uninitialized_params() and not f[1].has_uninitialized_params()
    assert type(f[0]).__name__ == type(t[0]).__name__ == "LazyLinear"
    for k, v in f.state_dict().items():
        np.testing.assert_array_equal(to_np(v), sd[k].numpy(), err_msg=k)
    x = np.random.default_rng(3).standard_normal((6, 3)).astype(np.float32)
    f.eval()
    t.eval()
    np.testing.assert_allclose(to_np(f(fw.tensor(x))), to_np(t(torch.tensor(x))),
                               rtol=1e-5, atol=1e-6)
    assert type(f[0]) is nn.Linear and type(f[1]) is nn.BatchNorm1d
    assert f[0].in_features == t[0].in_features == 3
    # an uninitialized state dict into a lazy module: it stays uninitialized
    g = nn.LazyLinear(4)
    g.load_state_dict(nn.LazyLinear(4).state_dict())
    assert g.has_uninitialized_params()
    # ... and into an initialized one: PyTorch's RuntimeError
    with pytest.raises(RuntimeError) as te:
        torch.nn.Linear(3, 4).load_state_dict(torch.nn.LazyLinear(4).state_dict())
    with pytest.raises(RuntimeError) as fe:
        nn.Linear(3, 4).load_state_dict(nn.LazyLinear(4).state_dict())
    assert _msg(fe) == _msg(te)


def test_lazy_misc():
    m = nn.Sequential(nn.LazyLinear(3), nn.ReLU())
    c = copy.deepcopy(m)
    assert isinstance(c[0].weight, nn.UninitializedParameter) and c[0].weight is not m[0].weight
    assert repr(c) == repr(m)
    # the copy initializes itself, not the original (its hook handles follow the copy)
    c(fw.ones(2, 4))
    assert type(c[0]) is nn.Linear and type(m[0]) is nn.LazyLinear
    m(fw.ones(2, 5))
    assert tuple(m[0].weight.shape) == (3, 5) and tuple(c[0].weight.shape) == (3, 4)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(fw.ones(1, 3, 4, 4))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to LazyConv2d"):
        nn.LazyConv2d(4, 3)(fw.ones(3, 4))

    class Custom(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented "
                                                  "for Custom"):
        Custom()(fw.ones(1))
    # unbatched conv input infers in_channels from dim 0
    u = nn.LazyConv1d(2, 2)
    u(fw.ones(3, 5))
    assert u.in_channels == 3 and tuple(u.weight.shape) == (2, 3, 2)


# ---- SyncBatchNorm --------------------------------------------------------------------------
def test_sync_batchnorm_is_batchnorm_without_process_group(device):
    t = torch.nn.SyncBatchNorm(3, momentum=0.2)
    f = nn.SyncBatchNorm(3, momentum=0.2)
    assert repr(f) == repr(t) and list(f.state_dict()) == list(t.state_dict())
    with torch.no_grad():
        t.weight.uniform_(0.5, 2)
        t.bias.uniform_(-1, 1)
    copy_state(f, t)
    f.to(device)
    x = np.random.default_rng(4).standard_normal((3, 3, 4)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    for _ in range(2):
        to, fo = t(tx), f(fx)
        np.testing.assert_allclose(to_np(fo), to_np(to), rtol=1e-4, atol=1e-5)
    (to * to).sum().backward()
    (fo * fo).sum().backward()
    np.testing.assert_allclose(to_np(fx.grad), to_np(tx.grad), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(f.weight.grad), to_np(t.weight.grad), rtol=1e-4,
                               atol=1e-4)
    for k, v in t.state_dict().items():
        np.testing.assert_allclose(to_np(f.state_dict()[k]), to_np(v), rtol=1e-5, atol=1e-6)
    t.eval()
    f.eval()
    np.testing.assert_allclose(to_np(f(fx)), to_np(t(tx)), rtol=1e-4, atol=1e-5)


def test_sync_batchnorm_errors():
    with pytest.raises(ValueError) as te:
        torch.nn.SyncBatchNorm(3)(torch.ones(3))
    with pytest.raises(ValueError) as fe:
        nn.SyncBatchNorm(3)(fw.ones(3))
    assert _msg(fe) == _msg(te)
    with pytest.raises(ValueError) as te:
        torch.nn.SyncBatchNorm(3)(torch.ones(2, 0, 3))
    with pytest.raises(ValueError) as fe:
        nn.SyncBatchNorm(3)(fw.ones(2, 0, 3))
    assert _msg(fe) == _msg(te)


def _model(mod):
    m = mod.Sequential(mod.Conv2d(2, 3, 1), mod.BatchNorm2d(3),
                       mod.Sequential(mod.Linear(3, 4), mod.BatchNorm1d(4, affine=False)),
                       mod.BatchNorm3d(2, track_running_stats=False, bias=False))
    m[2].eval()
    return m


def test_convert_sync_batchnorm():
    t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(_model(torch.nn), process_group="pg")
    src = _model(nn)
    bn_weight, bn_mean = src[1].weight, src[1].running_mean
    f = nn.SyncBatchNorm.convert_sync_batchnorm(src, process_group="pg")
    assert f is src                          # converted in place below the top
    assert repr(f) == repr(t)
    assert [type(m).__name__ for m in f.modules()] == [type(m).__name__ for m in t.modules()]
    assert list(f.state_dict()) == list(t.state_dict())
    assert f[1].weight is bn_weight and f[1].running_mean is bn_mean
    assert f[1].process_group == "pg" and f[2][1].process_group == "pg"
    assert [m.training for m in f.modules()] == [m.training for m in t.modules()]
    assert f[3].bias is None and f[3].running_mean is None
    one = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(5))
    assert type(one) is nn.SyncBatchNorm and one.num_features == 5
    assert one.process_group is None


MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or \
    shutil.which("mpiexec")


@pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install mpich)")
def test_sync_batchnorm_two_processes():
    pytest.importorskip("mpi4py")
    # SyncBatchNorm synchronizes cuda inputs only (as PyTorch): without a GPU, the simulated
    # one (Triton's interpreter)
    interpret = os.environ.get("TRITON_INTERPRET", "") if fw.cuda.is_available() else "1"
    cmd = [MPIEXEC, "-n", "2", sys.executable, os.path.join(HERE, "sync_batchnorm_script.py"),
           "cuda"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                       env=child_env(ROOT, TRITON_INTERPRET=interpret))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    assert "FAIL" not in r.stdout, out[-5000:]
    assert r.stdout.count(" PASS ") == 16, out[-5000:]


# ---- DataParallel ---------------------------------------------------------------------------
def test_data_parallel_wraps_module():
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner)
    assert dp.module is inner and nn.parallel.DataParallel is nn.DataParallel
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp).startswith("DataParallel(\n  (module): Linear(")
    x = fw.randn(4, 3)
    out = dp(x)
    if fw.cuda.is_available():
        # one device: the module and the inputs are moved there (PyTorch's behaviour)
        assert dp.device_ids == [0] and dp.output_device == 0
        assert inner.weight.device == fw.device("cuda", 0) and out.device.type == "cuda"
    else:
        assert dp.device_ids == []
    np.testing.assert_allclose(to_np(out), to_np(inner(x.to(inner.weight.device))),
                               rtol=1e-6)
    # loads a state dict saved from the bare module under module.
    dp.load_state_dict({"module." + k: v for k, v in nn.Linear(3, 2).state_dict().items()})
    # keyword arguments and nested inputs pass through
    m = nn.DataParallel(nn.Bilinear(2, 2, 1))
    assert tuple(m(fw.ones(3, 2), input2=fw.ones(3, 2)).shape) == (3, 1)


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs a cuda device")
def test_data_parallel_devices():
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner, device_ids=["cuda:0", 0], output_device=fw.device("cuda:0"))
    assert dp.device_ids == [0, 0] and dp.src_device_obj == fw.device("cuda", 0)
    inner.to("cuda")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        out = dp(fw.ones(2, 3))
    assert out.device == fw.device("cuda", 0) and tuple(out.shape) == (2, 2)
    cpu_dp = nn.DataParallel(nn.Linear(3, 2), device_ids=[0, 0])
    with pytest.raises(RuntimeError, match=r"module must have its parameters and buffers on "
                                           r"device cuda:0 \(device_ids\[0\]\) but found one "
                                           r"of them on device: cpu"):
        cpu_dp(fw.ones(2, 3))


# ---- FractionalMaxPool2d/3d, NLLLoss2d ------------------------------------------------------
@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_modules(device, nd):
    shape = (1, 2) + (6,) * nd
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    samples = np.random.default_rng(6).random((1, 2, nd)).astype(np.float32)
    tcls = getattr(torch.nn, f"FractionalMaxPool{nd}d")
    fcls = getattr(nn, f"FractionalMaxPool{nd}d")
    t = tcls(2, output_size=3, return_indices=True, _random_samples=torch.tensor(samples))
    f = fcls(2, output_size=3, return_indices=True,
             _random_samples=fw_tensor(samples, device))
    (to, ti), (fo, fi) = t(torch.tensor(x)), f(fw_tensor(x, device))
    np.testing.assert_array_equal(to_np(fo), to_np(to))
    np.testing.assert_array_equal(to_np(fi), to_np(ti))
    r = fcls(3, output_ratio=0.5)
    assert tuple(r(fw_tensor(x, device)).shape) == tuple(tcls(3, output_ratio=0.5)(
        torch.tensor(x)).shape)
    for kw in (dict(), dict(output_size=2, output_ratio=0.5), dict(output_ratio=1.5)):
        with pytest.raises(ValueError) as te:
            tcls(2, **kw)
        with pytest.raises(ValueError) as fe:
            fcls(2, **kw)
        assert _msg(fe) == _msg(te)


def test_nll_loss_2d(device):
    x = np.random.default_rng(7).standard_normal((2, 3, 2, 2)).astype(np.float32)
    y = np.random.default_rng(8).integers(0, 3, (2, 2, 2))
    with pytest.warns(FutureWarning) as tw:
        t = torch.nn.NLLLoss2d(reduction="sum")(torch.tensor(x), torch.tensor(y))
    with pytest.warns(FutureWarning) as fwarn:
        f = nn.NLLLoss2d(reduction="sum")(fw_tensor(x, device), fw_tensor(y, device))
    assert str(fwarn[0].message) == str(tw[0].message)
    np.testing.assert_allclose(to_np(f), to_np(t), rtol=1e-5)
    with pytest.warns(FutureWarning):
        assert isinstance(nn.NLLLoss2d(), nn.NLLLoss)


# ---- LinearCrossEntropyLoss -----------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(), dict(bias=True, out_features=(2,), label_smoothing=0.1,
                                             reduction="sum")])
def test_linear_cross_entropy_loss(device, kw):
    t = torch.nn.LinearCrossEntropyLoss(4, 3, **kw)
    f = nn.LinearCrossEntropyLoss(4, 3, **kw)
    assert repr(f) == repr(t)
    copy_state(f, t)
    f.to(device)
    x = np.random.default_rng(9).standard_normal((5, 4)).astype(np.float32)
    y = np.random.default_rng(10).integers(0, 3, (5,) + tuple(kw.get("out_features", ())))
    tl = t(torch.tensor(x), torch.tensor(y))
    fl = f(fw_tensor(x, device), fw_tensor(y, device))
    np.testing.assert_allclose(to_np(fl), to_np(tl), rtol=1e-5, atol=1e-6)
    tl.backward()
    fl.backward()
    np.testing.assert_allclose(to_np(f.linear.weight.grad), to_np(t.linear.weight.grad),
                               rtol=1e-4, atol=1e-6)


def test_linear_cross_entropy_options():
    assert repr(nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    opt = nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
    m = nn.LinearCrossEntropyLoss(3, 2, options=opt)
    assert m.options is opt and tuple(m(fw.ones(4, 3), fw.tensor([0, 1, 1, 0])).shape) == ()
    for kw in (dict(acc_policy="x"), dict(chunking_method="foo"), dict(batch_chunk_size=0)):
        with pytest.raises(ValueError) as te:
            torch.nn.LinearCrossEntropyOptions(**kw)
        with pytest.raises(ValueError) as fe:
            nn.LinearCrossEntropyOptions(**kw)
        assert _msg(fe) == _msg(te)
    with pytest.raises(RuntimeError) as te:
        torch.nn.LinearCrossEntropyLoss(3, 2, label_smoothing=2.0)
    with pytest.raises(RuntimeError) as fe:
        nn.LinearCrossEntropyLoss(3, 2, label_smoothing=2.0)
    assert _msg(fe) == _msg(te)


# ---- AdaptiveLogSoftmaxWithLoss -------------------------------------------------------------
def test_adaptive_log_softmax(device):
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    f = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    assert repr(f) == repr(t)
    copy_state(f, t)
    f.to(device)
    x = np.random.default_rng(11).standard_normal((6, 8)).astype(np.float32)
    y = np.array([0, 4, 9, 2, 7, 5])
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    to, tl = t(tx, torch.tensor(y))
    fo, fl = f(fx, fw_tensor(y, device))
    np.testing.assert_allclose(to_np(fo), to_np(to), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(fl), to_np(tl), rtol=1e-5, atol=1e-6)
    tl.backward()
    fl.backward()
    np.testing.assert_allclose(to_np(fx.grad), to_np(tx.grad), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(to_np(f.tail[1][0].weight.grad),
                               to_np(t.tail[1][0].weight.grad), rtol=1e-4, atol=1e-6)
    with torch.no_grad(), fw.no_grad():
        np.testing.assert_allclose(to_np(f.log_prob(fx)), to_np(t.log_prob(tx)), rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_array_equal(to_np(f.predict(fx)), to_np(t.predict(tx)))
        o1, _ = f(fx[0], fw_tensor(y[0], device))
        assert tuple(o1.shape) == ()
    with pytest.raises(RuntimeError) as te:
        t(tx, torch.tensor([0, 1, 2, 3, 4, 10]))
    with pytest.raises(RuntimeError) as fe:
        f(fx, fw_tensor(np.array([0, 1, 2, 3, 4, 10]), device))
    assert _msg(fe) == _msg(te)
    with pytest.raises(ValueError) as te:
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    with pytest.raises(ValueError) as fe:
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
    assert _msg(fe) == _msg(te)


# ---- CrossMapLRN2d --------------------------------------------------------------------------
@pytest.mark.parametrize("size", [2, 3, 5])
def test_cross_map_lrn2d(device, size):
    """PyTorch's legacy window (channel 0 always in) and its hand-written backward."""
    x = np.random.default_rng(12).standard_normal((2, 7, 2, 3)).astype(np.float32)
    g = np.random.default_rng(13).standard_normal((2, 7, 2, 3)).astype(np.float32)
    t = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2)
    f = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2)
    assert repr(f) == repr(t)
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    to, fo = t(tx), f(fx)
    np.testing.assert_allclose(to_np(fo), to_np(to), rtol=1e-5, atol=1e-6)
    to.backward(torch.tensor(g))
    fo.backward(fw_tensor(g, device))
    np.testing.assert_allclose(to_np(fx.grad), to_np(tx.grad), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError) as te:
        t(torch.ones(2, 3, 4))
    with pytest.raises(ValueError) as fe:
        f(fw.ones(2, 3, 4, device=device))
    assert _msg(fe) == _msg(te)


def test_save_and_load_uninitialized_state_dict_as_torch(tmp_path):
    real_torch = pytest.importorskip("torch")
    m = fw.nn.LazyLinear(3)
    path = str(tmp_path / "lazy.pt")
    fw.save(m.state_dict(), path)
    with pytest.raises(Exception, match="Weights only load failed"):
        fw.load(path)                          # not on the allow-list, as in PyTorch
    for load in (lambda: fw.load(path, weights_only=False),
                 lambda: real_torch.load(path, weights_only=False)):
        assert [repr(v) for v in load().values()] == ["<UninitializedParameter>"] * 2
    tpath = str(tmp_path / "torch_lazy.pt")
    real_torch.save(real_torch.nn.LazyBatchNorm1d().state_dict(), tpath)
    sd = fw.load(tpath, weights_only=False)
    assert isinstance(sd["running_mean"], fw.nn.UninitializedBuffer)
    assert isinstance(sd["weight"], fw.nn.UninitializedParameter)
