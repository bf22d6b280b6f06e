"""Cases for the orthogonal polynomials of framework.special (native/pointwise_polynomials.cpp,
framework/kernels/pointwise_polynomials.py) against NumPy float64: numpy.polynomial for T,
H, He, L and P, the trigonometric forms for U, V and W, and x -> 2x - 1 for the shifted
ones; integer degrees 0..12 over the interior of the interval. Their tests against torch
(ends of the interval, negative and fractional degrees, float32) are in
tests/test_polynomials.py."""
import numpy as np
from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre

from opdb import Case



def _val(fn):
    return lambda x, n: np.array([fn(xi, [0] * int(ni) + [1]) for xi, ni in zip(x, n)])


def _u(x, n):
    t = np.arccos(x)
    return np.sin((n + 1) * t) / np.sin(t)


def _v(x, n):
    t = np.arccos(x)
    return np.cos((n + 0.5) * t) / np.cos(t / 2)


def _w(x, n):
    t = np.arccos(x)
    return np.sin((n + 0.5) * t) / np.sin(t / 2)


def _shift(f):
    return lambda x, n: f(2 * x - 1, n)


T = _val(chebyshev.chebval)
REFS = {
    "chebyshev_polynomial_t": (T, -0.95, 0.95), "chebyshev_polynomial_u": (_u, -0.95, 0.95),
    "chebyshev_polynomial_v": (_v, -0.95, 0.95), "chebyshev_polynomial_w": (_w, -0.95, 0.95),
    "shifted_chebyshev_polynomial_t": (_shift(T), 0.02, 0.98),
    "shifted_chebyshev_polynomial_u": (_shift(_u), 0.02, 0.98),
    "shifted_chebyshev_polynomial_v": (_shift(_v), 0.02, 0.98),
    "shifted_chebyshev_polynomial_w": (_shift(_w), 0.02, 0.98),
    "hermite_polynomial_h": (_val(hermite.hermval), -3.0, 3.0),
    "hermite_polynomial_he": (_val(hermite_e.hermeval), -3.0, 3.0),
    "laguerre_polynomial_l": (_val(laguerre.lagval), -2.0, 6.0),
    "legendre_polynomial_p": (_val(legendre.legval), -0.99, 0.99),
}


def _case(name):
    ref, lo, hi = REFS[name]

    def fn(fw, d):
        rng = np.random.default_rng(0)
        x = rng.uniform(lo, hi, 70)
        n = rng.integers(0, 13, 70).astype(np.float64)
        got = getattr(fw.special, name)(fw.tensor(x, device=d), fw.tensor(n, device=d))
        return got, ref(x, n)
    return fn


# Ai at points of each method's range and their seams (mpmath.airyai, 30 digits)
AIRY = {-30.0: -0.0879681884568422, -7.5: 0.321775716380648, -7.0: 0.184280835250506,
        -2.2: 0.0961453780076689, 0.0: 0.355028053887817, 2.0: 0.0349241304232744,
        2.2: 0.0256104044217732, 5.0: 0.000108344428136074, 30.0: 3.2082175915505e-49}


def _airy(fw, d):
    got = fw.special.airy_ai(fw.tensor(list(AIRY), dtype=fw.float64, device=d))
    return got, np.array(list(AIRY.values()))


CASES = {f"special.{k}": [Case(_case(k))] for k in REFS}
CASES["special.airy_ai"] = [Case(_airy)]
