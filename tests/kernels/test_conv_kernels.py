"""The conv family's kernels (native/conv.cpp and framework/kernels/conv.py) through the
internal ops _im2col / _col2im (columns laid out (C*KK, N, *grid)): against a NumPy float64
reference on cpu and cuda, for 1, 2 and 3 spatial dims, stride, padding, dilation, a grid
wider than the input (asymmetric padding), strided inputs and columns, and every dtype they
take; col2im as im2col's adjoint; the cuda launchers mirror the CPU's."""
import inspect
import itertools

import numpy as np
import pytest

import framework as fw
from tests.helpers import assert_close, to_np

DTYPES = [fw.uint8, fw.int32, fw.int64, fw.float16, fw.bfloat16, fw.float32, fw.float64]


def ref_im2col(x, k, d, p, s, grid=None):
    """(N, C*KK, *grid) columns of x (N, C, *spatial), in float64 (PyTorch's unfold layout;
    the internal op returns it with the first two dims swapped)."""
    x = np.asarray(x, np.float64)
    n, c, sp = x.shape[0], x.shape[1], x.shape[2:]
    if grid is None:
        grid = [(i + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for i, kk, dd, pp, ss in
                zip(sp, k, d, p, s)]
    # zero-pad enough on both sides for every read
    right = [max(0, (g - 1) * ss - pp + (kk - 1) * dd - (i - 1)) for g, ss, pp, kk, dd, i in
             zip(grid, s, p, k, d, sp)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pp, r) for pp, r in zip(p, right)])
    rows = []
    for off in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(o * dd, o * dd + (g - 1) * ss + 1, ss) for o, dd, g, ss in
                   zip(off, d, grid, s))
        rows.append(xp[(slice(None), slice(None)) + sl])
    cols = np.stack(rows, axis=2)       # (N, C, KK, *grid)
    return cols.reshape((n, c * len(rows)) + tuple(grid))


def ref_col2im(cols, size, k, d, p, s):
    """The adjoint of ref_im2col: sums each column entry onto the element it was read from."""
    cols = np.asarray(cols, np.float64)
    n, ck, grid = cols.shape[0], cols.shape[1], cols.shape[2:]
    kk = int(np.prod(k))
    c = ck // kk
    out = np.zeros((n, c) + tuple(size))
    cols = cols.reshape((n, c, kk) + tuple(grid))
    for r, off in enumerate(itertools.product(*[range(x) for x in k])):
        for g in itertools.product(*[range(x) for x in grid]):
            idx = [gi * ss - pp + o * dd for gi, ss, pp, o, dd in zip(g, s, p, off, d)]
            if all(0 <= i < m for i, m in zip(idx, size)):
                out[(slice(None), slice(None)) + tuple(idx)] += cols[(slice(None), slice(None),
                                                                      r) + g]
    return out


CASES = [
    # spatial, kernel, dilation, padding, stride
    ((9,), (3,), (1,), (0,), (1,)),
    ((10,), (2,), (3,), (2,), (2,)),
    ((5, 7), (2, 3), (1, 2), (1, 0), (2, 1)),
    ((6, 5), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((4, 5, 3), (2, 2, 3), (1, 1, 1), (1, 0, 1), (1, 2, 1)),
    ((3, 4, 5), (1, 2, 2), (1, 2, 1), (0, 1, 2), (2, 1, 3)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0])}d-{c}")
def test_im2col_col2im(device, case):
    sp, k, d, p, s = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + sp)
    cols = fw._im2col(fw.tensor(x, device=device), k, d, p, s)
    ref = ref_im2col(x, k, d, p, s)
    assert_close(cols, ref.swapaxes(0, 1))
    c = rng.standard_normal(ref.shape)
    back = fw._col2im(fw.tensor(c.swapaxes(0, 1), device=device), sp, k, d, p, s)
    assert_close(back, ref_col2im(c, sp, k, d, p, s), rtol=1e-5, atol=1e-5)
    # columns given as a strided view (batch-major memory): read through their strides
    tc = fw.tensor(c, device=device).transpose(0, 1)
    assert not tc.is_contiguous()
    assert_close(fw._col2im(tc, sp, k, d, p, s), ref_col2im(c, sp, k, d, p, s), rtol=1e-5,
                 atol=1e-5)


def test_adjoint(device):
    """<im2col(x), c> == <x, col2im(c)> for a geometry whose blocks overlap and pad."""
    sp, k, d, p, s = (7, 6), (3, 2), (2, 1), (2, 1), (1, 2)
    rng = np.random.default_rng(1)
    x = fw.tensor(rng.standard_normal((1, 2) + sp), device=device)
    cols = fw._im2col(x, k, d, p, s)
    c = fw.tensor(rng.standard_normal(tuple(cols.shape)), device=device)
    lhs = float((cols * c).sum())
    rhs = float((x * fw._col2im(c, sp, k, d, p, s)).sum())
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dtypes(device, dtype):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, (2, 3, 5, 6))
    t = fw.tensor(x, dtype=dtype, device=device)
    k, d, p, s = (2, 3), (1, 1), (1, 1), (2, 1)
    cols = fw._im2col(t, k, d, p, s)
    assert cols.dtype is dtype
    ref = ref_im2col(x, k, d, p, s)
    np.testing.assert_array_equal(to_np(cols).astype(np.float64), ref.swapaxes(0, 1))
    # small integers: sums are exact in every dtype
    back = fw._col2im(cols, (5, 6), k, d, p, s)
    assert back.dtype is dtype
    np.testing.assert_array_equal(to_np(back).astype(np.float64),
                                  ref_col2im(ref, (5, 6), k, d, p, s))


def test_bool_refused(device):
    t = fw.ones((1, 1, 3, 3), dtype=fw.bool, device=device)
    msg = "_out_(cpu|cuda)\" not implemented for 'Bool'"
    with pytest.raises(NotImplementedError, match="im2col" + msg):
        fw._im2col(t, (2, 2), (1, 1), (0, 0), (1, 1))
    with pytest.raises(NotImplementedError, match="col2im" + msg):
        fw._col2im(fw.ones((4, 1, 2, 2), dtype=fw.bool, device=device), (3, 3), (2, 2), (1, 1),
                   (0, 0), (1, 1))


def test_strided_input(device):
    """A transposed, sliced input is read through its strides (no copy needed)."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((3, 2, 9, 8))
    x = base[:, :, 1::2, :].transpose(1, 0, 2, 3)
    t = fw.tensor(base, device=device)[:, :, 1::2, :].permute(1, 0, 2, 3)
    assert not t.is_contiguous()
    k, d, p, s = (2, 3), (2, 1), (1, 2), (1, 2)
    assert_close(fw._im2col(t, k, d, p, s), ref_im2col(x, k, d, p, s).swapaxes(0, 1))


def test_grid_size_override(device):
    """A grid larger than the input needs reads past the right edge: zeros (asymmetric
    padding); col2im drops those entries."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 5, 4))
    k, d, p, s, grid = (4, 2), (1, 1), (1, 0), (1, 1), (5, 4)
    cols = fw._im2col(fw.tensor(x, device=device), k, d, p, s, grid)
    ref = ref_im2col(x, k, d, p, s, grid)
    assert tuple(cols.shape) == (16, 1, 5, 4) and ref.shape == (1, 16, 5, 4)
    assert_close(cols, ref.swapaxes(0, 1))
    back = fw._col2im(cols, (5, 4), k, d, p, s)
    assert_close(back, ref_col2im(ref, (5, 4), k, d, p, s), rtol=1e-5, atol=1e-5)


def test_empty(device):
    x = fw.zeros((0, 3, 4, 4), device=device)
    assert tuple(fw._im2col(x, (2, 2), (1, 1), (0, 0), (1, 1)).shape) == (12, 0, 3, 3)
    c = fw.zeros((12, 2, 0, 3), device=device)
    out = fw._col2im(c, (4, 4), (2, 2), (1, 1), (0, 0), (1, 1))
    assert tuple(out.shape) == (2, 3, 4, 4)
    np.testing.assert_array_equal(out.cpu().numpy(), 0)


def test_cuda_backend_has_every_cpu_launcher():
    """As tests/test_op_table.py checks for the older families: same names, same
    parameters."""
    import framework._cpu.conv as cpu
    import framework.kernels.conv as cuda

    def launchers(mod):
        return {k: v for k, v in vars(mod).items() if not k.startswith("_")
                and inspect.isfunction(v) and v.__module__ == mod.__name__}
    a, b = launchers(cpu), launchers(cuda)
    assert set(a) == {"im2col", "col2im"}
    assert not set(a) - set(b)
    for k, fn in a.items():
        assert list(inspect.signature(fn).parameters) == \
            list(inspect.signature(b[k]).parameters)
