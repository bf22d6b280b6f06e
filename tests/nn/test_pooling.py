"""Pooling (nn.functional and the pooling modules) against torch on cpu and cuda: values,
indices and input gradients for every option (kernel, stride, padding, dilation, ceil_mode,
return_indices, count_include_pad, divisor_override, output sizes), 1d/2d/3d, batched and
unbatched inputs, batch 1 and 0, odd sizes, non-contiguous inputs, 16-bit and integer
dtypes, NaN/-inf and ties, double backward, module reprs, and PyTorch's errors."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close, skip_unless_torch
from tests.helpers import to_np as host_np
from tests.nn.common import compare_module, fw_tensor, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# Triton's interpreter computes masked-off lanes too (NumPy warns about what they hold)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _check(fw_fn, t_fn, a, device, dtype=np.float32, rtol=1e-5, atol=1e-6, grad=True):
    """fw_fn(x) against t_fn(x): outputs (values and indices), and the input gradient for a
    random cotangent on the first output."""
    a = np.asarray(a, dtype=dtype)
    t = torch.tensor(a, requires_grad=grad)
    x = fw_tensor(a, device, requires_grad=grad)
    ty, y = t_fn(t), fw_fn(x)
    if isinstance(ty, tuple):
        assert isinstance(y, tuple) and len(y) == len(ty)
        assert y[1].dtype is fw.int64
        np.testing.assert_array_equal(to_np(y[1]), ty[1].numpy())
        ty, y = ty[0], y[0]
    assert tuple(y.shape) == tuple(ty.shape)
    assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    assert_close(y, to_np(ty), rtol=rtol, atol=atol)
    if grad:
        g = np.random.default_rng(1).standard_normal(tuple(ty.shape))
        ty.backward(torch.tensor(g, dtype=ty.dtype))
        y.backward(fw.tensor(g, dtype=y.dtype, device=device))
        assert_close(x.grad, to_np(t.grad), rtol=rtol, atol=atol)
    return y


# ---- max pooling ---------------------------------------------------------------------------

MAX_CASES = [
    # (nd, shape, kernel, stride, padding, dilation, ceil_mode)
    (1, (2, 3, 11), 3, None, 0, 1, False),
    (1, (2, 3, 12), 3, 2, 1, 2, True),
    (1, (1, 1, 5), 5, 1, 2, 1, False),
    (1, (3, 9), 2, 1, 1, 1, True),                      # unbatched
    (2, (2, 3, 9, 8), 2, None, 0, 1, False),
    (2, (2, 3, 9, 8), (3, 2), (2, 1), (1, 1), (1, 2), True),
    (2, (1, 2, 7, 7), 3, 2, 1, 1, True),
    (2, (3, 10, 9), (2, 3), (3, 2), (1, 0), 2, False),  # unbatched
    (2, (2, 1, 20, 17), 4, 3, 2, 1, True),
    (3, (1, 2, 5, 4, 6), 2, 1, 1, 1, False),
    (3, (2, 1, 6, 5, 5), (3, 2, 2), (2, 1, 2), (1, 0, 1), (1, 2, 1), True),
    (3, (2, 4, 5, 3), 2, None, 0, 1, True),            # unbatched
]


@pytest.mark.parametrize("case", MAX_CASES)
@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool(device, case, return_indices):
    nd, shape, k, s, p, d, ceil = case
    name = f"max_pool{nd}d"
    _check(lambda x: getattr(F, name)(x, k, s, p, d, ceil, return_indices),
           lambda t: getattr(TF, name)(t, k, s, p, d, ceil, return_indices), _data(shape),
           device)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_pool_with_indices_functions(device, nd):
    shape = (2, 3) + (7,) * nd
    name = f"max_pool{nd}d_with_indices"
    _check(lambda x: getattr(F, name)(x, 3, 2, 1), lambda t: getattr(TF, name)(t, 3, 2, 1),
           _data(shape), device)
    _check(lambda x: getattr(F, name)(x, 2, ceil_mode=True),
           lambda t: getattr(TF, name)(t, 2, ceil_mode=True), _data(shape), device)


def test_max_pool_float64_and_zero_batch(device):
    _check(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
           lambda t: TF.max_pool2d(t, 3, 2, 1, return_indices=True), _data((1, 2, 9, 9)),
           device, np.float64, 1e-12, 1e-12)
    for nd in (1, 2, 3):
        y = getattr(F, f"max_pool{nd}d")(fw.zeros((0, 2) + (4,) * nd, device=device), 2)
        assert tuple(y.shape) == (0, 2) + (2,) * nd


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_max_pool_half(device, dtype):
    a = _data((2, 3, 9, 8))
    t = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
    x = fw.tensor(a, dtype=getattr(fw, dtype), device=device, requires_grad=True)
    tv, ti = TF.max_pool2d(t, 3, 2, 1, return_indices=True)
    v, i = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert v.dtype is getattr(fw, dtype)
    np.testing.assert_array_equal(host_np(v), tv.detach().float().numpy())   # exact copies
    np.testing.assert_array_equal(host_np(i), ti.numpy())
    g = _data(tuple(tv.shape), 3)
    tv.backward(torch.tensor(g, dtype=t.dtype))
    v.backward(fw.tensor(g, dtype=v.dtype, device=device))
    np.testing.assert_array_equal(host_np(x.grad), t.grad.float().numpy())


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_max_pool_integers(device, dtype):
    a = np.random.default_rng(0).integers(0 if dtype == "uint8" else -100, 100, (2, 3, 7, 6))
    for f in [lambda L, x: L.nn.functional.max_pool2d(x, 2, return_indices=True),
              lambda L, x: L.nn.functional.max_pool3d(x, (1, 2, 3), 1, (0, 1, 1),
                                                      return_indices=True)]:
        tv, ti = f(torch, torch.tensor(a, dtype=getattr(torch, dtype)))
        v, i = f(fw, fw.tensor(a, dtype=getattr(fw, dtype), device=device))
        assert v.dtype is getattr(fw, dtype)
        np.testing.assert_array_equal(to_np(v), tv.numpy())
        np.testing.assert_array_equal(to_np(i), ti.numpy())
    # the lowest value of the dtype everywhere: the window's first position wins
    lo = np.iinfo(getattr(np, dtype)).min
    tv, ti = TF.max_pool2d(torch.full((1, 1, 4, 4), lo, dtype=getattr(torch, dtype)), 3, 1, 1,
                           return_indices=True)
    v, i = F.max_pool2d(fw.full((1, 1, 4, 4), lo, dtype=getattr(fw, dtype), device=device), 3,
                        1, 1, return_indices=True)
    np.testing.assert_array_equal(to_np(v), tv.numpy())
    np.testing.assert_array_equal(to_np(i), ti.numpy())


def test_max_pool_special_values(device):
    inf, nan = float("inf"), float("nan")
    rows = np.array([[1.0, nan, 3.0, nan, 2.0, 0.0], [-inf] * 6, [2.0, 5.0, 5.0, 1.0, 5.0, 0.0],
                     [inf, 1.0, -inf, inf, nan, -inf]], dtype=np.float32)[None]
    for args in [(6,), (3, 1, 1), (2, 2, 1, 1, True), (2, 1, 1, 2)]:
        tv, ti = TF.max_pool1d(torch.tensor(rows), *args, return_indices=True)
        v, i = F.max_pool1d(fw.tensor(rows, device=device), *args, return_indices=True)
        np.testing.assert_array_equal(to_np(v), tv.numpy())
        np.testing.assert_array_equal(to_np(i), ti.numpy())
    plane = np.tile(rows[0], (1, 1, 2, 1))
    tv, ti = TF.max_pool2d(torch.tensor(plane), (2, 3), 1, (1, 1), return_indices=True)
    v, i = F.max_pool2d(fw.tensor(plane, device=device), (2, 3), 1, (1, 1),
                        return_indices=True)
    np.testing.assert_array_equal(to_np(v), tv.numpy())
    np.testing.assert_array_equal(to_np(i), ti.numpy())


def test_max_pool_non_contiguous(device):
    a = _data((2, 9, 8, 3))
    _check(lambda x: F.max_pool2d(x.permute(0, 3, 1, 2), 3, 2, 1, return_indices=True),
           lambda t: TF.max_pool2d(t.permute(0, 3, 1, 2), 3, 2, 1, return_indices=True), a,
           device)
    _check(lambda x: F.max_pool1d(x[:, ::2, :, 1], 2, 1), lambda t: TF.max_pool1d(t[:, ::2, :, 1],
                                                                                  2, 1),
           a, device)


def test_max_pool_double_backward(device):
    a = _data((1, 2, 6, 5))
    t = torch.tensor(a, requires_grad=True)
    x = fw_tensor(a, device, requires_grad=True, dtype=fw.float64)
    w = _data((1, 2, 4, 3), 2)
    tg, = torch.autograd.grad((TF.max_pool2d(t, 2, 2, 1) * torch.tensor(w)).sum(), t,
                              create_graph=True)
    g, = fw.autograd.grad((F.max_pool2d(x, 2, 2, 1) * fw.tensor(w, device=device)).sum(), x,
                          create_graph=True)
    assert_close(g, to_np(tg))
    # the gradient is linear in the cotangent: differentiate through it
    w2 = fw.tensor(w, device=device, requires_grad=True)
    g2, = fw.autograd.grad((F.max_pool2d(x, 2, 2, 1) * w2).sum(), x, create_graph=True)
    h, = fw.autograd.grad((g2 * fw.tensor(a, device=device)).sum(), w2)
    tw2 = torch.tensor(w, requires_grad=True)
    tg2, = torch.autograd.grad((TF.max_pool2d(t, 2, 2, 1) * tw2).sum(), t, create_graph=True)
    th, = torch.autograd.grad((tg2 * torch.tensor(a)).sum(), tw2)
    assert_close(h, to_np(th))
    assert fw.autograd.gradgradcheck(lambda v: F.max_pool1d(v, 2, 1),
                                     (fw.tensor(_data((1, 1, 5)), device=device,
                                                requires_grad=True),))


# ---- adaptive pooling ----------------------------------------------------------------------

ADAPTIVE_CASES = [(1, (2, 3, 11), 4), (1, (2, 3, 11), 11), (1, (3, 5), 8), (1, (2, 3, 7), 1),
                  (2, (2, 3, 7, 5), (3, 4)), (2, (2, 3, 7, 5), (None, 2)), (2, (3, 6, 9), 4),
                  (2, (1, 2, 4, 4), (7, 9)), (2, (2, 3, 7, 5), 1), (2, (2, 1, 12, 8), (3, 2)),
                  (3, (1, 2, 5, 7, 3), (2, 3, 4)), (3, (2, 4, 5, 3), (3, None, 2)),
                  (3, (1, 2, 4, 4, 4), 1)]


@pytest.mark.parametrize("case", ADAPTIVE_CASES)
def test_adaptive_avg_pool(device, case):
    nd, shape, out = case
    name = f"adaptive_avg_pool{nd}d"
    _check(lambda x: getattr(F, name)(x, out), lambda t: getattr(TF, name)(t, out),
           _data(shape), device)


@pytest.mark.parametrize("case", ADAPTIVE_CASES)
@pytest.mark.parametrize("return_indices", [False, True])
def test_adaptive_max_pool(device, case, return_indices):
    nd, shape, out = case
    name = f"adaptive_max_pool{nd}d"
    _check(lambda x: getattr(F, name)(x, out, return_indices),
           lambda t: getattr(TF, name)(t, out, return_indices), _data(shape), device)


def test_adaptive_special(device):
    # infinities stay inside their own bins
    a = _data((1, 2, 10))
    a[0, 0, 3] = np.inf
    a[0, 1, 7] = -np.inf
    for f in ("adaptive_avg_pool1d", "adaptive_max_pool1d"):
        for o in (3, 4, 7):
            ty = getattr(TF, f)(torch.tensor(a), o)
            y = getattr(F, f)(fw.tensor(a, device=device), o)
            np.testing.assert_allclose(to_np(y), ty.numpy(), rtol=1e-12)
    for nd in (1, 2, 3):    # output size 0
        y = getattr(F, f"adaptive_avg_pool{nd}d")(fw.zeros((1, 2) + (3,) * nd, device=device),
                                                 0)
        assert tuple(y.shape) == (1, 2) + (0,) * nd
        y = getattr(F, f"adaptive_max_pool{nd}d")(fw.zeros((1, 2) + (3,) * nd, device=device),
                                                 0)
        assert tuple(y.shape) == (1, 2) + (0,) * nd
    y = F.adaptive_avg_pool2d(fw.zeros((0, 3, 5, 4), device=device), (2, 3))
    assert tuple(y.shape) == (0, 3, 2, 3)


# ---- average pooling -----------------------------------------------------------------------

AVG_CASES = [
    # (nd, shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    (1, (2, 3, 11), 3, None, 0, False, True, None),
    (1, (2, 3, 12), 3, 2, 1, True, False, None),
    (1, (2, 3, 12), 4, 3, 2, True, True, None),
    (1, (3, 10), 2, 1, 1, False, False, None),            # unbatched
    (2, (2, 3, 9, 8), 2, None, 0, False, True, None),
    (2, (2, 3, 10, 9), 3, 2, 1, True, True, None),
    (2, (2, 3, 10, 9), (3, 2), (2, 3), (1, 1), True, False, None),
    (2, (1, 2, 7, 7), 3, 2, 1, False, True, 5),
    (2, (3, 8, 7), (2, 3), 1, (1, 0), True, False, 2),   # unbatched
    (2, (2, 1, 5, 5), 5, 1, 2, False, False, None),
    (3, (1, 2, 7, 6, 5), 3, 2, 1, True, False, None),
    (3, (2, 2, 4, 5, 6), (2, 3, 2), (1, 2, 2), (1, 1, 0), False, True, None),
    (3, (2, 4, 5, 4), 2, 1, 1, True, True, 3),           # unbatched
]


@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool(device, case):
    nd, shape, k, s, p, ceil, cip, div = case
    name = f"avg_pool{nd}d"
    extra = () if nd == 1 else (div,)
    _check(lambda x: getattr(F, name)(x, k, s, p, ceil, cip, *extra),
           lambda t: getattr(TF, name)(t, k, s, p, ceil, cip, *extra), _data(shape), device)


def test_avg_pool_float64_half_zero_batch(device):
    _check(lambda x: F.avg_pool2d(x, 3, 2, 1, True, False),
           lambda t: TF.avg_pool2d(t, 3, 2, 1, True, False), _data((1, 2, 9, 9)), device,
           np.float64, 1e-12, 1e-12)
    a = _data((2, 3, 8, 7))
    ty = TF.avg_pool2d(torch.tensor(a, dtype=torch.float16), 3, 2, 1)
    y = F.avg_pool2d(fw.tensor(a, dtype=fw.float16, device=device), 3, 2, 1)
    assert y.dtype is fw.float16
    assert_close(y, ty.float().numpy(), rtol=2e-3, atol=2e-3)
    for nd in (1, 2, 3):
        y = getattr(F, f"avg_pool{nd}d")(fw.zeros((0, 2) + (4,) * nd, device=device), 2)
        assert tuple(y.shape) == (0, 2) + (2,) * nd


def test_avg_pool_non_contiguous_and_double_backward(device):
    a = _data((2, 9, 8, 3))
    _check(lambda x: F.avg_pool2d(x.permute(0, 3, 1, 2), 3, 2, 1),
           lambda t: TF.avg_pool2d(t.permute(0, 3, 1, 2), 3, 2, 1), a, device)
    # double backward: the input gradient is linear in the cotangent w; differentiate it
    # with respect to w
    a = _data((1, 2, 5, 6))
    w = _data((1, 2, 5, 6), 2)
    x = fw_tensor(a, device, requires_grad=True, dtype=fw.float64)
    fw_w = fw.tensor(w, device=device, requires_grad=True)
    g, = fw.autograd.grad((F.avg_pool2d(x, 3, 1, 1, True, False) * fw_w).sum(), x,
                          create_graph=True)
    h, = fw.autograd.grad((g * g).sum(), fw_w)
    t, tw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    tg, = torch.autograd.grad((TF.avg_pool2d(t, 3, 1, 1, True, False) * tw).sum(), t,
                              create_graph=True)
    th, = torch.autograd.grad((tg * tg).sum(), tw)
    assert_close(g, to_np(tg))
    assert_close(h, to_np(th))


# ---- Lp pooling ----------------------------------------------------------------------------

@pytest.mark.parametrize("nd,shape,norm,k,s,ceil", [
    (1, (2, 3, 11), 2, 3, None, False), (1, (2, 3, 11), 1, 2, 3, True),
    (1, (3, 10), 3.0, 4, 2, False), (2, (2, 3, 9, 8), 2, 2, None, False),
    (2, (2, 3, 9, 8), 1.5, (3, 2), (2, 1), True), (2, (3, 7, 6), 4, 3, 2, False),
    (3, (1, 2, 5, 4, 6), 2, 2, 1, False)])
def test_lp_pool(device, nd, shape, norm, k, s, ceil):
    a = np.abs(_data(shape)) + 0.1      # x ** p of a negative x is not real for p = 1.5
    name = f"lp_pool{nd}d"
    _check(lambda x: getattr(F, name)(x, norm, k, s, ceil),
           lambda t: getattr(TF, name)(t, norm, k, s, ceil), a, device, rtol=2e-5, atol=2e-6)


# ---- unpooling -----------------------------------------------------------------------------

@pytest.mark.parametrize("nd,shape,k,s,p,out", [
    (1, (2, 3, 8), 2, None, 0, None), (1, (2, 3, 9), 3, 2, 1, (9,)), (1, (3, 8), 2, 2, 0, None),
    (2, (2, 3, 8, 6), 2, None, 0, None), (2, (2, 3, 9, 7), 3, 2, 1, (9, 7)),
    (2, (1, 2, 9, 7), 3, 2, 1, (2, 3, 10, 8)), (2, (3, 6, 6), 2, None, 0, None),
    (3, (1, 2, 4, 6, 4), 2, None, 0, None), (3, (1, 2, 5, 5, 5), 3, 2, 1, (5, 6, 5))])
def test_max_unpool(device, nd, shape, k, s, p, out):
    a = _data(shape)
    pooled_t, ti = getattr(TF, f"max_pool{nd}d")(torch.tensor(a, dtype=torch.float32), k, s, p,
                                                 return_indices=True)
    i = fw.tensor(ti.numpy(), device=device)
    name = f"max_unpool{nd}d"
    _check(lambda x: getattr(F, name)(x, i, k, s, p, out),
           lambda t: getattr(TF, name)(t, ti, k, s, p, out), pooled_t.numpy(), device)


# ---- modules -------------------------------------------------------------------------------

MODULES = [
    ("MaxPool1d", (3,), {}, (2, 3, 10)), ("MaxPool1d", (3, 2, 1, 2, True, True), {}, (3, 11)),
    ("MaxPool2d", ((3, 2), 1, 1, 2), {"ceil_mode": True}, (2, 3, 9, 8)),
    ("MaxPool2d", (2,), {"return_indices": True}, (1, 2, 7, 7)),
    ("MaxPool3d", (2,), {}, (1, 2, 4, 5, 6)),
    ("AvgPool1d", (3, 2, 1, True, False), {}, (2, 3, 10)),
    ("AvgPool2d", (3,), {}, (2, 3, 9, 8)),
    ("AvgPool2d", ((3, 2), 1, 1, True, False, 2), {}, (3, 9, 8)),
    ("AvgPool3d", (2,), {"count_include_pad": False, "padding": 1}, (1, 2, 4, 5, 6)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 10)), ("AdaptiveAvgPool2d", ((None, 3),), {},
                                                  (2, 3, 9, 8)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 9, 8)), ("AdaptiveAvgPool3d", (2,), {}, (1, 2, 5, 4, 3)),
    ("AdaptiveMaxPool1d", (3, True), {}, (2, 3, 10)), ("AdaptiveMaxPool2d", ((2, 3),), {},
                                                       (2, 3, 9, 8)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 5, 4, 3)),
    ("LPPool1d", (2, 3), {}, (2, 3, 10)), ("LPPool2d", (1.5, 3, 2, True), {}, (2, 3, 9, 8)),
    ("LPPool3d", (2, 2), {}, (1, 2, 4, 4, 4)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", MODULES)
def test_modules(device, name, args, kwargs, shape):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    fm = getattr(nn, name)(*args, **kwargs)
    assert repr(fm) == repr(tm)
    a = _data(shape)
    if name.startswith("LP"):
        a = np.abs(a) + 0.1
    compare_module(torch, fm, tm, [a.astype(np.float32)], device)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_unpool_modules(device, nd):
    shape = (2, 3) + (6,) * nd
    tp = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
    tu = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    fp = getattr(nn, f"MaxPool{nd}d")(2, return_indices=True)
    fu = getattr(nn, f"MaxUnpool{nd}d")(2)
    assert repr(fu) == repr(tu) and repr(fp) == repr(tp)
    a = _data(shape).astype(np.float32)
    t = torch.tensor(a, requires_grad=True)
    x = fw_tensor(a, device, requires_grad=True)
    ty = tu(*tp(t), output_size=t.shape[2:])
    y = fu(*fp(x), output_size=x.shape[2:])
    assert_close(y, to_np(ty))
    ty.sum().backward()
    y.sum().backward()
    assert_close(x.grad, to_np(t.grad))
    assert repr(getattr(nn, f"MaxUnpool{nd}d")(3, 1, 1)) == \
        repr(getattr(torch.nn, f"MaxUnpool{nd}d")(3, 1, 1))


def test_printed_model():
    layers = lambda m: m.Sequential(m.MaxPool2d(3, 2, 1), m.AvgPool2d(2, ceil_mode=True),
                                    m.AdaptiveAvgPool2d((1, 1)), m.AdaptiveMaxPool1d(4),
                                    m.LPPool2d(2, 3), m.MaxUnpool2d(2), m.AvgPool1d(3))
    assert repr(layers(nn)) == repr(layers(torch.nn))


# ---- bad input -----------------------------------------------------------------------------

def _x(L, device, *shape, dtype=None):
    if L is torch:
        return torch.randn(*shape) if dtype is None else torch.ones(*shape,
                                                                   dtype=getattr(torch, dtype))
    return fw.randn(*shape, device=device) if dtype is None else \
        fw.ones(*shape, dtype=getattr(fw, dtype), device=device)


ERRORS = {
    # max_pool1d (no indices: its own checks)
    "m1 rank": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 7), 2),
    "m1 empty": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 2, 0, 3), 2),
    "m1 ksize": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), (2, 2)),
    "m1 ssize": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 2, (2, 2)),
    "m1 psize": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 2, 2, (0, 0)),
    "m1 dsize": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 2, 2, 0, (1, 1)),
    "m1 k0": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 0, 1),
    "m1 s-1": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 2, -1),
    "m1 p-1": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 2, 1, -1),
    "m1 pad": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 3, 1, 2),
    "m1 d0": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 2, 1, 0, 0),
    "m1 out": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 8),
    "m1 int": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7, dtype="int32"), 2),
    "m1 float k": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 2.5),
    # max_pool1d with indices (run as 2d)
    "m1i rank": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 7), 2, return_indices=True),
    "m1i out": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 8,
                                                       return_indices=True),
    "m1i k0": lambda L, d: L.nn.functional.max_pool1d(_x(L, d, 1, 2, 7), 0, 1,
                                                      return_indices=True),
    # max_pool2d
    "m2 ksize": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), (2, 2, 2)),
    "m2 ssize": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, (2, 2, 2)),
    "m2 psize": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, 2, (0, 0, 0)),
    "m2 dsize": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, 2, 0,
                                                        (1, 1, 1)),
    "m2 rank": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 7), 2),
    "m2 k0": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 0, 1),
    "m2 s0": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, 0),
    "m2 s-1": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, -1),
    "m2 p-1": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, 1, -1),
    "m2 pad": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, padding=2),
    "m2 pad dil": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 3, 1, 2, 2),
    "m2 d0": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2, 2, 0, 0),
    "m2 empty": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 2, 0, 3, 3), 1),
    "m2 out": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 8),
    "m2 bool": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 4, 4, dtype="bool"), 2),
    "m2 float k": lambda L, d: L.nn.functional.max_pool2d(_x(L, d, 1, 2, 7, 7), 2.5),
    "m2 not tensor": lambda L, d: L.nn.functional.max_pool2d([1.0], 2),
    # max_pool3d
    "m3 ksize": lambda L, d: L.nn.functional.max_pool3d(_x(L, d, 1, 2, 5, 5, 5), (2, 2)),
    "m3 rank": lambda L, d: L.nn.functional.max_pool3d(_x(L, d, 2, 5, 5), 2),
    "m3 k0": lambda L, d: L.nn.functional.max_pool3d(_x(L, d, 1, 2, 5, 5, 5), 0, 1),
    "m3 d0": lambda L, d: L.nn.functional.max_pool3d(_x(L, d, 1, 2, 5, 5, 5), 2, 2, 0, 0),
    "m3 pad": lambda L, d: L.nn.functional.max_pool3d(_x(L, d, 1, 2, 5, 5, 5), 3, 1, 2, 2),
    "m3 empty": lambda L, d: L.nn.functional.max_pool3d(_x(L, d, 2, 2, 0, 3, 3), 1),
    "m3 out": lambda L, d: L.nn.functional.max_pool3d(_x(L, d, 1, 2, 5, 5, 5), 6),
    # avg pooling
    "a1 rank": lambda L, d: L.nn.functional.avg_pool1d(_x(L, d, 7), 2),
    "a1 ksize": lambda L, d: L.nn.functional.avg_pool1d(_x(L, d, 1, 2, 7), (2, 2)),
    "a1 k0": lambda L, d: L.nn.functional.avg_pool1d(_x(L, d, 1, 2, 7), 0, 1),
    "a1 out": lambda L, d: L.nn.functional.avg_pool1d(_x(L, d, 1, 2, 7), 8),
    "a1 int": lambda L, d: L.nn.functional.avg_pool1d(_x(L, d, 1, 2, 7, dtype="int32"), 2),
    "a2 ksize": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 1, 2, 7, 7), (2, 2, 2)),
    "a2 rank": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 3, 7), 2),
    "a2 rank5": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 1, 1, 1, 1, 1), 1),
    "a2 s0": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 1, 2, 7, 7), 2, 0),
    "a2 pad": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 1, 2, 7, 7), 3, 1, 2),
    "a2 empty": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 2, 2, 0, 4), 2),
    "a2 div0": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 1, 2, 7, 7), 2,
                                                       divisor_override=0),
    "a2 out": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 1, 2, 7, 7), 8),
    "a2 int": lambda L, d: L.nn.functional.avg_pool2d(_x(L, d, 1, 2, 4, 4, dtype="int32"), 2),
    "a3 ksize": lambda L, d: L.nn.functional.avg_pool3d(_x(L, d, 1, 2, 5, 5, 5), (2, 2)),
    "a3 rank": lambda L, d: L.nn.functional.avg_pool3d(_x(L, d, 5), 2),
    "a3 small": lambda L, d: L.nn.functional.avg_pool3d(_x(L, d, 1, 2, 7, 7, 7), 8, 1, 4),
    "a3 empty": lambda L, d: L.nn.functional.avg_pool3d(_x(L, d, 2, 0, 3, 3, 3), 1),
    "a3 int": lambda L, d: L.nn.functional.avg_pool3d(_x(L, d, 1, 2, 4, 4, 4, dtype="int32"), 2),
    # adaptive
    "aa1 size": lambda L, d: L.nn.functional.adaptive_avg_pool1d(_x(L, d, 1, 2, 7), (2, 2)),
    "aa1 rank": lambda L, d: L.nn.functional.adaptive_avg_pool1d(_x(L, d, 7), 2),
    "aa1 neg": lambda L, d: L.nn.functional.adaptive_avg_pool1d(_x(L, d, 1, 2, 7), -1),
    "aa2 rank": lambda L, d: L.nn.functional.adaptive_avg_pool2d(_x(L, d, 7), 2),
    "aa2 neg": lambda L, d: L.nn.functional.adaptive_avg_pool2d(_x(L, d, 1, 2, 7, 7), -1),
    "aa2 empty": lambda L, d: L.nn.functional.adaptive_avg_pool2d(_x(L, d, 1, 2, 0, 3), 2),
    "aa2 int": lambda L, d: L.nn.functional.adaptive_avg_pool2d(_x(L, d, 1, 2, 4, 4,
                                                                   dtype="int32"), 2),
    "aa2 int global": lambda L, d: L.nn.functional.adaptive_avg_pool2d(
        _x(L, d, 1, 2, 4, 4, dtype="int64"), 1),
    "aa2 float": lambda L, d: L.nn.functional.adaptive_avg_pool2d(_x(L, d, 1, 2, 7, 7), 2.5),
    "aa3 rank": lambda L, d: L.nn.functional.adaptive_avg_pool3d(_x(L, d, 7), 2),
    "aa3 neg": lambda L, d: L.nn.functional.adaptive_avg_pool3d(_x(L, d, 1, 2, 3, 3, 3), -1),
    "am1 size": lambda L, d: L.nn.functional.adaptive_max_pool1d(_x(L, d, 1, 2, 7), (2, 2)),
    "am1 rank": lambda L, d: L.nn.functional.adaptive_max_pool1d(_x(L, d, 7), 2),
    "am1 neg": lambda L, d: L.nn.functional.adaptive_max_pool1d(_x(L, d, 1, 2, 7), -1),
    "am1 empty": lambda L, d: L.nn.functional.adaptive_max_pool1d(_x(L, d, 2, 2, 0), 1),
    "am2 rank": lambda L, d: L.nn.functional.adaptive_max_pool2d(_x(L, d, 7), 2),
    "am2 neg": lambda L, d: L.nn.functional.adaptive_max_pool2d(_x(L, d, 1, 2, 7, 7), -1),
    "am2 empty": lambda L, d: L.nn.functional.adaptive_max_pool2d(_x(L, d, 2, 2, 0, 0), 1),
    "am2 int": lambda L, d: L.nn.functional.adaptive_max_pool2d(_x(L, d, 1, 2, 4, 4,
                                                                   dtype="int32"), 2),
    "am3 rank": lambda L, d: L.nn.functional.adaptive_max_pool3d(_x(L, d, 7), 2),
    "am3 bool": lambda L, d: L.nn.functional.adaptive_max_pool3d(_x(L, d, 1, 2, 3, 3, 3,
                                                                    dtype="bool"), 2),
}


@pytest.mark.parametrize("key", sorted(ERRORS))
def test_errors_like_torch(device, key):
    fn = ERRORS[key]
    with pytest.raises(Exception) as want:
        fn(torch, "cpu")
    with pytest.raises(Exception) as got:
        fn(fw, device)
    assert type(got.value) is type(want.value), (got.value, want.value)
    if str(got.value) != str(want.value):
        skip_unless_torch(torch, f"the message {str(got.value)!r}")
    assert str(got.value) == str(want.value)


def test_unpool_errors_like_torch(device):
    a = _data((1, 2, 7)).astype(np.float32)
    tv, ti = TF.max_pool1d(torch.tensor(a), 2, return_indices=True)
    v, i = fw.tensor(tv.numpy(), device=device), fw.tensor(ti.numpy(), device=device)
    a2 = _data((1, 2, 7, 7)).astype(np.float32)
    tv2, ti2 = TF.max_pool2d(torch.tensor(a2), 2, return_indices=True)
    v2, i2 = fw.tensor(tv2.numpy(), device=device), fw.tensor(ti2.numpy(), device=device)
    a3 = _data((1, 2, 4, 4, 4)).astype(np.float32)
    tv3, ti3 = TF.max_pool3d(torch.tensor(a3), 2, return_indices=True)
    v3, i3 = fw.tensor(tv3.numpy(), device=device), fw.tensor(ti3.numpy(), device=device)
    # (PyTorch's threaded loop reports whichever bad index it met last, so the bad-index
    # cases have one bad index)
    cases = [
        (lambda F_, v, i: F_.max_unpool1d(v[:, :1, :1], i[:, :1, :1] + 100, 2), (v, i),
         (tv, ti)),
        (lambda F_, v, i: F_.max_unpool1d(v[:, 1:, 1:2], i[:, 1:, 1:2] - 100, 2), (v, i),
         (tv, ti)),
        (lambda F_, v, i: F_.max_unpool1d(v, i[..., :2], 2), (v, i), (tv, ti)),
        (lambda F_, v, i: F_.max_unpool1d(v, i, 2, output_size=(2,)), (v, i), (tv, ti)),
        (lambda F_, v, i: F_.max_unpool1d(v, i, 2, output_size=(2, 3, 4, 5)), (v, i), (tv, ti)),
        (lambda F_, v, i: F_.max_unpool1d(v[0, 0], i[0, 0], 2), (v, i), (tv, ti)),
        (lambda F_, v, i: F_.max_unpool1d(v, i.float(), 2), (v, i), (tv, ti)),
        (lambda F_, v, i: F_.max_unpool2d(v[:, :1, 2:, 2:], i[:, :1, 2:, 2:], 2), (v2, i2),
         (tv2, ti2)),       # an index of the 7x7 input, past the 2x2 output
        (lambda F_, v, i: F_.max_unpool2d(v, i, 2, output_size=(9, 9)), (v2, i2), (tv2, ti2)),
        (lambda F_, v, i: F_.max_unpool2d(v.long(), i, 2), (v2, i2), (tv2, ti2)),
        (lambda F_, v, i: F_.max_unpool3d(v[:, :1, :1, :1, :1], i[:, :1, :1, :1, :1] + 1000,
                                          2), (v3, i3), (tv3, ti3)),
        (lambda F_, v, i: F_.max_unpool2d(v[:, 1:, :1, :1], i[:, 1:, :1, :1] * 0 + 7, 2,
                                          output_size=(1, 1, 2, 3)), (v2, i2), (tv2, ti2)),
    ]
    for fn, fargs, targs in cases:
        with pytest.raises(Exception) as want:
            fn(TF, *targs)
        with pytest.raises(Exception) as got:
            fn(F, *fargs)
        assert type(got.value) is type(want.value), (got.value, want.value)
        assert str(got.value) == str(want.value)


def test_avg_pool_int64(device):
    """int64 average pooling divides toward zero, as PyTorch's C++ does."""
    a = np.random.default_rng(0).integers(-20, 20, (2, 3, 9, 8))
    for f in [lambda L, x: L.nn.functional.avg_pool2d(x, 2),
              lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, 1, True, False),
              lambda L, x: L.nn.functional.avg_pool2d(x, (2, 3), divisor_override=4),
              lambda L, x: L.nn.functional.avg_pool1d(x[0], 3, 2, 1),
              lambda L, x: L.nn.functional.avg_pool3d(x, 2, 1, 1),
              lambda L, x: L.nn.functional.lp_pool2d(x, 2, 2)]:
        ty = f(torch, torch.tensor(a))
        y = f(fw, fw.tensor(a, device=device))
        assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
        np.testing.assert_allclose(to_np(y), ty.numpy(), rtol=1e-6)
