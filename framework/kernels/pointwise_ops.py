"""Scalar functions of the Triton pointwise ops (framework/kernels/pointwise.py).

Each op is a ``@triton.jit`` function of its operand values and the three float64
parameters p0, p1, p2, returning the result in the compute dtype (float32 for 16-bit
floats, else the operands' dtype); pointwise.py wraps it in the N-d strided kernel of its
arity and rounds the result to the output dtype. The formulas follow the CPU kernels
(native/pointwise_{unary,binary,ternary}.cpp) line for line where they differ from the
naive ones: NaN propagation in maximum/minimum/clamp, the two-sided lerp, abs(-0.) = 0.,
integer parameters truncated like ``from_param``, Python's floor division and remainder.
The functions that Triton lacks (atan, erfc, pow, an exact fmod, ...) are built here in
float64 from exp/log/sqrt/erf/fma and bit operations (the ``*64`` helpers); Python float
constants are typed float64 only next to a float64 tensor (a ``where`` of two Python
floats would be float32). PER_DTYPE holds the versions an op needs for one dtype
(nextafter of 16-bit floats).
"""
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
        r = tl.where(bit != 0, r * base, r)
        base = base * base
        m = tl.floor(m * 0.5)
    return tl.where(n < 0, 1.0 / r, r)


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
    mag = tl.exp(y * tl.log(ax))
    sq = _ipow64(ax, y)
    small = y_int & (tl.abs(y) <= 64.0) & (sq != 0) & (tl.abs(sq) < inf)
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


# ---- binary ops -----------------------------------------------------------------------

@triton.jit
def _add(a, b, p0, p1, p2):
    if a.dtype == tl.int1:
        r = a | b  # add on bool is logical or
    else:
        r = a + p0.to(a.dtype) * b
    return r


@triton.jit
def _sub(a, b, p0, p1, p2):
    return a - p0.to(a.dtype) * b


@triton.jit
def _mul(a, b, p0, p1, p2):
    if a.dtype == tl.int1:
        r = a & b
    else:
        r = a * b
    return r


@triton.jit
def _div(a, b, p0, p1, p2):
    return _fdiv(a, b)


@triton.jit
def _maximum(a, b, p0, p1, p2):
    return tl.where(_isnan(a) | (a > b), a, b)  # NaN propagates


@triton.jit
def _minimum(a, b, p0, p1, p2):
    return tl.where(_isnan(a) | (a < b), a, b)


@triton.jit
def _eq(a, b, p0, p1, p2):
    return a == b


@triton.jit
def _ne(a, b, p0, p1, p2):
    return a != b


@triton.jit
def _lt(a, b, p0, p1, p2):
    return a < b


@triton.jit
def _le(a, b, p0, p1, p2):
    return a <= b


@triton.jit
def _gt(a, b, p0, p1, p2):
    return a > b


@triton.jit
def _ge(a, b, p0, p1, p2):
    return a >= b


@triton.jit
def _lerp2(a, b, p0, p1, p2):
    return _lerp3(a, b, p0.to(a.dtype), p0, p1, p2)


@triton.jit
def _fmax(a, b, p0, p1, p2):
    return tl.where(_isnan(b) | (a > b), a, b)  # NaN is ignored


@triton.jit
def _fmin(a, b, p0, p1, p2):
    return tl.where(_isnan(b) | (a < b), a, b)


@triton.jit
def _logical_and(a, b, p0, p1, p2):
    return (a != 0) & (b != 0)


@triton.jit
def _logical_or(a, b, p0, p1, p2):
    return (a != 0) | (b != 0)


@triton.jit
def _logical_xor(a, b, p0, p1, p2):
    return (a != 0) != (b != 0)


@triton.jit
def _bitwise_and(a, b, p0, p1, p2):
    return a & b


@triton.jit
def _bitwise_or(a, b, p0, p1, p2):
    return a | b


@triton.jit
def _bitwise_xor(a, b, p0, p1, p2):
    return a ^ b


@triton.jit
def _heaviside(x, v, p0, p1, p2):
    return tl.where(x == 0, v, (x > 0).to(x.dtype))


@triton.jit
def _xlogy(x, y, p0, p1, p2):
    r = tl.where(x == 0, 0.0, x * tl.log(y)).to(x.dtype)
    return tl.where(y != y, y, r)  # NaN in y wins over x == 0


@triton.jit
def _copysign_op(a, b, p0, p1, p2):
    return _copysign(a, b)


@triton.jit
def _hypot(a, b, p0, p1, p2):
    """sqrt(a^2 + b^2) without overflow: m * sqrt(1 + (s / m)^2), m = max(|a|, |b|)."""
    x = tl.abs(a)
    y = tl.abs(b)
    m = tl.where(x > y, x, y)
    s = tl.where(x > y, y, x)
    q = _fdiv(s, tl.where(m == 0, 1.0, m).to(m.dtype))
    r = m * _sqrt(1.0 + q * q)
    r = tl.where((x == float("inf")) | (y == float("inf")), float("inf"), r).to(m.dtype)
    return tl.where((m == 0) | ((r != r) & (r != float("inf"))), m + s, r)


@triton.jit
def _isclose(a, b, p0, p1, p2):
    """rtol = p0, atol = p1, equal_nan = p2; the distance in float64 as on the CPU."""
    ad = a.to(tl.float64)
    bd = b.to(tl.float64)
    inf = float("inf")
    finite = (tl.abs(ad) < inf) & (tl.abs(bd) < inf)
    close = finite & (tl.abs(ad - bd) <= p1 + p0 * tl.abs(bd))
    # equal_nan as a block: the interpreter cannot & a float-compare scalar with a block
    both_nan = (ad != ad) & (bd != bd) & ((tl.zeros_like(ad) + p2) != 0)
    return (a == b) | close | both_nan


@triton.jit
def _logaddexp(a, b, p0, p1, p2):
    m = tl.where(a > b, a, tl.where(b != b, b, tl.where(a != a, a, b)))
    r = m + _log1p(tl.exp(-tl.abs(a - b)))
    return tl.where((tl.abs(a) == float("inf")) & (a == b), a, r)  # inf + inf, -inf + -inf


@triton.jit
def _logaddexp2(a, b, p0, p1, p2):
    m = tl.where(a > b, a, tl.where(b != b, b, tl.where(a != a, a, b)))
    r = m + _log1p(tl.exp2(-tl.abs(a - b))) * 1.4426950408889634
    return tl.where((tl.abs(a) == float("inf")) & (a == b), a, r)


@triton.jit
def _nonzero(b):
    """b with zeros replaced by 1: integer division by zero is flagged by the kernel
    (ZeroDivisionError on the host) and must not fault or trap on the device."""
    return tl.where(b == 0, 1, b).to(b.dtype)


@triton.jit
def _int_div(a, b):
    """Integer quotient rounded toward zero (Triton's // on integers); MIN / -1 wraps."""
    b = _nonzero(b)
    if a.dtype.is_int_signed():
        m1 = b == -1
        r = tl.where(m1, 0 - a, a // tl.where(m1, 1, b).to(b.dtype))
    else:
        r = a // b
    return r


@triton.jit
def _div_trunc(a, b, p0, p1, p2):
    if a.dtype.is_floating():
        q = _fdiv(a, b)
        r = tl.where(q < 0, tl.ceil(q), tl.floor(q))
    else:
        r = _int_div(a, b)
    return r


@triton.jit
def _div_floor(a, b, p0, p1, p2):
    """Floor division: PyTorch's div_floor (Python semantics, the float path via fmod)."""
    if a.dtype.is_floating():
        mod = _fmod64(a, b).to(a.dtype)
        div = _fdiv(a - mod, b)
        div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
        fl = tl.floor(div)
        fl = tl.where(div - fl > 0.5, fl + 1.0, fl)
        fl = tl.where(div == 0, _copysign(tl.zeros_like(div), _fdiv(a, b)), fl)
        r = tl.where(b == 0, _fdiv(a, b), fl)
    else:
        q = _int_div(a, b)
        if a.dtype.is_int_signed():
            bz = _nonzero(b)
            inexact = a % tl.where(bz == -1, 1, bz).to(b.dtype) != 0
            q = tl.where((bz != -1) & ((a < 0) != (bz < 0)) & inexact, q - 1, q)
        r = q
    return r


@triton.jit
def _remainder(a, b, p0, p1, p2):
    """Python-style remainder: the result has the sign of the divisor."""
    if a.dtype.is_floating():
        mod = _fmod64(a, b).to(a.dtype)
        r = tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
    elif a.dtype.is_int_signed():
        bz = _nonzero(b)
        m1 = bz == -1
        r = a % tl.where(m1, 1, bz).to(b.dtype)
        r = tl.where((r != 0) & ((r < 0) != (bz < 0)), r + bz, r)
        r = tl.where(m1, 0, r).to(a.dtype)
    else:
        r = a % _nonzero(b)
    return r


@triton.jit
def _fmod(a, b, p0, p1, p2):
    """C-style remainder: the result has the sign of the dividend."""
    if a.dtype.is_floating():
        r = _fmod64(a, b).to(a.dtype)
    elif a.dtype.is_int_signed():
        bz = _nonzero(b)
        m1 = bz == -1
        r = tl.where(m1, 0, a % tl.where(m1, 1, bz).to(b.dtype)).to(a.dtype)
    else:
        r = a % _nonzero(b)
    return r


@triton.jit
def _pow(a, b, p0, p1, p2):
    """Float pow in float64 (C pow); integer pow by squaring, wrapping, negative exponents
    0 except for bases 1 and -1."""
    if a.dtype.is_floating():
        r = _pow64(a, b).to(a.dtype)
    else:
        bits: tl.constexpr = a.dtype.primitive_bitwidth
        one = tl.full(a.shape, 1, a.dtype)
        res = one
        base = a
        e = b
        for _ in tl.static_range(bits):
            res = tl.where((e & 1) != 0, res * base, res)
            base = base * base
            e = e >> 1
        if a.dtype.is_int_signed():
            neg = tl.where(a == 1, one, tl.where(a == -1, tl.where((b & 1) != 0, 0 - one, one),
                                                   tl.zeros_like(a)))
            res = tl.where(b < 0, neg, res)
        r = res
    return r


@triton.jit
def _atan2(a, b, p0, p1, p2):
    """atan2(a, b) in float64: atan(|a| / |b|) moved to the quadrant of (b, a)."""
    y = _f64(a)
    x = _f64(b)
    ay = tl.abs(y)
    ax = tl.abs(x)
    inf = float("inf")
    t = _atan64(ay / tl.where(ax == 0, 1.0, ax))
    t = tl.where(ax == 0, tl.where(ay == 0, 0.0, tl.zeros_like(t) + 1.5707963267948966), t)
    t = tl.where((ax == inf) & (ay == inf), 0.7853981633974483, t)
    t = tl.where((ax == inf) & (ay < inf), 0.0, t)
    r = tl.where(_signbit(x), 3.141592653589793 - t, t)
    r = _copysign(r, y)
    return tl.where((x != x) | (y != y), x + y, r).to(a.dtype)


@triton.jit
def _ldexp(a, b, p0, p1, p2):
    """a * 2^b in the compute dtype (2^b overflows to inf there as on the CPU)."""
    return a * tl.exp2(_f64(b)).to(a.dtype)


@triton.jit
def _nextafter(a, b, p0, p1, p2):
    return _nextafter_bits(a, b, 1)


@triton.jit
def _nextafter_f16(a, b, p0, p1, p2):
    """float16 steps its own bit patterns (the operands arrive as float32)."""
    return _nextafter_bits(a.to(tl.float16), b.to(tl.float16), 1).to(tl.float32)


@triton.jit
def _nextafter_bf16(a, b, p0, p1, p2):
    """bfloat16 is the high half of a float32: one bfloat16 step is 2^16 float32 steps."""
    return _nextafter_bits(a, b, 65536)


@triton.jit
def _lshift(a, b, p0, p1, p2):
    """Shifts by a negative amount or by the bit width or more give 0, as in PyTorch."""
    bits: tl.constexpr = a.dtype.primitive_bitwidth
    ok = (b >= 0) & (b < bits)
    return tl.where(ok, a << tl.where(ok, b, 0).to(a.dtype), 0).to(a.dtype)


@triton.jit
def _rshift(a, b, p0, p1, p2):
    """Shifts past the width (or negative, read as unsigned) give the sign, as in PyTorch."""
    bits: tl.constexpr = a.dtype.primitive_bitwidth
    ok = (b >= 0) & (b < bits)
    return a >> tl.where(ok, b, bits - 1).to(a.dtype)


# ---- unary ops ------------------------------------------------------------------------

@triton.jit
def _neg(x, p0, p1, p2):
    return -x


@triton.jit
def _abs(x, p0, p1, p2):
    return tl.where(x < 0, 0 - x, tl.where(x == 0, 0, x).to(x.dtype))  # abs(-0.) = 0.


@triton.jit
def _exp(x, p0, p1, p2):
    return tl.exp(x)


@triton.jit
def _log(x, p0, p1, p2):
    return tl.log(x)


@triton.jit
def _sqrt_op(x, p0, p1, p2):
    return _sqrt(x)


@triton.jit
def _rsqrt(x, p0, p1, p2):
    return _fdiv(tl.full(x.shape, 1, x.dtype), _sqrt(x))  # rsqrt(-0.) = -inf


@triton.jit
def _sin(x, p0, p1, p2):
    return tl.sin(x)


@triton.jit
def _cos(x, p0, p1, p2):
    return tl.cos(x)


@triton.jit
def _tanh_op(x, p0, p1, p2):
    return _tanh(x)


@triton.jit
def _sigmoid(x, p0, p1, p2):
    return _fdiv(tl.full(x.shape, 1, x.dtype), 1.0 + tl.exp(-x))


@triton.jit
def _relu(x, p0, p1, p2):
    return tl.where(x < 0, 0, x).to(x.dtype)  # NaN stays NaN


@triton.jit
def _gelu(x, p0, p1, p2):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def _gelu_tanh(x, p0, p1, p2):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + _tanh(inner))


@triton.jit
def _silu(x, p0, p1, p2):
    return _fdiv(x, 1.0 + tl.exp(-x))


@triton.jit
def _clamp1(x, p0, p1, p2):
    """clamp with scalar bounds: p0 = min, p1 = max, p2 = 1 (min only), 2 (max only), 3."""
    which = p2.to(tl.int32)
    lo = p0.to(x.dtype)
    hi = p1.to(x.dtype)
    x = tl.where(((which & 1) != 0) & (x < lo), lo, x)
    return tl.where(((which & 2) != 0) & (x > hi), hi, x)


@triton.jit
def _sign(x, p0, p1, p2):
    if x.dtype == tl.int1:
        r = x  # sign of bool is the identity
    else:
        r = (x > 0).to(x.dtype) - (x < 0).to(x.dtype)  # sign(NaN) = 0, as on the CPU
    return r


@triton.jit
def _reciprocal(x, p0, p1, p2):
    return _fdiv(tl.full(x.shape, 1, x.dtype), x)


@triton.jit
def _deg2rad(x, p0, p1, p2):
    return x * 0.017453292519943295


@triton.jit
def _rad2deg(x, p0, p1, p2):
    return x * 57.29577951308232


@triton.jit
def _bitwise_not(x, p0, p1, p2):
    if x.dtype == tl.int1:
        r = x == 0
    else:
        r = ~x
    return r


@triton.jit
def _logical_not(x, p0, p1, p2):
    return x == 0


@triton.jit
def _exp2(x, p0, p1, p2):
    return tl.exp2(x)


@triton.jit
def _log2(x, p0, p1, p2):
    return tl.log2(x)


@triton.jit
def _log10(x, p0, p1, p2):
    return tl.log2(x) * 0.30102999566398120


@triton.jit
def _erf(x, p0, p1, p2):
    return tl.erf(x)


@triton.jit
def _floor(x, p0, p1, p2):
    return tl.floor(x)


@triton.jit
def _ceil(x, p0, p1, p2):
    return tl.ceil(x)


@triton.jit
def _trunc(x, p0, p1, p2):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _frac(x, p0, p1, p2):
    return x - tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _isinf(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = tl.abs(x) == float("inf")
    else:
        r = x != x
    return r


@triton.jit
def _isposinf(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = x == float("inf")
    else:
        r = x != x
    return r


@triton.jit
def _isneginf(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = x == -float("inf")
    else:
        r = x != x
    return r


@triton.jit
def _isnan_op(x, p0, p1, p2):
    return _isnan(x)


@triton.jit
def _isfinite(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = tl.abs(x) < float("inf")
    else:
        r = x == x
    return r


@triton.jit
def _threshold(x, p0, p1, p2):
    return tl.where(x <= p0.to(x.dtype), p1.to(x.dtype), x)


@triton.jit
def _leaky_relu(x, p0, p1, p2):
    return tl.where(x > 0, x, x * p0.to(x.dtype))


@triton.jit
def _relu6(v):
    return tl.where(v < 0, 0.0, tl.where(v > 6, 6.0, v)).to(v.dtype)  # NaN stays NaN


@triton.jit
def _hardsigmoid(x, p0, p1, p2):
    return _fdiv(_relu6(x + 3.0), tl.full(x.shape, 6, x.dtype))


@triton.jit
def _hardswish(x, p0, p1, p2):
    return _fdiv(x * _relu6(x + 3.0), tl.full(x.shape, 6, x.dtype))


@triton.jit
def _log1p_op(x, p0, p1, p2):
    return _log1p(x)


@triton.jit
def _expm1_op(x, p0, p1, p2):
    return _expm1(x)


@triton.jit
def _signbit_op(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = _signbit(x)
    else:
        r = x < 0  # False for bool
    return r


@triton.jit
def _round(x, p0, p1, p2):
    return _round_even(x)


@triton.jit
def _round_decimals(x, p0, p1, p2):
    """round(x, decimals=p0) as PyTorch computes it: p1 = 10 ** |p0| (from the launcher),
    half to even on x * p1 (decimals >= 0) or x / p1 (decimals < 0)."""
    ten = (tl.zeros_like(x) + p1).to(x.dtype)
    neg = (tl.zeros_like(x) + p0) < 0
    return tl.where(neg, _round_even(_fdiv(x, ten)) * ten, _fdiv(_round_even(x * ten), ten))


@triton.jit
def _nan_to_num(x, p0, p1, p2):
    """p0 replaces NaN, p1 +inf, p2 -inf."""
    r = tl.where(x == float("inf"), p1.to(x.dtype), x)
    r = tl.where(x == -float("inf"), p2.to(x.dtype), r)
    return tl.where(x != x, p0.to(x.dtype), r)


@triton.jit
def _elu(x, p0, p1, p2):
    """elu(x, alpha=p0, scale=p1, input_scale=p2)."""
    alpha = p0.to(x.dtype)
    scale = p1.to(x.dtype)
    return tl.where(x <= 0, _expm1(x * p2.to(x.dtype)) * alpha * scale, x * scale)


@triton.jit
def _softplus(x, p0, p1, p2):
    """softplus(x, beta=p0, threshold=p1): linear where x * beta > threshold."""
    b = p0.to(x.dtype)
    xb = x * b
    soft = _fdiv(_log1p(tl.exp(xb)), tl.full(x.shape, 1, x.dtype) * b)
    return tl.where(xb > p1.to(x.dtype), x, soft)


@triton.jit
def _mish(x, p0, p1, p2):
    return x * _tanh(_log1p(tl.exp(x)))


@triton.jit
def _pow_scalar(x, p0, p1, p2):
    """pow(x, p0): the exponents PyTorch special-cases give its results exactly
    (pow(-0., -0.5) = rsqrt(-0.) = -inf); others C pow in float64, p0 rounded to x's
    dtype first as on the CPU."""
    e = tl.zeros_like(x) + p0
    one = tl.full(x.shape, 1, x.dtype)
    r = _pow64(x, e.to(x.dtype)).to(x.dtype)
    r = tl.where(e == -2.0, _fdiv(one, x * x), r)
    r = tl.where(e == -1.0, _fdiv(one, x), r)
    r = tl.where(e == -0.5, _fdiv(one, _sqrt(x)), r)
    r = tl.where(e == 0.5, _sqrt(x), r)
    r = tl.where(e == 3.0, x * x * x, r)
    return tl.where(e == 2.0, x * x, r)


@triton.jit
def _asin(x, p0, p1, p2):
    """atan(x / sqrt((1 - x)(1 + x))) in float64."""
    d = _f64(x)
    return _atan64(d / _sqrt((1.0 - d) * (1.0 + d))).to(x.dtype)


@triton.jit
def _acos(x, p0, p1, p2):
    """2 atan(sqrt((1 - x) / (1 + x))) in float64 (1 -+ x are exact where they cancel)."""
    d = _f64(x)
    return (2.0 * _atan64(_sqrt((1.0 - d) / (1.0 + d)))).to(x.dtype)


@triton.jit
def _atan(x, p0, p1, p2):
    return _atan64(_f64(x)).to(x.dtype)


@triton.jit
def _sinh(x, p0, p1, p2):
    """(e + e / (e + 1)) / 2 with e = expm1(|x|) up to |x| = 20, exp(|x|/2)^2 / 2 beyond
    (no overflow before sinh itself overflows); in float64."""
    d = _f64(x)
    a = tl.abs(d)
    em1 = _expm1(tl.where(a < 20.0, a, 0.0))
    h = tl.exp(a * 0.5)
    r = tl.where(a < 20.0, 0.5 * (em1 + em1 / (em1 + 1.0)), (0.5 * h) * h)
    return tl.where(d != d, d, _copysign(r, d)).to(x.dtype)


@triton.jit
def _cosh(x, p0, p1, p2):
    d = _f64(x)
    a = tl.abs(d)
    e = tl.exp(tl.where(a < 20.0, a, 0.0))
    h = tl.exp(a * 0.5)
    return tl.where(a < 20.0, 0.5 * (e + 1.0 / e), (0.5 * h) * h).to(x.dtype)


@triton.jit
def _asinh(x, p0, p1, p2):
    """log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x|, signed; log(a) + log(2) above 2^28."""
    d = _f64(x)
    a = tl.abs(d)
    s = tl.where(a > 268435456.0, 0.0, a)
    r = _log1p(s + s * s / (1.0 + _sqrt(1.0 + s * s)))
    r = tl.where(a > 268435456.0, tl.log(a) + 0.6931471805599453, r)
    return tl.where(d != d, d, _copysign(r, d)).to(x.dtype)


@triton.jit
def _acosh(x, p0, p1, p2):
    """log1p(t + sqrt(2t + t^2)), t = x - 1 (exact near 1); log(x) + log(2) above 2^28."""
    d = _f64(x)
    t = tl.where(d > 268435456.0, 0.0, d - 1.0)
    r = _log1p(t + _sqrt(t * (t + 2.0)))
    r = tl.where(d > 268435456.0, tl.log(d) + 0.6931471805599453, r)
    return tl.where(d < 1.0, float("nan"), tl.where(d != d, d, r)).to(x.dtype)


@triton.jit
def _atanh(x, p0, p1, p2):
    """log1p(2a / (1 - a)) / 2, a = |x|, signed."""
    d = _f64(x)
    a = tl.abs(d)
    r = 0.5 * _log1p(2.0 * a / (1.0 - a))
    r = tl.where(a > 1.0, float("nan"), r)
    return tl.where(d != d, d, _copysign(r, d)).to(x.dtype)


@triton.jit
def _sinc(x, p0, p1, p2):
    """sin(pi x) / (pi x), 1 at 0; in float64."""
    px = _f64(x) * 3.141592653589793
    r = tl.sin(px) / tl.where(px == 0, 1.0, px)
    return tl.where(px == 0, 1.0, r).to(x.dtype)


@triton.jit
def _erfc(x, p0, p1, p2):
    return _erfc64(x).to(x.dtype)


@triton.jit
def _erfinv(y, p0, p1, p2):
    """The CPU's: Giles' single-precision approximation refined by two Newton steps on
    erf(x) - y in float64."""
    yd = _f64(y)
    w = -tl.log((1.0 - yd) * (1.0 + yd))
    wa = w - 2.5
    q = 2.81022636e-08
    q = 3.43273939e-07 + q * wa
    q = -3.5233877e-06 + q * wa
    q = -4.39150654e-06 + q * wa
    q = 0.00021858087 + q * wa
    q = -0.00125372503 + q * wa
    q = -0.00417768164 + q * wa
    q = 0.246640727 + q * wa
    q = 1.50140941 + q * wa
    wb = _sqrt(tl.where(w < 5.0, 5.0, w)) - 3.0
    p = -0.000200214257
    p = 0.000100950558 + p * wb
    p = 0.00134934322 + p * wb
    p = -0.00367342844 + p * wb
    p = 0.00573950773 + p * wb
    p = -0.0076224613 + p * wb
    p = 0.00943887047 + p * wb
    p = 1.00167406 + p * wb
    p = 2.83297682 + p * wb
    r = tl.where(w < 5.0, q, p) * yd
    for _ in tl.static_range(2):  # Newton; the derivative is 2/sqrt(pi) e^-x^2
        r = r - (tl.erf(r) - yd) / (1.1283791670955126 * tl.exp(-r * r))
    inf = float("inf")
    r = tl.where(yd == 1.0, inf, tl.where(yd == -1.0, -inf, r))
    return tl.where((yd != yd) | (tl.abs(yd) > 1.0), float("nan"), r).to(y.dtype)


@triton.jit
def _tan(x, p0, p1, p2):
    return _fdiv(tl.sin(x), tl.cos(x))


@triton.jit
def _logit(x, p0, p1, p2):
    """log(x / (1 - x)), x clamped to [eps, 1 - eps] (eps = p0) when p1 != 0."""
    lo = p0.to(x.dtype)
    hi = 1.0 - lo
    clamped = tl.where(x < lo, lo, tl.where(x > hi, hi, x))
    x = tl.where((tl.zeros_like(x) + p1) != 0, clamped, x)
    return tl.log(_fdiv(x, 1.0 - x))


# ---- ternary ops ----------------------------------------------------------------------

@triton.jit
def _where(c, x, y, p0, p1, p2):
    return tl.where(c != 0, x, y)


@triton.jit
def _lerp3(a, b, w, p0, p1, p2):
    # the two-sided formula keeps lerp(a, b, 1) == b exactly
    return tl.where(tl.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1.0 - w))


@triton.jit
def _addcmul(a, b, c, p0, p1, p2):
    return a + p0.to(a.dtype) * b * c


@triton.jit
def _addcdiv(a, b, c, p0, p1, p2):
    return a + p0.to(a.dtype) * _div(b, c, p0, p1, p2)


@triton.jit
def _clamp3(x, lo, hi, p0, p1, p2):
    r = tl.where(x < lo, lo, x)
    r = tl.where(r > hi, hi, r)
    r = tl.where(_isnan(hi), hi, r)
    r = tl.where(_isnan(lo), lo, r)
    return tl.where(_isnan(x), x, r)  # NaN in any operand propagates, x's first


# ---- op tables: name -> (function, dtypes it accepts) ---------------------------------
# dtype classes as in native/pointwise.h: FLOAT, NUM (int and float), ALL (with bool)
FLOAT, NUM, ALL, INT_BOOL, INT = "float", "num", "all", "int_bool", "int"

UNARY = {
    "neg": (_neg, NUM), "abs": (_abs, NUM), "exp": (_exp, FLOAT), "log": (_log, FLOAT),
    "sqrt": (_sqrt_op, FLOAT), "rsqrt": (_rsqrt, FLOAT), "sin": (_sin, FLOAT),
    "cos": (_cos, FLOAT), "tanh": (_tanh_op, FLOAT), "sigmoid": (_sigmoid, FLOAT),
    "relu": (_relu, NUM), "gelu": (_gelu, FLOAT), "gelu_tanh": (_gelu_tanh, FLOAT),
    "silu": (_silu, FLOAT), "clamp": (_clamp1, NUM),
    "sign": (_sign, ALL), "reciprocal": (_reciprocal, FLOAT), "deg2rad": (_deg2rad, FLOAT),
    "rad2deg": (_rad2deg, FLOAT), "bitwise_not": (_bitwise_not, INT_BOOL),
    "logical_not": (_logical_not, ALL), "exp2": (_exp2, FLOAT), "log2": (_log2, FLOAT),
    "log10": (_log10, FLOAT), "erf": (_erf, FLOAT), "floor": (_floor, FLOAT),
    "ceil": (_ceil, FLOAT), "trunc": (_trunc, FLOAT), "frac": (_frac, FLOAT),
    "isnan": (_isnan_op, ALL), "isinf": (_isinf, ALL), "isposinf": (_isposinf, ALL),
    "isneginf": (_isneginf, ALL), "isfinite": (_isfinite, ALL),
    "threshold": (_threshold, NUM), "leaky_relu": (_leaky_relu, FLOAT),
    "hardsigmoid": (_hardsigmoid, FLOAT), "hardswish": (_hardswish, FLOAT),
    "log1p": (_log1p_op, FLOAT), "expm1": (_expm1_op, FLOAT), "signbit": (_signbit_op, ALL),
    "round": (_round, FLOAT), "nan_to_num": (_nan_to_num, FLOAT), "elu": (_elu, FLOAT),
    "softplus": (_softplus, FLOAT), "mish": (_mish, FLOAT), "tan": (_tan, FLOAT),
    "logit": (_logit, FLOAT), "pow_scalar": (_pow_scalar, FLOAT), "asin": (_asin, FLOAT),
    "acos": (_acos, FLOAT), "atan": (_atan, FLOAT), "sinh": (_sinh, FLOAT),
    "cosh": (_cosh, FLOAT), "asinh": (_asinh, FLOAT), "acosh": (_acosh, FLOAT),
    "atanh": (_atanh, FLOAT), "sinc": (_sinc, FLOAT), "erfc": (_erfc, FLOAT),
    "erfinv": (_erfinv, FLOAT), "round_decimals": (_round_decimals, FLOAT),
}
BINARY = {
    "add": (_add, ALL), "sub": (_sub, NUM), "mul": (_mul, ALL), "div": (_div, FLOAT),
    "maximum": (_maximum, ALL), "minimum": (_minimum, ALL), "lerp": (_lerp2, FLOAT),
    "eq": (_eq, ALL), "ne": (_ne, ALL), "lt": (_lt, ALL), "le": (_le, ALL),
    "gt": (_gt, ALL), "ge": (_ge, ALL), "fmax": (_fmax, ALL), "fmin": (_fmin, ALL),
    "logical_and": (_logical_and, ALL), "logical_or": (_logical_or, ALL),
    "logical_xor": (_logical_xor, ALL), "bitwise_and": (_bitwise_and, INT_BOOL),
    "bitwise_or": (_bitwise_or, INT_BOOL), "bitwise_xor": (_bitwise_xor, INT_BOOL),
    "heaviside": (_heaviside, ALL), "xlogy": (_xlogy, FLOAT),
    "copysign": (_copysign_op, FLOAT), "hypot": (_hypot, FLOAT), "isclose": (_isclose, ALL),
    "logaddexp": (_logaddexp, FLOAT), "logaddexp2": (_logaddexp2, FLOAT),
    "lshift": (_lshift, INT), "rshift": (_rshift, INT),
    "div_trunc": (_div_trunc, NUM), "div_floor": (_div_floor, NUM),
    "remainder": (_remainder, NUM), "fmod": (_fmod, NUM), "pow": (_pow, NUM),
    "atan2": (_atan2, FLOAT), "ldexp": (_ldexp, FLOAT), "nextafter": (_nextafter, FLOAT),
}
# (kernel, dtype name) -> function, where a dtype needs its own version of an op
PER_DTYPE = {
    ("nextafter", "float16"): _nextafter_f16, ("nextafter", "bfloat16"): _nextafter_bf16,
}
# integer kernels that raise ZeroDivisionError (RuntimeError) for a zero divisor
INT_DIVISION = ("div_trunc", "div_floor", "remainder", "fmod")
TERNARY = {
    "where": (_where, ALL), "lerp": (_lerp3, FLOAT), "addcmul": (_addcmul, NUM),
    "addcdiv": (_addcdiv, FLOAT), "clamp": (_clamp3, NUM),
}
