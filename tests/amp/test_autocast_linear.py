"""linear under autocast as one GEMM (framework._autocast_linear): the casts done by the
GEMM as it loads its operands give the same bits as autocast's separate casts, forward and
backward, on every layout the fused path takes; and it launches one kernel where the casts
took three more."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from framework.kernels import linalg as K

from tests.helpers import launched_kernels, to_np


def _unfused(x, w, b, dtype):
    """linear on operands cast as autocast casts them, outside autocast."""
    return F.linear(x.to(dtype), w.to(dtype), None if b is None else b.to(dtype))


def _leaves(rng, device, x_shape, n, bias, x_dtype=fw.float32, transposed=False):
    k = x_shape[-1]
    x = rng.standard_normal(x_shape)
    if transposed:   # a non-contiguous input: the last two dims swapped in memory
        x = np.swapaxes(rng.standard_normal(x_shape[:-2] + (k, x_shape[-2])), -1, -2)
    vals = [x, rng.standard_normal((n, k)), rng.standard_normal(n) if bias else None]
    dts = [x_dtype, fw.float32, fw.float32]
    out = []
    for v, dt in zip(vals, dts):
        if v is None:
            out.append(None)
            continue
        t = fw.tensor(np.ascontiguousarray(np.swapaxes(v, -1, -2)) if v is x and transposed
                      else v, dtype=dt, device=device)
        out.append(t.transpose(-1, -2) if v is x and transposed else t)
    return out


@pytest.mark.parametrize("dtype", [fw.bfloat16, fw.float16])
@pytest.mark.parametrize("x_shape,n,bias,x_dtype,transposed", [
    ((7, 40), 17, True, fw.float32, False),
    ((2, 5, 33), 16, False, fw.float32, False),
    ((3, 9, 20), 12, True, fw.float32, True),      # strided input
    ((4, 24), 8, True, "low", False),               # the input already of the low dtype
    ((1, 1), 1, True, fw.float32, False),
])
def test_same_bits_as_the_casts(device, dtype, x_shape, n, bias, x_dtype, transposed):
    rng = np.random.default_rng(3)
    x_dtype = dtype if x_dtype == "low" else x_dtype
    leaves = _leaves(rng, device, x_shape, n, bias, x_dtype, transposed)
    fused = [None if t is None else t.detach().requires_grad_() for t in leaves]
    plain = [None if t is None else t.detach().requires_grad_() for t in leaves]
    with fw.autocast(device_type=fw.device(device).type, dtype=dtype):
        y = F.linear(*fused)
    assert y.grad_fn.name() == "AutocastLinearBackward0"
    want = _unfused(*plain, dtype)
    assert y.dtype is dtype and y.shape == want.shape
    np.testing.assert_array_equal(to_np(y), to_np(want))
    g = fw.tensor(rng.standard_normal(tuple(y.shape)), dtype=dtype, device=device)
    y.backward(g)
    want.backward(g)
    for a, b in zip(fused, plain):
        if a is not None:
            assert a.grad.dtype is b.grad.dtype is a.dtype
            np.testing.assert_array_equal(to_np(a.grad), to_np(b.grad))


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True)])
def test_only_the_gradients_asked_for(device, needs):
    rng = np.random.default_rng(4)
    leaves = _leaves(rng, device, (6, 10), 5, True)
    for t, r in zip(leaves, needs):
        t.requires_grad_(r)
    with fw.autocast(device_type=fw.device(device).type, dtype=fw.bfloat16):
        y = F.linear(*leaves)
    y.float().sum().backward()
    assert [t.grad is not None for t in leaves] == list(needs)


@pytest.mark.parametrize("dtype", [fw.bfloat16, fw.float16])
def test_double_backward_as_the_casts(device, dtype):
    # a gradient penalty under autocast: the backward records (create_graph), through the
    # unfused ops' formulas: their first derivatives bit for bit, the second within an ulp
    # or two of the low dtype (the unfused graph rounds its products in another order)
    rng = np.random.default_rng(6)
    leaves = _leaves(rng, device, (2, 5, 12), 7, True)
    fused = [t.detach().requires_grad_() for t in leaves]
    plain = [t.detach().requires_grad_() for t in leaves]
    with fw.autocast(device_type=fw.device(device).type, dtype=dtype):
        y = F.linear(*fused)
        gx, gw = fw.autograd.grad(y.float().pow(2).sum(), fused[:2], create_graph=True)
    assert y.grad_fn.name() == "AutocastLinearBackward0"
    want = _unfused(*plain, dtype)
    wx, ww = fw.autograd.grad(want.float().pow(2).sum(), plain[:2], create_graph=True)
    np.testing.assert_array_equal(to_np(gx), to_np(wx))
    np.testing.assert_array_equal(to_np(gw), to_np(ww))
    (gx.pow(2).sum() + gw.pow(2).sum()).backward()
    (wx.pow(2).sum() + ww.pow(2).sum()).backward()
    for a, b in zip(fused, plain):
        assert a.grad.dtype is b.grad.dtype is a.dtype
        want = to_np(b.grad)
        np.testing.assert_allclose(to_np(a.grad), want, rtol=2 ** -7,
                                   atol=2 ** -7 * np.abs(want).max())


@pytest.mark.parametrize("dtype", [fw.bfloat16, fw.float16])
@pytest.mark.parametrize("shape,dims", [((2048, 40), [0]), ((3, 700, 5), [0, 1]), ((9, 3), [0])])
def test_bias_gradient_sum_as_sum_then_cast(device, dtype, shape, dims):
    # the bias gradient's one reduction (rounded to dtype, stored as float32) against the
    # unfused sum and cast, bit for bit; 2048 and 2100 rows take the split (two-pass) path
    from framework._ops.reduction import sum_rounded
    x = fw.tensor(np.random.default_rng(7).standard_normal(shape) * 3, dtype=dtype,
                  device=device)
    got = sum_rounded(x, dims, fw.float32)
    want = x.sum(dims).to(fw.float32)
    assert got.dtype is fw.float32 and got.shape == want.shape
    np.testing.assert_array_equal(to_np(got), to_np(want))
    # and not merely float32's own sum: the rounding to dtype is there
    assert not np.array_equal(to_np(got), to_np(x.float().sum(dims)))


def test_split_k_backward(device, monkeypatch):
    """The weight's gradient sums over many rows: the GEMM splits K (the rows) and the
    split-K reduction rounds to the product's dtype as the tile epilogue does."""
    monkeypatch.setattr(K, "_SPLIT_MIN_K", 64)
    monkeypatch.setattr(K, "_SPLIT_CHUNK", 32)
    rng = np.random.default_rng(5)
    leaves = _leaves(rng, device, (3, 70, 8), 6, True)
    fused = [t.detach().requires_grad_() for t in leaves]
    plain = [t.detach().requires_grad_() for t in leaves]
    with fw.autocast(device_type=fw.device(device).type, dtype=fw.bfloat16):
        y = F.linear(*fused)
    want = _unfused(*plain, fw.bfloat16)
    g = fw.tensor(rng.standard_normal(tuple(y.shape)), dtype=fw.bfloat16, device=device)
    y.backward(g)
    want.backward(g)
    for a, b in zip(fused, plain):
        np.testing.assert_array_equal(to_np(a.grad), to_np(b.grad))


def test_unfused_where_the_fused_path_does_not_apply(device):
    rng = np.random.default_rng(6)
    x = fw.tensor(rng.standard_normal(5), dtype=fw.float32, device=device, requires_grad=True)
    w = fw.tensor(rng.standard_normal((3, 5)), dtype=fw.float32, device=device)
    x64 = fw.tensor(rng.standard_normal((2, 5)), dtype=fw.float64, device=device,
                    requires_grad=True)
    with fw.autocast(device_type=fw.device(device).type, dtype=fw.bfloat16):
        y = F.linear(x, w)                # a 1-d input: the casts and linear
        y64 = F.linear(x64, w.double())   # float64 is not autocast (PyTorch's rule)
    assert y.dtype is fw.bfloat16 and y.grad_fn.name() != "AutocastLinearBackward0"
    np.testing.assert_array_equal(to_np(y), to_np(_unfused(x, w, None, fw.bfloat16)))
    assert y64.dtype is fw.float64


def test_op_refuses_other_ranks(device):
    with pytest.raises(RuntimeError, match="expected an input of 2 or more dims"):
        fw._autocast_linear(fw.ones(3, device=device), fw.ones(2, 3, device=device), None,
                            fw.bfloat16)


def test_shape_errors_as_linear(device):
    x = fw.ones(4, 3, device=device)
    w = fw.ones(2, 5, device=device)
    with fw.autocast(device_type=fw.device(device).type, dtype=fw.bfloat16):
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                               r"\(4x3 and 5x2\)"):
            F.linear(x, w)


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda (or its simulator)")
def test_one_launch_forward(monkeypatch):
    """On cuda the fused linear launches the GEMM alone (the casts took three more)."""
    x = fw.ones(4, 8, device="cuda", requires_grad=True)
    w = fw.ones(6, 8, device="cuda", requires_grad=True)
    b = fw.ones(6, device="cuda", requires_grad=True)
    with fw.autocast(device_type="cuda", dtype=fw.bfloat16):
        F.linear(x, w, b)      # compiles and tunes first, where kernels compile
        names = launched_kernels(monkeypatch)
        F.linear(x, w, b)
    assert names == ["_mm_kernel"]
