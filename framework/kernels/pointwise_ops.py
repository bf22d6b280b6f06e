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


from .pointwise_binary import (  # noqa: F401
    _add, _sub, _mul, _div, _maximum, _minimum, _eq, _ne, _lt, _le, _gt, _ge, _lerp2,
    _fmax, _fmin, _logical_and, _logical_or, _logical_xor, _bitwise_and, _bitwise_or,
    _bitwise_xor, _heaviside, _xlogy, _copysign_op, _hypot, _isclose, _logaddexp,
    _logaddexp2, _div_trunc, _div_floor, _remainder, _fmod, _pow, _atan2, _ldexp,
    _nextafter, _nextafter_f16, _nextafter_bf16, _lshift, _rshift, _where, _lerp3,
    _addcmul, _addcdiv, _clamp3, _mul_scalar, _div_scalar, _div_trunc_scalar,
    _div_floor_scalar, _gelu_backward, _gelu_tanh_backward,
)
from .pointwise_unary import (  # noqa: F401
    _neg, _abs, _exp, _log, _sqrt_op, _rsqrt, _sin, _cos, _tanh_op, _sigmoid, _relu, _gelu,
    _gelu_tanh, _silu, _clamp1, _sign, _reciprocal, _deg2rad, _rad2deg, _bitwise_not,
    _logical_not, _exp2, _log2, _log10, _erf, _floor, _ceil, _trunc, _frac, _isinf,
    _isposinf, _isneginf, _isnan_op, _isfinite, _threshold, _leaky_relu, _hardsigmoid,
    _hardswish, _log1p_op, _expm1_op, _signbit_op, _round, _round_decimals, _nan_to_num,
    _elu, _softplus, _mish, _pow_scalar, _asin, _acos, _atan, _sinh, _cosh, _asinh, _acosh,
    _atanh, _sinc, _erfc, _erfinv, _tan, _logit,
)


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
    "mul_scalar": (_mul_scalar, FLOAT), "div_scalar": (_div_scalar, FLOAT),
    "div_trunc_scalar": (_div_trunc_scalar, FLOAT), "div_floor_scalar": (_div_floor_scalar, FLOAT),
    "remainder": (_remainder, NUM), "fmod": (_fmod, NUM), "pow": (_pow, NUM),
    "atan2": (_atan2, FLOAT), "ldexp": (_ldexp, FLOAT), "nextafter": (_nextafter, FLOAT),
    "gelu_backward": (_gelu_backward, FLOAT), "gelu_tanh_backward": (_gelu_tanh_backward, FLOAT),
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

# the special functions (gamma family, Bessel, normal distribution): pointwise_special.py
from .pointwise_special import SPECIAL_BINARY, SPECIAL_UNARY  # noqa: E402
UNARY.update({k: (f, FLOAT) for k, f in SPECIAL_UNARY.items()})
BINARY.update({k: (f, FLOAT) for k, f in SPECIAL_BINARY.items()})
# the orthogonal polynomials of torch.special: pointwise_polynomials.py
from .pointwise_polynomials import POLYNOMIAL_BINARY, POLYNOMIAL_UNARY  # noqa: E402
UNARY.update({k: (f, FLOAT) for k, f in POLYNOMIAL_UNARY.items()})
BINARY.update({k: (f, FLOAT) for k, f in POLYNOMIAL_BINARY.items()})
