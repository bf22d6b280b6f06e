"""Scalar helpers of the Triton pointwise ops: the math Triton lacks (atan, erfc, pow,
an exact fmod, ...) built in float64 from exp/log/sqrt/erf/fma and bit operations, and
the bit-level bfloat16/float16 helpers. See pointwise_ops.py."""
import triton
import triton.language as tl



# ---- scalar helpers -------------------------------------------------------------------

@triton.jit
def _isnan(x):
    return x != x  # always False for integers and bool


@triton.jit
def _fdiv(a, b):
    """a / b correctly rounded: float32 `/` is an approximate division on the GPU."""
    if a.dtype == tl.float32:
        r = tl.div_rn(a, b)
    else:
        r = a / b
    return r


@triton.jit
def _log1p(x):
    """log(1 + x) accurate near 0 from log (Goldberg: log(u) * x / (u - 1), u = 1 + x)."""
    u = 1.0 + x
    r = tl.where(u == 1.0, x, tl.log(u) * _fdiv(x, u - 1.0))
    return tl.where(u == float("inf"), u, r)


@triton.jit
def _expm1(x):
    """exp(x) - 1 accurate near 0 from exp and log (Kahan: (u - 1) * x / log(u) for
    |x| < 1, where u - 1 cancels; u - 1 beyond, where (u - 1) * x could overflow)."""
    u = tl.exp(x)
    r = tl.where(u == 1.0, x, _fdiv((u - 1.0) * x, tl.log(u)))
    r = tl.where(tl.abs(x) < 1.0, r, u - 1.0)
    return tl.where(x != x, x, r)


@triton.jit
def _signbit(x):
    """The sign bit of a float (of any float: 16-bit ones arrive as float32)."""
    if x.dtype == tl.float64:
        r = x.to(tl.int64, bitcast=True) < 0
    else:
        r = x.to(tl.float32).to(tl.int32, bitcast=True) < 0
    return r


@triton.jit
def _copysign(a, b):
    m = tl.abs(a)
    return tl.where(_signbit(b), -m, m)


@triton.jit
def _sqrt(x):
    """IEEE square root: tl.sqrt is approximate for float32 on the GPU, and tl.sqrt_rn
    takes only float32 (float64 tl.sqrt is IEEE)."""
    if x.dtype == tl.float64:
        r = tl.sqrt(x)
    else:
        r = tl.sqrt_rn(x)
    return r


@triton.jit
def _f64(x):
    return x.to(tl.float64)


@triton.jit
def _atan64(x):
    """atan of a float64 (Cephes atan: |x| reduced to [0, 0.66] by x -> -1/x or
    (x - 1)/(x + 1), then x + x^3 P(x^2)/Q(x^2)); under 1 ulp, NaN stays NaN."""
    a = tl.abs(x)
    big = a > 2.414213562373095  # tan(3 pi / 8)
    mid = (a > 0.66) & (a <= 2.414213562373095)
    t = tl.where(big, -1.0 / tl.where(big, a, 1.0), tl.where(mid, (a - 1.0) / (a + 1.0), a))
    zero = tl.zeros_like(a)  # a where() of two Python floats would be float32
    y0 = tl.where(big, zero + 1.5707963267948966, tl.where(mid, 0.7853981633974483, zero))
    more = tl.where(big, zero + 6.123233995736766e-17, tl.where(mid, 3.061616997868383e-17, zero))
    z = t * t
    p = (((-8.750608600031904e-1 * z - 1.6157537187333652e1) * z - 7.500855792314705e1) * z
         - 1.2288666844901361e2) * z - 6.485021904942025e1
    q = ((((z + 2.4858464901423062e1) * z + 1.6502700983169885e2) * z
          + 4.328810604912903e2) * z + 4.853903996359137e2) * z + 1.9455065714826139e2
    r = y0 + ((t * (z * p / q) + t) + more)
    return _copysign(r, x)


@triton.jit
def _log1p64(x):
    return _log1p(_f64(x))


@triton.jit
def _expm1_64(x):
    return _expm1(_f64(x))


@triton.jit
def _erfc64(x):
    """erfc in float64: 1 - erf(x) below |x| = 2 (at most 1e-14 relative there), above it
    Laplace's continued fraction e^-x^2 / sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/...)))
    with 50 terms, x^2 split exactly with an fma (about 1 ulp)."""
    d = _f64(x)
    a = tl.abs(d)
    ac = tl.where(a < 2.0, 2.0, a)
    ac = tl.where(ac < 27.0, ac, 27.0)  # erfc(27) underflows: 0 beyond
    f = ac
    for k in tl.static_range(50, 0, -1):
        f = ac + (k * 0.5) / f
    hi = ac * ac
    lo = tl.fma(ac, ac, -hi)
    tail = tl.exp(-hi) * (1.0 - lo) * 0.5641895835477563 / f  # 1 / sqrt(pi)
    tail = tl.where(a >= 27.0, 0.0, tail)
    tail = tl.where(d < 0, 2.0 - tail, tail)
    return tl.where(a < 2.0, 1.0 - tl.erf(d), tl.where(d != d, d, tail))


@triton.jit
def _exponent64(x):
    """The biased binary exponent of a finite float64 x >= 0 (subnormals below 1)."""
    f = (x.to(tl.int64, bitcast=True) >> 52) & 0x7FF
    fs = ((x * 18014398509481984.0).to(tl.int64, bitcast=True) >> 52) & 0x7FF  # x * 2^54
    return tl.where(f == 0, fs - 54, f)


@triton.jit
def _pow2_64(k):
    """2^k as a float64 for integer 0 <= k <= 1023."""
    return ((k + 1023) << 52).to(tl.float64, bitcast=True)


@triton.jit
def _fmod_step(r, b, k):
    """r mod (b 2^k) for r, b >= 0 with r / (b 2^k) < 2^53: exact (an fma; the rounded
    quotient is at most one too big)."""
    k1 = k // 2
    bs = b * _pow2_64(k1) * _pow2_64(k - k1)
    q = tl.floor(r / bs)
    r = tl.fma(-q, bs, r)
    return tl.where(r < 0, r + bs, r)


@triton.jit
def _fmod64(a, b):
    """C fmod in float64, exact: |a| is reduced modulo |b| 2^k, 52 bits of the exponent gap
    per step (one step unless |a / b| >= 2^53), then modulo |b|; the sign of a."""
    a = _f64(a)
    b = _f64(b)
    inf = float("inf")
    ab = tl.abs(b)
    aa = tl.abs(a)
    finite = (ab > 0) & (ab < inf) & (aa < inf)
    r = tl.where(finite, aa, 0.0)
    bb = tl.where(finite, ab, 1.0)
    eb = _exponent64(bb)
    k = tl.maximum(_exponent64(r) - eb - 52, 0)
    while tl.max(k, axis=0) > 0:
        r = _fmod_step(r, bb, k)
        k = tl.maximum(_exponent64(r) - eb - 52, 0)
    r = _copysign(_fmod_step(r, bb, k), a)
    r = tl.where((ab == inf) & (aa < inf), a, r)  # fmod(x, inf) = x
    return tl.where((b == 0) | (aa == inf) | (a != a) | (b != b), float("nan"), r)


@triton.jit
def _ipow64(x, n):
    """x ** n by squaring for integer |n| <= 64 (exact when the result is representable);
    the result for other n is unused."""
    m = tl.abs(n)
    r = tl.full(x.shape, 1.0, tl.float64)
    base = x
    for _ in tl.static_range(7):
        bit = m - tl.floor(m * 0.5) * 2.0
        # multiply by the squares taken only: no lane overflows (and warns in the
        # interpreter) on a square it does not use
        r = r * tl.where(bit != 0, base, 1.0)
        base = base * tl.where(m >= 2.0, base, 1.0)
        m = tl.floor(m * 0.5)
    return tl.where(n < 0, 1.0 / tl.where(n < 0, r, 1.0), r)


@triton.jit
def _pow64(x, y):
    """C pow in float64: special values as C99 Annex F, integer |y| <= 64 by squaring,
    else exp(y log|x|) with the sign of odd integer powers of negative bases."""
    x = _f64(x)
    y = _f64(y)
    inf = float("inf")
    ax = tl.abs(x)
    y_int = (tl.floor(y) == y) & (tl.abs(y) < inf)
    y_odd = y_int & (tl.floor(y * 0.5) * 2.0 != y)
    # every branch runs on every lane: each sees |x| only where it is taken and |x| is not
    # 0 (a case of its own), so that 0 ** y raises no floating-point warning in the
    # interpreter
    sq = _ipow64(tl.where(ax == 0, 1.0, ax), y)
    small = y_int & (tl.abs(y) <= 64.0) & (sq != 0) & (tl.abs(sq) < inf) & (ax != 0)
    mag = tl.exp(y * tl.log(tl.where(small | (ax == 0), 1.0, ax)))
    mag = tl.where(ax == 0, tl.where(y < 0, inf, 0.0), mag)
    mag = tl.where(small, sq, mag)
    mag = tl.where(ax == 1.0, 1.0, mag)  # 1 ** inf, (-1) ** inf
    r = tl.where(y_odd & _signbit(x), -mag, mag)
    r = tl.where((x < 0) & (x > -inf) & ~y_int & (tl.abs(y) < inf), float("nan"), r)
    r = tl.where((x != x) | (y != y), float("nan"), r)
    return tl.where((y == 0) | (x == 1.0), 1.0, r)


@triton.jit
def _round_even(x):
    """Round half to even (nearbyint); d = x - floor(x) is exact or rounds harmlessly."""
    f = tl.floor(x)
    d = x - f
    f_even = tl.floor(f * 0.5) * 2.0 == f
    r = tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, tl.where(f_even, f, f + 1.0)))
    return _copysign(r, x)  # -0.4 -> -0.


@triton.jit
def _nextafter_bits(a, b, STEP: tl.constexpr):
    """nextafter on the bit pattern of a's float type: one step of STEP in the integer
    view (65536 steps bfloat16 values held in float32)."""
    if a.dtype == tl.float64:
        bits = a.to(tl.int64, bitcast=True)
    elif a.dtype == tl.float32:
        bits = a.to(tl.int32, bitcast=True)
    else:
        bits = a.to(tl.int16, bitcast=True)
    step = tl.full(bits.shape, STEP, bits.dtype)
    tiny = step.to(a.dtype, bitcast=True)  # the smallest subnormal
    away = (a < b) == (a > 0)
    r = tl.where(away, bits + step, bits - step).to(a.dtype, bitcast=True)
    r = tl.where(a == 0, tl.where(b > 0, tiny, -tiny), r)
    r = tl.where(a == b, b, r)
    return tl.where((a != a) | (b != b), a + b, r)


@triton.jit
def _tanh(x):
    """tanh from exp in float64: Taylor series near 0, where (e - 1) / (e + 1) cancels."""
    d = x.to(tl.float64)
    ad = tl.abs(d)
    e = tl.exp(-2.0 * ad)
    big = (1.0 - e) / (1.0 + e)
    z = d * d
    small = ad * (1.0 + z * (-0.3333333333333333 + z * (0.13333333333333333 + z * (
        -0.05396825396825397 + z * 0.021869488536155203))))
    r = tl.where(ad < 0.01, small, big)
    r = tl.where(d < 0, -r, r)
    return tl.where(d != d, d, r).to(x.dtype)


@triton.jit
def _to_int_wrapping(x, ty: tl.constexpr):
    """x.to(ty), where a float going to an integer type narrower than 64 bits goes through
    int64 first, so that out-of-range values wrap as on the CPU and in PyTorch (uint8(-1.) is
    255): a GPU's direct conversion (cvt.rzi.u8.f32) saturates to 0 instead."""
    if x.dtype.is_floating() and ty.is_int() and ty.primitive_bitwidth < 64 and ty != tl.int1:
        y = x.to(tl.int64).to(ty)
    else:
        y = x.to(ty)
    return y
