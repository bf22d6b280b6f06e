"""Binary and ternary scalar ops of the Triton pointwise kernels (see pointwise_ops.py)."""
import triton
import triton.language as tl

from .pointwise_math import (  # noqa: F401
    _isnan, _fdiv, _log1p, _signbit, _copysign, _sqrt, _f64, _atan64, _fmod64, _pow64,
    _nextafter_bits, _tanh,
)


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
def _scalar_rhs(b, p0):
    """The Python scalar p0 in b's compute dtype (float32 for 16-bit floats), not rounded to
    16 bits first: PyTorch's opmath for mul and the divisions by a scalar."""
    return tl.zeros_like(b) + p0.to(b.dtype)


@triton.jit
def _mul_scalar(a, b, p0, p1, p2):
    return _mul(a, _scalar_rhs(b, p0), p0, p1, p2)


@triton.jit
def _div_scalar(a, b, p0, p1, p2):
    return _div(a, _scalar_rhs(b, p0), p0, p1, p2)


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
def _gelu_backward(g, x, p0, p1, p2):
    """gelu's backward (grad g at input x), as native/pointwise_binary.cpp's GeluBackward."""
    cdf = 0.5 * (1.0 + tl.erf(x * 0.7071067811865476))
    pdf = tl.exp(-0.5 * x * x) * 0.3989422804014327
    return g * (cdf + x * pdf)


@triton.jit
def _gelu_tanh_backward(g, x, p0, p1, p2):
    k = 0.7978845608028654
    x2 = x * x
    t = _tanh(k * (x + 0.044715 * x2 * x))
    dright = 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x2)
    return g * (0.5 * (1.0 + t) + dright)


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
def _div_trunc_scalar(a, b, p0, p1, p2):
    return _div_trunc(a, _scalar_rhs(b, p0), p0, p1, p2)


@triton.jit
def _div_floor_scalar(a, b, p0, p1, p2):
    return _div_floor(a, _scalar_rhs(b, p0), p0, p1, p2)


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
