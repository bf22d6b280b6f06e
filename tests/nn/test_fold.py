"""nn.functional.unfold / fold and nn.Unfold / nn.Fold against PyTorch: values, input
gradients (through each other's kernels), unbatched and 0-size batch inputs, dtypes, and
PyTorch's errors for bad input (same class, same text)."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

OPTIONS = [
    dict(kernel_size=2),
    dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 3)),
    dict(kernel_size=3, dilation=1, padding=1, stride=2),
    dict(kernel_size=(1, 1)),
]


def _both(fn_fw, fn_t, x, device, dtype=np.float32, **kw):
    """Runs fw and torch on x; compares the output and the gradient of a random cotangent."""
    tx = torch.tensor(x.astype(dtype), requires_grad=True)
    fx = fw.tensor(x.astype(dtype), device=device).requires_grad_()
    to, fo = fn_t(tx, **kw), fn_fw(fx, **kw)
    assert tuple(fo.shape) == tuple(to.shape)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    assert_close(fo, to_np(to), **tol)
    g = np.random.default_rng(1).standard_normal(tuple(to.shape)).astype(dtype)
    (to * torch.tensor(g)).sum().backward()
    (fo * fw.tensor(g, device=device)).sum().backward()
    assert_close(fx.grad, to_np(tx.grad), **tol)
    return fo


@pytest.mark.parametrize("kw", OPTIONS, ids=str)
def test_unfold(device, kw):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 8))
    _both(F.unfold, TF.unfold, x, device, **kw)


@pytest.mark.parametrize("kw", OPTIONS, ids=str)
def test_fold(device, kw):
    out_size = (7, 8)
    t_cols = TF.unfold(torch.zeros(2, 3, *out_size), **kw)
    x = np.random.default_rng(0).standard_normal(tuple(t_cols.shape))
    _both(F.fold, TF.fold, x, device, output_size=out_size, **kw)


def test_unbatched_and_float64(device):
    rng = np.random.default_rng(2)
    kw = dict(kernel_size=(3, 2), padding=1, stride=(1, 2))
    x = rng.standard_normal((3, 5, 6))
    dtype = np.float64 if device == "cpu" else np.float32
    cols = _both(F.unfold, TF.unfold, x, device, dtype=dtype, **kw)
    assert cols.dim() == 2
    c = rng.standard_normal(tuple(cols.shape))
    out = _both(F.fold, TF.fold, c, device, dtype=dtype, output_size=(5, 6), **kw)
    assert tuple(out.shape) == (3, 5, 6)


def test_zero_batch(device):
    x = fw.zeros((0, 3, 5, 5), device=device, requires_grad=True)
    cols = F.unfold(x, 2)
    assert tuple(cols.shape) == (0, 12, 16)
    out = F.fold(cols, (5, 5), 2)
    assert tuple(out.shape) == (0, 3, 5, 5)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 3, 5, 5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half(device, dtype):
    x = np.random.default_rng(3).integers(-4, 5, (1, 2, 5, 5)).astype(np.float32)
    t = torch.tensor(x).to(getattr(torch, dtype))
    f = fw.tensor(x, device=device).to(getattr(fw, dtype))
    a, b = F.unfold(f, 2, padding=1), TF.unfold(t, 2, padding=1)
    assert a.dtype is getattr(fw, dtype)
    assert_close(a.float(), to_np(b.float()))
    # small integers: the overlapping sums are exact
    assert_close(F.fold(a, (5, 5), 2, padding=1).float(),
                 to_np(TF.fold(b, (5, 5), 2, padding=1).float()))


def test_double_backward(device):
    """unfold's derivative is fold (and fold's unfold), recorded: a second derivative
    goes through them."""
    x = fw.randn(1, 2, 4, 4, device=device, requires_grad=True)
    y = F.unfold(x, 2, padding=1)
    (g,) = fw.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = fw.autograd.grad(g.sum(), x)
    tx = torch.tensor(to_np(x), requires_grad=True)
    ty = TF.unfold(tx, 2, padding=1)
    (tg,) = torch.autograd.grad((ty * ty).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    assert_close(g, to_np(tg), rtol=1e-5, atol=1e-5)
    assert_close(gg, to_np(tgg), rtol=1e-5, atol=1e-5)


def _same_error(fn_fw, fn_t, *args, **kw):
    with pytest.raises(Exception) as te:
        fn_t(*args[1], **kw)
    with pytest.raises(type(te.value)) as fe:
        fn_fw(*args[0], **kw)
    assert str(fe.value) == str(te.value)


UNFOLD_BAD = [
    ((2, 3, 4, 5, 5), dict(kernel_size=2)),
    ((3, 5), dict(kernel_size=2)),
    ((3,), dict(kernel_size=2)),
    ((2, 3, 5, 5), dict(kernel_size=(2, 2, 2))),
    ((2, 3, 5, 5), dict(kernel_size=2, stride=(1, 1, 1))),
    ((2, 3, 5, 5), dict(kernel_size=0)),
    ((2, 3, 5, 5), dict(kernel_size=2, dilation=0)),
    ((2, 3, 5, 5), dict(kernel_size=2, padding=-1)),
    ((2, 3, 5, 5), dict(kernel_size=2, stride=0)),
    ((2, 3, 5, 7), dict(kernel_size=6)),
    ((2, 0, 5, 5), dict(kernel_size=2)),
    ((2, 3, 0, 5), dict(kernel_size=2)),
    ((0, 5, 5), dict(kernel_size=2)),
]


@pytest.mark.parametrize("shape,kw", UNFOLD_BAD, ids=str)
def test_unfold_errors(shape, kw):
    _same_error(F.unfold, TF.unfold, (fw.zeros(shape),), (torch.zeros(shape),), **kw)


FOLD_BAD = [
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=3)),
    ((2, 13, 16), dict(output_size=(5, 5), kernel_size=2)),
    ((7, 5), dict(output_size=(5, 7), kernel_size=2)),
    ((8, 5), dict(output_size=(5, 7), kernel_size=2)),
    ((1, 8, 5), dict(output_size=(5, 7), kernel_size=2)),
    ((8, 5), dict(output_size=(1, 1), kernel_size=2)),
    ((1, 2, 12, 16), dict(output_size=(5, 5), kernel_size=2)),
    ((2, 12, 0), dict(output_size=(5, 5), kernel_size=2)),
    ((2, 12, 16), dict(output_size=(5, 5, 5), kernel_size=2)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=(2, 1, 1))),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2, stride=0)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=0)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2, padding=-1)),
    ((2, 12, 16), dict(output_size=(5, 5), kernel_size=2, dilation=0)),
]


@pytest.mark.parametrize("shape,kw", FOLD_BAD, ids=str)
def test_fold_errors(shape, kw):
    _same_error(F.fold, TF.fold, (fw.zeros(shape),), (torch.zeros(shape),), **kw)


def test_type_errors():
    for fn, tfn, a, t in ((F.unfold, TF.unfold, fw.zeros(1, 1, 3, 3), torch.zeros(1, 1, 3, 3)),):
        _same_error(fn, tfn, (a,), (t,), kernel_size=2.5)
        _same_error(fn, tfn, (a,), (t,), kernel_size=2, stride=(1, 1.0))
    with pytest.raises(TypeError):
        F.unfold([1.0], 2)
    with pytest.raises(TypeError):
        F.fold(fw.zeros(4, 4), (3, 3), 2.0)


def test_integer_refused():
    _same_error(F.unfold, TF.unfold, (fw.zeros(1, 1, 3, 3, dtype=fw.int64),),
                (torch.zeros(1, 1, 3, 3, dtype=torch.int64),), kernel_size=2)
    _same_error(F.fold, TF.fold, (fw.zeros(1, 4, 4, dtype=fw.int64),),
                (torch.zeros(1, 4, 4, dtype=torch.int64),), output_size=(3, 3), kernel_size=2)


def test_modules(device):
    rng = np.random.default_rng(5)
    m, tm = nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=2), \
        torch.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=2)
    assert repr(m) == repr(tm)
    cols = compare_module(torch, m, tm, [rng.standard_normal((2, 3, 6, 7)).astype(np.float32)],
                          device)[0]
    f, tf = nn.Fold((6, 7), (2, 3), dilation=(1, 2), padding=1, stride=2), \
        torch.nn.Fold((6, 7), (2, 3), dilation=(1, 2), padding=1, stride=2)
    assert repr(f) == repr(tf)
    compare_module(torch, f, tf, [rng.standard_normal(tuple(cols.shape)).astype(np.float32)],
                   device)
    assert repr(nn.Fold(4, 2)) == repr(torch.nn.Fold(4, 2))
    assert repr(nn.Unfold(3)) == repr(torch.nn.Unfold(3))
    assert list(f.state_dict()) == [] and list(m.parameters()) == []


def test_bool_unfold_and_fold(device):
    """PyTorch's im2col/col2im take bool (fold: overlapping blocks add, i.e. or)."""
    rng = np.random.default_rng(3)
    x = rng.random((2, 2, 5, 5)) > 0.5
    kw = dict(kernel_size=2, padding=1, stride=(1, 2))
    got, want = F.unfold(fw.tensor(x, device=device), **kw), TF.unfold(torch.tensor(x), **kw)
    assert got.dtype is fw.bool and (to_np(got) == want.numpy()).all()
    c = rng.random((1, 8, 9)) > 0.7
    got, want = F.fold(fw.tensor(c, device=device), 4, 2), TF.fold(torch.tensor(c), 4, 2)
    assert got.dtype is fw.bool and (to_np(got) == want.numpy()).all()
    empty = fw.zeros(0, 1, 5, 5, dtype=fw.bool, device=device)
    assert F.unfold(empty, 2).shape == (0, 4, 16)
