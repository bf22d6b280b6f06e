"""framework/kernels/sort.py (Triton) against the CPU backend on the same data: sorts of
rows shorter and longer than one program (merge passes, with SORT_BLOCK made small so the
interpreter stays fast), NaNs, -0.0, duplicates and stability, strided layouts, every dtype
family, empty inputs; scans, unique, counting and searchsorted."""
import numpy as np
import pytest

import framework as fw
import framework.kernels.sort as S

pytestmark = [pytest.mark.skipif(not fw.cuda.is_available(),
                                 reason="needs cuda or TRITON_INTERPRET=1"),
              # logcumsumexp's -inf - -inf in lanes it then replaces
              pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")]

DTYPES = [fw.bool, fw.uint8, fw.int8, fw.int32, fw.int64, fw.float16, fw.bfloat16, fw.float32,
          fw.float64]


def arr(t):
    return np.array(t.detach().cpu()._host_array())


def same(a, b, exact=True):
    """Equal results (tensors or tuples of tensors), NaN == NaN, -0.0 sign included."""
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y, exact)
        return
    if not isinstance(a, fw.Tensor):
        assert a == b
        return
    assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape)
    x, y = arr(a), arr(b)
    if exact:
        np.testing.assert_array_equal(x, y)
        if x.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(x), np.signbit(y))
    else:
        tol = 1e-5 if a.dtype.itemsize > 2 else 1e-2  # 16-bit: one rounding apart
        np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=tol,
                                   atol=tol)


def data(shape, dtype, seed=0, nan=True, lo=-4, hi=5):
    """Many duplicates, NaNs and signed zeros (floats)."""
    rng = np.random.default_rng(seed)
    if dtype is fw.bool:
        return rng.random(shape) > 0.5
    if dtype is fw.uint8:
        return rng.integers(0, 9, shape).astype(np.uint8)
    if not dtype.is_floating_point:
        return rng.integers(lo, hi, shape)
    a = rng.integers(lo, hi, shape) + rng.choice([0.0, 0.5], shape)
    a[rng.random(shape) < 0.1] = -0.0
    if nan:
        a[rng.random(shape) < 0.1] = np.nan
    return a


def pair(a, dtype, layout="contig"):
    """The same values as a cpu tensor and a cuda tensor, in the given layout."""
    out = []
    for dev in ("cpu", "cuda"):
        if layout == "transposed" and a.ndim >= 2:
            t = fw.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1)), dtype=dtype,
                          device=dev).transpose(0, -1)
        elif layout == "step" and a.ndim >= 1:
            big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
            big[..., ::2] = a
            t = fw.tensor(big, dtype=dtype, device=dev)[..., ::2]
        else:
            t = fw.tensor(a, dtype=dtype, device=dev)
        out.append(t)
    return out


@pytest.fixture
def small_block(monkeypatch):
    """Rows longer than 16 elements take the chunk-sort + merge path."""
    monkeypatch.setattr(S, "SORT_BLOCK", 16)
    monkeypatch.setattr(S, "BLOCK", 32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contig", "transposed", "step"])
def test_sort_short_rows(dtype, layout):
    c, g = pair(data((3, 13), dtype, 1), dtype, layout)
    for dim in (0, 1):
        for desc in (False, True):
            same(g.sort(dim=dim, descending=desc, stable=True),
                 c.sort(dim=dim, descending=desc, stable=True))


@pytest.mark.parametrize("dtype", [fw.bool, fw.int32, fw.int64, fw.float16, fw.float32,
                                   fw.float64])
@pytest.mark.parametrize("n", [17, 50, 64, 100])
def test_sort_long_rows_merge(small_block, dtype, n):
    c, g = pair(data((2, n), dtype, n), dtype, "step")
    for desc in (False, True):
        same(g.sort(dim=1, descending=desc, stable=True),
             c.sort(dim=1, descending=desc, stable=True))
    same(g.sort(dim=0), c.sort(dim=0))


def test_sort_long_row_default_block():
    """A row of 2500 float32 (three 1024-element chunks, two merge passes)."""
    c, g = pair(data((2500,), fw.float32, 7, lo=-50, hi=50), fw.float32)
    same(g.sort(), c.sort())
    same(g.sort(descending=True), c.sort(descending=True))


def test_sort_zero_d_and_empty():
    for a, dt in [(np.array(2.5), fw.float32), (np.zeros((0, 3)), fw.float32),
                  (np.zeros((3, 0), np.int64), fw.int64)]:
        c, g = pair(a, dt)
        for d in range(max(a.ndim, 1)):
            same(g.sort(dim=d), c.sort(dim=d))


@pytest.mark.parametrize("dtype", [fw.int8, fw.int64, fw.float16, fw.bfloat16, fw.float64])
def test_topk(small_block, dtype):
    c, g = pair(data((3, 40), dtype, 3), dtype, "transposed")
    for k in (0, 1, 5, 16, 17, 40):
        for largest in (True, False):
            same(g.topk(k, 1, largest=largest), c.topk(k, 1, largest=largest))
    same(g.topk(2, 0), c.topk(2, 0))


@pytest.mark.parametrize("dtype", [fw.int32, fw.float32, fw.float16])
def test_kth_median_mode(small_block, dtype):
    a = data((4, 37), dtype, 5)
    if dtype.is_floating_point:
        a[1] = np.nan          # all NaN
        a[2, 3:] = np.nan      # mostly NaN
    c, g = pair(a, dtype, "step")
    for k in (1, 2, 18, 37):
        same(g.kthvalue(k, 1), c.kthvalue(k, 1))
    same(g.median(1), c.median(1))
    same(g.nanmedian(1), c.nanmedian(1))
    same(g.mode(1), c.mode(1))
    same(g.mode(0, keepdim=True), c.mode(0, keepdim=True))
    same(g.median(), c.median())
    same(g.nanmedian(), c.nanmedian())


def test_mode_ties_and_bool(small_block):
    a = np.array([[3, 1, 1, 3, 2, 2, 5, 5, 5, 0, 0, 0] * 3])
    c, g = pair(a, fw.int64)
    same(g.mode(1), c.mode(1))
    c, g = pair(data((5, 21), fw.bool, 2), fw.bool)
    same(g.mode(1), c.mode(1))


def test_mode_counts_each_nan_once(small_block):
    nan = float("nan")
    a = np.array([[1.0, nan, 1.0, nan, nan] * 7, [nan] * 35, [nan, 2.0] * 17 + [3.0]])
    c, g = pair(a, fw.float32)
    same(g.mode(1), c.mode(1))
    assert c.mode(1).values.tolist()[0] == 1.0 and c.mode(1).indices.tolist()[1] == 0
    b = np.array([[2**63 - 1, 2**63 - 1, 0]])   # int64's largest key is not NaN's
    c, g = pair(b, fw.int64)
    same(g.mode(1), c.mode(1))
    assert c.mode(1).values.tolist() == [2**63 - 1]


@pytest.mark.parametrize("dtype", [fw.bool, fw.int8, fw.int64, fw.float16, fw.bfloat16,
                                   fw.float32, fw.float64])
def test_scans(dtype):
    a = data((2, 11, 3), dtype, 4, nan=False, lo=-2, hi=3)
    c, g = pair(a, dtype, "transposed")
    exact = not dtype.is_floating_point
    for dim in (0, 1, 2, -1):
        same(g.cumsum(dim), c.cumsum(dim), exact)
        same(g.cummax(dim), c.cummax(dim))
        same(g.cummin(dim), c.cummin(dim))
        if dtype is not fw.bool:
            same(fw.cumprod(g.clamp(-1, 1) if dtype.is_floating_point else g, dim),
                 fw.cumprod(c.clamp(-1, 1) if dtype.is_floating_point else c, dim), exact)
        if dtype.is_floating_point:
            same(g.logcumsumexp(dim), c.logcumsumexp(dim), False)


def test_scans_long_and_special():
    a = np.random.default_rng(0).standard_normal(2100)
    a[[5, 900]] = [np.nan, np.inf]
    c, g = pair(a, fw.float64)
    same(g.cumsum(0), c.cumsum(0), False)
    same(g.cummax(0), c.cummax(0))
    same(g.cummin(0), c.cummin(0))
    same(g.logcumsumexp(0), c.logcumsumexp(0), False)
    b = np.array([-np.inf, -np.inf, 1.0, np.inf, np.inf, 2.0, np.nan, 3.0])
    c, g = pair(b, fw.float32)
    same(g.logcumsumexp(0), c.logcumsumexp(0), False)
    same(g.cummax(0), c.cummax(0))
    same(g.cummin(0), c.cummin(0))
    c, g = pair(np.array([2**62, 2**62, 3]), fw.int64)
    same(g.cumsum(0), c.cumsum(0))  # wraps like the CPU
    same(fw.cumsum(g, 0, dtype=fw.int8), fw.cumsum(c, 0, dtype=fw.int8))


@pytest.mark.parametrize("dtype", [fw.bool, fw.uint8, fw.int32, fw.float16, fw.float32,
                                   fw.float64])
def test_unique(small_block, dtype):
    c, g = pair(data((6, 9), dtype, 8), dtype, "transposed")
    same(fw.unique(g, return_inverse=True, return_counts=True),
         fw.unique(c, return_inverse=True, return_counts=True))
    same(fw.unique(g), fw.unique(c))
    same(fw.unique_consecutive(g, return_inverse=True, return_counts=True),
         fw.unique_consecutive(c, return_inverse=True, return_counts=True))
    for dim in (0, 1):
        same(fw.unique(g, dim=dim, return_inverse=True, return_counts=True),
             fw.unique(c, dim=dim, return_inverse=True, return_counts=True))
        same(fw.unique_consecutive(g, dim=dim, return_counts=True),
             fw.unique_consecutive(c, dim=dim, return_counts=True))


def test_unique_rows_duplicates(small_block):
    a = np.array([[1, 2], [0, 5], [1, 2], [0, 5], [1, 1], [9, 9], [1, 2]] * 5)
    c, g = pair(a, fw.int64)
    same(fw.unique(g, dim=0, return_inverse=True, return_counts=True),
         fw.unique(c, dim=0, return_inverse=True, return_counts=True))
    c, g = pair(np.zeros((0,)), fw.float32)
    same(fw.unique(g, return_counts=True), fw.unique(c, return_counts=True))


@pytest.mark.parametrize("dtype", [fw.uint8, fw.int32, fw.int64])
def test_bincount(dtype):
    a = np.random.default_rng(1).integers(0, 20, 300)
    c, g = pair(a, dtype, "step")
    same(fw.bincount(g), fw.bincount(c))
    same(fw.bincount(g, minlength=30), fw.bincount(c, minlength=30))
    for wdt in (fw.float32, fw.float64, fw.float16, fw.int32):
        wc, wg = pair(np.random.default_rng(2).integers(-3, 4, 300), wdt)
        same(fw.bincount(g, wg), fw.bincount(c, wc), False)
    c, g = pair(np.zeros((0,), np.int64), fw.int64)
    same(fw.bincount(g), fw.bincount(c))
    with pytest.raises(RuntimeError, match="non-negative"):
        fw.bincount(fw.tensor([1, -1], device="cuda"))
    assert S.int_range(fw.tensor([3, -7, 12], dtype=fw.int8, device="cuda")) == (-7, 12)


@pytest.mark.parametrize("dtype", [fw.float16, fw.bfloat16, fw.float32, fw.float64])
def test_histc(dtype):
    a = data((7, 30), dtype, 3, nan=False)
    c, g = pair(a, dtype, "transposed")
    same(fw.histc(g, 7), fw.histc(c, 7))
    same(fw.histc(g, 5, -2, 2), fw.histc(c, 5, -2, 2))
    same(fw.histc(g[:0], 4), fw.histc(c[:0], 4))
    a[2, 3] = np.nan
    c, g = pair(a, dtype)
    assert np.isnan(S.float_range(g)).all()
    same(fw.histc(g, 6, -1, 3), fw.histc(c, 6, -1, 3))


@pytest.mark.parametrize("dtype", [fw.int32, fw.float16, fw.float32, fw.float64])
def test_searchsorted(dtype):
    b = np.sort(data((3, 17), dtype, 2, nan=False), axis=1)
    v = data((3, 9), dtype, 3)
    bc, bg = pair(b, dtype, "step")
    vc, vg = pair(v, dtype, "transposed")
    for right in (False, True):
        same(fw.searchsorted(bg, vg, right=right), fw.searchsorted(bc, vc, right=right))
        same(fw.searchsorted(bg[0], vg, right=right, out_int32=True),
             fw.searchsorted(bc[0], vc, right=right, out_int32=True))
        same(fw.bucketize(vg, bg[1], right=right), fw.bucketize(vc, bc[1], right=right))
    perm = np.random.default_rng(0).permutation(17)
    sc, sg = pair(np.tile(perm, (3, 1)), fw.int64)
    ub = np.take_along_axis(b, np.argsort(np.tile(perm, (3, 1)), axis=1), 1)
    ubc, ubg = pair(ub, dtype)
    same(fw.searchsorted(ubg, vg, sorter=sg), fw.searchsorted(ubc, vc, sorter=sc))
    same(fw.searchsorted(bg[0], 2), fw.searchsorted(bc[0], 2))
    same(fw.searchsorted(bg[:, :0], vg), fw.searchsorted(bc[:, :0], vc))


def test_dtype_errors():
    with pytest.raises(NotImplementedError, match="logcumsumexp_out_cuda"):
        fw.logcumsumexp(fw.tensor([1, 2], device="cuda"), 0)
    with pytest.raises(NotImplementedError, match="kthvalue_cuda"):
        fw.kthvalue(fw.tensor([True], device="cuda"), 1)
