"""Scalar functions of the Triton pointwise ops (framework/kernels/pointwise.py).

Each op is a ``@triton.jit`` function of its operand values and the three float64
parameters p0, p1, p2, returning the result in the compute dtype (float32 for 16-bit
floats, else the operands' dtype); pointwise.py wraps it in the N-d strided kernel of its
arity and rounds the result to the output dtype. The formulas follow the CPU kernels
(native/pointwise_{unary,binary,ternary}.cpp) line for line where they differ from the
naive ones: NaN propagation in maximum/minimum/clamp, the two-sided lerp, abs(-0.) = 0.,
integer parameters truncated like ``from_param``.
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
    """exp(x) - 1 accurate near 0 from exp and log (Kahan: (u - 1) * x / log(u))."""
    u = tl.exp(x)
    r = tl.where(u == 1.0, x, _fdiv((u - 1.0) * x, tl.log(u)))
    r = tl.where(u - 1.0 == -1.0, -1.0, r)
    return tl.where(u == float("inf"), u, r)


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
    r = m * tl.sqrt_rn(1.0 + q * q)
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
def _sqrt(x, p0, p1, p2):
    return tl.sqrt_rn(x)  # IEEE sqrt, not the approximate tl.sqrt


@triton.jit
def _rsqrt(x, p0, p1, p2):
    return _fdiv(tl.full(x.shape, 1, x.dtype), tl.sqrt_rn(x))  # rsqrt(-0.) = -inf


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
    """Round half to even (nearbyint); d = x - floor(x) is exact or rounds harmlessly."""
    f = tl.floor(x)
    d = x - f
    f_even = tl.floor(f * 0.5) * 2.0 == f
    r = tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, tl.where(f_even, f, f + 1.0)))
    return _copysign(r, x)  # -0.4 -> -0.


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
    "sqrt": (_sqrt, FLOAT), "rsqrt": (_rsqrt, FLOAT), "sin": (_sin, FLOAT),
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
    "logit": (_logit, FLOAT),
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
}
TERNARY = {
    "where": (_where, ALL), "lerp": (_lerp3, FLOAT), "addcmul": (_addcmul, NUM),
    "addcdiv": (_addcdiv, FLOAT), "clamp": (_clamp3, NUM),
}
