"""softmax, log_softmax, softmin and gumbel_softmax (framework.softmax, Tensor.softmax,
nn.functional) against torch on cpu and cuda: values and gradients for every dim, dtype=,
16-bit inputs, long rows, many short rows, non-contiguous inputs, special values, 0-d and
empty inputs, the implicit-dim rule, double backward and bad input."""
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import fw_tensor, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# Triton's interpreter computes masked-off lanes too (NumPy warns about their inf - inf)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")


def _data(shape, seed=0, scale=4.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _check(fw_fn, t_fn, a, device, dtype=np.float32, rtol=1e-5, atol=1e-6):
    """fw_fn(x) against t_fn(x): forward, and the input gradient for a random cotangent."""
    a = np.asarray(a, dtype=dtype)
    t = torch.tensor(a, requires_grad=True)
    x = fw_tensor(a, device, requires_grad=True)
    ty, y = t_fn(t), fw_fn(x)
    assert tuple(y.shape) == tuple(ty.shape)
    assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    assert_close(y, to_np(ty), rtol=rtol, atol=atol)
    g = np.random.default_rng(1).standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g, dtype=ty.dtype))
    y.backward(fw.tensor(g, dtype=y.dtype, device=device))
    assert_close(x.grad, to_np(t.grad), rtol=rtol, atol=atol)


CASES = [((5,), 0), ((3, 7), 1), ((3, 7), 0), ((3, 7), -1), ((2, 5, 4), 1), ((2, 5, 4), 2),
         ((2, 5, 4), 0), ((2, 3, 4, 5), 1), ((1, 1), 1), ((1, 9), 0), ((4, 1, 3), 1)]


@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_values_and_grads(device, name, shape, dim):
    a = _data(shape)
    _check(lambda x: getattr(fw, name)(x, dim), lambda t: getattr(torch, name)(t, dim), a,
           device)
    _check(lambda x: getattr(x, name)(dim), lambda t: getattr(t, name)(dim), a, device,
           np.float64, 1e-12, 1e-12)
    _check(lambda x: getattr(F, name)(x, dim=dim), lambda t: getattr(TF, name)(t, dim=dim),
           a, device)


@pytest.mark.parametrize("shape,dim", [((3, 7), 1), ((2, 5, 4), 0), ((6,), 0)])
def test_softmin(device, shape, dim):
    a = _data(shape)
    _check(lambda x: F.softmin(x, dim), lambda t: TF.softmin(t, dim), a, device)
    _check(lambda x: F.softmin(x, dim, dtype=fw.float64),
           lambda t: TF.softmin(t, dim, dtype=torch.float64), a, device, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_dtype_argument(device, name):
    a = _data((3, 5))
    # float32 input computed in float64
    _check(lambda x: getattr(fw, name)(x, 1, fw.float64),
           lambda t: getattr(torch, name)(t, 1, torch.float64), a, device, rtol=1e-12,
           atol=1e-12)
    _check(lambda x: getattr(F, name)(x, 0, dtype=fw.float64),
           lambda t: getattr(TF, name)(t, 0, dtype=torch.float64), a, device, rtol=1e-12,
           atol=1e-12)
    _check(lambda x: x.softmax(1, dtype=fw.float16), lambda t: t.softmax(1, dtype=torch.float16),
           a, device, rtol=2e-3, atol=2e-3)
    # an integer input is converted by dtype=
    ints = np.arange(12).reshape(3, 4) % 5
    y = getattr(fw, name)(fw.tensor(ints, device=device), 1, dtype=fw.float32)
    ty = getattr(torch, name)(torch.tensor(ints), 1, dtype=torch.float32)
    assert y.dtype is fw.float32
    assert_close(y, to_np(ty))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((4, 37), 1), ((3, 6, 5), 1), ((2, 1200), 1)])
def test_half_precision(device, dtype, name, shape, dim):
    """16-bit inputs compute in float32: the result is torch's float32 result rounded."""
    a = _data(shape)
    t = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
    x = fw.tensor(a, dtype=getattr(fw, dtype), device=device, requires_grad=True)
    y, ty = getattr(fw, name)(x, dim), getattr(torch, name)(t, dim)
    assert y.dtype is getattr(fw, dtype)
    ref = getattr(torch, name)(t.detach().float(), dim).numpy()    # exact math, then rounding
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    assert_close(y, ref, rtol=tol, atol=tol)
    assert_close(y, ty.detach().float().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(shape)
    ty.backward(torch.tensor(g, dtype=t.dtype))
    y.backward(fw.tensor(g, dtype=y.dtype, device=device))
    gt = t.grad.float().numpy()
    assert_close(x.grad, gt, rtol=5 * tol, atol=5 * tol * max(1.0, np.abs(gt).max()))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_long_rows(device, name):
    """Rows longer than one kernel tile (the online max/sum across tiles), and a column
    reduction longer than one tile."""
    a = _data((3, 5000), scale=6.0)
    a[1, 4321] = 60.0       # a late maximum rescales the sum gathered so far
    a[2, :] -= 500.0        # exp(x) alone would underflow
    _check(lambda x: getattr(fw, name)(x, 1), lambda t: getattr(torch, name)(t, 1), a, device,
           rtol=2e-5, atol=2e-6)
    b = _data((700, 3), scale=6.0)
    _check(lambda x: getattr(fw, name)(x, 0), lambda t: getattr(torch, name)(t, 0), b, device,
           rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_many_short_rows(device, name):
    a = _data((2500, 3))
    _check(lambda x: getattr(fw, name)(x, 1), lambda t: getattr(torch, name)(t, 1), a, device)
    b = _data((3, 40, 2))
    _check(lambda x: getattr(fw, name)(x, 2), lambda t: getattr(torch, name)(t, 2), b, device)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_non_contiguous(device, name):
    a = _data((6, 8, 5))
    for view, dim in [(lambda t: t.transpose(0, 2), 0), (lambda t: t.transpose(1, 2), 2),
                      (lambda t: t[:, ::2, 1:], 1), (lambda t: t[::3], 2),
                      (lambda t: t.permute(2, 0, 1), 1)]:
        _check(lambda x: getattr(fw, name)(view(x), dim),
               lambda t: getattr(torch, name)(view(t), dim), a, device)
    # an expanded (stride 0) input
    _check(lambda x: getattr(fw, name)(x[:, :1].expand(4, 5), 1),
           lambda t: getattr(torch, name)(t[:, :1].expand(4, 5), 1), _data((4, 3)), device)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_special_values(device, name):
    inf, nan = float("inf"), float("nan")
    a = np.array([[-inf, 1.0, 2.0], [-inf, -inf, -inf], [1.0, inf, 2.0], [1.0, nan, 2.0],
                  [-inf, -inf, 3.0], [5.0, -inf, -inf], [1e30, -1e30, 0.0], [0.0, 0.0, 0.0]],
                 dtype=np.float32)
    for arr, dim in [(a, 1), (np.ascontiguousarray(a.T), 0)]:
        y = getattr(fw, name)(fw.tensor(arr, device=device), dim)
        ty = getattr(torch, name)(torch.tensor(arr), dim)
        np.testing.assert_allclose(to_np(y), ty.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_zero_dim_and_empty(device, name):
    for dim in (0, -1):
        _check(lambda x: getattr(fw, name)(x, dim), lambda t: getattr(torch, name)(t, dim),
               np.array(2.5), device)
    for shape, dim in [((0, 3), 1), ((0, 3), 0), ((3, 0), 1), ((2, 0, 4), 2)]:
        y = getattr(fw, name)(fw.zeros(shape, device=device), dim)
        assert tuple(y.shape) == shape and y.dtype is fw.float32
    # PyTorch lets an empty integer tensor through
    y = getattr(fw, name)(fw.zeros((0, 3), dtype=fw.int64, device=device), 1)
    assert tuple(y.shape) == (0, 3) and y.dtype is fw.int64


@pytest.mark.parametrize("ndim,expect", [(0, 0), (1, 0), (2, 1), (3, 0), (4, 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_implicit_dim(device, name, ndim, expect):
    shape = (2, 3, 4, 5)[:ndim]
    a = _data(shape)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = getattr(F, name)(fw.tensor(a, dtype=fw.float32, device=device))
    w = [x for x in w if x.category is not RuntimeWarning]     # the interpreter's NumPy
    assert len(w) == 1 and w[0].category is UserWarning
    assert str(w[0].message) == (f"Implicit dimension choice for {name} has been deprecated. "
                                 "Change the call to include dim=X as an argument.")
    assert w[0].filename == __file__        # _stacklevel=3 points at the caller
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ty = getattr(TF, name)(torch.tensor(a, dtype=torch.float32))
    assert_close(y, ty.numpy())
    if ndim:
        assert_close(y, getattr(TF, name)(torch.tensor(a, dtype=torch.float32), expect).numpy())


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_double_backward(device, name):
    a = _data((3, 4), scale=1.0)
    t = torch.tensor(a, requires_grad=True)
    x = fw_tensor(a, device, requires_grad=True, dtype=fw.float64)
    w = np.random.default_rng(2).standard_normal((3, 4))
    tg, = torch.autograd.grad((getattr(torch, name)(t, 1) * torch.tensor(w)).pow(2).sum(), t,
                              create_graph=True)
    g, = fw.autograd.grad((getattr(fw, name)(x, 1) * fw.tensor(w, device=device)).pow(2).sum(),
                          x, create_graph=True)
    assert_close(g, to_np(tg))
    th, = torch.autograd.grad(tg.sin().sum(), t)
    h, = fw.autograd.grad(g.sin().sum(), x)
    assert_close(h, to_np(th))


def test_gradcheck(device):
    x = fw.tensor(_data((3, 5), scale=1.0), dtype=fw.float64, device=device, requires_grad=True)
    assert fw.autograd.gradcheck(lambda t: F.softmax(t, 0), (x,))
    assert fw.autograd.gradgradcheck(lambda t: F.log_softmax(t, 1), (x,))


def test_out_argument(device):
    a = _data((3, 4))
    out = fw.empty((3, 4), device=device)
    r = fw.softmax(fw.tensor(a, dtype=fw.float32, device=device), 1, out=out)
    assert r is out
    assert_close(out, torch.softmax(torch.tensor(a, dtype=torch.float32), 1).numpy())
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        fw.softmax(fw.ones(2, 3, device=device), 0, out=fw.empty(2, 3, dtype=fw.float64,
                                                                   device=device))


def test_bad_input(device):
    x = fw.ones(2, 3, device=device)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)"):
        fw.softmax(x, 2)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        F.log_softmax(fw.tensor(1.0, device=device), 1)
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not "
                                                  "implemented for 'Long'"):
        fw.softmax(fw.arange(3, device=device), 0)
    with pytest.raises(NotImplementedError, match="\"log_softmax_kernel_impl\" not "
                                                  "implemented for 'Int'"):
        fw.log_softmax(fw.ones(2, 3, dtype=fw.int32, device=device), 0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        F.softmax(fw.tensor([True], device=device), 0)
    with pytest.raises(NotImplementedError, match="\"softmax_kernel_impl\" not implemented "
                                                  "for 'Long'"):
        fw.softmax(x, 0, dtype=fw.int64)
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'dim' \(position 2\) must be "
                                        r"int, not float"):
        fw.softmax(x, 0.5)
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'input' \(position 1\) must be "
                                        r"Tensor, not list"):
        fw.softmax([1.0], 0)


def test_gumbel_softmax(device):
    fw.manual_seed(0)
    logits = fw.tensor([[1.0, 2.0, 0.5, -1.0]], device=device).expand(4000, 4).contiguous()
    logits.requires_grad_()
    y = F.gumbel_softmax(logits, tau=0.5)
    assert tuple(y.shape) == (4000, 4)
    assert_close(y.sum(-1), np.ones(4000), rtol=1e-5, atol=1e-5)
    assert float(y.min()) >= 0
    # the argmax of a sample follows softmax(logits)
    freq = np.bincount(to_np(y.argmax(-1)), minlength=4) / 4000
    p = torch.softmax(torch.tensor([1.0, 2.0, 0.5, -1.0]), 0).numpy()
    np.testing.assert_allclose(freq, p, atol=0.03)
    # hard: one-hot forward, the soft sample's gradient backward (straight-through)
    fw.manual_seed(1)
    yh = F.gumbel_softmax(logits, tau=2.0, hard=True, dim=1)
    fw.manual_seed(1)
    ys = F.gumbel_softmax(logits, tau=2.0, hard=False, dim=1)
    assert set(np.unique(to_np(yh)).tolist()) == {0.0, 1.0}
    np.testing.assert_array_equal(to_np(yh).sum(1), np.ones(4000))
    np.testing.assert_array_equal(to_np(yh).argmax(1), to_np(ys).argmax(1))
    w = fw.tensor(np.random.default_rng(0).standard_normal((4000, 4)), dtype=fw.float32,
                  device=device)
    gh, = fw.autograd.grad((yh * w).sum(), logits)
    gs, = fw.autograd.grad((ys * w).sum(), logits)
    assert_close(gh, to_np(gs), rtol=1e-5, atol=1e-6)
    # gumbel noise along dim 0
    y0 = F.gumbel_softmax(fw.zeros(3, 5, device=device), dim=0)
    assert_close(y0.sum(0), np.ones(5), rtol=1e-5, atol=1e-5)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(fw.zeros(2, 3, device=device), eps=1e-5)
