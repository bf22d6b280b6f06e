"""framework/kernels/index.py and shape.py (Triton) against the CPU launchers
(framework/_cpu/index.py, shape.py) on the same data: the same results (exactly, on
integer-valued data where the order of additions could differ), the same errors."""
import numpy as np
import pytest

import framework as fw
from framework import _cpu
from framework._ops import alloc
from helpers import ALL_DTYPES, to_np

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")

if fw.cuda.is_available():
    from framework import kernels as _gpu
else:
    _gpu = None
BACKENDS = {"cpu": _cpu, "cuda": _gpu}
I64 = fw.int64


def both(arr, dtype=None):
    """The same values on cpu and on cuda."""
    return {d: fw.tensor(arr, dtype=dtype, device=d) for d in ("cpu", "cuda")}


def empty(shape, dtype):
    return {d: alloc.empty(tuple(shape), dtype, alloc.resolve_device(d)) for d in BACKENDS}


def values(dtype, shape, seed):
    """Small integer-valued data (exact sums in every dtype)."""
    rng = np.random.default_rng(seed)
    if dtype is fw.bool:
        return rng.random(shape) > 0.5
    lo = 0 if dtype is fw.uint8 else -3
    return rng.integers(lo, 4, shape)


def same(ts):
    a, b = to_np(ts["cpu"]), to_np(ts["cuda"])
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def same_error(call):
    """call(backend, device) raises the same error type and message on both devices."""
    errors = {}
    for d, be in BACKENDS.items():
        with pytest.raises((IndexError, RuntimeError)) as info:
            call(be, d)
        errors[d] = (info.type, str(info.value))
    assert errors["cpu"] == errors["cuda"]


# ---- index_offsets / linear_offsets / take_offsets ----------------------------------------

def test_index_offsets_broadcast_negative():
    i0 = both(np.array([[0], [-1], [2]]), I64)     # (3, 1)
    i1 = both(np.array([-4, 3, 1, 0]), I64)         # (4,)
    out = empty((3, 4), I64)
    for d, be in BACKENDS.items():
        be.index.index_offsets(out[d], (3, 4), [(i0[d], (1, 0)), (i1[d], (0, 1))], [3, 4],
                               [20, 2], [0, 1])
    same(out)
    assert to_np(out["cuda"])[1, 0] == 2 * 20 + 0 * 2


@pytest.mark.parametrize("style,prefix", [(0, ""), (1, ""), (3, "index_copy_(): "), (4, "")])
def test_index_offsets_errors(style, prefix):
    i0 = both(np.array([0, 1, 1, 2]), I64)
    i1 = both(np.array([0, 5, -9, 1]), I64)

    def call(be, d):
        out = alloc.empty((4,), I64, alloc.resolve_device(d))
        be.index.index_offsets(out, (4,), [(i0[d], (1,)), (i1[d], (1,))], [3, 4], [4, 1],
                               [0, 2], True, style, prefix)
    same_error(call)


def test_index_offsets_no_negative_and_size_zero():
    idx = both(np.array([1, -1]), I64)
    same_error(lambda be, d: be.index.index_offsets(
        alloc.empty((2,), I64, alloc.resolve_device(d)), (2,), [(idx[d], (1,))], [3], [1],
        [0], False))
    same_error(lambda be, d: be.index.index_offsets(
        alloc.empty((2,), I64, alloc.resolve_device(d)), (2,), [(idx[d], (1,))], [0], [1],
        [0]))


def test_linear_and_take_offsets():
    out = empty((2, 3, 4), I64)
    for d, be in BACKENDS.items():
        be.index.linear_offsets(out[d], (2, 3, 4), (-1, 40, 3))
    same(out)
    base = {d: fw.zeros(5, 6, device=d)[1:, ::2] for d in BACKENDS}     # (4, 3) strided
    idx = both(np.array([[0, 11, -1], [-12, 5, 7]]), I64)
    off = empty((2, 3), I64)
    for d, be in BACKENDS.items():
        be.index.take_offsets(off[d], idx[d].t(), base[d])
    same(off)
    bad = both(np.array([3, 12]), I64)
    same_error(lambda be, d: be.index.take_offsets(
        alloc.empty((2,), I64, alloc.resolve_device(d)), bad[d], base[d]))


# ---- index_loop ------------------------------------------------------------------------

def _loop_case(dtype, mode, alpha=1, y_step=None):
    """x (5, 6) strided, indexed along dim 0 by 7 rows with duplicates; y (7, 6)."""
    rows = np.array([4, 0, 4, 0, 2, 4, 1])
    xs = {d: fw.tensor(values(dtype, (5, 12), 1), dtype=dtype, device=d)[:, ::2]
          for d in BACKENDS}
    ys = both(values(dtype, (7, 6), 2), dtype)
    offs = both(rows * 12, I64)     # x's stride along dim 0
    yoffs = both(np.arange(7) * 6, I64)
    for d, be in BACKENDS.items():
        y_off = yoffs[d] if y_step is None else y_step
        be.index.index_loop(mode, xs[d], (2,), offs[d], ys[d], (1,), y_off, (6,), alpha)
    return xs, ys


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_index_loop_modes(dtype):
    xs, ys = _loop_case(dtype, _gpu.index.GATHER, y_step=6)
    same(ys)
    xs, ys = _loop_case(dtype, _gpu.index.PUT)
    # duplicate rows: which write wins is unspecified on cuda; the others must match
    a, b = to_np(xs["cpu"]), to_np(xs["cuda"])
    np.testing.assert_array_equal(a[[1, 2, 3]], b[[1, 2, 3]])
    xs, ys = _loop_case(dtype, _gpu.index.ACCUMULATE, y_step=6)
    same(xs)


@pytest.mark.parametrize("dtype,alpha", [(fw.float32, 2.5), (fw.float64, -0.5),
                                         (fw.float16, 3.0), (fw.int64, -2), (fw.int32, 3),
                                         (fw.int8, 5)], ids=str)
def test_index_loop_accumulate_alpha(dtype, alpha):
    xs, _ = _loop_case(dtype, _gpu.index.ACCUMULATE, alpha=alpha, y_step=6)
    same(xs)


def test_index_loop_one_dim_put_accumulate_many_duplicates():
    # no outer dims: every position collides with many others
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 5, 500)
    for dtype in (fw.float32, fw.bfloat16, fw.int16):
        x = both(np.zeros(5), dtype)
        y = both(values(dtype, (500,), 4), dtype)
        offs = both(idx, I64)
        for d, be in BACKENDS.items():
            be.index.index_loop(_gpu.index.ACCUMULATE, x[d], (), offs[d], y[d], (), 1, ())
        same(x)


def test_index_loop_empty():
    x = both(np.zeros((3, 4)), fw.float32)
    y = both(np.zeros((0, 4)), fw.float32)
    off = both(np.zeros(0, np.int64), I64)
    for d, be in BACKENDS.items():
        be.index.index_loop(_gpu.index.ACCUMULATE, x[d], (1,), off[d], y[d], (1,), 4, (4,))
    same(x)


# ---- gather / scatter -------------------------------------------------------------------

IDX = np.array([[2, 0, 2, 2], [1, 2, 0, 0], [0, 0, 0, 1]])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_gather(dtype):
    src = {d: fw.tensor(values(dtype, (3, 8), 5), dtype=dtype, device=d)[:, ::2]
           for d in BACKENDS}          # (3, 4), strides (8, 2)
    for itype in (fw.int64, fw.int32):
        idx = both(IDX, itype)
        out = empty((3, 4), dtype)
        for d, be in BACKENDS.items():
            be.index.gather(out[d], (4, 1), src[d], (0, 2), idx[d], (4, 1), (3, 4), 0, 8, 3)
        same(out)


def test_gather_errors():
    src = both(np.zeros((3, 4)), fw.float32)
    idx = both(np.array([[0, 1, 3, 0]]), I64)
    same_error(lambda be, d: be.index.gather(
        alloc.empty((1, 4), fw.float32, alloc.resolve_device(d)), (4, 1), src[d], (0, 1),
        idx[d], (4, 1), (1, 4), 0, 4, 3))
    fidx = both(np.zeros((1, 4)), fw.float32)
    same_error(lambda be, d: be.index.gather(
        alloc.empty((1, 4), fw.float32, alloc.resolve_device(d)), (4, 1), src[d], (0, 1),
        fidx[d], (4, 1), (1, 4), 0, 4, 3))


@pytest.mark.parametrize("reduce", ["add", "multiply", "amax", "amin"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_scatter_reduce_duplicates(dtype, reduce):
    # scatter along dim 0 of a (3, 4) self: the caller puts the dim last (shape (4, 3))
    self_ = both(values(dtype, (3, 4), 6), dtype)
    src = both(values(dtype, (3, 4), 7), dtype)
    idx = both(IDX, fw.int64)
    for d, be in BACKENDS.items():
        be.index.scatter(reduce, self_[d], (1, 0), idx[d], (1, 4), src[d], (1, 4), (4, 3), 0,
                         4, 3)
    same(self_)


def test_scatter_assign_and_nan():
    # no duplicates per column: assignment is deterministic
    idx = both(np.array([[2, 0, 1], [0, 2, 0]]), I64)
    self_ = both(np.zeros((3, 3)), fw.float32)
    src = both(np.arange(6.0).reshape(2, 3), fw.float32)
    for d, be in BACKENDS.items():
        be.index.scatter(None, self_[d], (1, 0), idx[d], (1, 3), src[d], (1, 3), (3, 2), 0, 3,
                         3)
    same(self_)
    for reduce in ("amax", "amin"):
        self_ = both(np.array([1.0, np.nan, 3.0]), fw.float32)
        src = both(np.array([np.nan, 2.0, 5.0, 0.0]), fw.float32)
        idx = both(np.array([0, 1, 2, 2]), I64)
        for d, be in BACKENDS.items():
            be.index.scatter(reduce, self_[d], (0,), idx[d], (1,), src[d], (1,), (4,), 0, 1, 3)
        same(self_)


def test_scatter_errors_and_divide_count():
    self_ = both(np.zeros((2, 3)), fw.float32)
    idx = both(np.array([[0, 2, -1]]), I64)
    src = both(np.ones((1, 3)), fw.float32)
    same_error(lambda be, d: be.index.scatter("add", self_[d], (3, 0), idx[d], (3, 1), src[d],
                                              (3, 1), (1, 3), 1, 1, 3))
    for dtype in (fw.float16, fw.float64, fw.int32, fw.int8):
        x = both(np.array([[-7, 7, 5], [9, -1, 0]]), dtype)
        cnt = both(np.array([2, 0, 3]), I64)
        for d, be in BACKENDS.items():
            be.index.divide_count(x[d], cnt[d], (0, 1))
        same(x)


@pytest.mark.parametrize("itype", [fw.int32, fw.int64], ids=str)
@pytest.mark.parametrize("reduce", [None, "add", "amax"])
def test_scatter_bad_index_writes_nothing(reduce, itype):
    # every index is checked before the first write, on both backends: the bad one is last
    n = 3000
    idx = np.arange(n).reshape(1, n) % 7
    idx[0, -1] = 7
    self_ = both(np.zeros((7, 1)), fw.float32)
    index = both(idx, itype)
    src = both(np.ones((1, n)), fw.float32)
    same_error(lambda be, d: be.index.scatter(reduce, self_[d], (1, 0), index[d], (n, 1),
                                              src[d], (n, 1), (1, n), 0, 1, 7))
    for d in BACKENDS:
        assert to_np(self_[d]).sum() == 0


# ---- compaction ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [fw.bool, fw.int8, fw.float16, fw.bfloat16, fw.float64],
                         ids=str)
def test_nonzero_strided(dtype):
    arr = values(dtype, (3, 4, 10), 8)
    x = {d: fw.tensor(arr, dtype=dtype, device=d)[:, 1:, ::3].transpose(0, 2)
         for d in BACKENDS}
    res = {}
    for d, be in BACKENDS.items():
        n = be.index.nonzero_count(x[d])
        res[d] = alloc.empty((n, 3), I64, alloc.resolve_device(d))
        assert be.index.nonzero(x[d], res[d]) == n
    same(res)


def test_nonzero_many_blocks_and_edges():
    arr = np.random.default_rng(9).random(40000) > 0.7     # several program blocks
    for a in (arr, np.zeros(0, bool), np.array(True), np.array(0.0), np.zeros((3, 0))):
        x = both(a)
        res = {}
        for d, be in BACKENDS.items():
            n = be.index.nonzero_count(x[d])
            res[d] = alloc.empty((n, x[d].dim()), I64, alloc.resolve_device(d))
            if n:
                be.index.nonzero(x[d], res[d])
        same(res)


def test_masked_select_and_count():
    arr = values(fw.float16, (4, 6), 10)
    mask_arr = np.random.default_rng(11).random((4, 1)) > 0.3
    x = {d: fw.tensor(arr, dtype=fw.float16, device=d).t() for d in BACKENDS}   # (6, 4)
    m = both(mask_arr.T)                     # (1, 4), broadcast over rows
    out = {}
    for d, be in BACKENDS.items():
        n = be.index.mask_count(m[d], (0, 1), (6, 4))
        out[d] = alloc.empty((n,), fw.float16, alloc.resolve_device(d))
        be.index.masked_select(out[d], x[d], x[d]._stride, m[d], (0, 1), (6, 4))
    same(out)


# ---- masked_fill, tril/triu ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_masked_fill(dtype):
    for value in (-2.75, 3, True):
        x = {d: fw.tensor(values(dtype, (3, 10), 12), dtype=dtype, device=d)[:, ::2]
             for d in BACKENDS}
        m = both(np.array([True, False, True, True, False]))
        for d, be in BACKENDS.items():
            be.index.masked_fill(x[d], m[d], (0, 1), value)
        same(x)


@pytest.mark.parametrize("dtype", [fw.bool, fw.int32, fw.bfloat16, fw.float64], ids=str)
def test_tri(dtype):
    src = {d: fw.tensor(values(dtype, (2, 5, 4), 13), dtype=dtype, device=d).transpose(1, 2)
           for d in BACKENDS}       # (2, 4, 5) strided
    for k in (-5, -1, 0, 2, 7):
        for upper in (False, True):
            out = empty((2, 4, 5), dtype)
            for d, be in BACKENDS.items():
                be.index.tri(out[d], src[d], k, upper)
            same(out)
    inplace = both(values(dtype, (3, 3), 14), dtype)
    for d, be in BACKENDS.items():
        be.index.tri(inplace[d], inplace[d], 0, True)
    same(inplace)


@pytest.mark.parametrize("row,col,offset", [(4, 3, 0), (3, 5, -1), (5, 2, 3), (1, 7, -4),
                                            (6, 6, 9), (40, 37, -3)])
def test_tri_indices(row, col, offset):
    for upper in (False, True):
        n = _cpu.index.tri_indices_count(row, col, offset, upper)
        assert _gpu.index.tri_indices_count(row, col, offset, upper) == n
        out = empty((2, n), I64)
        if n:
            for d, be in BACKENDS.items():
                be.index.tri_indices(out[d], row, col, offset, upper)
            same(out)


# ---- shape: repeat_interleave ------------------------------------------------------------

@pytest.mark.parametrize("ctype", [fw.int32, fw.int64], ids=str)
def test_repeat_interleave(ctype):
    counts = {d: fw.tensor([2, 0, 3, 1, 0, 0, 4, 0], dtype=ctype, device=d)[::2]
              for d in BACKENDS}        # strided: [2, 3, 0, 4]
    totals = {d: be.shape.repeat_interleave_total(counts[d]) for d, be in BACKENDS.items()}
    assert totals["cpu"] == totals["cuda"] == 9
    idx = empty((9,), ctype)
    for d, be in BACKENDS.items():
        be.shape.repeat_interleave_index(idx[d], counts[d])
    same(idx)
    src = {d: fw.tensor(values(fw.bfloat16, (2, 3, 4), 15), dtype=fw.bfloat16,
                        device=d).transpose(1, 2) for d in BACKENDS}   # (2, 4, 3) strided
    out = empty((2, 9, 3), fw.bfloat16)
    for d, be in BACKENDS.items():
        be.shape.repeat_interleave_copy(out[d], src[d], counts[d])
    same(out)
    neg = both(np.array([1, -1]), ctype)
    same_error(lambda be, d: be.shape.repeat_interleave_total(neg[d]))
    zero = both(np.zeros(0, np.int64), ctype)
    assert _gpu.shape.repeat_interleave_total(zero["cuda"]) == 0


def test_scans_over_many_blocks():
    # the one-program scans carry their running sum across chunks of 1024 block counts
    counts = np.random.default_rng(16).integers(0, 9, 3000)
    c = fw.tensor(counts, dtype=fw.int32, device="cuda")
    starts = alloc.empty((3001,), I64, c._storage.device)
    _gpu.index._scan_kernel[(1,)](c, starts, 3000, SB=_gpu.index._SCAN_BLOCK)
    np.testing.assert_array_equal(to_np(starts), np.concatenate([[0], np.cumsum(counts)]))
    reps = both(counts, I64)
    assert _gpu.shape.repeat_interleave_total(reps["cuda"]) == counts.sum()
    idx = empty((int(counts.sum()),), I64)
    for d, be in BACKENDS.items():
        be.shape.repeat_interleave_index(idx[d], reps[d])
    same(idx)


def test_int64_positions(monkeypatch):
    # what launches over 2**31 elements take: the same kernels with int64 positions
    monkeypatch.setattr(_gpu.index, "_idx64", lambda n, shape, strides: True)
    test_index_offsets_errors(0, "")
    test_linear_and_take_offsets()
    test_gather(fw.float16)
    test_nonzero_strided(fw.bool)
    test_masked_select_and_count()
    test_masked_fill(fw.int8)
    test_tri(fw.float64)
    test_scatter_errors_and_divide_count()
