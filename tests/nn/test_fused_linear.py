"""Linear with bias and activation fused into the GEMM's epilogue (framework._fused_linear:
native/fused_linear.cpp on cpu, Triton's framework/kernels/fused_linear.py on cuda) and its
entry point framework._ops.fused_linear.linear_act, against the composite
(F.linear + activation) and torch computed in float64 from the same values: outputs and every
gradient for each activation with and without bias, sizes that cross tile edges, 3-d and
1-d inputs, strided operands, 16-bit dtypes, empty batches; gradcheck and gradgradcheck in
float64; the modules that use it (TransformerEncoderLayer's feed-forward,
MultiheadAttention's in-projection) against the unfused path."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from framework._ops import fused_linear as FL
from tests.nn.common import fw_tensor, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")

ACTS = ["none", "relu", "gelu", "gelu_tanh", "silu"]
# relative error allowed, of the reference's largest magnitude
TOL = {"float64": 1e-12, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


def _torch_act(y, act):
    if act == "relu":
        return TF.relu(y)
    if act == "gelu":
        return TF.gelu(y)
    if act == "gelu_tanh":
        return TF.gelu(y, approximate="tanh")
    if act == "silu":
        return TF.silu(y)
    return y


def _close(actual, expected, tol):
    a = (to_np(actual) if hasattr(actual, "detach") else np.asarray(actual)).astype(np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    scale = max(float(np.abs(e).max()) if e.size else 0.0, 1.0)
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale)


def _values(x_shape, n, bias, dtype, seed=0):
    """x, w, b (None without bias) as float64 arrays holding values exact in ``dtype``."""
    rng = np.random.default_rng(seed)
    k = x_shape[-1]
    arrs = [rng.standard_normal(x_shape), rng.standard_normal((n, k)) / np.sqrt(max(k, 1)),
            rng.standard_normal(n) if bias else None]
    return [None if a is None else to_np(fw.tensor(a, dtype=getattr(fw, dtype))).astype(
        np.float64) for a in arrs]


def _check(device, x_shape, n, act, bias, dtype="float32", prepare=None):
    """linear_act and _fused_linear against torch in float64: the output, the saved tensor
    and the gradients of input, weight and bias. ``prepare(x, w, b)`` may turn the
    framework operands into strided views of the same values."""
    x, w, b = _values(x_shape, n, bias, dtype)
    fdt = getattr(fw, dtype)
    fs = [None if a is None else fw_tensor(a, device, dtype=fdt) for a in (x, w, b)]
    if prepare is not None:
        fs = prepare(*fs)
    for t in fs:
        if t is not None:
            t.requires_grad_()
    ts = [None if a is None else torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = FL.linear_act(*fs, act)
    pre_t = TF.linear(*ts)
    ty = _torch_act(pre_t, act)
    assert y.dtype is fdt and tuple(y.shape) == tuple(ty.shape)
    tol = TOL[dtype]
    _close(y, ty.detach().numpy(), tol)
    assert y.grad_fn is not None and y.grad_fn.name() == "FusedLinearBackward0"
    with fw.no_grad():
        _, saved = fw._fused_linear(*fs, act)
    if act in ("gelu", "gelu_tanh", "silu"):
        _close(saved, pre_t.detach().numpy(), tol)
    g = _values(tuple(ty.shape), 1, False, dtype, seed=7)[0]
    y.backward(fw.tensor(g, dtype=fdt, device=device))
    ty.backward(torch.tensor(g))
    for f, t in zip(fs, ts):
        if f is not None:
            _close(f.grad, t.grad.numpy(), tol * 4)
    return fs


@pytest.mark.parametrize("act", ACTS)
def test_matches_torch_and_composite(device, act):
    # 37 x 45 -> 70: every dim crosses a tile edge; 3-d input without bias
    _check(device, (37, 45), 70, act, True)
    _check(device, (2, 5, 45), 70, act, False)
    x, w, b = (fw_tensor(a, device, dtype=fw.float32)
               for a in _values((37, 45), 70, True, "float32"))
    ref = F.linear(x, w, b)
    ref = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu,
           "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}.get(act, lambda t: t)(ref)
    _close(fw._fused_linear(x, w, b, act)[0], to_np(ref), TOL["float32"])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit(device, dtype):
    _check(device, (2, 19, 45), 70, "gelu", True, dtype)


def test_float64_and_1d_input(device):
    _check(device, (45,), 38, "silu", True, "float64")


def test_strided_operands(device):
    """An input with a column stride, a column-major weight and a strided bias (the kernels
    read them in place)."""
    def prepare(x, w, b):
        xs = fw.zeros((3, 17, 90), device=device)[..., ::2]
        xs.copy_(x)
        wt = w.t().contiguous().t()
        bs = fw.zeros(140, device=device)[::2]
        bs.copy_(b)
        assert wt.stride() == (1, 70) and xs.stride()[-1] == 2
        return xs, wt, bs
    _check(device, (3, 17, 45), 70, "gelu_tanh", True, prepare=prepare)


def test_empty(device):
    """No rows (the gradients of weight and bias are zeros) and K == 0 (out is act(bias))."""
    for x_shape, n in (((0, 5), 4), ((2, 0, 5), 4), ((3, 0), 4)):
        arrs = _values(x_shape, n, True, "float32")
        x, w, b = (fw_tensor(a, device, True, fw.float32) for a in arrs)
        y = FL.linear_act(x, w, b, "gelu")
        assert tuple(y.shape) == x_shape[:-1] + (n,)
        y.sum().backward()
        rx, rw, rb = (fw_tensor(a, device, True, fw.float32) for a in arrs)
        ref = F.gelu(F.linear(rx, rw, rb))
        ref.sum().backward()
        for got, want in ((y, ref), (x.grad, rx.grad), (w.grad, rw.grad), (b.grad, rb.grad)):
            _close(got, to_np(want), TOL["float32"])


@pytest.mark.parametrize("act", ACTS)
def test_gradcheck_cpu(act):
    rng = np.random.default_rng(1)
    xs = [fw.tensor(rng.standard_normal(s), dtype=fw.float64, requires_grad=True)
          for s in ((2, 3, 5), (4, 5), (4,))]
    fn = lambda x, w, b: fw._fused_linear(x, w, b, act)[0]  # noqa: E731
    assert fw.autograd.gradcheck(fn, xs)
    assert fw.autograd.gradgradcheck(fn, xs)


def test_gradcheck_cuda():
    """First order by finite differences; the second order against torch (gradgradcheck in
    the interpreter takes half a minute)."""
    if not fw.cuda.is_available():
        pytest.skip("needs cuda or TRITON_INTERPRET=1")
    rng = np.random.default_rng(1)
    arrs = [rng.standard_normal(s) for s in ((1, 2, 3), (2, 3), (2,))]
    xs = [fw.tensor(a, dtype=fw.float64, device="cuda", requires_grad=True) for a in arrs]
    assert fw.autograd.gradcheck(lambda x, w, b: fw._fused_linear(x, w, b, "gelu")[0], xs)
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    gs = fw.autograd.grad(FL.linear_act(*xs, "silu").pow(2).sum(), xs, create_graph=True)
    tgs = torch.autograd.grad(TF.silu(TF.linear(*ts)).pow(2).sum(), ts, create_graph=True)
    ggs = fw.autograd.grad(sum((g * g).sum() for g in gs), xs)
    tggs = torch.autograd.grad(sum((g * g).sum() for g in tgs), ts)
    for a, b in zip(gs + ggs, tgs + tggs):
        _close(a, b.detach().numpy(), 1e-10)


def test_activation_grad_computed_once(monkeypatch):
    """The three formulas share one grad * act'(pre); a second backward (retain_graph) with
    another gradient computes its own."""
    calls = []
    real = FL.activation_grad
    monkeypatch.setattr(FL, "activation_grad", lambda *a: calls.append(1) or real(*a))
    x, w, b = (fw_tensor(a, "cpu", requires_grad=True) for a in _values((6, 5), 4, True,
                                                                         "float64"))
    y = FL.linear_act(x, w, b, "gelu")
    y.backward(fw.ones_like(y), retain_graph=True)
    assert len(calls) == 1
    first = [t.grad.clone() for t in (x, w, b)]
    y.backward(fw.full_like(y, 2.0))
    assert len(calls) == 2
    for t, g in zip((x, w, b), first):
        _close(t.grad, 3 * to_np(g), 1e-12)


def test_no_grad_keeps_no_pre_activation(device):
    x, w, b = (fw_tensor(a, device, dtype=fw.float32) for a in _values((5, 7), 3, True,
                                                                        "float32"))
    y, saved = FL._forward(x, w, b, "gelu", False)
    assert saved is None
    _close(y, to_np(F.gelu(F.linear(x, w, b))), TOL["float32"])
    w.requires_grad_()
    with fw.no_grad():
        z = FL.linear_act(x, w, b, "gelu")
    assert z.grad_fn is None and not z.requires_grad
    _close(z, to_np(y), 0)


def test_falls_back_to_the_composite():
    """Autocast, mixed dtypes and wrong shapes go through nn.functional (its policy, its
    errors); the op itself checks its arguments."""
    x, w, b = (fw_tensor(a, "cpu", dtype=fw.float32) for a in _values((4, 6), 3, True,
                                                                       "float32"))
    with fw.autocast("cpu"):
        y = FL.linear_act(x, w, b, "relu")
        assert y.dtype is fw.bfloat16
        _close(y, to_np(F.relu(F.linear(x, w, b))), 0)
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(4x6 and 5x3\)"):
        FL.linear_act(x, w[:, :5], b, "gelu")
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(4x6 and 5x3\)"):
        fw._fused_linear(x, w[:, :5], b, "gelu")
    with pytest.raises(ValueError, match="activation must be one of"):
        fw._fused_linear(x, w, b, "tanh")
    with pytest.raises(RuntimeError, match="same dtype"):
        fw._fused_linear(x, w.double(), b, "gelu")
    with pytest.raises(RuntimeError, match="same dtype"):
        FL.linear_act(x, w.double(), b.double(), "silu")


def _spy(monkeypatch):
    """The activations linear_act is called with, from now on."""
    calls = []
    real = FL.linear_act

    def spy(input, weight, bias=None, activation="none"):
        calls.append(activation)
        return real(input, weight, bias, activation)
    monkeypatch.setattr(FL, "linear_act", spy)
    return calls


def _layer_check(device, monkeypatch, activation):
    """The encoder layer's feed-forward and in-projection go through linear_act and give
    what the unfused path gives (outputs and gradients)."""
    act = nn.GELU(approximate="tanh") if activation == "gelu_module" else activation
    fw.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 24, dropout=0.0, activation=act,
                                       batch_first=True).to(device)
    x = fw.tensor(np.random.default_rng(3).standard_normal((2, 5, 16)), dtype=fw.float32,
                  device=device, requires_grad=True)
    calls = _spy(monkeypatch)
    y = layer(x)
    y.pow(2).sum().backward()
    expected_act = {"relu": "relu", "gelu": "gelu", "gelu_module": "gelu_tanh"}[activation]
    assert calls == ["none", expected_act]
    fused = [to_np(y)] + [to_np(t.grad) for t in [x] + list(layer.parameters())]
    monkeypatch.setattr(FL, "linear_act",
                        lambda x_, w_, b_=None, act_="none": FL._composite(x_, w_, b_, act_))
    layer.zero_grad()
    x.grad = None
    y = layer(x)
    y.pow(2).sum().backward()
    plain = [to_np(y)] + [to_np(t.grad) for t in [x] + list(layer.parameters())]
    for a, b in zip(fused, plain):
        _close(a, b, 1e-5)


def test_transformer_layer_uses_it(device, monkeypatch):
    _layer_check(device, monkeypatch, "gelu")


@pytest.mark.parametrize("activation", ["relu", "gelu_module"])
def test_transformer_layer_other_activations(monkeypatch, activation):
    _layer_check("cpu", monkeypatch, activation)


def test_hooked_linear_is_not_fused(monkeypatch):
    """A forward hook on linear1 must see its call: the layer then runs it unfused."""
    layer = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0, activation="gelu")
    seen = []
    layer.linear1.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    calls = _spy(monkeypatch)
    layer(fw.randn(3, 2, 8))
    assert seen == [(3, 2, 12)] and calls == ["none"]
