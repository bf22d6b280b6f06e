"""framework.nn.utils against torch.nn.utils: gradient clipping, parameter vectors, the
hook-based weight_norm/spectral_norm, parametrize and its ready-made parametrizations,
stateless/func.functional_call."""
import copy
import warnings

import numpy as np
import pytest

import framework as fw
import framework.func  # noqa: F401  (the submodule import torch scripts do)
import framework.nn as nn
from framework.nn.utils import parametrize
from tests.helpers import assert_close
from tests.nn.common import compare_module, copy_state, fw_tensor, to_np

torch = pytest.importorskip("torch")


def same_error(t_fn, f_fn, exact=True):
    with pytest.raises(Exception) as want:
        t_fn()
    with pytest.raises(type(want.value)) as got:
        f_fn()
    w = str(want.value).replace("torch.Size", "framework.Size")
    if exact:
        assert str(got.value) == w
    else:
        assert str(got.value).split("\n")[0] == w.split("\n")[0]


def make_params(device, shapes=((3, 4), (5,), (2, 3, 2)), seed=0, with_none=True):
    """torch and framework parameter lists with the same values and gradients (the last
    one without a gradient when ``with_none``)."""
    rng = np.random.default_rng(seed)
    tp, fp = [], []
    for i, s in enumerate(shapes):
        v = rng.standard_normal(s)
        g = rng.standard_normal(s) * 3
        t = torch.nn.Parameter(torch.tensor(v, dtype=torch.float32))
        f = nn.Parameter(fw.tensor(v, dtype=fw.float32, device=device))
        t.grad = torch.tensor(g, dtype=torch.float32)
        f.grad = fw.tensor(g, dtype=fw.float32, device=device)
        tp.append(t)
        fp.append(f)
    if with_none:
        tp.append(torch.nn.Parameter(torch.ones(2)))
        fp.append(nn.Parameter(fw.ones(2, device=device)))
    return tp, fp


# ---- clip_grad -----------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf", 0.5])
@pytest.mark.parametrize("max_norm", [0.7, 1e4])
@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_norm(device, norm_type, max_norm, foreach):
    tp, fp = make_params(device)
    t_total = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type, foreach=foreach)
    f_total = nn.utils.clip_grad_norm_(fp, max_norm, norm_type, foreach=foreach)
    assert isinstance(f_total, fw.Tensor) and f_total.dim() == 0
    assert f_total.device == fp[0].device
    assert_close(f_total, t_total.numpy(), rtol=1e-5, atol=1e-6)
    for t, f in zip(tp, fp):
        assert (t.grad is None) == (f.grad is None)
        if t.grad is not None:
            assert_close(f.grad, t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_single_tensor_and_generator(device):
    tp, fp = make_params(device, shapes=((4, 3),), with_none=False)
    t_total = torch.nn.utils.clip_grad_norm_(tp[0], 0.5)
    f_total = nn.utils.clip_grad_norm_(fp[0], 0.5)
    assert_close(f_total, t_total.numpy(), rtol=1e-5)
    assert_close(fp[0].grad, tp[0].grad.numpy(), rtol=1e-5, atol=1e-6)
    tp, fp = make_params(device, seed=1)
    t_total = torch.nn.utils.clip_grad_norm_((p for p in tp), 1.0, 1.0)
    f_total = nn.utils.clip_grad_norm_((p for p in fp), 1.0, 1.0)
    assert_close(f_total, t_total.numpy(), rtol=1e-5)
    assert_close(fp[1].grad, tp[1].grad.numpy(), rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_empty():
    total = nn.utils.clip_grad_norm_([], 1.0)
    assert float(total) == 0.0 and total.dim() == 0
    total = nn.utils.clip_grad_norm_([nn.Parameter(fw.ones(2))], 1.0)    # no grads at all
    assert float(total) == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_nonfinite(device):
    for bad in (float("nan"), float("inf")):
        tp, fp = make_params(device, with_none=False)
        with torch.no_grad():
            tp[0].grad[0, 0] = bad
        with fw.no_grad():
            fp[0].grad[0, 0] = bad
        same_error(lambda: torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True),
                   lambda: nn.utils.clip_grad_norm_(fp, 1.0, error_if_nonfinite=True))
        # without the check the gradients are scaled by the non-finite norm anyway
        t_total = torch.nn.utils.clip_grad_norm_(tp, 1.0)
        f_total = nn.utils.clip_grad_norm_(fp, 1.0)
        assert_close(f_total, t_total.numpy())
        for t, f in zip(tp, fp):
            assert_close(f.grad, t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_deprecated_alias():
    _, fp = make_params("cpu")
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        nn.utils.clip_grad_norm(fp, 1.0)


def test_get_total_norm_and_clip_grads_with_norm(device):
    tp, fp = make_params(device, with_none=False)
    tg = [p.grad for p in tp]
    fg = [p.grad for p in fp]
    for norm_type in (2, 1, float("inf")):
        t_total = torch.nn.utils.get_total_norm(tg, norm_type)
        f_total = nn.utils.get_total_norm(fg, norm_type)
        assert_close(f_total, t_total.numpy(), rtol=1e-5)
    t_total = torch.nn.utils.get_total_norm(tg)
    f_total = nn.utils.get_total_norm(fg)
    torch.nn.utils.clip_grads_with_norm_(tp, 2.0, t_total)
    assert nn.utils.clip_grads_with_norm_(fp, 2.0, f_total) is None
    for t, f in zip(tp, fp):
        assert_close(f.grad, t.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert float(nn.utils.get_total_norm([])) == 0.0


def test_clip_grad_norm_float64_and_mixed(device):
    a = nn.Parameter(fw.ones(3, dtype=fw.float64, device=device))
    a.grad = fw.full((3,), 4.0, dtype=fw.float64, device=device)
    b = nn.Parameter(fw.ones(2, device=device))
    b.grad = fw.full((2,), 3.0, device=device)
    ta = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    ta.grad = torch.full((3,), 4.0, dtype=torch.float64)
    tb = torch.nn.Parameter(torch.ones(2))
    tb.grad = torch.full((2,), 3.0)
    t_total = torch.nn.utils.clip_grad_norm_([ta, tb], 1.0)
    f_total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert str(f_total.dtype).split(".")[-1] == str(t_total.dtype).split(".")[-1]
    assert_close(f_total, t_total.numpy(), rtol=1e-6)
    assert_close(a.grad, ta.grad.numpy(), rtol=1e-6)
    assert_close(b.grad, tb.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_multi_tensor_kernels(device, dtype, monkeypatch):
    """Gradients crossing the cuda kernels' BLOCK (1024), an empty one, a 1-element one and
    a partials buffer longer than the summing program's block (shrunk here): the
    multi-tensor launchers (native/grad_norm.cpp, framework/kernels/grad_norm.py) must be
    the path taken, and agree with torch; a non-contiguous gradient takes the per-tensor
    path."""
    from framework._ops.alloc import backend
    ops = backend(fw.device(device)).grad_norm
    calls = []
    if device == "cuda":
        monkeypatch.setattr(ops, "_FINISH_BLOCK", 2)
    for name in ("total_norm", "scale_"):
        real = getattr(ops, name)
        monkeypatch.setattr(ops, name, lambda *a, _r=real, _n=name: calls.append(_n)
                            or _r(*a))
    shapes = ((1025,), (3, 700), (0,), (1,), (2049,), (40000,))   # 40000: 3 CPU chunks
    for max_norm, contiguous in ((0.5, True), (1e6, True), (0.5, False)):
        tp, fp = make_params(device, shapes=shapes, with_none=False, seed=3)
        tp = [torch.nn.Parameter(p.detach().to(getattr(torch, dtype))) for p in tp]
        for t, f in zip(tp, fp):
            t.grad = torch.tensor(to_np(f.grad), dtype=getattr(torch, dtype))
        fp = [nn.Parameter(p.detach().to(getattr(fw, dtype))) for p in fp]
        for t, f in zip(tp, fp):
            g = fw.tensor(t.grad.numpy(), device=device)
            f.grad = g if contiguous or g.dim() < 2 else g.t().contiguous().t()
        calls.clear()
        t_total = torch.nn.utils.clip_grad_norm_(tp, max_norm)
        f_total = nn.utils.clip_grad_norm_(fp, max_norm)
        assert str(f_total.dtype).split(".")[-1] == dtype
        tol = 1e-5 if dtype == "float32" else 1e-12
        assert_close(f_total, t_total.numpy(), rtol=tol)
        for t, f in zip(tp, fp):
            assert_close(f.grad, t.grad.numpy(), rtol=tol, atol=tol)
        want = ["total_norm", "scale_"] if contiguous else []
        assert calls == want


@pytest.mark.parametrize("clip", [0.5, 2, 100.0])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_value(device, clip, foreach):
    tp, fp = make_params(device)
    assert torch.nn.utils.clip_grad_value_(tp, clip, foreach) is None
    assert nn.utils.clip_grad_value_(fp, clip, foreach) is None
    for t, f in zip(tp, fp):
        if t.grad is not None:
            assert_close(f.grad, t.grad.numpy())
    tp, fp = make_params(device, shapes=((3, 3),), with_none=False)
    torch.nn.utils.clip_grad_value_(tp[0], clip)
    nn.utils.clip_grad_value_(fp[0], clip)
    assert_close(fp[0].grad, tp[0].grad.numpy())


# ---- parameters <-> vector -----------------------------------------------------------------
def test_parameters_to_vector_and_back(device):
    tp, fp = make_params(device, with_none=False)
    tv = torch.nn.utils.parameters_to_vector(tp)
    fv = nn.utils.parameters_to_vector(fp)
    assert_close(fv, tv.detach().numpy())
    # the vector is differentiable with respect to the parameters
    w = np.arange(fv.numel(), dtype=np.float32)
    (tv * torch.tensor(w)).sum().backward()
    (fv * fw.tensor(w, device=device)).sum().backward()
    for t, f in zip(tp, fp):
        assert_close(f.grad, t.grad.numpy())
    new = np.linspace(-1, 1, fv.numel()).astype(np.float32)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tp)
    assert nn.utils.vector_to_parameters(fw.tensor(new, device=device), fp) is None
    for t, f in zip(tp, fp):
        assert isinstance(f, nn.Parameter) and f.requires_grad and f.is_leaf
        assert_close(f, t.detach().numpy())


def test_vector_to_parameters_errors():
    same_error(lambda: torch.nn.utils.vector_to_parameters([1.0], []),
               lambda: nn.utils.vector_to_parameters([1.0], []))
    same_error(lambda: torch.nn.utils.vector_to_parameters(np.zeros(3), []),
               lambda: nn.utils.vector_to_parameters(np.zeros(3), []))
    if fw.cuda.is_available():
        ps = [nn.Parameter(fw.ones(2)), nn.Parameter(fw.ones(2, device="cuda"))]
        with pytest.raises(TypeError, match="Found two parameters on different devices"):
            nn.utils.parameters_to_vector(ps)


# ---- weight_norm / spectral_norm (hook API) ----------------------------------------------
def _linear_pair(seed=0, n_in=5, n_out=4):
    torch.manual_seed(seed)
    return torch.nn.Linear(n_in, n_out), nn.Linear(n_in, n_out)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm(device, dim):
    t, f = _linear_pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t, dim=dim)
    with pytest.warns(FutureWarning, match="torch.nn.utils.weight_norm` is deprecated"):
        assert nn.utils.weight_norm(f, dim=dim) is f
    assert list(f.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert [tuple(v.shape) for v in f.state_dict().values()] == \
        [tuple(v.shape) for v in t.state_dict().values()]
    x = np.random.randn(3, 5).astype(np.float32)
    compare_module(torch, f, t, [x], device)
    # the g and v computed at registration equal torch's
    t2, f2 = _linear_pair(1)
    copy_state(f2, t2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t2, dim=dim)
        nn.utils.weight_norm(f2, dim=dim)
    assert_close(f2.weight_g, to_np(t2.weight_g), rtol=1e-6)
    assert_close(f2.weight, to_np(t2.weight), rtol=1e-6)
    # removal folds g and v back into one parameter
    torch.nn.utils.remove_weight_norm(t)
    assert nn.utils.remove_weight_norm(f) is f
    assert list(f.state_dict()) == ["bias", "weight"] and isinstance(f.weight, nn.Parameter)
    compare_module(torch, f, t, [x], device)


def test_weight_norm_conv_like_weight():
    # a 3-D weight normalised along a middle dimension
    w = np.random.randn(3, 4, 5).astype(np.float32)
    t = torch.nn.Module()
    t.weight = torch.nn.Parameter(torch.tensor(w))
    f = nn.Module()
    f.weight = nn.Parameter(fw.tensor(w))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t, dim=1)
        nn.utils.weight_norm(f, dim=1)
    assert tuple(f.weight_g.shape) == tuple(t.weight_g.shape)
    assert_close(f.weight_g, to_np(t.weight_g), rtol=1e-6)
    assert_close(f.weight, to_np(t.weight), rtol=1e-6)


def test_weight_norm_errors():
    _, f = _linear_pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.weight_norm(f)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on "
                                               "the same parameter weight"):
            nn.utils.weight_norm(f)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found in"):
        nn.utils.remove_weight_norm(f, "bias")


def test_spectral_norm(device):
    t, f = _linear_pair(n_in=6, n_out=5)
    torch.nn.utils.spectral_norm(t)
    assert nn.utils.spectral_norm(f) is f
    assert list(f.state_dict()) == list(t.state_dict()) == \
        ["bias", "weight_orig", "weight_u", "weight_v"]
    assert f.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    x = np.random.randn(3, 6).astype(np.float32)
    copy_state(f, t)
    for training in (True, True, False):
        t.train(training)
        f.train(training)
        compare_module(torch, f, t, [x], device, copy=False)
        assert_close(f.weight_u, to_np(t.weight_u), rtol=1e-5, atol=1e-6)
        assert_close(f.weight_v, to_np(t.weight_v), rtol=1e-5, atol=1e-6)
        t.zero_grad()
        f.zero_grad()
    torch.nn.utils.remove_spectral_norm(t)
    assert nn.utils.remove_spectral_norm(f) is f
    assert list(f.state_dict()) == ["bias", "weight"]
    assert not f._state_dict_hooks and not f._load_state_dict_pre_hooks
    compare_module(torch, f, t, [x], device, copy=False)


def test_spectral_norm_dim_and_power_iterations(device):
    w = np.random.randn(3, 4, 2).astype(np.float32)
    t = torch.nn.Module()
    t.weight = torch.nn.Parameter(torch.tensor(w))
    f = nn.Module()
    f.weight = nn.Parameter(fw.tensor(w))
    torch.nn.utils.spectral_norm(t, n_power_iterations=3, dim=1)
    nn.utils.spectral_norm(f, n_power_iterations=3, dim=1)
    assert tuple(f.weight_u.shape) == (4,) and tuple(f.weight_v.shape) == (6,)
    copy_state(f, t)
    f.to(device)
    for hook_t, hook_f in zip(t._forward_pre_hooks.values(), f._forward_pre_hooks.values()):
        hook_t(t, None)
        hook_f(f, None)
    assert_close(f.weight, to_np(t.weight), rtol=1e-5, atol=1e-6)
    assert_close(f.weight_u, to_np(t.weight_u), rtol=1e-5, atol=1e-6)


def test_spectral_norm_old_checkpoint_loads():
    # a state dict without weight_v and with the computed weight (before version 1)
    t, f = _linear_pair()
    torch.nn.utils.spectral_norm(t)
    nn.utils.spectral_norm(f)
    t(torch.randn(2, 5))
    sd = {k: v.detach().numpy() for k, v in t.state_dict().items()}
    sd["weight"] = t.weight.detach().numpy()
    del sd["weight_v"]
    f.load_state_dict({k: fw.tensor(v) for k, v in sd.items()})
    f.eval()
    t.eval()
    x = np.random.randn(2, 5).astype(np.float32)
    np.testing.assert_allclose(to_np(f(fw.tensor(x))), to_np(t(torch.tensor(x))), rtol=1e-4,
                               atol=1e-5)


def test_spectral_norm_errors():
    _, f = _linear_pair()
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but "
                                         "got n_power_iterations=0"):
        nn.utils.spectral_norm(f, n_power_iterations=0)
    nn.utils.spectral_norm(f)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(f)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
        nn.utils.remove_spectral_norm(f, "bias")


# ---- parametrize ---------------------------------------------------------------------------
def _symmetric(mod):
    class Symmetric(mod.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _scale(mod, s):
    class Scale(mod.Module):
        def forward(self, x):
            return x * s

        def right_inverse(self, a):
            return a / s
    return Scale()


def test_register_parametrization(device):
    t, f = _linear_pair(n_in=4, n_out=4)
    copy_state(f, t)
    f.to(device)
    weight_obj = f.weight
    torch.nn.utils.parametrize.register_parametrization(t, "weight", _symmetric(torch.nn))
    assert parametrize.register_parametrization(f, "weight", _symmetric(nn)) is f
    assert type(f).__name__ == "ParametrizedLinear" and isinstance(f, nn.Linear)
    assert parametrize.type_before_parametrizations(f) is nn.Linear
    assert parametrize.is_parametrized(f) and parametrize.is_parametrized(f, "weight")
    assert not parametrize.is_parametrized(f, "bias")
    # the original keeps its identity (optimizers hold it)
    assert f.parametrizations.weight.original is weight_obj
    assert list(f.state_dict()) == list(t.state_dict())
    assert [n for n, _ in f.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert_close(f.weight, to_np(t.weight))
    w = to_np(f.weight)
    np.testing.assert_array_equal(w, w.T)
    x = np.random.randn(3, 4).astype(np.float32)
    compare_module(torch, f, t, [x], device, copy=False)
    # chained parametrizations
    torch.nn.utils.parametrize.register_parametrization(t, "weight", _scale(torch.nn, 2.0))
    parametrize.register_parametrization(f, "weight", _scale(nn, 2.0))
    assert len(f.parametrizations.weight) == 2
    t.zero_grad()
    f.zero_grad()
    compare_module(torch, f, t, [x], device, copy=False)
    # assignment goes through right_inverse (in reverse order)
    target = np.random.randn(4, 4).astype(np.float32)
    target = target + target.T
    with torch.no_grad():
        t.weight = torch.tensor(target)
    f.weight = fw.tensor(target, device=device)
    assert_close(f.weight, target, rtol=1e-6)
    assert_close(f.parametrizations.weight.original, to_np(t.parametrizations.weight.original))
    assert f.parametrizations.weight.original is weight_obj


def test_parametrize_cached(device):
    calls = []

    class Count(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.5

    f = nn.Linear(3, 3).to(device)
    parametrize.register_parametrization(f, "weight", Count())
    calls.clear()
    with parametrize.cached():
        a = f.weight
        b = f.weight
        assert a is b
    assert len(calls) == 1
    f.weight
    f.weight
    assert len(calls) == 3


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(device, leave):
    t, f = _linear_pair(n_in=3, n_out=3)
    copy_state(f, t)
    f.to(device)
    weight_obj = f.weight
    for m, mod in ((t, torch.nn), (f, nn)):
        (torch.nn.utils.parametrize if m is t else parametrize).register_parametrization(
            m, "weight", _symmetric(mod))
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight", leave_parametrized=leave)
    assert parametrize.remove_parametrizations(f, "weight", leave_parametrized=leave) is f
    assert type(f) is nn.Linear and not hasattr(f, "parametrizations")
    assert f.weight is weight_obj and isinstance(f.weight, nn.Parameter)
    assert_close(f.weight, to_np(t.weight))
    assert list(f.state_dict()) == list(t.state_dict())


def test_parametrize_buffer_and_multi_tensor_right_inverse(device):
    class Split(nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x * 0.25, x * 0.75

    m = nn.Module()
    m.register_buffer("buf", fw.arange(4.0, device=device))
    parametrize.register_parametrization(m, "buf", Split())
    assert list(m.state_dict()) == ["parametrizations.buf.original0",
                                    "parametrizations.buf.original1"]
    assert_close(m.buf, np.arange(4.0))
    assert_close(m.parametrizations.buf.original1, np.arange(4.0) * 0.75)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "buf", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "buf")
    assert list(m.state_dict()) == ["buf"]
    assert_close(m.buf, np.arange(4.0))


def test_parametrize_errors():
    class Bad(nn.Module):
        def forward(self, x):
            return x[:1]

    class BadT(torch.nn.Module):
        def forward(self, x):
            return x[:1]

    t, f = _linear_pair()
    same_error(lambda: torch.nn.utils.parametrize.register_parametrization(t, "weight", BadT()),
               lambda: parametrize.register_parametrization(f, "weight", Bad()))
    same_error(lambda: torch.nn.utils.parametrize.register_parametrization(
        t, "nope", BadT()), lambda: parametrize.register_parametrization(f, "nope", Bad()),
        exact=False)
    parametrize.register_parametrization(f, "weight", Bad(), unsafe=True)
    assert tuple(f.weight.shape) == (1, 5)
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        parametrize.remove_parametrizations(f, "bias")
    with pytest.raises(RuntimeError, match="parametrization Bad does not implement "
                                           "right_inverse"):
        f.weight = fw.zeros(4, 5)


def test_parametrized_module_deepcopy_and_pickle():
    f = nn.Linear(3, 3)
    parametrize.register_parametrization(f, "weight", _symmetric(nn))
    g = copy.deepcopy(f)
    assert type(g).__name__ == "ParametrizedLinear"
    assert_close(g.weight, to_np(f.weight))
    assert g.parametrizations.weight.original is not f.parametrizations.weight.original
    import pickle
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only "
                                           "supported through state_dict"):
        pickle.dumps(f)


def test_transfer_parametrizations_and_params():
    a = nn.Linear(3, 3)
    parametrize.register_parametrization(a, "weight", _symmetric(nn))
    b = nn.Linear(3, 3)
    parametrize.transfer_parametrizations_and_params(a, b)
    assert parametrize.is_parametrized(b, "weight")
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    assert_close(b.weight, to_np(a.weight))


# ---- parametrizations ----------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(device, dim):
    t, f = _linear_pair()
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    assert nn.utils.parametrizations.weight_norm(f, dim=dim) is f
    copy_state(f, t)
    x = np.random.randn(3, 5).astype(np.float32)
    compare_module(torch, f, t, [x], device, copy=False)
    # a state dict of the hook API loads into the parametrized module
    t2, _ = _linear_pair(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t2, dim=dim)
    f.load_state_dict({k: fw.tensor(v.detach().numpy(), device=device)
                       for k, v in t2.state_dict().items()})
    assert_close(f.weight, to_np(t2.weight), rtol=1e-6)


def test_parametrizations_spectral_norm(device):
    t, f = _linear_pair(n_in=6, n_out=4)
    torch.nn.utils.parametrizations.spectral_norm(t)
    nn.utils.parametrizations.spectral_norm(f)
    assert list(f.state_dict()) == list(t.state_dict())
    copy_state(f, t)
    x = np.random.randn(2, 6).astype(np.float32)
    for training in (True, True, False):
        t.train(training)
        f.train(training)
        compare_module(torch, f, t, [x], device, copy=False)
        assert_close(f.parametrizations.weight[0]._u,
                     to_np(t.parametrizations.weight[0]._u), rtol=1e-5, atol=1e-6)
        t.zero_grad()
        f.zero_grad()
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\] but got 2\)"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), dim=2)


def test_parametrizations_spectral_norm_converges():
    # after many power iterations the weight's top singular value is 1
    f = nn.Linear(7, 5)
    nn.utils.parametrizations.spectral_norm(f, n_power_iterations=30)
    f(fw.randn(1, 7))
    assert abs(np.linalg.svd(to_np(f.weight), compute_uv=False)[0] - 1) < 1e-4


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_parametrizations_orthogonal(device, orth_map, shape):
    torch.manual_seed(0)
    t = torch.nn.Linear(shape[1], shape[0])
    f = nn.Linear(shape[1], shape[0])
    copy_state(f, t)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=orth_map)
    nn.utils.parametrizations.orthogonal(f, orthogonal_map=orth_map)
    assert list(f.state_dict()) == list(t.state_dict())
    w = to_np(f.weight).astype(np.float64)
    g = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(g, np.eye(min(shape)), atol=1e-5)
    copy_state(f, t)
    x = np.random.randn(2, shape[1]).astype(np.float32)
    compare_module(torch, f, t, [x], device, copy=False, rtol=1e-4, atol=1e-5)


def test_parametrizations_orthogonal_no_trivialization():
    m = nn.Linear(3, 5)
    nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder",
                                         use_trivialization=False)
    w = to_np(m.weight).astype(np.float64)
    np.testing.assert_allclose(w.T @ w, np.eye(3), atol=1e-5)
    q = np.linalg.qr(np.random.randn(5, 3))[0].astype(np.float32)
    m.weight = fw.tensor(q)
    assert_close(m.weight, q, atol=1e-5)
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                         '"cayley", "householder". Got: qr'):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                                         "tensor of 1 dimensions."):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 2), "bias")


# ---- functional_call -----------------------------------------------------------------------
@pytest.mark.parametrize("entry", ["func", "stateless"])
def test_functional_call(device, entry):
    t = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    f = nn.Sequential(nn.Linear(4, 3), nn.Linear(3, 2)).to(device)
    rng = np.random.default_rng(0)
    new = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32)
           for k, v in t.state_dict().items()}
    t_new = {k: torch.tensor(v, requires_grad=True) for k, v in new.items()}
    f_new = {k: fw_tensor(v, device, requires_grad=True) for k, v in new.items()}
    before = {k: to_np(v) for k, v in f.state_dict().items()}
    x = rng.standard_normal((5, 4)).astype(np.float32)
    t_out = torch.func.functional_call(t, t_new, (torch.tensor(x),))
    if entry == "func":
        f_out = fw.func.functional_call(f, f_new, (fw.tensor(x, device=device),))
    else:
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            f_out = nn.utils.stateless.functional_call(f, f_new, fw.tensor(x, device=device))
    assert_close(f_out, to_np(t_out), rtol=1e-5)
    t_out.sum().backward()
    f_out.sum().backward()
    for k in new:
        assert_close(f_new[k].grad, to_np(t_new[k].grad), rtol=1e-5)
    # the module is untouched and its own parameters got no gradient
    for k, v in f.state_dict().items():
        np.testing.assert_array_equal(to_np(v), before[k])
    assert all(p.grad is None for p in f.parameters())


def test_functional_call_kwargs_partial_and_multiple_dicts(device):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.register_buffer("shift", fw.zeros(2))

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale + self.shift

    m = M().to(device)
    x = fw.ones(1, 2, device=device)
    w = fw.eye(2, device=device) * 3
    out = fw.func.functional_call(m, ({"lin.weight": w}, {"shift": fw.full((2,), 0.5,
                                                                           device=device)}),
                                  (x,), {"scale": 2.0})
    expect = (np.ones((1, 2)) @ np.eye(2) * 3 + to_np(m.lin.bias)) * 2 + 0.5
    assert_close(out, expect, rtol=1e-6)
    with pytest.raises(ValueError, match=r"\['shift'\] appeared in multiple dictionaries"):
        fw.func.functional_call(m, ({"shift": w}, {"shift": w}), (x,))
    with pytest.raises(ValueError, match="Expected parameter_and_buffer_dicts to be a dict"):
        fw.func.functional_call(m, 3, (x,))
    with pytest.raises(ValueError, match="Expected all elements of parameter_and_buffer_dicts "
                                         "to be dictionaries"):
        fw.func.functional_call(m, [{}, 3], (x,))


def test_functional_call_strict_and_tied_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    x = fw.ones(1, 2)
    w = fw.eye(2) * 2
    out = fw.func.functional_call(m, {"a.weight": w}, (x,))
    assert_close(out, np.full((1, 2), 4.0))
    out = fw.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
    assert_close(out, 2 * (np.ones((1, 2)) @ to_np(m.a.weight).T))
    with pytest.raises(ValueError, match=r"functional_call got multiple values for keys "
                                         r"\['a.weight', 'b.weight'\], which are tied"):
        fw.func.functional_call(m, {"a.weight": w, "b.weight": w * 2}, (x,))
    with pytest.raises(RuntimeError, match="Error\\(s\\) in reparametrizing for Tied:\n\t"
                                           "Unexpected key\\(s\\): 'c'.\n\tMissing key\\(s\\): "
                                           "'b.weight'."):
        fw.func.functional_call(m, {"a.weight": w, "c": w}, (x,), tie_weights=False,
                                strict=True)
    assert m.b.weight is m.a.weight


def test_functional_call_updates_buffers_in_dict():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", fw.zeros(()))

        def forward(self, x):
            self.n = self.n + 1     # reassigns the buffer
            return x

    m = Counter()
    state = {"n": fw.tensor(5.0)}
    fw.func.functional_call(m, state, (fw.ones(1),))
    assert float(state["n"]) == 6.0 and float(m.n) == 0.0


def test_spectral_norm_conv_transpose_uses_dim_1():
    # ConvTranspose weights are (in, out, k...): the output dimension is 1
    f = nn.utils.spectral_norm(nn.ConvTranspose2d(3, 5, 2))
    assert tuple(f.weight_u.shape) == (5,) and tuple(f.weight_v.shape) == (12,)
    g = nn.utils.parametrizations.spectral_norm(nn.ConvTranspose1d(3, 4, 3))
    assert tuple(g.parametrizations.weight[0]._u.shape) == (4,)
    h = nn.utils.spectral_norm(nn.Linear(3, 5))
    assert tuple(h.weight_u.shape) == (5,)
