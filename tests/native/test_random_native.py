"""native/random.cpp on NumPy buffers: Philox words, value formulas, strides, statistics."""
import numpy as np
import pytest

from framework import _C

M32 = 0xFFFFFFFF
CODES = {np.dtype(np.float16): 6, np.dtype(np.float32): 8, np.dtype(np.float64): 9,
         np.dtype(np.int64): 5, np.dtype(np.int32): 4, np.dtype(np.int16): 3,
         np.dtype(np.int8): 2, np.dtype(np.uint8): 1, np.dtype(np.bool_): 0}
BF16 = 7
UNIFORM, NORMAL, EXPONENTIAL, CAUCHY, LOG_NORMAL, GEOMETRIC = range(6)


def philox_ref(seed, ctr):
    """Philox 4x32-10 in plain Python integers (Random123 / Triton's philox_impl)."""
    c0, c1, c2, c3 = ctr & M32, (ctr >> 32) & M32, 0, 0
    k0, k1 = seed & M32, (seed >> 32) & M32
    for _ in range(10):
        pa, pb = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c2 = ((pb >> 32) ^ c1 ^ k0) & M32, ((pa >> 32) ^ c3 ^ k1) & M32
        c1, c3 = pb & M32, pa & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def words(n, seed, offset):
    out = np.empty((n, 4), np.uint32)
    _C.philox_words(out.ctypes.data, n, seed, offset)
    return out


def fill(arr, kind, a, b, seed=7, offset=0, code=None):
    code = CODES[arr.dtype] if code is None else code
    st = [s // arr.itemsize for s in arr.strides]
    _C.random_fill(code, arr.ctypes.data, list(arr.shape), st, seed, offset, kind, a, b)
    return arr


def u53(w):
    bits = (w[:, 0].astype(np.uint64) << np.uint64(32)) | w[:, 1].astype(np.uint64)
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53


def test_philox_known_answer():
    # Random123's known-answer vector for philox4x32-10 with zero key and counter
    assert tuple(words(1, 0, 0)[0]) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)


@pytest.mark.parametrize("seed,offset", [(0, 0), (12345, 3), (2**40 + 17, 2**33 - 2),
                                         (2**64 - 1, 2**63)])
def test_philox_matches_reference(seed, offset):
    w = words(5, seed, offset)
    for i in range(5):
        assert tuple(int(x) for x in w[i]) == philox_ref(seed, (offset + i) % 2**64)


def test_uniform_float32_is_triton_rand_formula():
    n = 4097
    w = words(n, 99, 5)
    x = w[:, 0].view(np.int32)
    x = np.where(x < 0, ~x, x)
    ref = x.astype(np.float32) * np.float32(4.6566127342e-10)
    got = fill(np.empty(n, np.float32), UNIFORM, 0.0, 1.0, seed=99, offset=5)
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))
    assert got.min() >= 0 and got.max() < 1


def test_uniform_other_dtypes_formulas():
    n = 3000
    w = words(n, 3, 0)
    h = fill(np.empty(n, np.float16), UNIFORM, 0.0, 1.0, seed=3)
    assert np.array_equal(h, ((w[:, 0] >> 21).astype(np.float64) * 2.0**-11).astype(np.float16))
    d = fill(np.empty(n, np.float64), UNIFORM, 0.0, 1.0, seed=3)
    assert np.array_equal(d, u53(w))
    b = np.empty(n, np.uint16)
    _C.random_fill(BF16, b.ctypes.data, [n], [1], 3, 0, UNIFORM, 0.0, 1.0)
    bf = (b.astype(np.uint32) << 16).view(np.float32)
    assert np.array_equal(bf, (w[:, 0] >> 24).astype(np.float32) * np.float32(2.0**-8))
    for arr in (h, bf, d):
        assert arr.min() >= 0 and arr.max() < 1


def test_uniform_range_scaled():
    d = fill(np.empty(20000, np.float64), UNIFORM, -2.0, 5.0, seed=11)
    u = fill(np.empty(20000, np.float64), UNIFORM, 0.0, 1.0, seed=11)
    np.testing.assert_allclose(d, -2.0 + u * 5.0, rtol=0, atol=1e-15)  # one fma rounding
    assert d.min() >= -2 and d.max() < 3


def test_normal_formula():
    n = 2000
    w = words(n, 5, 9)
    w2 = np.stack([w[:, 2], w[:, 3]], 1)
    ref = np.sqrt(-2 * np.log(1 - u53(w))) * np.cos(2 * np.pi * u53(w2))
    got = fill(np.empty(n, np.float64), NORMAL, 0.0, 1.0, seed=5, offset=9)
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-15)
    g32 = fill(np.empty(n, np.float32), NORMAL, 1.5, 2.0, seed=5, offset=9)
    np.testing.assert_allclose(g32, (1.5 + 2 * ref).astype(np.float32), rtol=1e-7, atol=1e-7)


def test_float64_transcendentals_are_accurate():
    """Our own log and cos (basic operations only) are within a few ulp of the exact values,
    here against long-double references of the same formulas."""
    n = 200_000
    w = words(n, 21, 0)
    a = (u53(w) * 2.0**53).astype(np.int64)
    w2 = np.stack([w[:, 2], w[:, 3]], 1)
    b = (u53(w2) * 2.0**53).astype(np.int64)
    ld = np.longdouble
    x = (ld(2) ** 53 - a.astype(ld)) / ld(2) ** 53
    e_ref = -np.log(x)
    pi = ld("3.14159265358979323846264338327950288")
    z_ref = np.sqrt(2 * e_ref) * np.cos(2 * pi * (b.astype(ld) / ld(2) ** 53)) \
        if np.finfo(ld).eps < 1e-18 else None
    e = fill(np.empty(n), EXPONENTIAL, 0.0, 1.0, seed=21)
    pos = e_ref > 0
    e_ref64 = e_ref[pos].astype(np.float64)
    ulp_e = np.abs(e[pos] - e_ref64) / np.spacing(e_ref64)
    assert ulp_e.max() <= 4
    if z_ref is None:
        pytest.skip("long double is not extended precision here")
    z = fill(np.empty(n), NORMAL, 0.0, 1.0, seed=21)
    ref = z_ref.astype(np.float64)
    # a few ulp, plus the reference's own error near zeros of cos (its angle is good to 2^-64)
    tol = 4 * np.spacing(np.abs(ref)) + np.sqrt(2 * e) * 1e-18
    assert (np.abs(z - ref) <= tol).all()


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_uniform_and_normal_statistics(dt):
    n = 200_000
    u = fill(np.empty(n, dt), UNIFORM, 0.0, 1.0, seed=1).astype(np.float64)
    assert abs(u.mean() - 0.5) < 0.003 and abs(u.var() - 1 / 12) < 0.002
    counts = np.histogram(u, bins=20, range=(0, 1))[0]
    assert np.abs(counts / n - 0.05).max() < 0.003
    z = fill(np.empty(n, dt), NORMAL, 0.0, 1.0, seed=2).astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1) < 0.015
    # mass within one and two sigma, and the tails are reached
    assert abs((np.abs(z) < 1).mean() - 0.6827) < 0.005
    assert abs((np.abs(z) < 2).mean() - 0.9545) < 0.003
    assert np.abs(z).max() > 3.5


def test_uniform_and_normal_independent_draws():
    z = fill(np.empty(100_000), NORMAL, 0.0, 1.0, seed=4)
    assert abs(np.corrcoef(z[:-1], z[1:])[0, 1]) < 0.015
    a = fill(np.empty(1000), UNIFORM, 0.0, 1.0, seed=4)
    b = fill(np.empty(1000), UNIFORM, 0.0, 1.0, seed=5)
    assert not np.array_equal(a, b)


def test_chunks_and_offsets_are_one_stream():
    n = 100_003  # several threads' worth, odd size
    whole = fill(np.empty(n, np.float32), NORMAL, 0.0, 1.0, seed=42)
    head = fill(np.empty(40_000, np.float32), NORMAL, 0.0, 1.0, seed=42, offset=0)
    tail = fill(np.empty(n - 40_000, np.float32), NORMAL, 0.0, 1.0, seed=42, offset=40_000)
    assert np.array_equal(whole, np.concatenate([head, tail]))


def test_strided_view_gets_logical_order():
    base = np.zeros((6, 10), np.float64)
    view = base.T[::2]  # shape (5, 6), non-contiguous
    fill(view, UNIFORM, 0.0, 1.0, seed=8)
    ref = fill(np.empty((5, 6)), UNIFORM, 0.0, 1.0, seed=8)
    np.testing.assert_array_equal(view, ref)
    assert np.all(base.T[1::2] == 0)


def test_zero_d_and_empty():
    s = fill(np.empty((), np.float32), UNIFORM, 0.0, 1.0, seed=3)
    assert s == fill(np.empty(1, np.float32), UNIFORM, 0.0, 1.0, seed=3)[0]
    fill(np.empty((0, 3), np.float32), NORMAL, 0.0, 1.0)


def test_other_distributions():
    n = 200_000
    e = fill(np.empty(n), EXPONENTIAL, 0.0, 1 / 2.5, seed=1)
    assert e.min() >= 0 and abs(e.mean() - 0.4) < 0.004 and abs(e.var() - 0.16) < 0.005
    c = fill(np.empty(n), CAUCHY, 1.0, 2.0, seed=2)
    assert abs(np.median(c) - 1.0) < 0.03
    assert abs(np.mean(np.abs(c - 1.0) < 2.0) - 0.5) < 0.005  # quartiles at median +- sigma
    ln = fill(np.empty(n), LOG_NORMAL, 0.5, 0.25, seed=3)
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.003
    assert abs(np.log(ln).std() - 0.25) < 0.003
    p = 0.3
    for dt in (np.float32, np.int64, np.int16):
        g = fill(np.empty(n, dt), GEOMETRIC, 0.0, 1 / np.log1p(-p), seed=4)
        assert g.min() == 1 and abs(g.mean() - 1 / p) < 0.03
        assert abs((g == 1).mean() - p) < 0.005 and abs((g == 2).mean() - p * (1 - p)) < 0.005


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.int8, np.uint8, np.float32])
def test_random_int_range_and_uniformity(dt):
    n = 60_000
    out = np.empty(n, dt)
    _C.random_int(CODES[np.dtype(dt)], out.ctypes.data, [n], [1], 6, 0, 3, 10)
    assert out.min() == 3 and out.max() == 12
    counts = np.bincount(out.astype(np.int64) - 3, minlength=10)
    assert np.abs(counts / n - 0.1).max() < 0.006
    w = words(n, 6, 0)
    np.testing.assert_array_equal(out.astype(np.int64), 3 + (w[:, 0] % 10).astype(np.int64))


def test_random_int_large_and_full_ranges():
    n = 50_000
    out = np.empty(n, np.int64)
    _C.random_int(5, out.ctypes.data, [n], [1], 1, 0, -(2**40), 2**41)
    assert out.min() >= -(2**40) and out.max() < 2**40
    assert out.min() < -(2**39) and out.max() > 2**39
    w = words(n, 1, 0)
    bits = (w[:, 0].astype(np.uint64) << np.uint64(32)) | w[:, 1].astype(np.uint64)
    np.testing.assert_array_equal(out, (bits % np.uint64(2**41)).astype(np.int64) - 2**40)
    _C.random_int(5, out.ctypes.data, [n], [1], 1, 0, -(2**63), 0)  # every int64
    np.testing.assert_array_equal(out, (bits + np.uint64(2**63)).view(np.int64))
    assert (out < 0).mean() == pytest.approx(0.5, abs=0.01)


def test_random_int_bool_and_strided():
    b = np.empty((40, 30), np.bool_)
    _C.random_int(0, b.ctypes.data, [40, 30], [30, 1], 2, 0, 0, 2)
    assert 0.45 < b.mean() < 0.55
    base = np.full((8, 9), -1, np.int32)
    v = base[::2, 1::3]
    _C.random_int(4, v.ctypes.data, list(v.shape), [18, 3], 2, 0, 0, 5)
    ref = np.empty(v.shape, np.int32)
    _C.random_int(4, ref.ctypes.data, list(v.shape), [3, 1], 2, 0, 0, 5)
    np.testing.assert_array_equal(v, ref)
    assert (base[1::2] == -1).all()


@pytest.mark.parametrize("dt", [np.bool_, np.float32, np.int64])
def test_bernoulli_scalar(dt):
    n = 100_000
    out = np.empty(n, dt)
    _C.bernoulli_scalar(CODES[np.dtype(dt)], out.ctypes.data, [n], [1], 3, 0, 0.3)
    assert set(np.unique(out.astype(np.int64))) <= {0, 1}
    assert abs(out.astype(np.float64).mean() - 0.3) < 0.005
    np.testing.assert_array_equal(out.astype(bool), u53(words(n, 3, 0)) < 0.3)
    for p, v in ((0.0, 0), (1.0, 1)):
        _C.bernoulli_scalar(CODES[np.dtype(dt)], out.ctypes.data, [n], [1], 3, 0, p)
        assert (out.astype(np.int64) == v).all()


def test_bernoulli_tensor_broadcast():
    p = np.array([0.0, 0.2, 0.9, 1.0], np.float32)
    out = np.empty((50_000, 4), np.float64)
    _C.bernoulli_tensor(9, out.ctypes.data, [50_000, 4], [4, 1], 8, p.ctypes.data, [0, 1], 5, 0)
    np.testing.assert_allclose(out.mean(0), p, atol=0.006)
    assert out[:, 0].max() == 0 and out[:, 3].min() == 1


def test_randperm():
    for n in (0, 1, 2, 1000, 50_001):
        out = np.empty(n, np.int64)
        _C.randperm(5, out.ctypes.data, n, 9, 0)
        np.testing.assert_array_equal(np.sort(out), np.arange(n))
    a, b = np.empty(1000, np.int32), np.empty(1000, np.int32)
    _C.randperm(4, a.ctypes.data, 1000, 9, 0)
    _C.randperm(4, b.ctypes.data, 1000, 9, 1000)
    assert not np.array_equal(a, b)
    # each value lands in each position with equal probability
    first = np.empty(4000, np.int64)
    one = np.empty(4, np.int64)
    for i in range(1000):
        _C.randperm(5, one.ctypes.data, 4, 3, 4 * i)
        first[4 * i:4 * i + 4] = one
    counts = np.bincount(first.reshape(-1, 4)[:, 0], minlength=4)
    assert np.abs(counts / 1000 - 0.25).max() < 0.06


def multinomial(p, k, replacement, seed=1, offset=0):
    p = np.atleast_2d(p)
    out = np.empty((p.shape[0], k), np.int64)
    st = [s // p.itemsize for s in p.strides]
    _C.multinomial(CODES[p.dtype], p.ctypes.data, p.shape[0], p.shape[1], st[0], st[1], k,
                   replacement, out.ctypes.data, seed, offset)
    return out


def test_multinomial_with_replacement():
    p = np.array([[0.1, 0.0, 0.6, 0.3], [5.0, 0.0, 0.0, 5.0]])
    out = multinomial(p, 40_000, True)
    f0 = np.bincount(out[0], minlength=4) / 40_000
    np.testing.assert_allclose(f0, [0.1, 0.0, 0.6, 0.3], atol=0.008)
    assert set(np.unique(out[1])) == {0, 3}
    assert abs((out[1] == 0).mean() - 0.5) < 0.01


def test_multinomial_without_replacement():
    p = np.array([0.5, 0.0, 0.25, 0.25], np.float32)
    firsts = []
    for i in range(3000):
        o = multinomial(p, 3, False, seed=2, offset=4 * i)[0]
        assert sorted(o) == [0, 2, 3]
        firsts.append(o[0])
    f = np.bincount(firsts, minlength=4) / 3000
    np.testing.assert_allclose(f, [0.5, 0, 0.25, 0.25], atol=0.03)
    # second draw given the first was 0: categories 2 and 3 equally likely
    p2 = np.ones((2000, 50))
    o = multinomial(p2, 50, False)
    assert all(sorted(r) == list(range(50)) for r in o)


def test_multinomial_transposed_probs():
    p = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]).T  # rows [1,0,0] and [0,1,0]
    out = multinomial(p, 5, True)
    assert (out[0] == 0).all() and (out[1] == 1).all()


@pytest.mark.parametrize("p,k,rep,msg", [
    ([0.5, -0.1], 1, True, "probability tensor contains either `inf`, `nan` or element < 0"),
    ([0.5, np.inf], 1, True, "probability tensor contains either `inf`, `nan` or element < 0"),
    ([0.5, np.nan], 1, False, "probability tensor contains either `inf`, `nan` or element < 0"),
    ([0.0, 0.0], 1, True, "invalid multinomial distribution \\(sum of probabilities <= 0\\)"),
])
def test_multinomial_errors(p, k, rep, msg):
    with pytest.raises(RuntimeError, match=msg):
        multinomial(np.array(p, np.float64), k, rep)


def test_multinomial_draws_zero_categories_once_positives_run_out():
    # as PyTorch 2.13 on the CPU: multinomial([0, 1, 0], 2) gives [1, <a zero category>]
    out = multinomial(np.array([0.0, 1.0, 0.0]), 2, False)[0]
    assert out[0] == 1 and out[1] in (0, 2)


def test_dtype_errors():
    out = np.empty(4, np.int32)
    with pytest.raises(RuntimeError, match="not implemented for 'Int'"):
        _C.random_fill(4, out.ctypes.data, [4], [1], 0, 0, NORMAL, 0.0, 1.0)
    with pytest.raises(RuntimeError, match="unknown distribution kind"):
        _C.random_fill(8, out.ctypes.data, [4], [1], 0, 0, 17, 0.0, 1.0)
    with pytest.raises(RuntimeError, match="not implemented for 'Int'"):
        _C.bernoulli_tensor(8, out.ctypes.data, [4], [1], 4, out.ctypes.data, [1], 0, 0)
