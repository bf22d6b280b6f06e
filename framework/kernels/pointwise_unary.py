"""Unary scalar ops of the Triton pointwise kernels (see pointwise_ops.py)."""
import triton
import triton.language as tl

from .pointwise_math import (  # noqa: F401
    _isnan, _fdiv, _log1p, _expm1, _signbit, _copysign, _sqrt, _f64, _atan64, _erfc64,
    _pow64, _round_even, _tanh, _to_int_wrapping,
)


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
    """clamp with scalar bounds: p0 = min, p1 = max, p2 = 1 (min only), 2 (max only), 3.
    A NaN bound makes every element NaN (PyTorch)."""
    which = p2.to(tl.int32)
    lo = tl.zeros_like(x) + _to_int_wrapping(p0, x.dtype)  # uint8: clamp(-1) is 255
    hi = tl.zeros_like(x) + _to_int_wrapping(p1, x.dtype)
    x = tl.where(((which & 1) != 0) & ((x < lo) | (lo != lo)), lo, x)
    return tl.where(((which & 2) != 0) & ((x > hi) | (hi != hi)), hi, x)


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
    # every branch runs on every lane: each sees x only where it is taken, so that x ** 2
    # of a negative or zero x raises no floating-point warning in the interpreter
    root = _sqrt(tl.where((e == 0.5) | (e == -0.5), x, one))
    r = tl.where(e == -2.0, _fdiv(one, tl.where(e == -2.0, x * x, one)), r)
    r = tl.where(e == -1.0, _fdiv(one, tl.where(e == -1.0, x, one)), r)
    r = tl.where(e == -0.5, _fdiv(one, tl.where(e == -0.5, root, one)), r)
    r = tl.where(e == 0.5, root, r)
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
