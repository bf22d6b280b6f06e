"""Activation modules and the activation functions of nn.functional against PyTorch:
forward values, input and parameter gradients, in-place forms, repr, errors."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, fw_tensor, to_np

torch = pytest.importorskip("torch")


def _rand(*shape, scale=2.0, dtype=np.float32):
    return (np.random.randn(*shape) * scale).astype(dtype)


# (class name, constructor args, constructor kwargs)
MODULES = [
    ("ReLU", (), {}), ("ReLU6", (), {}), ("LeakyReLU", (), {}), ("LeakyReLU", (0.2,), {}),
    ("PReLU", (), {}), ("PReLU", (3, 0.1), {}), ("RReLU", (), {}), ("RReLU", (0.1, 0.4), {}),
    ("ELU", (), {}), ("ELU", (0.5,), {}), ("SELU", (), {}), ("CELU", (), {}),
    ("CELU", (2.0,), {}), ("GELU", (), {}), ("GELU", (), {"approximate": "tanh"}),
    ("SiLU", (), {}), ("Mish", (), {}), ("Sigmoid", (), {}), ("LogSigmoid", (), {}),
    ("Tanh", (), {}), ("Hardtanh", (), {}), ("Hardtanh", (-2.0, 1.5), {}),
    ("Hardswish", (), {}), ("Hardsigmoid", (), {}), ("Hardshrink", (), {}),
    ("Hardshrink", (1.2,), {}), ("Softshrink", (), {}), ("Softshrink", (0.9,), {}),
    ("Softplus", (), {}), ("Softplus", (2.0, 3.0), {}), ("Softsign", (), {}),
    ("Tanhshrink", (), {}), ("Threshold", (0.3, -2.0), {}), ("GLU", (), {}),
    ("GLU", (1,), {}), ("Softmax", (1,), {}), ("Softmax", (-1,), {}),
    ("LogSoftmax", (1,), {}), ("LogSoftmax", (0,), {}), ("Softmin", (2,), {}),
    ("Softmax2d", (), {}),
]


def _ids(m):
    return f"{m[0]}{m[1]}{m[2]}".replace(" ", "")


def _pair(name, args, kwargs):
    return getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


@pytest.mark.parametrize("spec", MODULES, ids=_ids)
def test_module_matches_torch(device, spec):
    name, args, kwargs = spec
    f, t = _pair(name, args, kwargs)
    if name == "RReLU":   # random slopes in training: compared in eval, tested apart below
        f.eval(), t.eval()
    # odd sizes; dim 1 holds the 3 channels of PReLU(3); GLU halves an even dim
    shape = (3, 4, 5, 6) if name == "GLU" else (3, 3, 4, 5)
    compare_module(torch, f, t, [_rand(*shape)], device)


@pytest.mark.parametrize("name", ["ReLU", "ELU", "GELU", "Softplus", "Hardshrink",
                                  "Softsign", "LogSigmoid", "PReLU", "Tanhshrink"])
def test_module_batch_one_and_empty(device, name):
    f, t = _pair(name, (), {})
    compare_module(torch, f, t, [_rand(1, 5)], device)
    compare_module(torch, f, t, [_rand(0, 5)], device)


def test_module_float64_unbatched(device):
    for name in ["Softsign", "Tanhshrink", "LogSigmoid", "Softshrink", "PReLU", "Mish"]:
        f, t = _pair(name, (), {})
        t.double()
        f.double()
        compare_module(torch, f, t, [np.random.randn(7)], device, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("spec", MODULES, ids=_ids)
def test_repr_matches_torch(spec):
    f, t = _pair(*spec)
    assert repr(f) == repr(t)
    assert f.extra_repr() == t.extra_repr()


@pytest.mark.parametrize("name,args", [
    ("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("RReLU", (0.1, 0.3)),
    ("ELU", (0.5,)), ("SELU", ()), ("CELU", (2.0,)), ("SiLU", ()), ("Mish", ()),
    ("Hardtanh", (-2, 2)), ("Hardswish", ()), ("Hardsigmoid", ()), ("Threshold", (0.1, 20)),
])
def test_inplace_modules(device, name, args):
    f = getattr(nn, name)(*args, inplace=True)
    t = getattr(torch.nn, name)(*args, inplace=True)
    assert repr(f) == repr(t)
    if name == "RReLU":
        f.eval(), t.eval()
    x = _rand(2, 3, 5)
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    ty = tx * 1.0
    fy = fx * 1.0
    tout, fout = t(ty), f(fy)
    assert fout is fy                      # written in place and returned
    assert_close(fout, to_np(tout), rtol=1e-5, atol=1e-6)
    g = np.random.randn(2, 3, 5).astype(np.float32)
    tout.backward(torch.tensor(g))
    fout.backward(fw_tensor(g, device))
    assert_close(fx.grad, to_np(tx.grad), rtol=1e-5, atol=1e-6)


def test_prelu_parameters_and_grads(device):
    f, t = nn.PReLU(4, init=0.3), torch.nn.PReLU(4, init=0.3)
    assert list(f.state_dict()) == ["weight"]
    assert tuple(f.weight.shape) == (4,)
    assert_close(f.weight, np.full(4, 0.3, np.float32))
    with torch.no_grad():
        t.weight.copy_(torch.tensor([0.1, -0.5, 2.0, 0.7]))
    compare_module(torch, f, t, [_rand(2, 4, 3)], device)       # per-channel, N-d
    compare_module(torch, f, t, [_rand(5, 4)], device)          # (N, C)
    compare_module(torch, nn.PReLU(), torch.nn.PReLU(), [_rand(7)], device)   # 1-D, shared
    compare_module(torch, nn.PReLU(), torch.nn.PReLU(), [np.float32(1.5)], device)  # 0-d
    compare_module(torch, nn.PReLU(), torch.nn.PReLU(), [np.float32(-1.5)], device)


def test_prelu_dtype_device_args():
    m = nn.PReLU(2, dtype=fw.float64)
    assert m.weight.dtype == fw.float64
    m.reset_parameters()
    assert_close(m.weight, np.full(2, 0.25))


def test_rrelu_training_draws_slopes_in_range(device):
    lower, upper = 0.1, 0.3
    x = fw_tensor(_rand(4000), device, requires_grad=True)
    m = nn.RReLU(lower, upper)
    out = m(x)
    out.sum().backward()
    xv, ov, gv = to_np(x), to_np(out), to_np(x.grad)
    pos, neg = xv > 0, xv < 0
    np.testing.assert_array_equal(ov[pos], xv[pos])
    np.testing.assert_array_equal(gv[pos], 1.0)
    slopes = ov[neg] / xv[neg]
    assert slopes.min() >= lower - 1e-6 and slopes.max() <= upper + 1e-6
    # uniform in [lower, upper]: mean and spread of the draws
    assert abs(slopes.mean() - (lower + upper) / 2) < 0.01
    assert slopes.std() > 0.04
    np.testing.assert_allclose(gv[neg], slopes, rtol=1e-5)   # grad is the drawn slope
    # eval uses the mean slope
    m.eval()
    assert_close(m(x), np.where(xv > 0, xv, xv * (lower + upper) / 2), rtol=1e-6, atol=1e-7)


def test_rrelu_inplace_training(device):
    x = fw_tensor(_rand(50), device)
    before = to_np(x).copy()
    out = F.rrelu_(x, 0.2, 0.25, training=True)
    assert out is x
    ratio = to_np(x)[before < 0] / before[before < 0]
    assert ratio.min() >= 0.2 - 1e-6 and ratio.max() <= 0.25 + 1e-6


def _check_fn(fw_fn, t_fn, x, device, *args, **kwargs):
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    tout = t_fn(tx, *args, **kwargs)
    fout = fw_fn(fx, *args, **kwargs)
    tol = dict(rtol=1e-5, atol=1e-6) if x.dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    assert_close(fout, to_np(tout), **tol)
    g = np.random.randn(*tout.shape).astype(x.dtype)
    tout.backward(torch.tensor(g))
    fout.backward(fw_tensor(g, device))
    assert_close(fx.grad, to_np(tx.grad), **tol)


@pytest.mark.parametrize("lambd", [0.0, 0.5, 1.0])
def test_shrink_at_the_edges(device, lambd):
    # values exactly at +-lambd and 0, where the piecewise definitions switch
    x = np.array([-2.0, -lambd, -0.25, 0.0, 0.25, lambd, 1.75], dtype=np.float32)
    _check_fn(F.hardshrink, torch.nn.functional.hardshrink, x, device, lambd)
    _check_fn(F.softshrink, torch.nn.functional.softshrink, x, device, lambd)


def test_hardshrink_negative_lambda(device):
    _check_fn(F.hardshrink, torch.nn.functional.hardshrink, _rand(9), device, -0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stable_functions_at_extremes(device, dtype):
    x = np.array([-100.0, -30.0, -20.5, -1.0, 0.0, 1e-3, 2.0, 20.5, 30.0, 100.0], dtype=dtype)
    for name in ["logsigmoid", "softsign", "tanhshrink"]:
        _check_fn(getattr(F, name), getattr(torch.nn.functional, name), x, device)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_glu_dims(device, dim):
    _check_fn(F.glu, torch.nn.functional.glu, _rand(4, 6, 2), device, dim)


def test_glu_float64(device):
    _check_fn(F.glu, torch.nn.functional.glu, np.random.randn(3, 10), device)


def test_prelu_functional(device):
    x = _rand(3, 5, 2)
    w = np.random.rand(5).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    fx, fwt = fw_tensor(x, device, True), fw_tensor(w, device, True)
    tout = torch.nn.functional.prelu(tx, tw)
    fout = F.prelu(fx, fwt)
    assert_close(fout, to_np(tout))
    tout.sum().backward()
    fout.sum().backward()
    assert_close(fx.grad, to_np(tx.grad))
    assert_close(fwt.grad, to_np(tw.grad), rtol=1e-5, atol=1e-5)
    # a 0-d weight is shared too
    _check_fn(lambda a: F.prelu(a, fw_tensor(np.float32(0.3), device)),
              lambda a: torch.nn.functional.prelu(a, torch.tensor(0.3)), x, device)


@pytest.mark.parametrize("name,args", [
    ("relu_", ()), ("elu_", (0.7,)), ("celu_", (1.5,)), ("selu_", ()),
    ("leaky_relu_", (0.3,)), ("hardtanh_", (-0.5, 0.8)), ("threshold_", (0.2, -1.0)),
])
def test_functional_inplace(device, name, args):
    x = _rand(3, 5)
    tx = torch.tensor(x)
    fx = fw_tensor(x, device)
    tout = getattr(torch.nn.functional, name)(tx, *args)
    fout = getattr(F, name)(fx, *args)
    assert fout is fx
    assert_close(fx, to_np(tx), rtol=1e-5, atol=1e-6)
    assert tout is tx


def test_functional_inplace_grad(device):
    x = _rand(4, 3)
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    tout = torch.nn.functional.elu_(tx * 2.0, 0.5)
    fout = F.elu_(fx * 2.0, 0.5)
    tout.sum().backward()
    fout.sum().backward()
    assert_close(fx.grad, to_np(tx.grad), rtol=1e-5, atol=1e-6)


def test_softmax_modules_implicit_dim_warns():
    x = _rand(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = nn.Softmax()(fw.tensor(x))
    assert_close(out, to_np(torch.nn.Softmax(dim=1)(torch.tensor(x))))


def test_softmax2d_three_d(device):
    compare_module(torch, nn.Softmax2d(), torch.nn.Softmax2d(), [_rand(3, 4, 5)], device)


def test_hardtanh_deprecated_names():
    with pytest.warns(FutureWarning):
        m = nn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0 and repr(m) == "Hardtanh(min_val=-3.0, max_val=1.0)"


# -- bad input ----------------------------------------------------------------------------

def _same_error(fn, exc):
    """The framework raises the same exception class as torch, with the same message."""
    with pytest.raises(exc) as want:
        fn(torch)
    with pytest.raises(exc) as got:
        fn(fw)
    assert str(got.value) == str(want.value)


def _fns(mod):
    return mod.nn.functional


@pytest.mark.parametrize("call,exc", [
    (lambda m: _fns(m).prelu(m.randn(2, 3, 4), m.rand(4)), RuntimeError),
    (lambda m: _fns(m).prelu(m.randn(4), m.rand(4)), RuntimeError),
    (lambda m: _fns(m).prelu(m.randn(2, 3, 4), m.rand(2, 3)), RuntimeError),
    (lambda m: _fns(m).glu(m.randn(2, 5)), RuntimeError),
    (lambda m: _fns(m).glu(m.tensor(1.0)), RuntimeError),
    (lambda m: _fns(m).glu(m.randn(2, 4), 3), IndexError),
    (lambda m: _fns(m).softshrink(m.randn(3), -1), RuntimeError),
    (lambda m: _fns(m).softshrink(m.randn(3, dtype=m.float64), -0.5), RuntimeError),
    (lambda m: _fns(m).rrelu(m.randn(3), 0.5, 0.1), RuntimeError),
    (lambda m: _fns(m).rrelu(m.randn(3), 0.5, 0.1, training=True), RuntimeError),
    (lambda m: _fns(m).glu(m.tensor([1, 2])), NotImplementedError),
    (lambda m: _fns(m).hardshrink(m.tensor([1, 2])), NotImplementedError),
    (lambda m: _fns(m).logsigmoid(m.tensor([1, 2])), NotImplementedError),
    (lambda m: _fns(m).prelu(m.tensor([1, 2]), m.tensor([1])), NotImplementedError),
    (lambda m: m.nn.Softmax2d()(m.randn(3, 4)), ValueError),
    (lambda m: m.nn.Hardtanh(2, 1), AssertionError),
])
def test_errors_match_torch(call, exc):
    _same_error(call, exc)


def test_inplace_on_leaf_requiring_grad_is_refused(device):
    x = fw_tensor(_rand(3), device, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.relu_(x)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        nn.ELU(inplace=True)(x)


_INPLACE_TABLE_OPS = [("relu", ()), ("relu6", ()), ("elu", (0.7,)), ("selu", ()),
                      ("celu", (1.3,)), ("leaky_relu", (0.2,)), ("hardtanh", (-0.5, 0.5)),
                      ("hardsigmoid", ()), ("hardswish", ()), ("silu", ()), ("mish", ()),
                      ("threshold", (0.1, 20.0))]


@pytest.mark.parametrize("name,args", _INPLACE_TABLE_OPS, ids=[n for n, _ in _INPLACE_TABLE_OPS])
def test_table_activation_inplace_under_autograd(name, args, device):
    """``F.<op>(y, ..., inplace=True)`` on a non-leaf gives torch's values and gradient;
    on a leaf that requires grad it is refused, as in torch."""
    a = np.random.default_rng(1).uniform(-4, 4, (3, 5)).astype(np.float32)
    t = torch.tensor(a, requires_grad=True)
    f = fw.tensor(a, requires_grad=True, device=device)
    ty = getattr(torch.nn.functional, name)(t * 2, *args, inplace=True)
    fy = getattr(F, name)(f * 2, *args, inplace=True)
    assert_close(fy, ty.detach().numpy())
    ty.sum().backward()
    fy.sum().backward()
    assert_close(f.grad, t.grad.numpy())
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(F, name)(f, *args, inplace=True)
