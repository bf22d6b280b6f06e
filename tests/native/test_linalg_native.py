"""Low-level tests of framework._C.matmul: NumPy arrays passed by address and element strides,
checked against NumPy float64 (or exact integer) references."""
import numpy as np
import pytest

from framework import _C

CODES = {np.dtype(np.uint8): 1, np.dtype(np.int8): 2, np.dtype(np.int16): 3,
         np.dtype(np.int32): 4, np.dtype(np.int64): 5, np.dtype(np.float16): 6,
         np.dtype(np.float32): 8, np.dtype(np.float64): 9}
BF16 = 7


def estrides(x):
    return [s // x.itemsize for s in x.strides]


def call(out, a, b, beta=0.0, alpha=1.0, code=None):
    """out[..., M, N] = beta*out + alpha * a[..., M, K] @ b[..., K, N]; a and b must already be
    broadcast to out's batch shape (stride 0 allowed)."""
    batch = list(out.shape[:-2])
    m, n = out.shape[-2:]
    k = a.shape[-1]
    assert a.shape == tuple(batch) + (m, k) and b.shape == tuple(batch) + (k, n)
    code = CODES[out.dtype] if code is None else code
    _C.matmul(code, out.ctypes.data, estrides(out), a.ctypes.data, estrides(a),
              b.ctypes.data, estrides(b), batch, m, n, k, beta, alpha)
    return out


def mm(a, b, beta=0.0, alpha=1.0, out=None, code=None):
    """Broadcasts batch dims like np.matmul and calls the kernel."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a2 = np.broadcast_to(a, batch + a.shape[-2:])
    b2 = np.broadcast_to(b, batch + b.shape[-2:])
    if out is None:
        out = np.empty(batch + (a.shape[-2], b.shape[-1]), a.dtype)
    return call(out, a2, b2, beta, alpha, code)


def ref(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


TOL = {np.float32: 2e-5, np.float64: 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (3, 5, 4), (17, 1, 9), (1, 33, 7), (64, 65, 66),
                                   (5, 7, 1), (130, 70, 300)])
def test_contiguous(dtype, m, n, k):
    rng = np.random.default_rng(0)
    a, b = rand(rng, (m, k), dtype), rand(rng, (k, n), dtype)
    np.testing.assert_allclose(mm(a, b), ref(a, b), rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(k))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("view", ["aT", "bT", "abT", "step_a", "step_b", "step_both", "overlap"])
def test_strided_inputs(dtype, view):
    rng = np.random.default_rng(1)
    m, n, k = 13, 11, 19
    big_a = (rng.standard_normal((3 * m, 3 * k)) * 4).astype(dtype)
    big_b = (rng.standard_normal((3 * k, 3 * n)) * 4).astype(dtype)
    a, b = big_a[:m, :k], big_b[:k, :n]
    if view in ("aT", "abT"):
        a = big_a[:k, :m].T
    if view in ("bT", "abT"):
        b = big_b[:n, :k].T
    if view in ("step_a", "step_both"):
        a = big_a[::2, ::3][:m, :k]
    if view in ("step_b", "step_both"):
        b = big_b[::2, 1::2][:k, :n]
    if view == "overlap":  # rows overlap: row stride 1 < K, col stride 1 is impossible for BLAS
        flat = big_a.reshape(-1)
        a = np.lib.stride_tricks.as_strided(flat, (m, k), (flat.itemsize * 2, flat.itemsize))
    got = mm(a, b)
    expect = ref(a, b)
    if dtype == np.int32:
        np.testing.assert_array_equal(got, np.matmul(a.astype(np.int64), b.astype(np.int64)))
    else:
        tol = {np.float16: 2e-2}.get(dtype, TOL.get(dtype))
        np.testing.assert_allclose(got, expect, rtol=tol, atol=tol * np.abs(expect).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
@pytest.mark.parametrize("layout", ["colmajor", "strided", "rowpadded"])
def test_strided_output(dtype, layout):
    rng = np.random.default_rng(2)
    m, n, k = 9, 14, 6
    a = (rng.standard_normal((m, k)) * 3).astype(dtype)
    b = (rng.standard_normal((k, n)) * 3).astype(dtype)
    if layout == "colmajor":
        out = np.empty((n, m), dtype).T
    elif layout == "strided":
        out = np.zeros((2 * m, 3 * n), dtype)[::2, ::3]
    else:
        out = np.zeros((m, n + 5), dtype)[:, :n]
    base = out.base
    got = mm(a, b, out=out)
    assert got.base is base
    if dtype == np.int64:
        np.testing.assert_array_equal(got, a @ b)
    else:
        tol = {np.float16: 2e-2}.get(dtype, TOL.get(dtype))
        e = ref(a, b)
        np.testing.assert_allclose(got, e, rtol=tol, atol=tol * np.abs(e).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.float16])
@pytest.mark.parametrize("m,n,k", [(4, 3, 5), (40, 50, 60), (130, 129, 128)])
def test_batched_broadcast(dtype, m, n, k):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((2, 1, 3, m, k)) * 2).astype(dtype)
    b = (rng.standard_normal((4, 1, k, n)) * 2).astype(dtype)
    got = mm(a, b)
    assert got.shape == (2, 4, 3, m, n)
    if dtype == np.int16:
        e = np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(np.int16)
        np.testing.assert_array_equal(got, e)
    else:
        e = ref(a, b)
        tol = {np.float16: 2e-2}.get(dtype, TOL.get(dtype))
        np.testing.assert_allclose(got, e, rtol=tol, atol=tol * np.abs(e).max())


def test_many_small_batches_transposed():
    rng = np.random.default_rng(4)
    a = rand(rng, (300, 6, 5)).transpose(0, 2, 1)  # (300, 5, 6), non-contiguous matrices
    b = rand(rng, (6, 7, 300)).transpose(2, 0, 1)  # batch stride 1
    np.testing.assert_allclose(mm(a, b), ref(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8])
def test_beta_alpha(dtype):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((2, 5, 4)) * 3).astype(dtype)
    b = (rng.standard_normal((2, 4, 6)) * 3).astype(dtype)
    c0 = (rng.standard_normal((2, 5, 6)) * 3).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        got = mm(a, b, beta=3, alpha=-2, out=c0.copy())
        wide = 3 * c0.astype(np.int64) - 2 * np.matmul(a.astype(np.int64), b.astype(np.int64))
        np.testing.assert_array_equal(got, wide.astype(dtype))
    else:
        got = mm(a, b, beta=0.5, alpha=2.0, out=c0.copy())
        e = 0.5 * c0.astype(np.float64) + 2.0 * ref(a, b)
        tol = {np.float16: 1e-2}.get(dtype, TOL.get(dtype))
        np.testing.assert_allclose(got, e, rtol=tol, atol=tol * np.abs(e).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_beta_zero_ignores_nan(dtype):
    a, b = np.ones((3, 2), dtype), np.ones((2, 4), dtype)
    out = np.full((3, 4), np.nan, dtype)
    np.testing.assert_array_equal(mm(a, b, out=out), np.full((3, 4), 2, dtype))
    out = np.full((3, 4), np.nan, dtype)[:, ::2]  # strided output goes through a buffer
    np.testing.assert_array_equal(mm(a, b[:, :2], out=out), np.full((3, 2), 2, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int64])
def test_k_zero(dtype):
    a, b = np.ones((2, 3, 0), dtype), np.ones((2, 0, 4), dtype)
    out = np.full((2, 3, 4), 7, dtype)
    np.testing.assert_array_equal(mm(a, b, out=out.copy()), np.zeros((2, 3, 4), dtype))
    np.testing.assert_array_equal(mm(a, b, beta=2, out=out.copy()), np.full((2, 3, 4), 14, dtype))


@pytest.mark.parametrize("shape_a,shape_b", [((0, 3), (3, 4)), ((3, 3), (3, 0)),
                                             ((0, 2, 3), (0, 3, 4))])
def test_empty_output(shape_a, shape_b):
    a, b = np.ones(shape_a, np.float32), np.ones(shape_b, np.float32)
    out = mm(a, b)
    assert out.shape == np.matmul(a, b).shape


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("m,n,k", [(3, 4, 5), (33, 300, 270), (1, 1, 600)])
def test_int_wraps(dtype, m, n, k):
    rng = np.random.default_rng(6)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, (m, k), dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, (k, n), dtype=dtype, endpoint=True)
    # exact reference: Python ints reduced modulo 2^bits
    wide = np.matmul(a.astype(object), b.astype(object))
    bits = 8 * np.dtype(dtype).itemsize
    wrapped = np.vectorize(lambda v: ((v - info.min) % (1 << bits)) + info.min)(wide)
    np.testing.assert_array_equal(mm(a, b), wrapped.astype(dtype))


def to_bf16(x):
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_bfloat16():
    rng = np.random.default_rng(7)
    a = to_bf16(rand(rng, (3, 37, 45)))
    b = to_bf16(rand(rng, (45, 29)))
    got = from_bf16(mm(a, b, code=BF16))
    e = ref(from_bf16(a), from_bf16(b))
    np.testing.assert_allclose(got, e, rtol=1e-2, atol=1e-2 * np.abs(e).max())


def test_float16_accumulates_in_float():
    # 2048 * 1 in float16 steps would stall at 2048 after 2048 + 1 rounding; float accumulation
    a = np.ones((1, 4096), np.float16)
    b = np.ones((4096, 1), np.float16)
    assert mm(a, b)[0, 0] == 4096


def test_large_single_gemm():
    rng = np.random.default_rng(8)
    a, b = rand(rng, (300, 400)), rand(rng, (400, 500))
    np.testing.assert_allclose(mm(a, b), ref(a, b), rtol=1e-4, atol=1e-4)


def test_blas_threads():
    assert _C.blas_num_threads() >= 1
    with pytest.raises(RuntimeError, match="positive"):
        _C.blas_set_num_threads(0)


def _args(**over):
    out, a, b = np.zeros((2, 3)), np.ones((2, 4)), np.ones((4, 3))
    args = dict(dtype=9, out=out.ctypes.data, out_strides=[3, 1], a=a.ctypes.data,
                a_strides=[4, 1], b=b.ctypes.data, b_strides=[3, 1], batch_shape=[],
                m=2, n=3, k=4, beta=0.0, alpha=1.0)
    args.update(over)
    return args, (out, a, b)


@pytest.mark.parametrize("over,msg", [
    (dict(dtype=0), "not implemented for 'Bool'"),
    (dict(dtype=12), "unknown dtype"),
    (dict(a_strides=[4]), "strides per operand"),
    (dict(batch_shape=[1]), "strides per operand"),
    (dict(m=-1), "negative matrix size"),
    (dict(out_strides=[0, 1]), "internal overlap"),
    (dict(out_strides=[-3, 1]), "negative strides"),
    (dict(a=0), "null data pointer"),
    (dict(k=1 << 31), "below 2\\^31"),
])
def test_errors(over, msg):
    args, keep = _args(**over)
    with pytest.raises(RuntimeError, match=msg):
        _C.matmul(*args.values())


def test_argument_errors():
    args, keep = _args()
    with pytest.raises(ValueError, match="expected 13 arguments"):
        _C.matmul(*list(args.values())[:-1])
    with pytest.raises(TypeError):
        _C.matmul(*list(args.values())[:-2], "x", 1.0)


def test_batch_errors():
    out, a, b = np.zeros((2, 2, 3)), np.ones((2, 4)), np.ones((4, 3))
    with pytest.raises(RuntimeError, match="internal overlap"):
        _C.matmul(9, out.ctypes.data, [0, 3, 1], a.ctypes.data, [0, 4, 1], b.ctypes.data,
                  [0, 3, 1], [2], 2, 3, 4, 0.0, 1.0)
    with pytest.raises(RuntimeError, match="negative batch size"):
        _C.matmul(9, out.ctypes.data, [6, 3, 1], a.ctypes.data, [0, 4, 1], b.ctypes.data,
                  [0, 3, 1], [-2], 2, 3, 4, 0.0, 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("case", ["row", "col", "dot", "row_T", "col_T", "vec_step", "vec_bcast",
                                  "out_step", "out_bcast_free"])
def test_vector_operand(dtype, case):
    """m == 1 or n == 1 go through gemv; check every layout of the matrix, vector and output."""
    rng = np.random.default_rng(9)
    k, r = 37, 23
    mat = rand(rng, (r, k), dtype) if "T" not in case else rand(rng, (k, r), dtype).T
    vec = rand(rng, (3 * k,), dtype)
    x = vec[:k]
    if case == "vec_step":
        x = vec[::3]
    if case == "vec_bcast":
        x = np.broadcast_to(vec[:1], (k,))
    if case in ("row", "row_T"):  # (1, k) @ (k, r)
        a, b = x[None, :], mat.T
    elif case == "dot":
        a, b = x[None, :], vec[k - 1:2 * k - 1][:, None]
    else:  # (r, k) @ (k, 1)
        a, b = mat, x[:, None]
    m, n = a.shape[0], b.shape[1]
    out = np.full((m, n), np.nan, dtype)
    if case == "out_step":
        out = np.full((3 * m, 2 * n), np.nan, dtype)[::3, ::2]
    if case == "out_bcast_free":  # the stride of a size-1 dim is never used, even 0
        out = np.lib.stride_tricks.as_strided(np.full(m, np.nan, dtype), (m, 1), (out.itemsize, 0))
    got = mm(a, b, out=out)
    e = ref(a, b)
    tol = {np.float16: 1e-2}.get(dtype, TOL.get(dtype))
    np.testing.assert_allclose(got, e, rtol=tol, atol=tol * np.abs(e).max() * 2)
    out2 = np.ones_like(got)
    got2 = mm(a, b, out=out2, beta=2.0, alpha=-1.0)
    np.testing.assert_allclose(got2, 2.0 - e, rtol=tol, atol=tol * np.abs(e).max() * 2)


@pytest.mark.parametrize("m", [1, 5])
@pytest.mark.parametrize("layout", ["contig", "padded_rows", "out_T", "a_bcast_batch"])
def test_batch_folded_into_rows(m, layout):
    """b broadcast over the batch: the kernel folds the batch into the rows when the
    layouts allow it and must give the same result when they do not."""
    rng = np.random.default_rng(10)
    k, n = 7, 6
    a = rand(rng, (3, 4, m, k), np.float64)
    if layout == "padded_rows":
        a = rand(rng, (3, 4, m + 2, k), np.float64)[:, :, :m]
    if layout == "a_bcast_batch":
        a = np.broadcast_to(rand(rng, (1, 4, m, k), np.float64), (3, 4, m, k))
    b = np.broadcast_to(rand(rng, (k, n), np.float64), (3, 4, k, n))
    out = np.empty((3, 4, m, n))
    if layout == "out_T":
        out = np.empty((3, 4, n, m)).swapaxes(-1, -2)
    np.testing.assert_allclose(call(out, a, b), ref(a, b), rtol=1e-12)
