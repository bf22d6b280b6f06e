"""Cases for the small composites of framework/_ops/composites_extra.py (ravel,
unravel_index, renorm, cholesky, triangular_solve, constant_pad_nd, unsafe_chunk,
unsafe_split, split_with_sizes, empty_permuted, new_empty_strided, __rdiv__, is_nonzero,
is_same_size, fill_diagonal_, new) and of
framework/_ops/fft_shifts.py (fft.fftshift, fft.ifftshift) against NumPy."""
import numpy as np

from helpers import make
from opdb import Case


def _ravel(fw, d):
    x, a = make((4, 6), fw.float64, d, noncontig=True, seed=1)
    return [(fw.ravel(x), a.ravel()), (x.t().ravel(), a.T.ravel()),
            (fw.ravel(fw.tensor(3.0, device=d)), np.array([3.0]))]


def _unravel(fw, d):
    idx = np.array([[0, 5, 17], [-1, 23, 11]])
    got = fw.unravel_index(fw.tensor(idx, device=d), (2, 3, 4))
    ref = np.unravel_index(idx % 24, (2, 3, 4))
    return list(zip(got, ref)) + [(fw.unravel_index(fw.tensor(7, device=d), 5)[0],
                                   np.array(2))]


def _renorm_ref(a, p, dim, maxnorm):
    axes = tuple(i for i in range(a.ndim) if i != dim)
    n = np.sum(np.abs(a) ** p, axis=axes, keepdims=True) ** (1.0 / p)
    return a * np.where(n > maxnorm, maxnorm / (n + 1e-7), 1.0)


def _renorm(fw, d):
    x, a = make((3, 5, 4), fw.float64, d, seed=2)
    y = x.clone()
    y.renorm_(1, 2, 6.0)
    return [(fw.renorm(x, 2, 0, 5.0), _renorm_ref(a, 2, 0, 5.0)),
            (x.renorm(3, -1, 4.0), _renorm_ref(a, 3, 2, 4.0)),
            (y, _renorm_ref(a, 1, 2, 6.0))]


def _spd(fw, d, n=4, seed=3):
    rng = np.random.default_rng(seed)
    m = rng.uniform(-1, 1, (2, n, n))
    a = m @ np.swapaxes(m, -1, -2) + n * np.eye(n)
    return fw.tensor(a, device=d), a


def _cholesky(fw, d):
    x, a = _spd(fw, d)
    low = np.linalg.cholesky(a)
    return [(fw.cholesky(x), low), (x.cholesky(upper=True), np.swapaxes(low, -1, -2))]


def _triangular_solve(fw, d):
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, (4, 4)) + 4 * np.eye(4)
    b = rng.uniform(-1, 1, (2, 4, 3))
    A, B = fw.tensor(a, device=d), fw.tensor(b, device=d)
    up, lo = np.triu(a), np.tril(a)
    s1, c1 = fw.triangular_solve(B, A)
    s2 = B.triangular_solve(A, upper=False, transpose=True).solution
    s3 = fw.triangular_solve(B, A, unitriangular=True)[0]
    unit = np.triu(a, 1) + np.eye(4)
    return [(s1, np.linalg.solve(up, b)), (c1, np.broadcast_to(a, (2, 4, 4))),
            (s2, np.linalg.solve(lo.T, b)), (s3, np.linalg.solve(unit, b))]


def _pad(fw, d):
    x, a = make((3, 4), fw.float64, d, seed=5)
    return [(fw.constant_pad_nd(x, [1, 2]), np.pad(a, ((0, 0), (1, 2)))),
            (fw.constant_pad_nd(x, [0, 1, 2, 0], 1.5),
             np.pad(a, ((2, 0), (0, 1)), constant_values=1.5)),
            (fw.constant_pad_nd(x, [-1, 0]), a[:, 1:])]


def _chunks(fw, d):
    x, a = make((7, 4), fw.float64, d, seed=6)
    out = list(zip(fw.unsafe_chunk(x, 3), np.array_split(a, [3, 6])))
    out += list(zip(x.unsafe_split(2, 1), np.split(a, 2, axis=1)))
    out += list(zip(fw.split_with_sizes(x, [2, 0, 5]), np.split(a, [2, 2])))
    return out


def _empty_permuted(fw, d):
    t = fw.empty_permuted((2, 3, 4), (0, 2, 1), dtype=fw.float64, device=d)
    assert tuple(t.shape) == (2, 3, 4) and tuple(t.stride()) == (12, 1, 3)
    return None


def _new_empty_strided(fw, d):
    x = fw.zeros(2, dtype=fw.int32, device=d)
    t = x.new_empty_strided((2, 3), (1, 2))
    assert tuple(t.shape) == (2, 3) and tuple(t.stride()) == (1, 2) and t.dtype == fw.int32
    assert x.new_empty_strided((4,), (1,), dtype=fw.float64).dtype == fw.float64
    return None


def _rdiv(fw, d):
    x, a = make((3, 5), fw.float64, d, low=1, high=4, seed=7)
    i, b = make((4,), fw.int64, d, low=1, high=5, seed=8)
    return [(x.__rdiv__(2.0), 2.0 / a), (x.__rdiv__(x * 3), np.full((3, 5), 3.0)),
            (i.__rdiv__(3), (3.0 / b).astype(np.float32))]


def _flags(fw, d):
    one, two = fw.ones(1, 1, device=d), fw.zeros(2, device=d)
    assert fw.is_nonzero(one) is True and two[:1].is_nonzero() is False
    assert one.is_same_size(fw.zeros(1, 1, device=d)) and not fw.is_same_size(one, two)
    return None


def _fill_diagonal(fw, d):
    x, a = make((7, 3), fw.float64, d, seed=10)
    b = a.copy()
    np.fill_diagonal(b, 2.5, wrap=True)
    c, e = make((4, 4, 4), fw.float64, d, seed=11)
    e = e.copy()
    e[np.arange(4), np.arange(4), np.arange(4)] = -1.0
    return [(x.clone().fill_diagonal_(2.5, wrap=True), b), (c.clone().fill_diagonal_(-1.0), e)]


def _new(fw, d):
    x = fw.zeros(2, dtype=fw.int32, device=d)
    t = x.new(2, 3)
    assert tuple(t.shape) == (2, 3) and t.dtype == fw.int32 and t.device == x.device
    return [(x.new([[1, 2]]), np.array([[1, 2]], dtype=np.int32))]


def _shifts(fw, d):
    x, a = make((4, 5, 3), fw.float64, d, seed=9)
    out = [(fw.fft.fftshift(x), np.fft.fftshift(a)), (fw.fft.ifftshift(x), np.fft.ifftshift(a))]
    for dim in (1, (0, -1)):
        out += [(fw.fft.fftshift(x, dim), np.fft.fftshift(a, dim)),
                (fw.fft.ifftshift(x, dim=dim), np.fft.ifftshift(a, dim))]
    return out


CASES = {
    "fft.fftshift": [Case(_shifts)], "fft.ifftshift": [Case(_shifts)],
    "__rdiv__": [Case(_rdiv)],
    "ravel": [Case(_ravel)], "unravel_index": [Case(_unravel)], "renorm": [Case(_renorm)],
    "cholesky": [Case(_cholesky)], "triangular_solve": [Case(_triangular_solve)],
    "constant_pad_nd": [Case(_pad)], "unsafe_chunk": [Case(_chunks)],
    "unsafe_split": [Case(_chunks)], "split_with_sizes": [Case(_chunks)],
    "empty_permuted": [Case(_empty_permuted)], "new_empty_strided": [Case(_new_empty_strided)],
    "is_nonzero": [Case(_flags)], "is_same_size": [Case(_flags)],
    "fill_diagonal_": [Case(_fill_diagonal)], "new": [Case(_new)],
}
