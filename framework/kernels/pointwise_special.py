"""Special functions of the Triton pointwise ops (the gamma family, the normal
distribution, entr, xlog1py; the Bessel functions' math is in pointwise_bessel.py): the
scalar ``@triton.jit`` functions that pointwise_ops.UNARY and BINARY list under the CPU's
kernel names (native/pointwise_special.cpp, the same methods).

Every function computes in float64 whatever the float dtype (float32 results are then
nearly correctly rounded) and returns the operand's dtype. The methods are the classical
ones, without tables: Lanczos (g = 7) below 10 and Stirling's series above for lgamma;
recurrence to x >= 10 and the asymptotic series for digamma; Euler-Maclaurin (Cephes) for
the Hurwitz zeta, on which trigamma (zeta(2, x)) and polygamma(n >= 2) rest; the power
series and continued fractions of Cephes for the regularized incomplete gamma functions
(without torch's Temme expansion for large a: within ~1e-13 of mpmath up to a ~ 1e3,
slower to converge beyond); Laplace's continued fraction for erfcx; Acklam's
approximation refined by two Halley steps for ndtri.
Iterations run until every lane of the block has converged (``_any``), with a cap; lanes
that take another method meanwhile get inputs that converge at once.
"""
import triton
import triton.language as tl

from .pointwise_bessel import _any, _bessel_i64, _bessel_jy64, _bessel_k64
from .pointwise_math import _erfc64, _expm1, _f64, _log1p


# ---- gamma family ---------------------------------------------------------------------

@triton.jit
def _sinpi64(x):
    """sin(pi x), exact zeros at the integers: x reduced to [0, 2) first."""
    r = x - 2.0 * tl.floor(x * 0.5)
    return tl.sin(r * 3.141592653589793)


@triton.jit
def _lgamma_pos(z):
    """lgamma of z >= 0.5: Lanczos (g = 7, n = 9) below 10, Stirling's series above."""
    zc = tl.where(z < 10.0, z, 1.0)
    zz = zc - 1.0
    s = (0.99999999999980993 + 676.5203681218851 / (zz + 1.0)
         - 1259.1392167224028 / (zz + 2.0) + 771.32342877765313 / (zz + 3.0)
         - 176.61502916214059 / (zz + 4.0) + 12.507343278686905 / (zz + 5.0)
         - 0.13857109526572012 / (zz + 6.0) + 9.9843695780195716e-6 / (zz + 7.0)
         + 1.5056327351493116e-7 / (zz + 8.0))
    t = zz + 7.5
    small = 0.9189385332046727 + (zz + 0.5) * tl.log(t) - t + tl.log(s)
    zb = tl.where(z < 10.0, 10.0, z)
    w = 1.0 / (zb * zb)
    corr = (0.08333333333333333 + w * (-0.002777777777777778 + w * (
        0.0007936507936507937 + w * (-0.0005952380952380952 + w * 0.0008417508417508417))))
    big = (zb - 0.5) * tl.log(zb) - zb + 0.9189385332046727 + corr / zb
    return tl.where(z < 10.0, small, big)


@triton.jit
def _lgamma64(x):
    """lgamma in float64: inf at the poles (non-positive integers) and at +-inf."""
    neg = x < 0.5
    r = _lgamma_pos(tl.where(neg, 1.0 - x, x))
    s = tl.abs(_sinpi64(tl.where(neg, x, 0.5)))
    refl = tl.log(3.141592653589793 / s) - r
    out = tl.where(neg, refl, r)
    out = tl.where(neg & (x == tl.floor(x)), float("inf"), out)
    return tl.where(tl.abs(x) == float("inf"), float("inf"), tl.where(x != x, x, out))


@triton.jit
def _digamma64(x):
    """psi(x): -inf/+inf at -0/+0 (torch's sign rule), NaN at negative integers,
    reflection psi(1 - x) - pi / tan(pi frac(x)) below 0, then recurrence and the
    asymptotic series."""
    neg = x < 0.0
    y = tl.where(neg, 1.0 - x, x)
    res = tl.zeros_like(x)
    for _ in tl.static_range(10):
        m = y < 10.0
        res = tl.where(m, res - 1.0 / tl.where(m, y, 1.0), res)
        y = tl.where(m, y + 1.0, y)
    z = 1.0 / (y * y)
    # (a Python float held in a local would be typed float32 by the interpreter)
    p = 8.33333333333333333333E-2 * z - 2.10927960927960927961E-2
    p = p * z + 7.57575757575757575758E-3
    p = p * z - 4.16666666666666666667E-3
    p = p * z + 3.96825396825396825397E-3
    p = p * z - 8.33333333333333333333E-3
    p = p * z + 8.33333333333333333333E-2
    p = tl.where(y < 1e17, z * p, 0.0)
    psi = res + tl.log(y) - 0.5 / y - p
    r = x - tl.where(x < 0, tl.ceil(x), tl.floor(x))
    refl = psi - 3.141592653589793 / (tl.sin(3.141592653589793 * r) / tl.cos(3.141592653589793 * r))
    out = tl.where(neg, refl, psi)
    out = tl.where(neg & (x == tl.floor(x)), float("nan"), out)
    zero_r = tl.where(x.to(tl.int64, bitcast=True) < 0, float("inf"), -float("inf")).to(tl.float64)
    out = tl.where(x == 0.0, zero_r, out)
    return tl.where(x == float("inf"), x, out)


@triton.jit
def _zeta64(x, q):
    """Hurwitz zeta(x, q) (Cephes): a direct sum until q + i > 9, then Euler-Maclaurin
    with 12 Bernoulli terms."""
    zero = tl.zeros_like(x) + tl.zeros_like(q)
    xx = x + zero
    qq = q + zero
    # (an infinite q gives NaN below; it must not hold the direct sum's loop)
    qs = tl.where((qq == 0.0) | (tl.abs(qq) == float("inf")), 1.0, qq)
    s = tl.exp(-xx * tl.log(tl.abs(qs)))
    # q^-x of a negative q with integer x: the sign of (-1)^x
    odd = (xx - 2.0 * tl.floor(xx * 0.5)) == 1.0
    s = tl.where((qq < 0.0) & odd, -s, s)
    a = qs
    b = zero
    i = 0
    # q below -10^4 stops early (torch's loop would run -q times): inaccurate there
    while (i < 9) | ((i < 10000) & _any(a <= 9.0)):
        m = (i < 9) | (a <= 9.0)
        a = tl.where(m, a + 1.0, a)
        b = tl.where(m, tl.exp(-xx * tl.log(tl.abs(tl.where(a == 0.0, 1.0, a)))), b)
        b = tl.where(m & (a < 0.0) & odd, -b, b)
        s = tl.where(m, s + b, s)
        i += 1
    w = a
    s += b * w / (xx - 1.0)
    s -= 0.5 * b
    aa = zero + 1.0
    k = zero
    bb = b
    for j in tl.static_range(12):
        aa *= xx + k
        bb /= w
        if j == 0:
            t = aa * bb / 12.0
        elif j == 1:
            t = aa * bb / -720.0
        elif j == 2:
            t = aa * bb / 30240.0
        elif j == 3:
            t = aa * bb / -1209600.0
        elif j == 4:
            t = aa * bb / 47900160.0
        elif j == 5:
            t = aa * bb / -1.8924375803183791606e9
        elif j == 6:
            t = aa * bb / 7.47242496e10
        elif j == 7:
            t = aa * bb / -2.950130727918164224e12
        elif j == 8:
            t = aa * bb / 1.1646782814350067249e14
        elif j == 9:
            t = aa * bb / -4.5979787224074726105e15
        elif j == 10:
            t = aa * bb / 1.8152105401943546773e17
        else:
            t = aa * bb / -7.1661652561756670113e18
        s += t
        k += 1.0
        aa *= xx + k
        bb /= w
        k += 1.0
    # torch's edge values, the first test that applies winning (so applied last here)
    s = tl.where((xx == float("inf")) & (qq == 1.0), 1.0, s)
    s = tl.where((xx == float("inf")) & (qq > 0.0) & (qq < 1.0), float("inf"), s)
    s = tl.where(qq == float("inf"), float("nan"), s)
    s = tl.where((qq <= 0.0) & (xx != tl.floor(xx)), float("nan"), s)
    s = tl.where((qq <= 0.0) & (qq == tl.floor(qq)), float("inf"), s)
    s = tl.where(xx < 1.0, float("nan"), s)
    s = tl.where(xx == 1.0, float("inf"), s)
    return tl.where((xx != xx) | (qq != qq), float("nan"), s)


@triton.jit
def _trigamma64(x):
    """psi'(x) = zeta(2, x), reflected below 1/2 (torch's calc_trigamma is this with a
    shorter series, good to ~1e-9)."""
    low = x < 0.5
    s = tl.sin(3.141592653589793 * x)
    inf = x == float("inf")
    z = _zeta64(tl.zeros_like(x) + 2.0, tl.where(low, 1.0 - x, tl.where(inf, 1.0, x)))
    return tl.where(low, 9.869604401089358 / (s * s) - z, tl.where(inf, 0.0, z))  # pi^2


@triton.jit
def _polygamma64(n, x):
    """(-1)^(n+1) n! zeta(n + 1, x) for n >= 2."""
    fact = tl.exp(_lgamma64(n + 1.0))
    sign = tl.where((n - 2.0 * tl.floor(n * 0.5)) == 1.0, 1.0, -1.0).to(tl.float64)
    return sign * fact * _zeta64(n + 1.0, x)


@triton.jit
def _igam_series(a, x):
    """P(a, x) by its power series (Cephes igam)."""
    ax = tl.exp(a * tl.log(x) - x - _lgamma64(a))
    r = a
    c = tl.zeros_like(a) + 1.0
    ans = c
    it = 0
    while (it < 4000) & _any(c > 1.1102230246251565e-16 * ans):
        r += 1.0
        c *= x / r
        ans += c
        it += 1
    return ans * ax / a


@triton.jit
def _igamc_cf(a, x):
    """Q(a, x) by its continued fraction (Cephes igamc), rescaled against overflow."""
    ax = tl.exp(a * tl.log(x) - x - _lgamma64(a))
    y = 1.0 - a
    z = x + y + 1.0
    c = tl.zeros_like(a)
    pkm2 = c + 1.0
    qkm2 = x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = c + 1.0
    it = 0
    # the ratio settles within a few ulp of its limit, not always within one
    while (it < 4000) & _any(t > 8.0 * 1.1102230246251565e-16):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        r = pk / tl.where(qk != 0.0, qk, 1.0)
        t = tl.where(qk != 0.0, tl.abs((ans - r) / r), 1.0)
        ans = tl.where(qk != 0.0, r, ans)
        pkm2 = pkm1
        pkm1 = pk
        qkm2 = qkm1
        qkm1 = qk
        sc = tl.where(tl.abs(pk) > 4.503599627370496e15, 2.22044604925031308085e-16, 1.0)
        pkm2 *= sc
        pkm1 *= sc
        qkm2 *= sc
        qkm1 *= sc
        it += 1
    return ans * ax


@triton.jit
def _igamc_small(a, x):
    """Q(a, x) for small x: 1 - x^a / Gamma(a + 1) corrected by a series (Cephes)."""
    fac = tl.zeros_like(a) + 1.0
    s = tl.zeros_like(a)
    n = tl.zeros_like(a)
    term = fac
    it = 0
    while (it < 2000) & _any(tl.abs(term) > 1.1102230246251565e-16 * tl.abs(s)):
        n += 1.0
        fac *= -x / n
        term = fac / (a + n)
        s += term
        it += 1
    logx = tl.log(x)
    t = a * logx - _lgamma64(a + 1.0)
    return -_expm1(t) - tl.exp(a * logx - _lgamma64(a)) * s


@triton.jit
def _igam_pair(a, x, UPPER: tl.constexpr):
    """P(a, x) (UPPER false) or Q(a, x), with torch's choice of method and edge values;
    each method runs on its own lanes only (the others get inputs that converge at once)."""
    a = a + tl.zeros_like(x)
    x = x + tl.zeros_like(a)
    ok = (a > 0.0) & (x > 0.0) & (a < float("inf")) & (x < float("inf"))
    aa = tl.where(ok, a, 1.0)
    xx = tl.where(ok, x, 1.0)
    if UPPER:
        use_small = ((xx <= 0.5) & (-0.4 / tl.log(tl.where(xx < 1.0, xx, 0.5)) >= aa)) | (
            (xx > 0.5) & (xx <= 1.1) & (xx * 1.1 >= aa))
        use_cf = (xx > 1.1) & (xx >= aa)
    else:
        use_small = xx != xx
        use_cf = (xx > 1.0) & (xx > aa)
    use_ser = ~use_small & ~use_cf
    ser = _igam_series(tl.where(use_ser, aa, 1.0), tl.where(use_ser, xx, 1e-3))
    cf = _igamc_cf(tl.where(use_cf, aa, 1.0), tl.where(use_cf, xx, 50.0))
    if UPPER:
        small = _igamc_small(tl.where(use_small, aa, 1.0), tl.where(use_small, xx, 1e-3))
        r = tl.where(use_cf, cf, tl.where(use_small, small, 1.0 - ser))
        r = tl.where(x == 0.0, 1.0, r)
        r = tl.where((a == 0.0) & (x > 0.0), 0.0, r)
        r = tl.where((a == float("inf")) & (x < float("inf")), 1.0, r)
        r = tl.where((x == float("inf")) & (a < float("inf")), 0.0, r)
    else:
        r = tl.where(use_cf, 1.0 - cf, ser)
        r = tl.where(x == 0.0, 0.0, r)
        r = tl.where((a == 0.0) & (x > 0.0), 1.0, r)
        r = tl.where((a == float("inf")) & (x < float("inf")), 0.0, r)
        r = tl.where((x == float("inf")) & (a < float("inf")), 1.0, r)
    both_inf = (a == float("inf")) & (x == float("inf"))
    bad = (a < 0.0) | (x < 0.0) | ((a == 0.0) & (x == 0.0)) | both_inf
    return tl.where(bad | (a != a) | (x != x), float("nan"), r)


# ---- the normal distribution ----------------------------------------------------------

@triton.jit
def _erfcx64(x):
    """e^(x^2) erfc(x): e^(x^2) (1 - erf x) below 2, Laplace's continued fraction above."""
    ac = tl.where(x < 2.0, 2.0, x)
    ac = tl.where(ac < 1e8, ac, 1e8)
    f = ac
    for k in tl.static_range(60, 0, -1):
        f = ac + (k * 0.5) / f
    cf = 0.5641895835477563 / f
    cf = tl.where(x > 1e8, 0.5641895835477563 / x, cf)
    xl = tl.where(x < 2.0, x, 0.0)
    hi = xl * xl
    lo = tl.fma(xl, xl, -hi)
    low = tl.exp(hi) * (1.0 + lo) * _erfc64(xl)
    low = tl.where(x < -26.7, float("inf"), low)
    return tl.where(x < 2.0, low, tl.where(x != x, x, cf))


@triton.jit
def _ndtr64(x):
    return 0.5 * _erfc64(-x * 0.7071067811865476)


@triton.jit
def _ndtri64(p):
    """The normal quantile: Acklam's rational approximation, two Halley steps."""
    pp = tl.where((p > 0.0) & (p < 1.0), p, 0.5)
    lower = pp < 0.02425
    upper = pp > 1.0 - 0.02425
    qt = tl.sqrt(-2.0 * tl.log(tl.where(lower, pp, tl.where(upper, 1.0 - pp, 0.5))))
    tail = ((((-7.784894002430293e-03 * qt - 3.223964580411365e-01) * qt
              - 2.400758277161838e+00) * qt - 2.549732539343734e+00) * qt
            + 4.374664141464968e+00) * qt + 2.938163982698783e+00
    tail = tail / ((((7.784695709041462e-03 * qt + 3.224671290700398e-01) * qt
                     + 2.445134137142996e+00) * qt + 3.754408661907416e+00) * qt + 1.0)
    tail = tl.where(upper, -tail, tail)
    qc = pp - 0.5
    r = qc * qc
    cen = (((((-3.969683028665376e+01 * r + 2.209460984245205e+02) * r
              - 2.759285104469687e+02) * r + 1.383577518672690e+02) * r
            - 3.066479806614716e+01) * r + 2.506628277459239e+00) * qc
    cen = cen / (((((-5.447609879822406e+01 * r + 1.615858368580409e+02) * r
                    - 1.556989798598866e+02) * r + 6.680131188771972e+01) * r
                  - 1.328068155288572e+01) * r + 1.0)
    z = tl.where(lower | upper, tail, cen)
    for _ in tl.static_range(2):
        # ndtr(z) - p; in the upper tail from the complements, which keep their accuracy
        nz = _ndtr64(tl.where(upper, -z, z))
        e = tl.where(upper, (1.0 - pp) - nz, nz - pp)
        u = e * 2.5066282746310002 * tl.exp(z * z * 0.5)
        z = z - u / (1.0 + z * u * 0.5)
    z = tl.where(p == 0.0, -float("inf"), tl.where(p == 1.0, float("inf"), z))
    return tl.where((p < 0.0) | (p > 1.0) | (p != p), float("nan"), z)


@triton.jit
def _log_ndtr64(x):
    t = x * 0.7071067811865476
    left = tl.where(x < -1.0, x, -2.0) * 0.7071067811865476
    lo = tl.log(_erfcx64(-left) * 0.5) - left * left
    hi = _log1p(-_erfc64(tl.where(x < -1.0, 0.0, t)) * 0.5)
    return tl.where(x < -1.0, lo, hi)


# ---- the ops (name in pointwise_ops.UNARY / BINARY) -----------------------------------

@triton.jit
def _lgamma(x, p0, p1, p2):
    return _lgamma64(_f64(x)).to(x.dtype)


@triton.jit
def _digamma(x, p0, p1, p2):
    return _digamma64(_f64(x)).to(x.dtype)


@triton.jit
def _trigamma(x, p0, p1, p2):
    return _trigamma64(_f64(x)).to(x.dtype)


@triton.jit
def _polygamma(x, p0, p1, p2):
    """polygamma(n = p0, x) for n >= 2."""
    return _polygamma64(p0 + tl.zeros_like(_f64(x)), _f64(x)).to(x.dtype)


@triton.jit
def _zeta(x, q, p0, p1, p2):
    return _zeta64(_f64(x), _f64(q)).to(x.dtype)


@triton.jit
def _igamma(a, x, p0, p1, p2):
    return _igam_pair(_f64(a), _f64(x), False).to(a.dtype)


@triton.jit
def _igammac(a, x, p0, p1, p2):
    return _igam_pair(_f64(a), _f64(x), True).to(a.dtype)


@triton.jit
def _i0(x, p0, p1, p2):
    return _bessel_i64(_f64(x), 0, False).to(x.dtype)


@triton.jit
def _i0e(x, p0, p1, p2):
    return _bessel_i64(_f64(x), 0, True).to(x.dtype)


@triton.jit
def _i1(x, p0, p1, p2):
    d = _f64(x)
    r = _bessel_i64(d, 1, False)
    return tl.where(tl.abs(d) == float("inf"), float("nan"), r).to(x.dtype)  # torch's i1(+-inf)


@triton.jit
def _i1e(x, p0, p1, p2):
    return _bessel_i64(_f64(x), 1, True).to(x.dtype)


@triton.jit
def _k0(x, p0, p1, p2):
    return _bessel_k64(_f64(x), 0, False).to(x.dtype)


@triton.jit
def _k1(x, p0, p1, p2):
    return _bessel_k64(_f64(x), 1, False).to(x.dtype)


@triton.jit
def _k0e(x, p0, p1, p2):
    return _bessel_k64(_f64(x), 0, True).to(x.dtype)


@triton.jit
def _k1e(x, p0, p1, p2):
    return _bessel_k64(_f64(x), 1, True).to(x.dtype)


@triton.jit
def _bessel_j0(x, p0, p1, p2):
    return _bessel_jy64(_f64(x), 0, False).to(x.dtype)


@triton.jit
def _bessel_j1(x, p0, p1, p2):
    return _bessel_jy64(_f64(x), 1, False).to(x.dtype)


@triton.jit
def _bessel_y0(x, p0, p1, p2):
    return _bessel_jy64(_f64(x), 0, True).to(x.dtype)


@triton.jit
def _bessel_y1(x, p0, p1, p2):
    return _bessel_jy64(_f64(x), 1, True).to(x.dtype)


@triton.jit
def _spherical_j0(x, p0, p1, p2):
    d = _f64(x)
    r = tl.sin(d) / tl.where(d == 0.0, 1.0, d)
    r = tl.where(d == 0.0, 1.0, r)
    return tl.where(tl.abs(d) == float("inf"), 0.0, r).to(x.dtype)


@triton.jit
def _ndtr(x, p0, p1, p2):
    return _ndtr64(_f64(x)).to(x.dtype)


@triton.jit
def _ndtri(x, p0, p1, p2):
    return _ndtri64(_f64(x)).to(x.dtype)


@triton.jit
def _log_ndtr(x, p0, p1, p2):
    return _log_ndtr64(_f64(x)).to(x.dtype)


@triton.jit
def _erfcx(x, p0, p1, p2):
    return _erfcx64(_f64(x)).to(x.dtype)


@triton.jit
def _entr(x, p0, p1, p2):
    d = _f64(x)
    r = -d * tl.log(tl.where(d > 0.0, d, 1.0))
    r = tl.where(d == 0.0, 0.0, tl.where(d < 0.0, -float("inf"), r))
    return tl.where(d != d, d, r).to(x.dtype)


@triton.jit
def _xlog1py(x, y, p0, p1, p2):
    a = _f64(x)
    b = _f64(y)
    r = a * _log1p(b)
    r = tl.where(a == 0.0, 0.0, r)
    return tl.where(b != b, b, r).to(x.dtype)


SPECIAL_UNARY = {
    "lgamma": _lgamma, "digamma": _digamma, "trigamma": _trigamma, "polygamma": _polygamma,
    "i0": _i0, "i0e": _i0e, "i1": _i1, "i1e": _i1e, "k0": _k0, "k1": _k1, "k0e": _k0e,
    "k1e": _k1e, "bessel_j0": _bessel_j0, "bessel_j1": _bessel_j1, "bessel_y0": _bessel_y0,
    "bessel_y1": _bessel_y1, "spherical_bessel_j0": _spherical_j0, "ndtr": _ndtr,
    "ndtri": _ndtri, "log_ndtr": _log_ndtr, "erfcx": _erfcx, "entr": _entr,
}
SPECIAL_BINARY = {"zeta": _zeta, "igamma": _igamma, "igammac": _igammac, "xlog1py": _xlog1py}
