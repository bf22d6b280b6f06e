"""Cases for pointwise ops against NumPy in float64, over dtypes, broadcasting, strided
inputs, 0-d and empty tensors. Special values (NaN, inf), errors and torch parity are in
tests/test_pointwise.py."""
import math

import numpy as np

from helpers import make, ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES
from opdb import Case

SHAPES = [((3, 5), (3, 5)), ((4, 1, 3), (5, 1)), ((), (2, 3)), ((0, 3), (3,)), ((7,), ())]
NUM = INT_DTYPES + FLOAT_DTYPES
SIGNED = [d for d in NUM if d.name != "uint8"]


def binary(op, ref, dtypes, low=-5, high=5, low2=None, high2=None):
    """op(fw, x, y) against ref(a, b) on float64 values."""
    low2 = low if low2 is None else low2
    high2 = high if high2 is None else high2

    def fn(fw, device):
        out = []
        for dt in dtypes:
            for i, (sa, sb) in enumerate(SHAPES):
                x, a = make(sa, dt, device, low, high, noncontig=i == 0, seed=i)
                y, b = make(sb, dt, device, low2, high2, noncontig=i == 1, seed=i + 10)
                out.append((op(fw, x, y), ref(a.astype(np.float64), b.astype(np.float64))))
        return out
    return [Case(fn)]


def unary(op, ref, dtypes, low=-5, high=5):
    def fn(fw, device):
        out = []
        for dt in dtypes:
            for i, s in enumerate([(3, 7), (), (0,), (2, 3, 4)]):
                x, a = make(s, dt, device, low, high, noncontig=i == 0, seed=i)
                out.append((op(fw, x), ref(a.astype(np.float64))))
        return out
    return [Case(fn)]


def ternary(op, ref, dtypes, low=-5, high=5, cond_first=False):
    shapes = [((3, 4), (3, 4), (3, 4)), ((2, 1, 4), (3, 1), (4,)), ((), (2, 2), ()),
              ((0, 2), (2,), (1,))]

    def fn(fw, device):
        import framework
        out = []
        for dt in dtypes:
            for i, (sa, sb, sc) in enumerate(shapes):
                x, a = make(sa, framework.bool if cond_first else dt, device, low, high,
                            noncontig=i == 0, seed=i)
                y, b = make(sb, dt, device, low, high, seed=i + 10)
                z, c = make(sc, dt, device, low, high, noncontig=i == 1, seed=i + 20)
                out.append((op(fw, x, y, z), ref(a.astype(np.float64), b.astype(np.float64),
                                                 c.astype(np.float64))))
        return out
    return [Case(fn)]


def _vec(f):
    v = np.vectorize(f, otypes=[np.float64])
    return lambda a: v(a) if a.size else a.astype(np.float64)


def _erfinv(y):
    """Inverse error function by Newton's method on math.erf (NumPy has none)."""
    x = np.zeros_like(y)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(60):
        x = x - (erf(x) - y) / (2 / math.sqrt(math.pi) * np.exp(-x * x)) if x.size else x
    return x


def _floor_div(a, b):
    return np.floor_divide(a, b)


def _py_mod(a, b):
    return np.mod(a, b)


def _trunc_div(a, b):
    return np.trunc(a / b)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _gelu(a):
    return 0.5 * a * (1 + _vec(math.erf)(a / math.sqrt(2)))


def _gelu_tanh(a):
    return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))


def _shift_left(a, b):
    return np.left_shift(a.astype(np.int64), b.astype(np.int64))


U = {  # name: (call, reference, dtypes, low, high)
    "abs": (lambda fw, x: fw.abs(x), np.abs, NUM),
    "absolute": (lambda fw, x: fw.absolute(x), np.abs, NUM),
    "sign": (lambda fw, x: fw.sign(x), np.sign, NUM),
    "sgn": (lambda fw, x: x.sgn(), np.sign, NUM),
    "signbit": (lambda fw, x: fw.signbit(x), np.signbit, NUM),
    "reciprocal": (lambda fw, x: fw.reciprocal(x), lambda a: 1 / a, FLOAT_DTYPES, 0.5, 5),
    "exp": (lambda fw, x: fw.exp(x), np.exp, NUM),
    "exp2": (lambda fw, x: fw.exp2(x), np.exp2, NUM),
    "expm1": (lambda fw, x: fw.expm1(x), np.expm1, FLOAT_DTYPES),
    "log": (lambda fw, x: fw.log(x), np.log, NUM, 1, 9),
    "log2": (lambda fw, x: fw.log2(x), np.log2, NUM, 1, 9),
    "log10": (lambda fw, x: fw.log10(x), np.log10, FLOAT_DTYPES, 0.1, 9),
    "log1p": (lambda fw, x: fw.log1p(x), np.log1p, FLOAT_DTYPES, -0.5, 9),
    "sqrt": (lambda fw, x: fw.sqrt(x), np.sqrt, NUM, 0, 9),
    "rsqrt": (lambda fw, x: fw.rsqrt(x), lambda a: 1 / np.sqrt(a), FLOAT_DTYPES, 0.5, 9),
    "sin": (lambda fw, x: fw.sin(x), np.sin, NUM),
    "cos": (lambda fw, x: fw.cos(x), np.cos, NUM),
    "tan": (lambda fw, x: fw.tan(x), np.tan, FLOAT_DTYPES, -1.2, 1.2),
    "asin": (lambda fw, x: fw.asin(x), np.arcsin, FLOAT_DTYPES, -0.9, 0.9),
    "acos": (lambda fw, x: fw.acos(x), np.arccos, FLOAT_DTYPES, -0.9, 0.9),
    "atan": (lambda fw, x: fw.atan(x), np.arctan, NUM),
    "sinh": (lambda fw, x: fw.sinh(x), np.sinh, FLOAT_DTYPES),
    "cosh": (lambda fw, x: fw.cosh(x), np.cosh, FLOAT_DTYPES),
    "tanh": (lambda fw, x: fw.tanh(x), np.tanh, NUM),
    "asinh": (lambda fw, x: fw.asinh(x), np.arcsinh, FLOAT_DTYPES),
    "acosh": (lambda fw, x: fw.acosh(x), np.arccosh, FLOAT_DTYPES, 1, 9),
    "atanh": (lambda fw, x: fw.atanh(x), np.arctanh, FLOAT_DTYPES, -0.9, 0.9),
    "arcsin": (lambda fw, x: fw.arcsin(x), np.arcsin, FLOAT_DTYPES, -0.9, 0.9),
    "arccos": (lambda fw, x: fw.arccos(x), np.arccos, FLOAT_DTYPES, -0.9, 0.9),
    "arctan": (lambda fw, x: fw.arctan(x), np.arctan, FLOAT_DTYPES),
    "arcsinh": (lambda fw, x: fw.arcsinh(x), np.arcsinh, FLOAT_DTYPES),
    "arccosh": (lambda fw, x: fw.arccosh(x), np.arccosh, FLOAT_DTYPES, 1, 9),
    "arctanh": (lambda fw, x: fw.arctanh(x), np.arctanh, FLOAT_DTYPES, -0.9, 0.9),
    "sigmoid": (lambda fw, x: fw.sigmoid(x), _sigmoid, NUM),
    "logit": (lambda fw, x: fw.logit(x, eps=0.2), lambda a: np.log(np.clip(a, 0.2, 0.8) /
                                                                   (1 - np.clip(a, 0.2, 0.8))),
              FLOAT_DTYPES, 0, 1),
    "erf": (lambda fw, x: fw.erf(x), _vec(math.erf), NUM, -3, 3),
    "erfc": (lambda fw, x: fw.erfc(x), _vec(math.erfc), FLOAT_DTYPES, -3, 3),
    "erfinv": (lambda fw, x: fw.erfinv(x), _erfinv, FLOAT_DTYPES, -0.99, 0.99),
    "deg2rad": (lambda fw, x: fw.deg2rad(x), np.deg2rad, NUM),
    "rad2deg": (lambda fw, x: fw.rad2deg(x), np.rad2deg, FLOAT_DTYPES),
    "sinc": (lambda fw, x: fw.sinc(x), np.sinc, FLOAT_DTYPES),
    "floor": (lambda fw, x: fw.floor(x), np.floor, NUM),
    "ceil": (lambda fw, x: fw.ceil(x), np.ceil, NUM),
    "trunc": (lambda fw, x: fw.trunc(x), np.trunc, NUM),
    "fix": (lambda fw, x: fw.fix(x), np.trunc, NUM),
    "round": (lambda fw, x: fw.round(x * 2), lambda a: np.round(a * 2), FLOAT_DTYPES),
    "frac": (lambda fw, x: fw.frac(x), lambda a: a - np.trunc(a), FLOAT_DTYPES),
    "neg": (lambda fw, x: -x, np.negative, SIGNED),
    "negative": (lambda fw, x: fw.negative(x), np.negative, SIGNED),
    "positive": (lambda fw, x: fw.positive(x), lambda a: a, NUM),
    "square": (lambda fw, x: fw.square(x), np.square, NUM),
    "logical_not": (lambda fw, x: fw.logical_not(x), np.logical_not, NUM, -1, 2),
    "bitwise_not": (lambda fw, x: ~x, lambda a: np.invert(a.astype(np.int64)), INT_DTYPES[1:]),
    "isnan": (lambda fw, x: fw.isnan(fw.sqrt(x)), lambda a: np.isnan(np.sqrt(a)),
              FLOAT_DTYPES, -1, 1),
    "isinf": (lambda fw, x: fw.isinf(1 / x), lambda a: np.isinf(1 / a), NUM, -2, 2),
    "isposinf": (lambda fw, x: fw.isposinf(1 / x), lambda a: np.isposinf(1 / a), NUM, -2, 2),
    "isneginf": (lambda fw, x: fw.isneginf(-1 / x), lambda a: np.isneginf(-1 / a), NUM, -2,
                 2),
    "isfinite": (lambda fw, x: fw.isfinite(1 / x), lambda a: np.isfinite(1 / a), NUM, -2, 2),
    "isreal": (lambda fw, x: fw.isreal(x), lambda a: np.ones(a.shape, bool), NUM),
    "nan_to_num": (lambda fw, x: fw.nan_to_num(fw.log(x), nan=7.0, neginf=-3.0),
                   lambda a: np.nan_to_num(np.log(a), nan=7.0, neginf=-3.0), [FLOAT_DTYPES[3]],
                   -1, 2),
    "clamp": (lambda fw, x: fw.clamp(x, -2, 3), lambda a: np.clip(a, -2, 3), SIGNED),
    "clip": (lambda fw, x: fw.clip(x, max=3), lambda a: np.minimum(a, 3), NUM),
    "clamp_min": (lambda fw, x: fw.clamp_min(x, 1), lambda a: np.maximum(a, 1), NUM),
    "clamp_max": (lambda fw, x: x.clamp_max(2), lambda a: np.minimum(a, 2), NUM),
    "relu": (lambda fw, x: fw.relu(x), lambda a: np.maximum(a, 0), NUM),
    "nn.functional.relu": (lambda fw, x: fw.nn.functional.relu(x), lambda a: np.maximum(a, 0),
                           NUM),
    "nn.functional.relu6": (lambda fw, x: fw.nn.functional.relu6(x * 2),
                            lambda a: np.clip(a * 2, 0, 6), SIGNED),
    "nn.functional.hardtanh": (lambda fw, x: fw.nn.functional.hardtanh(x, -2, 3),
                               lambda a: np.clip(a, -2, 3), SIGNED),
    "nn.functional.threshold": (lambda fw, x: fw.nn.functional.threshold(x, 1, 7),
                                lambda a: np.where(a <= 1, 7, a), NUM),
    "nn.functional.gelu": (lambda fw, x: fw.nn.functional.gelu(x), _gelu, FLOAT_DTYPES),
    "nn.functional.silu": (lambda fw, x: fw.nn.functional.silu(x), lambda a: a * _sigmoid(a),
                           FLOAT_DTYPES),
    "nn.functional.mish": (lambda fw, x: fw.nn.functional.mish(x),
                           lambda a: a * np.tanh(np.log1p(np.exp(a))), FLOAT_DTYPES),
    "nn.functional.softplus": (lambda fw, x: fw.nn.functional.softplus(x, beta=2, threshold=4),
                               lambda a: np.where(a * 2 > 4, a, np.log1p(np.exp(2 * a)) / 2),
                               FLOAT_DTYPES),
    "nn.functional.elu": (lambda fw, x: fw.nn.functional.elu(x, alpha=0.5),
                          lambda a: np.where(a > 0, a, 0.5 * np.expm1(a)), FLOAT_DTYPES),
    "nn.functional.selu": (lambda fw, x: fw.nn.functional.selu(x),
                           lambda a: 1.0507009873554805 * np.where(
                               a > 0, a, 1.6732632423543772 * np.expm1(a)), FLOAT_DTYPES),
    "nn.functional.celu": (lambda fw, x: fw.nn.functional.celu(x, alpha=2.0),
                           lambda a: np.where(a > 0, a, 2.0 * np.expm1(a / 2.0)), FLOAT_DTYPES),
    "nn.functional.leaky_relu": (lambda fw, x: fw.nn.functional.leaky_relu(x, 0.2),
                                 lambda a: np.where(a > 0, a, 0.2 * a), FLOAT_DTYPES),
    "nn.functional.hardsigmoid": (lambda fw, x: fw.nn.functional.hardsigmoid(x),
                                  lambda a: np.clip(a + 3, 0, 6) / 6, FLOAT_DTYPES),
    "nn.functional.hardswish": (lambda fw, x: fw.nn.functional.hardswish(x),
                                lambda a: a * np.clip(a + 3, 0, 6) / 6, FLOAT_DTYPES),
    "nn.functional.sigmoid": (lambda fw, x: fw.nn.functional.sigmoid(x), _sigmoid, NUM),
    "nn.functional.tanh": (lambda fw, x: fw.nn.functional.tanh(x), np.tanh, NUM),
}

B = {  # name: (call, reference, dtypes, low, high, low2, high2)
    "add": (lambda fw, x, y: fw.add(x, y, alpha=2), lambda a, b: a + 2 * b, NUM),
    "sub": (lambda fw, x, y: x - y, lambda a, b: a - b, SIGNED),
    "subtract": (lambda fw, x, y: fw.subtract(x, y, alpha=3), lambda a, b: a - 3 * b, SIGNED),
    "rsub": (lambda fw, x, y: fw.rsub(x, y), lambda a, b: b - a, SIGNED),
    "mul": (lambda fw, x, y: x * y, lambda a, b: a * b, NUM),
    "multiply": (lambda fw, x, y: fw.multiply(x, y), lambda a, b: a * b, NUM),
    "div": (lambda fw, x, y: x / y, lambda a, b: a / b, NUM, -5, 5, 1, 4),
    "divide": (lambda fw, x, y: fw.divide(x, y, rounding_mode="trunc"), _trunc_div, SIGNED, -9, 9,
               1, 4),
    "true_divide": (lambda fw, x, y: fw.true_divide(x, y), lambda a, b: a / b, NUM, -5, 5, 1,
                    4),
    "floor_divide": (lambda fw, x, y: x // y, _floor_div, SIGNED, -9, 9, -4, -1),
    "remainder": (lambda fw, x, y: x % y, _py_mod, SIGNED, -9, 9, -4, -1),
    "fmod": (lambda fw, x, y: fw.fmod(x, y), np.fmod, SIGNED, -9, 9, 1, 4),
    "pow": (lambda fw, x, y: x ** y, lambda a, b: a ** b,
            FLOAT_DTYPES, 0.5, 2, -2, 2),
    "float_power": (lambda fw, x, y: fw.float_power(x, y), lambda a, b: a ** b, NUM, 1, 3, 0,
                    3),
    "atan2": (lambda fw, x, y: fw.atan2(x, y), np.arctan2, NUM),
    "arctan2": (lambda fw, x, y: fw.arctan2(x, y), np.arctan2, FLOAT_DTYPES),
    "maximum": (lambda fw, x, y: fw.maximum(x, y), np.maximum, NUM),
    "minimum": (lambda fw, x, y: fw.minimum(x, y), np.minimum, NUM),
    "fmax": (lambda fw, x, y: fw.fmax(x, y), np.fmax, NUM),
    "fmin": (lambda fw, x, y: fw.fmin(x, y), np.fmin, NUM),
    "eq": (lambda fw, x, y: x == y, np.equal, NUM, 0, 3),
    "ne": (lambda fw, x, y: x != y, np.not_equal, NUM, 0, 3),
    "lt": (lambda fw, x, y: x < y, np.less, NUM, 0, 3),
    "le": (lambda fw, x, y: x <= y, np.less_equal, NUM, 0, 3),
    "gt": (lambda fw, x, y: x > y, np.greater, NUM, 0, 3),
    "ge": (lambda fw, x, y: x >= y, np.greater_equal, NUM, 0, 3),
    "not_equal": (lambda fw, x, y: fw.not_equal(x, y), np.not_equal, NUM, 0, 3),
    "less": (lambda fw, x, y: fw.less(x, y), np.less, NUM, 0, 3),
    "less_equal": (lambda fw, x, y: fw.less_equal(x, y), np.less_equal, NUM, 0, 3),
    "greater": (lambda fw, x, y: fw.greater(x, y), np.greater, NUM, 0, 3),
    "greater_equal": (lambda fw, x, y: fw.greater_equal(x, y), np.greater_equal, NUM, 0, 3),
    "isclose": (lambda fw, x, y: fw.isclose(x, y, rtol=0.1, atol=0.5),
                lambda a, b: np.isclose(a, b, rtol=0.1, atol=0.5), NUM, 0, 4),
    "logical_and": (lambda fw, x, y: fw.logical_and(x, y), np.logical_and, NUM, -1, 2),
    "logical_or": (lambda fw, x, y: fw.logical_or(x, y), np.logical_or, NUM, -1, 2),
    "logical_xor": (lambda fw, x, y: fw.logical_xor(x, y), np.logical_xor, NUM, -1, 2),
    "bitwise_and": (lambda fw, x, y: x & y, lambda a, b: a.astype(int) & b.astype(int), NUM[:5],
                    -50, 50),
    "bitwise_or": (lambda fw, x, y: x | y, lambda a, b: a.astype(int) | b.astype(int), NUM[:5],
                   -50, 50),
    "bitwise_xor": (lambda fw, x, y: x ^ y, lambda a, b: a.astype(int) ^ b.astype(int), NUM[:5],
                    -50, 50),
    "bitwise_left_shift": (lambda fw, x, y: x << y, _shift_left, NUM[:5], 0, 4, 0, 5),
    "bitwise_right_shift": (lambda fw, x, y: x >> y,
                            lambda a, b: a.astype(int) >> b.astype(int), NUM[:5], -90, 90, 0, 6),
    "hypot": (lambda fw, x, y: fw.hypot(x, y), np.hypot, FLOAT_DTYPES),
    "copysign": (lambda fw, x, y: fw.copysign(x, y), np.copysign, NUM),
    "xlogy": (lambda fw, x, y: fw.xlogy(x, y), lambda a, b: np.where(a == 0, 0, a * np.log(b)),
              NUM, -2, 3, 1, 5),
    "heaviside": (lambda fw, x, y: fw.heaviside(x, y), np.heaviside, NUM, -2, 3),
    "logaddexp": (lambda fw, x, y: fw.logaddexp(x, y), np.logaddexp, FLOAT_DTYPES),
    "logaddexp2": (lambda fw, x, y: fw.logaddexp2(x, y), np.logaddexp2, FLOAT_DTYPES),
    "ldexp": (lambda fw, x, y: fw.ldexp(x, y), lambda a, b: a * 2.0 ** b, FLOAT_DTYPES, -5, 5, -3,
              3),
}


def _nextafter_case(fw, device):
    out = []
    for dt in (fw.float32, fw.float64):
        x, a = make((4, 3), dt, device, noncontig=True, seed=1)
        y, b = make((3,), dt, device, seed=2)
        out.append((fw.nextafter(x, y), np.nextafter(a, b)))
    return out


def _int_pow_case(fw, device):
    out = []
    for dt in INT_DTYPES:
        x, a = make((3, 4), dt, device, 0, 4, noncontig=True, seed=1)
        y, b = make((4,), dt, device, 0, 4, seed=2)
        out.append((x ** y, np.power(a, b)))
        out.append((x ** 3, np.power(a, 3).astype(a.dtype)))
        out.append((2 ** y, np.power(2, b.astype(np.int64))))
    return out


def _where_ref(c, a, b):
    return np.where(c.astype(bool), a, b)


T = {
    "where": (lambda fw, c, x, y: fw.where(c, x, y), _where_ref, ALL_DTYPES, True),
    "lerp": (lambda fw, x, y, w: fw.lerp(x, y, w), lambda a, b, w: a + w * (b - a),
             FLOAT_DTYPES, False),
    "addcmul": (lambda fw, x, y, z: fw.addcmul(x, y, z, value=2),
                lambda a, b, c: a + 2 * b * c, NUM, False),
    "addcdiv": (lambda fw, x, y, z: fw.addcdiv(x, y, fw.abs(z) + 1, value=0.5),
                lambda a, b, c: a + 0.5 * b / (np.abs(c) + 1), FLOAT_DTYPES, False),
}


def _scalar_cases(fw, device):
    x, a = make((5,), fw.float64, device, seed=3)
    return [(fw.lerp(x, x * 2, 0.25), a + 0.25 * a), (fw.allclose(x, x + 1e-9), True),
            (fw.equal(x, x.clone()), True), (fw.equal(x, x + 1), False)]


CASES = {}
for _name, (_call, _ref, _dts, *_rng) in U.items():
    CASES[_name] = unary(_call, _ref, _dts, *_rng)
for _name, (_call, _ref, _dts, *_rng) in B.items():
    CASES[_name] = binary(_call, _ref, _dts, *_rng)
for _name, (_call, _ref, _dts, _cond) in T.items():
    CASES[_name] = ternary(_call, _ref, _dts, cond_first=_cond)
CASES["nextafter"] = [Case(_nextafter_case)]
CASES["relu_"] = [Case(lambda fw, device: [
    (fw.relu_(x), np.maximum(a, 0)) for x, a in
    [make((3, 4), dt, device, noncontig=True, seed=2) for dt in SIGNED]])]
CASES["pow"].append(Case(_int_pow_case))
CASES["lerp"].append(Case(_scalar_cases))
CASES["allclose"] = [Case(lambda fw, device: (fw.allclose(fw.ones(3), fw.ones(3) + 1e-7), True)),
                     Case(lambda fw, device: (fw.allclose(fw.ones(3), fw.zeros(3)), False))]
CASES["equal"] = [Case(_scalar_cases)]
CASES["round"].append(Case(lambda fw, device: (
    fw.round(fw.tensor([1.2345, -2.5551, 125.0], dtype=fw.float64), decimals=2),
    np.array([1.23, -2.56, 125.0]))))
CASES["nn.functional.gelu"].append(Case(lambda fw, device: [
    (fw.nn.functional.gelu(x, approximate="tanh"), _gelu_tanh(a)) for x, a in
    [make((4, 9), dt, device, noncontig=True, seed=5) for dt in FLOAT_DTYPES]]))


def _where_condition_case(fw, device):
    a = np.array([[0, 3, 0], [1, 0, 2]])
    got = fw.where(fw.tensor(a, device=device) > 0)
    ref = np.where(a > 0)
    return [(got[0], ref[0]), (got[1], ref[1])]


CASES["where"].append(Case(_where_condition_case))
