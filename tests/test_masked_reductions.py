"""framework.masked (torch.masked's reductions over plain tensors with mask=) against torch
on both devices: values with random masks, fully masked-out rows (the identity, or NaN where
there is none), broadcast masks, no mask, non-contiguous and integer inputs, dtype=, and
float64 gradients."""
import math

import numpy as np
import pytest

import framework as fw
from helpers import assert_close, to_np

torch = pytest.importorskip("torch")

SHAPE = (5, 37)    # 37 crosses a Triton block edge at small blocks; row 1 fully masked


def _data(device, dtype=np.float64, seed=0, noncontig=False):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, SHAPE)
    if np.dtype(dtype).kind in "iu":
        a = rng.integers(-5, 6, SHAPE)
    a = a.astype(dtype)
    m = rng.random(SHAPE) > 0.4
    m[1] = False
    x = fw.tensor(a.T.copy(), device=device).t() if noncontig else fw.tensor(a, device=device)
    return x, torch.tensor(a), fw.tensor(m, device=device), torch.tensor(m)


def _cmp(got, ref, rtol=1e-9, atol=1e-9):
    if isinstance(ref, torch.Tensor):
        assert got.dtype == getattr(fw, str(ref.dtype).split(".")[-1]), (got.dtype, ref.dtype)
        assert tuple(got.shape) == tuple(ref.shape)
        if ref.dtype == torch.float32:
            rtol, atol = max(rtol, 1e-5), max(atol, 1e-5)
        np.testing.assert_allclose(to_np(got).astype(np.float64),
                                   ref.double().numpy(), rtol=rtol, atol=atol)
    else:
        for g, r in zip(got, ref):
            _cmp(g, r, rtol, atol)


# name, positional args after input, keyword args
REDUCTIONS = [
    ("sum", (), {}), ("sum", (1,), {"keepdim": True}),
    ("prod", (1,), {}), ("amax", (1,), {}), ("amin", (0,), {"keepdim": True}),
    ("argmax", (1,), {}), ("argmin", (1,), {"keepdim": True}),
    ("mean", (1,), {}), ("mean", (), {}), ("median", (1,), {}),
    ("norm", (2.0, 1), {}), ("norm", (1.0, 0), {}), ("norm", (-math.inf, 1), {}),
    ("var", (1,), {}), ("var", (0,), {"correction": 2}), ("std", (1,), {"keepdim": True}),
    ("logsumexp", (1,), {}), ("cumsum", (1,), {}), ("cumprod", (0,), {}),
    ("softmax", (1,), {}), ("log_softmax", (1,), {}), ("softmin", (0,), {}),
    ("normalize", (2.0, 1), {}),
]
# the ops also checked under Triton's interpreter (all are composites of framework ops)
CUDA_OPS = ("sum", "amin", "argmax", "mean", "median", "norm", "var", "logsumexp", "cumprod",
            "softmax", "normalize")
# others, with the mask broadcast and without a mask, on the cpu only
MORE = [("sum", ((0, 1),), {}), ("prod", (), {}), ("amax", (), {}),
        ("median", (0,), {"keepdim": True}), ("norm", (math.inf, 1), {}),
        ("var", (1,), {"unbiased": False}), ("std", (), {}),
        ("logsumexp", ((0, 1),), {"keepdim": True}), ("normalize", (1.0, 0), {"eps": 1e-3})]


@pytest.mark.parametrize("name,args,kwargs", REDUCTIONS,
                         ids=[f"{r[0]}{i}" for i, r in enumerate(REDUCTIONS)])
def test_masked_values(name, args, kwargs, device):
    if device == "cuda" and name not in CUDA_OPS:
        pytest.skip("the same composite as on the cpu; a subset covers the cuda path")
    x, tx, m, tm = _data(device, noncontig=name in ("sum", "softmax", "var"))
    fn, tfn = getattr(fw.masked, name), getattr(torch.masked, name)
    _cmp(fn(x, *args, **kwargs, mask=m), tfn(tx, *args, **kwargs, mask=tm))


@pytest.mark.parametrize("name,args,kwargs", REDUCTIONS + MORE,
                         ids=[f"{r[0]}{i}" for i, r in enumerate(REDUCTIONS + MORE)])
def test_masked_broadcast_and_no_mask(name, args, kwargs):
    x, tx, m, tm = _data("cpu")
    fn, tfn = getattr(fw.masked, name), getattr(torch.masked, name)
    _cmp(fn(x, *args, **kwargs, mask=m), tfn(tx, *args, **kwargs, mask=tm))
    _cmp(fn(x, *args, **kwargs, mask=m[:1]), tfn(tx, *args, **kwargs, mask=tm[:1]))
    _cmp(fn(x, *args, **kwargs), tfn(tx, *args, **kwargs))


def test_masked_logaddexp(device):
    x, tx, m, tm = _data(device)
    y, ty, n, tn = _data(device, seed=1)
    _cmp(fw.masked.logaddexp(x, y, input_mask=m, other_mask=n),
         torch.masked.logaddexp(tx, ty, input_mask=tm, other_mask=tn))
    _cmp(fw.masked.logaddexp(x, y, other_mask=n, dtype=fw.float32),
         torch.masked.logaddexp(tx, ty, other_mask=tn, dtype=torch.float32), 1e-6, 1e-6)


@pytest.mark.parametrize("name,args", [("sum", (1,)), ("prod", (1,)), ("amax", (1,)),
                                       ("amin", ()), ("argmax", (1,)), ("cumsum", (1,)),
                                       ("median", (1,)), ("var", (1,)), ("mean", (1,))])
def test_masked_integer_and_dtype(name, args):
    x, tx, m, tm = _data("cpu", np.int32)
    fn, tfn = getattr(fw.masked, name), getattr(torch.masked, name)
    if name == "mean":
        with pytest.raises(ValueError):
            fn(x, *args, mask=m)
        _cmp(fn(x, *args, mask=m, dtype=fw.float64), tfn(tx, *args, mask=tm,
                                                          dtype=torch.float64))
        return
    if name == "median":
        with pytest.raises(ValueError):        # a fully masked-out row of integers
            fn(x, *args, mask=m)
        m[1] = True
        tm[1] = True
    _cmp(fn(x, *args, mask=m), tfn(tx, *args, mask=tm))
    if name not in ("median", "argmax", "amin"):
        _cmp(fn(x.double(), *args, mask=m, dtype=fw.float32),
             tfn(tx.double(), *args, mask=tm, dtype=torch.float32), 1e-6, 1e-6)


def test_masked_empty_and_scalar(device):
    e = fw.zeros(0, 3, device=device)
    te = torch.zeros(0, 3, dtype=torch.float32)
    me, tme = fw.zeros(0, 3, dtype=fw.bool, device=device), torch.zeros(0, 3, dtype=torch.bool)
    _cmp(fw.masked.sum(e, 0, mask=me), torch.masked.sum(te, 0, mask=tme))
    _cmp(fw.masked.amax(e, 1, mask=me), torch.masked.amax(te, 1, mask=tme))
    s, ts = fw.tensor(2.5, device=device), torch.tensor(2.5)
    for name in ("sum", "amax", "mean", "prod"):
        _cmp(getattr(fw.masked, name)(s, mask=fw.tensor(False, device=device)),
             getattr(torch.masked, name)(ts, mask=torch.tensor(False)))
    with pytest.raises(IndexError):
        fw.masked.sum(fw.ones(3, device=device), mask=fw.ones(2, 3, dtype=fw.bool,
                                                                 device=device))
    with pytest.raises(IndexError):
        fw.masked.sum(fw.ones(3, device=device), 2)


GRADS = [("sum", (1,), {}), ("prod", (1,), {}), ("amax", (1,), {}), ("mean", (1,), {}),
         ("norm", (2.0, 1), {}), ("std", (0,), {}), ("logsumexp", (1,), {}),
         ("cumprod", (1,), {}), ("log_softmax", (1,), {}), ("softmin", (1,), {}),
         ("normalize", (2.0, 1), {}), ("median", (1,), {})]


@pytest.mark.parametrize("name,args,kwargs", GRADS, ids=[g[0] for g in GRADS])
def test_masked_grads(name, args, kwargs, device):
    """float64 gradients of sum(out * w) against torch's."""
    if device == "cuda" and name not in ("prod", "std", "softmin", "normalize"):
        pytest.skip("the same composite as on the cpu; a subset covers the cuda path")
    x, tx, m, tm = _data(device, seed=3)
    m[1] = True      # fully masked rows give NaN gradients in torch too
    tm[1] = True
    x.requires_grad_(True)
    tx.requires_grad_(True)
    out = getattr(fw.masked, name)(x, *args, **kwargs, mask=m)
    tout = getattr(torch.masked, name)(tx, *args, **kwargs, mask=tm)
    w = np.random.default_rng(5).uniform(0.5, 1.5, tuple(tout.shape))
    (out * fw.tensor(w, device=device)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    assert_close(x.grad, tx.grad.numpy(), rtol=1e-7, atol=1e-9)


def test_masked_logaddexp_grad(device):
    x, tx, m, tm = _data(device)
    y, ty, _, _ = _data(device, seed=1)
    for t in (x, tx, y, ty):
        t.requires_grad_(True)
    fw.masked.logaddexp(x, y, input_mask=m).sum().backward()
    torch.masked.logaddexp(tx, ty, input_mask=tm).sum().backward()
    assert_close(x.grad, tx.grad.numpy(), rtol=1e-7, atol=1e-9)
    assert_close(y.grad, ty.grad.numpy(), rtol=1e-7, atol=1e-9)
