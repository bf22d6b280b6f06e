"""Cases for the special functions (the `special` section of ops.yaml) against mpmath at 30
digits (NumPy has none of them; torch's own float64 Bessel J/Y and incomplete gamma are
only good to ~1e-8, so tests/test_special.py compares with torch at that tolerance; its
K0/K1 serve as references here).
Strided, 0-d and empty inputs, float32/float64 and integers (promoted to float)."""
import math

import numpy as np

from helpers import make
from opdb import Case

_SHAPES = [(3, 7), (), (0,), (2, 3, 4)]


def _mp():
    import pytest
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    return mp


def _vec(f):
    """f of one float as a float64 function of arrays (NumPy's vectorize refuses size 0)."""
    v = np.vectorize(lambda *a: float(f(*a)), otypes=[np.float64])
    return lambda *a: v(*a) if a[0].size else np.asarray(a[0], np.float64)


def unary(call, ref, low, high, int_range=None):
    def fn(fw, device):
        r = _vec(ref(_mp()))
        out = []
        for dt in (fw.float32, fw.float64):
            for i, s in enumerate(_SHAPES):
                x, a = make(s, dt, device, low, high, noncontig=i == 0, seed=i)
                out.append((call(fw, x), r(a.astype(np.float64))))
        if int_range is not None:
            x, a = make((5,), fw.int64, device, *int_range, seed=7)
            got = call(fw, x)
            assert got.dtype is fw.float32
            out.append((got, r(a.astype(np.float64))))
        return out
    return [Case(fn)]


def binary(call, ref, lows, highs):
    shapes = [((3, 5), (3, 5)), ((4, 1, 3), (5, 1)), ((), (2, 3)), ((0, 3), (3,))]

    def fn(fw, device):
        r = _vec(ref(_mp()))
        out = []
        for dt in (fw.float32, fw.float64):
            for i, (sa, sb) in enumerate(shapes):
                x, a = make(sa, dt, device, lows[0], highs[0], noncontig=i == 0, seed=i)
                y, b = make(sb, dt, device, lows[1], highs[1], noncontig=i == 1, seed=i + 9)
                a, b = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
                out.append((call(fw, x, y), r(a, b)))
        return out
    return [Case(fn)]


def _torch(name):
    """torch.special's float64 function of one float: the reference for K0 and K1 (within
    ~3e-16 of mpmath, whose besselk is slow)."""
    import pytest
    torch = pytest.importorskip("torch")
    f = getattr(torch.special, name)
    return lambda mp: lambda x: f(torch.tensor(x, dtype=torch.float64)).item()


def _i_scaled(mp, n):
    return lambda x: mp.besseli(n, x) * mp.exp(-abs(x))


def _ndtri(mp):
    return lambda p: mp.sqrt(2) * mp.erfinv(2 * mp.mpf(p) - 1)


def _entr(mp):
    return lambda x: -x * mp.log(x) if x > 0 else (0.0 if x == 0 else -math.inf)


def _xlog1py(mp):
    return lambda x, y: 0.0 if x == 0 else x * mp.log1p(y)


S = "special."
U = {
    "lgamma": (lambda fw, x: fw.lgamma(x), lambda mp: math.lgamma, -4.7, 6.3, (1, 9)),
    "digamma": (lambda fw, x: x.digamma(), lambda mp: mp.digamma, -4.7, 6.3, (1, 9)),
    "i0": (lambda fw, x: fw.i0(x), lambda mp: lambda x: mp.besseli(0, x), -30, 30, (-9, 9)),
    S + "i0e": (lambda fw, x: fw.special.i0e(x), lambda mp: _i_scaled(mp, 0), -30, 30, None),
    S + "i1": (lambda fw, x: fw.special.i1(x), lambda mp: lambda x: mp.besseli(1, x), -30, 30,
               None),
    S + "i1e": (lambda fw, x: fw.special.i1e(x), lambda mp: _i_scaled(mp, 1), -30, 30, None),
    S + "modified_bessel_i0": (lambda fw, x: fw.special.modified_bessel_i0(x),
                               lambda mp: lambda x: mp.besseli(0, x), -12, 12, None),
    S + "modified_bessel_i1": (lambda fw, x: fw.special.modified_bessel_i1(x),
                               lambda mp: lambda x: mp.besseli(1, x), -12, 12, None),
    S + "modified_bessel_k0": (lambda fw, x: fw.special.modified_bessel_k0(x),
                               _torch("modified_bessel_k0"), 0.01, 30, (1, 9)),
    S + "modified_bessel_k1": (lambda fw, x: fw.special.modified_bessel_k1(x),
                               _torch("modified_bessel_k1"), 0.01, 30, None),
    S + "scaled_modified_bessel_k0": (lambda fw, x: fw.special.scaled_modified_bessel_k0(x),
                                      _torch("scaled_modified_bessel_k0"), 0.01, 40, None),
    S + "scaled_modified_bessel_k1": (lambda fw, x: fw.special.scaled_modified_bessel_k1(x),
                                      _torch("scaled_modified_bessel_k1"), 0.01, 40, None),
    S + "bessel_j0": (lambda fw, x: fw.special.bessel_j0(x),
                      lambda mp: lambda x: mp.besselj(0, x), -40, 40, (-9, 9)),
    S + "bessel_j1": (lambda fw, x: fw.special.bessel_j1(x),
                      lambda mp: lambda x: mp.besselj(1, x), -40, 40, None),
    S + "bessel_y0": (lambda fw, x: fw.special.bessel_y0(x),
                      lambda mp: lambda x: mp.bessely(0, x), 0.01, 40, None),
    S + "bessel_y1": (lambda fw, x: fw.special.bessel_y1(x),
                      lambda mp: lambda x: mp.bessely(1, x), 0.01, 40, None),
    S + "spherical_bessel_j0": (lambda fw, x: fw.special.spherical_bessel_j0(x),
                                lambda mp: lambda x: mp.sin(x) / x if x else 1.0, -10, 10,
                                None),
    S + "ndtr": (lambda fw, x: fw.special.ndtr(x), lambda mp: mp.ncdf, -9, 9, (-3, 3)),
    S + "ndtri": (lambda fw, x: fw.special.ndtri(x), _ndtri, 0.001, 0.999, None),
    S + "log_ndtr": (lambda fw, x: fw.special.log_ndtr(x),
                     lambda mp: lambda x: mp.log(mp.ncdf(x)), -30, 8, None),
    S + "erfcx": (lambda fw, x: fw.special.erfcx(x),
                  lambda mp: lambda x: mp.exp(mp.mpf(x) ** 2) * mp.erfc(x), -5, 40, None),
    S + "entr": (lambda fw, x: fw.special.entr(x), _entr, -1, 5, (-2, 5)),
}
B = {
    "igamma": (lambda fw, a, x: fw.igamma(a, x),
               lambda mp: lambda a, x: mp.gammainc(a, 0, x, regularized=True),
               (0.1, 0.05), (12, 15)),
    "igammac": (lambda fw, a, x: a.igammac(x),
                lambda mp: lambda a, x: mp.gammainc(a, x, mp.inf, regularized=True),
                (0.1, 0.05), (12, 15)),
    S + "zeta": (lambda fw, x, q: fw.special.zeta(x, q), lambda mp: mp.zeta, (1.5, 0.2), (6, 5)),
    S + "xlog1py": (lambda fw, x, y: fw.special.xlog1py(x, y), _xlog1py, (-3, -0.9), (3, 5)),
}


def _polygamma(fw, device):
    mp = _mp()
    out = []
    for n in (0, 1, 2, 3):
        r = _vec(lambda x: mp.polygamma(n, x))
        for dt in (fw.float32, fw.float64):
            x, a = make((4, 6), dt, device, -3.7, 5.3, noncontig=True, seed=n)
            out.append((fw.polygamma(n, x), r(a.astype(np.float64))))
            out.append((x.polygamma(n), r(a.astype(np.float64))))
    x, a = make((0, 2), fw.float64, device, seed=1)
    out.append((fw.polygamma(2, x), a))
    return out


def _mvlgamma(fw, device):
    out = []
    for p in (1, 2, 3):
        for dt in (fw.float32, fw.float64):
            x, a = make((3, 5), dt, device, 1.2, 6, noncontig=True, seed=p)
            a = a.astype(np.float64)
            ref = p * (p - 1) / 4 * math.log(math.pi) + sum(
                np.vectorize(math.lgamma)(a - j / 2) for j in range(p))
            out.append((fw.mvlgamma(x, p), ref))
            out.append((x.mvlgamma(p=p), ref))
    return out


CASES = {}
for _name, (_call, _ref, _lo, _hi, _ints) in U.items():
    CASES[_name] = unary(_call, _ref, _lo, _hi, _ints)
for _name, (_call, _ref, _lo, _hi) in B.items():
    CASES[_name] = binary(_call, _ref, _lo, _hi)
CASES["polygamma"] = [Case(_polygamma)]
CASES["mvlgamma"] = [Case(_mvlgamma)]
