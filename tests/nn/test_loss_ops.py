"""The elementwise losses as single ops (framework/_ops/loss_elementwise.py), through
nn.functional and the nn.*Loss modules, against torch on cpu and cuda: values, input and
target gradients and their gradients (double backward) for every reduction, weight,
pos_weight, beta/delta, ignore_index and class weights, (N, C, d1, ...) inputs, target
broadcasting and its warning, 16-bit dtypes, and the autograd node of each loss
(name(), type name and repr as torch's)."""
import re
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.nn.common import to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# Triton's interpreter computes masked-off lanes too (NumPy warns about their log(0))
pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")

_RED = ("none", "mean", "sum")


def _node(t):
    """(name(), type name, repr without the address) of ``t``'s autograd node."""
    fn = t.grad_fn
    return fn.name(), type(fn).__name__, re.sub(r" at 0x[0-9a-f]+", "", repr(fn))


def _check(device, name, args, kw=None, grads=(0, 1), node=None, rtol=1e-10, atol=1e-12,
           double=True):
    """F.<name>(*args, **kw) on ``device`` against torch's: value, node, the gradients of
    args[i] for i in ``grads`` (float args need grad there) under a random upstream
    gradient, and the gradient of a random combination of those (double backward)."""
    kw = kw or {}
    fa, ta = [], []
    for i, a in enumerate(args):
        a = np.asarray(a)
        floating = a.dtype.kind == "f"
        ft = fw.tensor(a, device=device, requires_grad=floating and i in grads)
        tt = torch.tensor(a, requires_grad=floating and i in grads)
        fa.append(ft)
        ta.append(tt)
    fkw = {k: fw.tensor(np.asarray(v), device=device) if isinstance(v, np.ndarray) else v
           for k, v in kw.items()}
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    out = getattr(F, name)(*fa, **fkw)
    ref = getattr(TF, name)(*ta, **tkw)
    assert out.dtype == getattr(fw, str(ref.dtype).split(".")[-1])
    np.testing.assert_allclose(to_np(out), ref.detach().numpy(), rtol=rtol, atol=atol)
    assert _node(out) == _node(ref)
    if node is not None:
        assert _node(out)[0] == node
    ins = [i for i in grads if fa[i].requires_grad]
    if not ins:
        return
    up = np.random.default_rng(5).uniform(0.5, 1.5, tuple(ref.shape))
    g = fw.autograd.grad(out, [fa[i] for i in ins], fw.tensor(up, device=device),
                         create_graph=double)
    tg = torch.autograd.grad(ref, [ta[i] for i in ins], torch.tensor(up), create_graph=double)
    for a, b in zip(g, tg):
        np.testing.assert_allclose(to_np(a), b.detach().numpy(), rtol=rtol, atol=atol)
    if not double:
        return
    # grad of <v, grad>: the backward's own derivatives (torch's double backward)
    rng = np.random.default_rng(6)
    vs = [rng.uniform(-1, 1, tuple(b.shape)) for b in tg]
    s = sum((a * fw.tensor(v, device=device)).sum() for a, v in zip(g, vs))
    ts = sum((b * torch.tensor(v)).sum() for b, v in zip(tg, vs))
    if not ts.requires_grad:
        return
    tgg = torch.autograd.grad(ts, [ta[i] for i in ins], allow_unused=True)
    if not s.requires_grad:
        # nll_loss's gradient depends on the upstream gradient only: torch records a node
        # whose derivative is zero, the framework none (grad of it raises instead)
        assert all(b is None or not b.any() for b in tgg)
        return
    gg = fw.autograd.grad(s, [fa[i] for i in ins], allow_unused=True)
    for a, b in zip(gg, tgg):
        if b is None:
            assert a is None or not to_np(a).any()
        else:
            np.testing.assert_allclose(to_np(a), b.numpy(), rtol=rtol, atol=atol)


def _rand(shape, lo=-2.0, hi=2.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


@pytest.mark.parametrize("name,kw,node", [
    ("mse_loss", {}, "MseLossBackward0"),
    ("smooth_l1_loss", {"beta": 0.5}, "SmoothL1LossBackward0"),
    ("huber_loss", {"delta": 0.7}, "HuberLossBackward0")])
def test_regression_losses(device, name, kw, node):
    x, t = _rand((3, 37)), _rand((3, 37), seed=1)
    for red in _RED:
        _check(device, name, (x, t), dict(kw, reduction=red), node=node)
    # beyond one kernel block, in float32
    big = _rand((2, 700)).astype(np.float32), _rand((2, 700), seed=1).astype(np.float32)
    _check(device, name, big, kw, rtol=2e-5, atol=1e-6, double=False)


def test_regression_target_broadcast(device):
    """A target that broadcasts warns as torch does; its gradient is summed back."""
    x, t = _rand((3, 5)), _rand((5,), seed=1)
    for name in ("mse_loss", "smooth_l1_loss", "huber_loss"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for red in ("none", "mean"):
                _check(device, name, (x, t), {"reduction": red})
        assert any("Using a target size (framework.Size([5])) that is different to the "
                   "input size (framework.Size([3, 5]))" in str(m.message) for m in w)


def test_regression_integer_inputs(device):
    x, t = fw.tensor([1, 2], device=device), fw.tensor([1, 3], device=device)
    for name, kernel in [("mse_loss", "mse"), ("smooth_l1_loss", "smooth_l1"),
                         ("huber_loss", "huber")]:
        with pytest.raises(NotImplementedError, match=f'"{kernel}_{device}" not implemented '
                                                      "for 'Long'"):
            getattr(F, name)(x, t)


def test_weighted_regression_composites(device):
    """mse/huber with an elementwise weight and smooth_l1 with beta=0 stay compositions, as
    in torch (DivBackward0, MeanBackward0)."""
    x, t, w = _rand((2, 3)), _rand((2, 3), seed=1), _rand((2, 3), 0.5, 2, seed=2)
    _check(device, "mse_loss", (x, t), {"weight": w}, double=False)
    _check(device, "huber_loss", (x, t), {"weight": w}, double=False)
    _check(device, "smooth_l1_loss", (x, t), {"beta": 0.0}, double=False)


def test_binary_cross_entropy(device):
    x, t = _rand((3, 6), 0.05, 0.95), _rand((3, 6), 0, 1, seed=1)
    w = _rand((6,), 0.5, 2, seed=2)
    for red in _RED:
        _check(device, "binary_cross_entropy", (x, t), {"weight": w, "reduction": red},
               node="BinaryCrossEntropyBackward0")
    _check(device, "binary_cross_entropy", (x, t), {"reduction": "sum"})
    # saturated inputs: logs clamped at -100, the gradient floored, both finite as torch's
    _check(device, "binary_cross_entropy", (np.array([0.0, 1.0, 0.5]),
                                            np.array([1.0, 0.0, 0.5])), grads=(0,),
           rtol=1e-6, double=False)


def test_binary_cross_entropy_with_logits(device):
    x, t = _rand((3, 6), -4, 4), _rand((3, 6), 0, 1, seed=1)
    w, pw = _rand((3, 6), 0.5, 2, seed=2), _rand((6,), 0.5, 3, seed=3)
    for red in _RED:
        _check(device, "binary_cross_entropy_with_logits", (x, t),
               {"weight": w, "pos_weight": pw, "reduction": red},
               node="BinaryCrossEntropyWithLogitsBackward0")
    _check(device, "binary_cross_entropy_with_logits", (x, t), {"weight": w[0]})
    # extreme logits stay finite
    _check(device, "binary_cross_entropy_with_logits",
           (np.array([-200.0, 200.0, 0.0]), np.array([1.0, 0.0, 0.3])),
           {"reduction": "none"}, double=False)


def test_soft_margin_loss(device):
    x = _rand((3, 5), -3, 3)
    t = np.where(_rand((3, 5), seed=1) > 0, 1.0, -1.0)
    for red in _RED:
        _check(device, "soft_margin_loss", (x, t), {"reduction": red}, grads=(0,),
               node="SoftMarginLossBackward0")


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 2, 2), (2, 3, 4), (2, 3, 2, 1, 2)])
def test_nll_loss(device, shape):
    """Unbatched, (N, C) and (N, C, d1, ...) inputs; class weights, ignore_index. 4-d (and
    3-d or 5-d, viewed as 4-d) inputs make torch's NllLoss2DBackward0."""
    C = shape[1] if len(shape) > 1 else shape[0]
    x = _rand(shape, -3, 0)
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = np.random.default_rng(1).integers(0, C, tshape)
    if t.ndim:
        t.reshape(-1)[::3] = 1      # some targets ignored below
    w = _rand((C,), 0.5, 2, seed=2)
    for red, kw in zip(_RED, ({"weight": w, "ignore_index": 1}, {"ignore_index": 1},
                              {"weight": w})):
        _check(device, "nll_loss", (x, t), dict(kw, reduction=red))


def test_nll_all_ignored_and_errors(device):
    x = fw.tensor(_rand((2, 3)), device=device, requires_grad=True)
    t = fw.tensor([-100, -100], device=device)
    loss = F.nll_loss(x, t)
    assert np.isnan(to_np(loss))     # 0 / 0, as torch
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        F.nll_loss(x, fw.tensor([0, 3], device=device))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target "
                                         r"batch_size \(3\)"):
        F.nll_loss(x, fw.tensor([0, 1, 2], device=device))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision(device, dtype):
    """16-bit inputs give 16-bit losses computed as torch computes them."""
    x, t = _rand((4, 9), 0.05, 0.95).astype(np.float32), _rand((4, 9), 0, 1, 1)
    tol = {"bfloat16": 2e-2, "float16": 2e-3}[dtype]
    y = np.array([0, 8, 3, 1])
    for name, args in [("mse_loss", (x, t)), ("smooth_l1_loss", (x, t)), ("huber_loss", (x, t)),
                       ("binary_cross_entropy", (x, t)),
                       ("binary_cross_entropy_with_logits", (x, t)),
                       ("soft_margin_loss", (x, np.sign(t - 0.5))), ("nll_loss", (-x, y))]:
        fa = [fw.tensor(a, device=device) for a in args]
        ta = [torch.tensor(a) for a in args]
        fa[0] = fa[0].to(getattr(fw, dtype)).requires_grad_()
        ta[0] = ta[0].to(getattr(torch, dtype)).requires_grad_()
        if name != "nll_loss":
            fa[1], ta[1] = fa[1].to(getattr(fw, dtype)), ta[1].to(getattr(torch, dtype))
        out, ref = getattr(F, name)(*fa), getattr(TF, name)(*ta)
        assert str(out.dtype).split(".")[-1] == dtype
        np.testing.assert_allclose(to_np(out), ref.float().detach().numpy(), rtol=tol, atol=tol)
        g, tg = fw.autograd.grad(out, fa[0])[0], torch.autograd.grad(ref, ta[0])[0]
        assert g.dtype == out.dtype
        np.testing.assert_allclose(to_np(g), tg.float().numpy(), rtol=tol, atol=tol * 0.1)


def test_modules_and_node_names():
    """The nn.*Loss modules go through the same ops: one node each, named as torch's."""
    x, t = _rand((2, 3), 0.1, 0.9), _rand((2, 3), 0, 1, 1)
    y = np.array([0, 2])
    for mod, args in [("MSELoss", (x, t)), ("SmoothL1Loss", (x, t)), ("HuberLoss", (x, t)),
                      ("BCELoss", (x, t)), ("BCEWithLogitsLoss", (x, t)),
                      ("SoftMarginLoss", (x, np.sign(t - 0.5))), ("NLLLoss", (x, y)),
                      ("NLLLoss", (x.reshape(1, 3, 2, 1), y.reshape(1, 2, 1)))]:
        fa = [fw.tensor(args[0], requires_grad=True), fw.tensor(args[1])]
        ta = [torch.tensor(args[0], requires_grad=True), torch.tensor(args[1])]
        out, ref = getattr(nn, mod)()(*fa), getattr(torch.nn, mod)()(*ta)
        assert _node(out) == _node(ref), mod
        # one node between the loss and the leaf
        assert out.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
