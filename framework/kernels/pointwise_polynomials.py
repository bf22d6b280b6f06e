"""The orthogonal polynomials of torch.special as Triton binary pointwise functions p(x, n)
(Chebyshev T, U, V, W and the shifted ones, Hermite H and He, Laguerre L, Legendre P),
listed in pointwise_ops.BINARY under the CPU's kernel names
(native/pointwise_polynomials.cpp, the same method).

As PyTorch does: n is truncated to an integer, n < 0 gives 0, the ends of the interval have
exact values, and the three-term recurrence runs in the operand's dtype (float16 and
bfloat16 in float32), so float32 results overflow where PyTorch's do. The block runs the
recurrence up to its largest degree; each lane keeps its value once its own degree is
reached. The Airy function Ai (unary) is here too: its methods are those of
native/pointwise_polynomials.cpp, in float64.
"""
import triton
import triton.language as tl

from .pointwise_bessel import _any


@triton.jit
def _ctype(x):
    """x in the compute type: float16 and bfloat16 widen to float32."""
    # one return: a compiled @jit helper may not return two types, even behind a
    # condition known at compile time
    if x.dtype == tl.float64:
        y = x
    else:
        y = x.to(tl.float32)
    return y


@triton.jit
def _degree(n):
    """n as an integer degree, truncated toward 0 (-0.5 is degree 0); NaN gives -1."""
    d = _ctype(n)
    d = tl.minimum(tl.maximum(d, -1.0), 9.0e18)
    return tl.where(d == d, d, -1.0).to(tl.int64)


@triton.jit
def _recur(x, q, ni, KIND: tl.constexpr):
    """p_n from p_0 = 1, p_1 = q by the recurrence of KIND: 0: p_{k+1} = x p_k - p_{k-1}
    (x is 2y there); 1: Hermite H; 2: Hermite He; 3: Laguerre; 4: Legendre."""
    p = tl.full(x.shape, 1.0, x.dtype)
    nmax = tl.max(ni, axis=0)
    k = 1
    while k < nmax:
        kf = k * 1.0
        if KIND == 0:
            r = x * q - p
        elif KIND == 1:
            r = (x + x) * q - (kf + kf) * p
        elif KIND == 2:
            r = x * q - kf * p
        elif KIND == 3:
            r = ((kf + kf) + (1.0 - x)) * q - kf * p
            r = r / (kf + 1.0)
        else:
            r = ((kf + kf + 1.0) * x * q - kf * p) / (kf + 1.0)
        upd = k < ni
        p = tl.where(upd, q, p)
        q = tl.where(upd, r, q)
        k += 1
    q = tl.where(ni == 0, 1.0, q)
    return tl.where(ni < 0, 0.0, q)


@triton.jit
def _odd(ni):
    return (ni % 2) != 0


@triton.jit
def _chebyshev_t(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    r = _recur(y + y, y, ni, 0)
    end = tl.where((y > 0.0) | ~_odd(ni), 1.0, -1.0)
    r = tl.where((tl.abs(y) == 1.0) & (ni >= 0), end, r)
    return r.to(x.dtype)


@triton.jit
def _chebyshev_u(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    r = _recur(y + y, y + y, ni, 0)
    m = (ni + 1).to(y.dtype)
    end = tl.where((y > 0.0) | ~_odd(ni), m, -m)
    r = tl.where((tl.abs(y) == 1.0) & (ni >= 0), end, r)
    return r.to(x.dtype)


@triton.jit
def _chebyshev_v(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    r = _recur(y + y, y + y - 1.0, ni, 0)
    m = (ni + ni + 1).to(y.dtype)
    end = tl.where(y > 0.0, 1.0, tl.where(_odd(ni), -m, m))
    r = tl.where((tl.abs(y) == 1.0) & (ni >= 0), end, r)
    return r.to(x.dtype)


@triton.jit
def _chebyshev_w(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    r = _recur(y + y, y + y + 1.0, ni, 0)
    m = (ni + ni + 1).to(y.dtype)
    end = tl.where(y > 0.0, m, tl.where(_odd(ni), -1.0, 1.0))
    r = tl.where((tl.abs(y) == 1.0) & (ni >= 0), end, r)
    return r.to(x.dtype)


@triton.jit
def _shifted_t(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    s = y + y - 1.0
    r = _recur(s + s, s, ni, 0)
    r = tl.where(y == 0.0, tl.where(_odd(ni), -1.0, 1.0), r)
    r = tl.where(y == 1.0, 1.0, r)
    return tl.where(ni < 0, 0.0, r).to(x.dtype)


@triton.jit
def _shifted_u(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    s = y + y - 1.0
    r = _recur(s + s, s + s, ni, 0)
    m = (ni + 1).to(y.dtype)
    r = tl.where(y == 0.0, tl.where(_odd(ni), -m, m), r)
    r = tl.where(y == 1.0, m, r)
    return tl.where(ni < 0, 0.0, r).to(x.dtype)


@triton.jit
def _shifted_v(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    s = y + y - 1.0
    r = _recur(s + s, s + s - 1.0, ni, 0)
    m = (ni + ni + 1).to(y.dtype)
    r = tl.where(y == 0.0, tl.where(_odd(ni), -m, m), r)
    r = tl.where(y == 1.0, 1.0, r)
    return tl.where(ni < 0, 0.0, r).to(x.dtype)


@triton.jit
def _shifted_w(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    s = y + y - 1.0
    r = _recur(s + s, s + s + 1.0, ni, 0)
    m = (ni + ni + 1).to(y.dtype)
    r = tl.where(y == 0.0, tl.where(_odd(ni), -1.0, 1.0), r)
    r = tl.where(y == 1.0, m, r)
    return tl.where(ni < 0, 0.0, r).to(x.dtype)


@triton.jit
def _hermite_h(x, n, p0, p1, p2):
    y = _ctype(x)
    return _recur(y, y + y, _degree(n), 1).to(x.dtype)


@triton.jit
def _hermite_he(x, n, p0, p1, p2):
    y = _ctype(x)
    return _recur(y, y, _degree(n), 2).to(x.dtype)


@triton.jit
def _laguerre_l(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    r = _recur(y, 1.0 - y, ni, 3)
    return tl.where((y == 0.0) & (ni >= 0), 1.0, r).to(x.dtype)


@triton.jit
def _legendre_p(x, n, p0, p1, p2):
    y = _ctype(x)
    ni = _degree(n)
    r = _recur(y, y, ni, 4)
    end = tl.where((y > 0.0) | ~_odd(ni), 1.0, -1.0)
    r = tl.where((tl.abs(y) == 1.0) & (ni >= 0), end, r)
    return r.to(x.dtype)


# ---- the Airy function Ai ------------------------------------------------------------------

@triton.jit
def _airy_series(x):
    """Maclaurin series of Ai, used on [-7, 2.09]."""
    x3 = x * x * x
    f = tl.full(x.shape, 1.0, tl.float64)
    g = x
    tf = f
    tg = x
    k = 1.0
    it = 0
    while (it < 200) & _any((tl.abs(tf) > 1e-17 * tl.abs(f)) | (tl.abs(tg) > 1e-17 * tl.abs(g))):
        tf = tf * x3 / ((3.0 * k - 1.0) * (3.0 * k))
        tg = tg * x3 / ((3.0 * k) * (3.0 * k + 1.0))
        f += tf
        g += tg
        k += 1.0
        it += 1
    return 0.355028053887817239 * f - 0.258819403792806798 * g


@triton.jit
def _k13_steed(z):
    """K_{1/3}(z) e^z sqrt(2 z / pi) as 1 / s, z >= 2: the s of Steed's continued fraction."""
    # 1/4 - nu^2 for nu = 1/3 built as a float64 tensor: a Python float bound to a name
    # before the loop would enter it as a float32 scalar
    a1 = (tl.zeros(z.shape, tl.float64) + 5.0) / 36.0
    b = 2.0 * (1.0 + z)
    d = 1.0 / b
    delh = d
    q1 = tl.zeros(z.shape, tl.float64)
    q2 = q1 + 1.0
    q = q1 + a1
    c = q
    a = -q
    s = 1.0 + q * delh
    dels = s
    i = 2.0
    it = 0
    while (it < 1000) & _any(tl.abs(dels) >= 1e-17 * tl.abs(s)):
        a -= 2.0 * (i - 1.0)
        c = -a * c / i
        qn = (q1 - b * q2) / a
        q1 = q2
        q2 = qn
        q += c * qn
        b += 2.0
        d = 1.0 / (b + a * d)
        delh = (b * d - 1.0) * delh
        dels = q * delh
        s += dels
        i += 1.0
        it += 1
    return s


@triton.jit
def _airy_neg(x):
    """The asymptotic expansion (DLMF 9.7.9) of Ai(-z), z > 7."""
    z = -x
    zeta = 2.0 / 3.0 * z * tl.sqrt(z)
    u = tl.full(x.shape, 1.0, tl.float64)
    p = u
    q = tl.zeros(x.shape, tl.float64)
    zk = u
    for k in tl.static_range(1, 24):
        u = u * ((6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0)
                 / ((2.0 * k - 1.0) * 216.0 * k))
        zk = zk / zeta
        t = u * zk
        if (k // 2) % 2 == 1:
            t = -t
        if k % 2 == 1:
            q += t
        else:
            p += t
    ph = zeta - 0.7853981633974483
    return (tl.cos(ph) * p + tl.sin(ph) * q) / (1.7724538509055159 * tl.sqrt(tl.sqrt(z)))


@triton.jit
def _airy_ai(x, p0, p1, p2):
    """Ai(x), in float64: as native/pointwise_polynomials.cpp (NaN at +-inf, 0 past
    103.892)."""
    d = x.to(tl.float64)
    pos = d > 2.09
    neg = d < -7.0
    xs = tl.where(pos | neg | (d != d), 0.0, d)
    ser = _airy_series(xs)
    xp = tl.where(pos & (d <= 103.892), d, 3.0)
    zeta = 2.0 / 3.0 * xp * tl.sqrt(xp)
    big = (tl.sqrt(xp / 3.0) * 0.3183098861837907 * tl.sqrt(3.141592653589793 / (2.0 * zeta))
           * tl.exp(-zeta) / _k13_steed(zeta))
    xn = tl.where(neg & (d > -float("inf")), d, -8.0)
    small = _airy_neg(xn)
    r = tl.where(pos, tl.where(d > 103.892, 0.0, big), tl.where(neg, small, ser))
    r = tl.where((d != d) | (tl.abs(d) == float("inf")), float("nan"), r)
    return r.to(x.dtype)


POLYNOMIAL_UNARY = {"airy_ai": _airy_ai}
POLYNOMIAL_BINARY = {
    "chebyshev_polynomial_t": _chebyshev_t, "chebyshev_polynomial_u": _chebyshev_u,
    "chebyshev_polynomial_v": _chebyshev_v, "chebyshev_polynomial_w": _chebyshev_w,
    "shifted_chebyshev_polynomial_t": _shifted_t, "shifted_chebyshev_polynomial_u": _shifted_u,
    "shifted_chebyshev_polynomial_v": _shifted_v, "shifted_chebyshev_polynomial_w": _shifted_w,
    "hermite_polynomial_h": _hermite_h, "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre_l, "legendre_polynomial_p": _legendre_p,
}
