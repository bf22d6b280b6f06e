"""framework/kernels/pointwise.py on framework cuda tensors (Triton; under TRITON_INTERPRET=1
Triton's interpreter runs the kernels in place on host memory) against NumPy float64: every
op over contiguous, transposed, stepped and broadcast operands, 16-bit floats, integers and
bool where the op takes them, 0-d and empty, special values, and the CPU kernels' errors."""
import math

import numpy as np
import pytest

import framework as fw
import framework.kernels.pointwise as P
from framework import _cpu
from helpers import NP_OF, to_np

pytestmark = [
    pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda or TRITON_INTERPRET=1"),
    # masked-off lanes (loaded as 0) may divide by zero or take log(0); never stored
    pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                               "ignore:invalid value:RuntimeWarning",
                               "ignore:overflow encountered:RuntimeWarning"),
]
DEV = "cuda"


def ft(v, dtype=None):
    """A cuda tensor of the values v."""
    return fw.tensor(v, dtype=dtype, device=DEV)


def empty(shape, dtype=fw.float32):
    return fw.empty(shape, dtype=dtype, device=DEV)


SHAPE = (37, 41)  # 1517 elements: two programs of 1024, the second one masked
TOL = {fw.float32: (1e-5, 1e-6), fw.float16: (2e-3, 1e-3),
       fw.bfloat16: (1.6e-2, 1e-2), fw.float64: (1e-12, 1e-14)}
LAYOUTS = ["contig", "transposed", "step", "broadcast"]
# each float dtype in one layout per op (the interpreter is slow); test_layouts runs a few
# ops in every layout
FLOAT_CASES = [(fw.float32, "contig"), (fw.float16, "step"), (fw.bfloat16, "broadcast"),
               (fw.float64, "transposed")]
_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)


def _erfinv(y):
    """Inverse of math.erf by bisection (exact to the last bits in float64)."""
    lo, hi = np.full(y.shape, -6.0), np.full(y.shape, 6.0)
    for _ in range(80):
        mid = (lo + hi) / 2
        below = _erf(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lerp(a, b, w):
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


# name -> (reference, value domain, params)
UNARY = {
    "neg": (np.negative, "any", ()),
    "abs": (np.abs, "any", ()),
    "exp": (np.exp, "any", ()),
    "log": (np.log, "pos", ()),
    "sqrt": (np.sqrt, "pos", ()),
    "rsqrt": (lambda x: 1 / np.sqrt(x), "pos", ()),
    "sin": (np.sin, "any", ()),
    "cos": (np.cos, "any", ()),
    "tanh": (np.tanh, "any", ()),
    "sigmoid": (sigmoid, "any", ()),
    "relu": (lambda x: np.maximum(x, 0), "any", ()),
    "gelu": (lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), "any", ()),
    "gelu_tanh": (lambda x: 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3))),
                  "any", ()),
    "silu": (lambda x: x * sigmoid(x), "any", ()),
    "clamp": (lambda x: np.clip(x, -0.5, 1.25), "any", (-0.5, 1.25, 3)),
    "sign": (np.sign, "any", ()),
    "reciprocal": (lambda x: 1 / x, "pos", ()),
    "deg2rad": (np.deg2rad, "any", ()),
    "rad2deg": (np.rad2deg, "any", ()),
    "logical_not": (np.logical_not, "any", ()),
    "exp2": (np.exp2, "any", ()),
    "log2": (np.log2, "pos", ()),
    "log10": (np.log10, "pos", ()),
    "erf": (_erf, "any", ()),
    "floor": (np.floor, "any", ()),
    "ceil": (np.ceil, "any", ()),
    "trunc": (np.trunc, "any", ()),
    "frac": (lambda x: x - np.trunc(x), "any", ()),
    "isnan": (np.isnan, "special", ()),
    "isinf": (np.isinf, "special", ()),
    "isposinf": (np.isposinf, "special", ()),
    "isneginf": (np.isneginf, "special", ()),
    "isfinite": (np.isfinite, "special", ()),
    "threshold": (lambda x: np.where(x <= 0.5, -1.0, x), "any", (0.5, -1.0)),
    "leaky_relu": (lambda x: np.where(x > 0, x, 0.125 * x), "any", (0.125,)),
    "hardsigmoid": (lambda x: np.clip(x + 3, 0, 6) / 6, "wide", ()),
    "hardswish": (lambda x: x * np.clip(x + 3, 0, 6) / 6, "wide", ()),
    "bitwise_not": (lambda x: -x - 1, "any", ()),  # ints only (floats: test_errors)
    "log1p": (np.log1p, "w", ()),
    "expm1": (np.expm1, "any", ()),
    "signbit": (np.signbit, "special", ()),
    "round": (np.round, "halves", ()),
    "nan_to_num": (lambda x: np.nan_to_num(x, nan=0.5, posinf=100.0, neginf=-100.0),
                   "special", (0.5, 100.0, -100.0)),
    "elu": (lambda x: np.where(x <= 0, np.expm1(x) * 1.5, x), "any", (1.5, 1.0, 1.0)),
    "softplus": (lambda x: np.where(2 * x > 4, x, np.log1p(np.exp(2 * x)) / 2), "any",
                 (2.0, 4.0)),
    "mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), "wide", ()),
    "tan": (np.tan, "w", ()),
    "logit": (lambda x: np.log(np.clip(x, 0.125, 0.875) / (1 - np.clip(x, 0.125, 0.875))),
              "w", (0.125, 1.0)),
    "pow_scalar": (lambda x: x ** 2.5, "pos", (2.5,)),
    "asin": (np.arcsin, "unit", ()), "acos": (np.arccos, "unit", ()),
    "atan": (np.arctan, "wide", ()), "sinh": (np.sinh, "wide", ()),
    "cosh": (np.cosh, "wide", ()), "asinh": (np.arcsinh, "wide", ()),
    "acosh": (np.arccosh, "ge1", ()), "atanh": (np.arctanh, "unit", ()),
    "sinc": (np.sinc, "wide", ()), "erfc": (_erfc, "wide", ()),
    "erfinv": (_erfinv, "unit", ()),
    "round_decimals": (lambda x: np.round(x, 1), "any", (1.0,)),
}
BOOL_OUT = {"signbit", "logical_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite"}
# integer kernels truncate float parameters, like the CPU's from_param: clamp to [0, 1]
UNARY_INT_REF = {"clamp": lambda x: np.clip(x, 0, 1),
                 "threshold": lambda x: np.where(x <= 0, -1, x)}
UNARY_INT = ["neg", "abs", "relu", "clamp", "sign", "logical_not", "isnan", "isinf",
             "isposinf", "isneginf", "isfinite", "threshold", "bitwise_not", "signbit"]
UNARY_BOOL = ["sign", "logical_not", "isnan", "isinf", "isfinite", "bitwise_not", "signbit"]
BINARY = {
    "add": (lambda a, b: a + 2 * b, (2.0,)),
    "sub": (lambda a, b: a - 3 * b, (3.0,)),
    "mul": (np.multiply, ()),
    "div": (np.divide, ()),
    "maximum": (np.maximum, ()),
    "minimum": (np.minimum, ()),
    "eq": (np.equal, ()), "ne": (np.not_equal, ()), "lt": (np.less, ()),
    "le": (np.less_equal, ()), "gt": (np.greater, ()), "ge": (np.greater_equal, ()),
    "lerp": (lambda a, b: lerp(a, b, 0.75), (0.75,)),
    "fmax": (np.fmax, ()), "fmin": (np.fmin, ()),
    "logical_and": (np.logical_and, ()), "logical_or": (np.logical_or, ()),
    "logical_xor": (np.logical_xor, ()),
    "heaviside": (lambda x, v: np.where(x == 0, v, (x > 0) * 1.0), ()),
    "xlogy": (lambda x, y: np.where(x == 0, 0.0, x * np.log(y)), ()),
    "copysign": (np.copysign, ()),
    "hypot": (np.hypot, ()),
    "isclose": (lambda a, b: np.isclose(a, b, rtol=0.25, atol=0.125), (0.25, 0.125, 0.0)),
    "logaddexp": (np.logaddexp, ()),
    "logaddexp2": (np.logaddexp2, ()),
    "div_trunc": (lambda a, b: np.trunc(a / b), ()),
    "div_floor": (np.floor_divide, ()),
    "remainder": (np.remainder, ()),
    "fmod": (np.fmod, ()),
    "pow": (np.power, ()),
    "atan2": (np.arctan2, ()),
    "ldexp": (lambda a, b: a * np.exp2(b), ()),
}
# references computed in float32 below float64, as the kernels round (a quotient near an
# integer decides the result)
IN_FLOAT32 = {"div_trunc", "div_floor", "remainder"}
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
           "bitwise_xor": np.bitwise_xor}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "isclose"}
BINARY_INT = ["add", "sub", "mul", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
              "fmax", "fmin", "logical_and", "logical_or", "logical_xor", "heaviside", "isclose"]
BINARY_BOOL = ["add", "mul", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
               "fmax", "fmin", "logical_and", "logical_or", "logical_xor", "heaviside"]
TERNARY = {
    "where": lambda c, a, b: np.where(c, a, b),
    "lerp": lerp,
    "addcmul": lambda a, b, c: a + 2 * b * c,
    "addcdiv": lambda a, b, c: a + 2 * (b / c),
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
}


def values(shape, dtype, domain, rng):
    """float64 values exactly representable in dtype."""
    if dtype == fw.bool:
        return rng.random(shape) < 0.5
    if dtype == fw.int32:
        return rng.integers(-6, 7, shape).astype(np.float64)
    if domain == "pos":
        v = rng.uniform(0.1, 4.0, shape)
    elif domain == "wide":
        v = rng.uniform(-5.0, 5.0, shape)
    elif domain == "special":
        v = rng.choice([0.0, -0.0, -1.5, 2.0, np.nan, np.inf, -np.inf], shape)
    elif domain == "halves":
        v = rng.integers(-12, 13, shape) / 2 + rng.choice([0.0, 0.25, -0.25], shape)
    elif domain == "w":
        v = rng.uniform(-0.2, 1.2, shape)
    elif domain == "unit":
        v = rng.uniform(-0.99, 0.99, shape)
    elif domain == "ge1":
        v = rng.uniform(1.0, 5.0, shape)
    else:
        v = rng.uniform(-3.0, 3.0, shape)
        v[rng.random(shape) < 0.2] = rng.integers(-2, 3)  # ties for comparisons and clamp
    return to_np(fw.tensor(v, dtype=dtype)).astype(np.float64)  # rounded to dtype


def make(v, dtype, layout, which=0):
    """A cuda view of the values in `layout`, with the strides to pass (expanded to
    v.shape); a broadcast layout overwrites v with the values the view holds."""
    t = ft(v, dtype)
    if layout == "transposed" and t.dim() >= 2:
        t = t.t().contiguous().t()
    elif layout == "step":
        big = fw.zeros([2 * s + 1 for s in t.shape], dtype=dtype, device=DEV)
        view = big[tuple(slice(1, None, 2) for _ in t.shape)]
        view.copy_(t)
        t = view
    elif layout == "broadcast" and t.dim() >= 2:
        # row broadcast (stride 0 on dim 0) for even operands, column broadcast for odd
        small = t[:1, :] if which % 2 == 0 else t[:, :1]
        t = small.expand(*v.shape)
        v[...] = to_np(t)
    return t, t.stride()


def check(out, ref, dtype):
    got = to_np(out)
    if out.dtype == fw.bool or not dtype.is_floating_point:
        assert np.array_equal(got, np.asarray(ref, dtype=got.dtype)), (got, ref)
    else:
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=rtol, atol=atol,
                                   equal_nan=True)


def run_unary(name, dtype, layout, shape=SHAPE):
    ref_fn, domain, ps = UNARY[name]
    v = values(shape, dtype, domain, np.random.default_rng(0))
    x, sx = make(v, dtype, layout)
    out = empty(shape, dtype=fw.bool if name in BOOL_OUT else dtype)
    P.unary(name, out, x, sx, *ps)
    if dtype == fw.int32:
        ref_fn = UNARY_INT_REF.get(name, ref_fn)
    if dtype == fw.bool:
        ref_fn = {"bitwise_not": np.logical_not, "sign": lambda x: x}.get(name, ref_fn)
    check(out, ref_fn(v), dtype)


def run_binary(name, dtype, layout, shape=SHAPE):
    ref_fn, ps = BINARY[name]
    rng = np.random.default_rng(1)
    va = values(shape, dtype, "any", rng)
    vb = values(shape, dtype, "pos" if name in ("div", "xlogy") else "any", rng)
    a, sa = make(va, dtype, layout, 0)
    b, sb = make(vb, dtype, layout, 1)
    out = empty(shape, dtype=fw.bool if name in COMPARE else dtype)
    P.binary(name, out, a, sa, b, sb, *ps)
    if name in IN_FLOAT32 and dtype != fw.float64:
        ref = ref_fn(va.astype(np.float32), vb.astype(np.float32)).astype(np.float64)
    else:
        ref = ref_fn(va, vb)
    if dtype == fw.bool and name == "add":
        ref = va | vb
    if dtype == fw.bool and name == "heaviside":
        ref = np.where(~va, vb, va)
    check(out, ref, dtype)


@pytest.mark.parametrize("dtype", [fw.int32, fw.bool], ids=str)
@pytest.mark.parametrize("name", sorted(BITWISE))
def test_bitwise(name, dtype):
    rng = np.random.default_rng(3)
    if dtype == fw.bool:
        va, vb = rng.random(SHAPE) < 0.5, rng.random(SHAPE) < 0.5
    else:
        va, vb = rng.integers(-2**31, 2**31, SHAPE), rng.integers(-2**31, 2**31, SHAPE)
    a, sa = make(va, dtype, "step", 0)
    b, sb = make(vb, dtype, "broadcast", 1)
    out = empty(SHAPE, dtype=dtype)
    P.binary(name, out, a, sa, b, sb)
    got = to_np(out)
    assert np.array_equal(got, BITWISE[name](va, vb).astype(got.dtype))


@pytest.mark.parametrize("dtype,layout", FLOAT_CASES, ids=str)
@pytest.mark.parametrize("name", sorted(set(UNARY) - {"bitwise_not"}))
def test_unary_float(name, dtype, layout):
    run_unary(name, dtype, layout)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [fw.float32, fw.float64], ids=str)
def test_layouts(dtype, layout):
    for name in ("neg", "exp", "asinh", "round_decimals"):
        run_unary(name, dtype, layout)
    for name in ("add", "div_floor", "atan2", "pow"):
        run_binary(name, dtype, layout)


@pytest.mark.parametrize("layout", ["contig", "step"])
@pytest.mark.parametrize("name", UNARY_INT)
def test_unary_int32(name, layout):
    run_unary(name, fw.int32, layout)


@pytest.mark.parametrize("name", UNARY_BOOL)
def test_unary_bool(name):
    run_unary(name, fw.bool, "transposed")


@pytest.mark.parametrize("dtype,layout", FLOAT_CASES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float(name, dtype, layout):
    run_binary(name, dtype, layout)


@pytest.mark.parametrize("layout", ["contig", "broadcast"])
@pytest.mark.parametrize("name", BINARY_INT)
def test_binary_int32(name, layout):
    run_binary(name, fw.int32, layout)


@pytest.mark.parametrize("name", BINARY_BOOL)
def test_binary_bool(name):
    run_binary(name, fw.bool, "transposed")


@pytest.mark.parametrize("dtype,layout,name", [
    (dt, lay, n) for n in sorted(TERNARY)
    for dt, lay in FLOAT_CASES + [(fw.int32, "contig"), (fw.int32, "broadcast")]
    if dt.is_floating_point or n not in ("lerp", "addcdiv")], ids=str)
def test_ternary(name, dtype, layout):
    rng = np.random.default_rng(2)
    shape = SHAPE
    if name == "where":
        vs = [values(shape, fw.bool, "any", rng), values(shape, dtype, "any", rng),
              values(shape, dtype, "any", rng)]
        dts = [fw.bool, dtype, dtype]
    else:
        vs = [values(shape, dtype, "any", rng), values(shape, dtype, "any", rng),
              values(shape, dtype, {"lerp": "w", "addcdiv": "pos"}.get(name, "any"), rng)]
        dts = [dtype] * 3
    if name == "clamp":  # lo <= hi
        vs[1], vs[2] = np.minimum(vs[1], vs[2]), np.maximum(vs[1], vs[2])
    args = []
    for k, (v, dt) in enumerate(zip(vs, dts)):
        args += make(v, dt, layout, k)
    out = empty(shape, dtype=dtype)
    P.ternary(name, out, *args, 2.0 if name in ("addcmul", "addcdiv") else 0.0)
    check(out, TERNARY[name](*vs), dtype)


def test_where_bool_values():
    c = ft([True, False, True])
    a = ft([True, True, False])
    b = ft([False, True, True])
    out = empty(3, dtype=fw.bool)
    P.ternary("where", out, c, (1,), a, (1,), b, (1,))
    assert out.tolist() == [True, True, False]


@pytest.mark.parametrize("name", ["exp", "neg", "clamp"])
def test_unary_0d_and_empty(name):
    x = ft(0.75)
    out = empty((), dtype=fw.float32)
    P.unary(name, out, x, (), *UNARY[name][2])
    assert out.item() == pytest.approx(float(UNARY[name][0](np.float64(0.75))), rel=1e-6)
    for shape in [(0,), (3, 0), (0, 5)]:
        e = empty(shape)
        P.unary(name, empty(shape), e, e.stride())  # no launch, no error


def test_binary_0d_broadcast_and_empty():
    a = ft(np.arange(5.0), fw.float32)
    b = ft(2.5)  # a 0-d operand broadcast to (5,)
    out = empty(5)
    P.binary("mul", out, a, (1,), b, (0,))
    assert out.tolist() == [0.0, 2.5, 5.0, 7.5, 10.0]
    out0 = empty(())
    P.binary("add", out0, b, (), b, (), 1.0)
    assert out0.item() == 5.0
    P.binary("add", empty((0, 4)), empty((0, 4)), (4, 1), empty(4), (0, 1))
    P.binary("remainder", empty(0, fw.int32), empty(0, fw.int32), (1,), empty(0, fw.int32),
             (1,))  # nothing to divide: no error, no flag read


def test_strided_out_and_8d():
    # out transposed (an out= argument); 8 dims of which none merge
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((6, 5))
    x = ft(xv, fw.float64)
    out = empty((5, 6), dtype=fw.float64).t()
    P.unary("neg", out, x, x.stride())
    assert np.array_equal(to_np(out), -xv)
    yv = rng.standard_normal([2] * 8)
    y = ft(yv, fw.float64)
    yp = y.permute(*range(7, -1, -1))
    out = empty([2] * 8, dtype=fw.float64)
    P.binary("sub", out, yp, yp.stride(), y, y.stride(), 1.0)
    assert np.array_equal(to_np(out), yv.transpose(*range(7, -1, -1)) - yv)


def test_too_many_dims():
    y = fw.zeros([2] * 9, device=DEV).permute(*range(8, -1, -1))
    with pytest.raises(RuntimeError, match="at most 8"):
        P.unary("neg", empty([2] * 9), y, y.stride())


def test_int64_offsets(monkeypatch):
    # the IDX64 variant gives the same results (forced: 2**31 elements do not fit here)
    monkeypatch.setattr(P, "_INT32_LIMIT", 16)
    run_binary("add", fw.float32, "broadcast")
    run_unary("sigmoid", fw.float16, "step")


def test_float64_param_exact():
    # p0 travels as float64 bits: alpha = 0.1 is not rounded to float32
    a = fw.zeros(3, dtype=fw.float64, device=DEV)
    b = fw.ones(3, dtype=fw.float64, device=DEV)
    out = empty(3, dtype=fw.float64)
    P.binary("add", out, a, (1,), b, (1,), 0.1)
    assert out.tolist() == [0.1, 0.1, 0.1]


def test_special_values():
    nan, inf = float("nan"), float("inf")
    x = ft([nan, -0.0, 0.0, -inf, inf, -2.0])
    out = empty(6)
    P.unary("abs", out, x, (1,))
    assert out[1:].tolist() == [0.0, 0.0, inf, inf, 2.0] and math.isnan(out[0])
    assert math.copysign(1.0, out[1].item()) == 1.0
    P.unary("neg", out, x, (1,))
    assert math.copysign(1.0, out[2].item()) == -1.0
    P.unary("relu", out, x, (1,))
    assert math.isnan(out[0]) and out[1:].tolist() == [0.0, 0.0, 0.0, inf, 0.0]
    P.unary("tanh", out, x, (1,))
    assert math.isnan(out[0]) and out[1:].tolist() == [0.0, 0.0, -1.0, 1.0,
                                                   float(np.float32(math.tanh(-2.0)))]
    y = ft([1.0, nan, 0.0, 5.0, 0.0, 0.0])
    P.binary("maximum", out, x, (1,), y, (1,))
    assert math.isnan(out[0]) and math.isnan(out[1]) and out[2:].tolist() == [0.0, 5.0, inf, 0.0]
    P.binary("minimum", out, y, (1,), x, (1,))
    assert math.isnan(out[0]) and math.isnan(out[1])
    lo = ft([0.0, 0.0, nan, 0.0, 0.0, 0.0])
    hi = ft([1.0, 1.0, 1.0, nan, 1.0, 1.0])
    P.ternary("clamp", out, x, (1,), lo, (1,), hi, (1,))
    assert [math.isnan(v) for v in out.tolist()] == [True, False, True, True, False, False]
    assert out[1].item() == 0.0 and out[4:].tolist() == [1.0, 0.0]
    for dt in (fw.float32, fw.float64):
        r = ft([0.0, -0.0, 4.0], dt)
        out3 = empty(3, dt)
        P.unary("rsqrt", out3, r, (1,))
        assert out3.tolist() == [inf, -inf, 0.5]


def test_clamp_one_sided():
    x = ft([-3, 0, 3], dtype=fw.int32)
    out = empty(3, dtype=fw.int32)
    P.unary("clamp", out, x, (1,), -1.0, 0.0, 1)  # min only
    assert out.tolist() == [-1, 0, 3]
    P.unary("clamp", out, x, (1,), 0.0, 1.0, 2)  # max only
    assert out.tolist() == [-3, 0, 1]


def test_errors():
    i = fw.zeros(3, dtype=fw.int32, device=DEV)
    f = fw.zeros(3, device=DEV)
    bo = fw.zeros(3, dtype=fw.bool, device=DEV)
    with pytest.raises(NotImplementedError, match="\"exp_cuda\" not implemented for 'Int'"):
        P.unary("exp", empty(3), i, (1,))
    with pytest.raises(NotImplementedError, match="\"neg_cuda\" not implemented for 'Bool'"):
        P.unary("neg", empty(3, dtype=fw.bool), bo, (1,))
    with pytest.raises(NotImplementedError, match="\"sub_cuda\" not implemented for 'Bool'"):
        P.binary("sub", bo, bo, (1,), bo, (1,), 1.0)
    with pytest.raises(NotImplementedError, match="\"lerp_cuda\" not implemented for 'Int'"):
        P.ternary("lerp", i, i, (1,), i, (1,), i, (1,))
    with pytest.raises(NotImplementedError,
                       match="\"bitwise_and_cuda\" not implemented for 'Float'"):
        P.binary("bitwise_and", f, f, (1,), f, (1,))
    with pytest.raises(NotImplementedError,
                       match="\"bitwise_not_cuda\" not implemented for 'Float'"):
        P.unary("bitwise_not", f, f, (1,))
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        P.ternary("where", f, f, (1,), f, (1,), f, (1,))
    with pytest.raises(NotImplementedError, match="\"erfinv_cuda\" not implemented for 'Int'"):
        P.unary("erfinv", i, i, (1,))
    with pytest.raises(NotImplementedError, match="\"pow_cuda\" not implemented for 'Bool'"):
        P.binary("pow", bo, bo, (1,), bo, (1,))
    with pytest.raises(NotImplementedError,
                       match="\"nextafter_cuda\" not implemented for 'Int'"):
        P.binary("nextafter", i, i, (1,), i, (1,))


def test_collapse():
    # contiguous 3-d merges to 1-d; a broadcast dim stays; size-1 dims drop; 0-d is (1,)
    assert P.collapse((2, 3, 4), [(12, 4, 1), (12, 4, 1)]) == ((24,), [(1,), (1,)])
    assert P.collapse((2, 3, 4), [(12, 4, 1), (0, 4, 1)]) == ((2, 12), [(12, 1), (0, 1)])
    assert P.collapse((2, 1, 4), [(4, 4, 1)]) == ((8,), [(1,)])
    assert P.collapse((), [(), ()]) == ((1,), [(1,), (1,)])
    assert P.collapse((3, 4), [(1, 3)]) == ((3, 4), [(1, 3)])


def test_special_values_2():
    nan, inf = float("nan"), float("inf")
    x = ft([1e-10, -1.0, inf, -inf, 0.0, -0.0], dtype=fw.float64)
    out = empty(6, dtype=fw.float64)
    P.unary("log1p", out, x, (1,))
    assert out[0].item() == pytest.approx(1e-10 - 5e-21, rel=1e-15) and math.isnan(out[3])
    assert out.tolist()[1:3] == [-inf, inf] and out.tolist()[4:] == [0.0, -0.0]
    assert math.copysign(1.0, out[5].item()) == -1.0
    P.unary("expm1", out, x, (1,))
    assert out[0].item() == pytest.approx(1e-10 + 5e-21, rel=1e-15)
    assert out.tolist()[2:] == [inf, -1.0, 0.0, -0.0]
    r = ft([2.5, 3.5, -0.4, -2.5, 0.49999997, 1e30])
    out = empty(6)
    P.unary("round", out, r, (1,))
    assert out.tolist() == [2.0, 4.0, -0.0, -2.0, 0.0, float(np.float32(1e30))]
    assert math.copysign(1.0, out[2].item()) == -1.0
    a = ft([3.0, inf, nan, 1e30, 0.0, -5.0])
    b = ft([4.0, nan, inf, 1e30, 0.0, 12.0])
    for dt in (fw.float32, fw.float64):
        o = empty(6, dt)
        P.binary("hypot", o, a.to(dt), (1,), b.to(dt), (1,))
        assert o.tolist()[:2] == [5.0, inf] and o[2].item() == inf
        assert o[3].item() == pytest.approx(1.4142135e30) and o.tolist()[4:] == [0.0, 13.0]
    c = empty(6, dtype=fw.bool)
    P.binary("isclose", c, a, (1,), b, (1,), 1e-5, 1e-8, 1.0)
    assert c.tolist() == [False, False, False, True, True, False]
    n = ft([nan, inf, 1.0])
    c3 = empty(3, dtype=fw.bool)
    P.binary("isclose", c3, n, (1,), n, (1,), 1e-5, 1e-8, 1.0)
    assert c3.tolist() == [True, True, True]
    P.binary("isclose", c3, n, (1,), n, (1,), 1e-5, 1e-8, 0.0)
    assert c3.tolist() == [False, True, True]


OTHER_DTYPES = [fw.uint8, fw.int8, fw.int16, fw.int64, fw.float64]


@pytest.mark.parametrize("dtype", OTHER_DTYPES, ids=str)
def test_other_dtypes(dtype):
    # computed in the dtype itself: NumPy in the same dtype is the reference (wrapping too)
    rng = np.random.default_rng(4)
    npdt = np.dtype(NP_OF[dtype])
    va = rng.integers(-100, 100, SHAPE).astype(npdt)
    vb = rng.integers(-100, 100, (1, SHAPE[1])).astype(npdt)
    a = ft(va, dtype).t().contiguous().t()
    b = ft(vb, dtype).expand(*SHAPE)
    refs = {"add": va + npdt.type(2) * vb, "mul": va * vb, "maximum": np.maximum(va, vb),
            "lt": va < vb}
    for name, ref in refs.items():
        out = empty(SHAPE, dtype=fw.bool if name == "lt" else dtype)
        P.binary(name, out, a, a.stride(), b, b.stride(), 2.0)
        assert np.array_equal(to_np(out), ref), name
    for name, ref in {"neg": -va, "abs": np.abs(va) if npdt != np.uint8 else va,
                      "relu": np.maximum(va, npdt.type(0))}.items():
        out = empty(SHAPE, dtype=dtype)
        P.unary(name, out, a, a.stride())
        assert np.array_equal(to_np(out), ref), name


def test_kernel_names_match_the_cpu_backend():
    from framework import _C
    assert set(P.UNARY) == set(_C.unary_ops())
    assert set(P.BINARY) == set(_C.binary_ops())
    assert set(P.TERNARY) == set(_C.ternary_ops())


@pytest.mark.parametrize("dtype", [fw.int32, fw.int8, fw.int64], ids=str)
def test_shifts(dtype):
    npdt = np.dtype(NP_OF[dtype])
    bits = npdt.itemsize * 8
    a = np.array([1, -1, 5, -8, 3, 7, -9, 1], npdt)
    b = np.array([0, 1, 2, 3, bits - 1, bits, -1, bits + 3], npdt)
    out = empty(8, dtype=dtype)
    P.binary("lshift", out, ft(a, dtype), (1,), ft(b, dtype), (1,))
    ref = [int(np.left_shift(x, y)) if 0 <= y < bits else 0 for x, y in zip(a, b)]
    assert out.tolist() == ref
    P.binary("rshift", out, ft(a, dtype), (1,), ft(b, dtype), (1,))
    ref = [int(x) >> (int(y) if 0 <= y < bits else bits - 1) for x, y in zip(a, b)]
    assert out.tolist() == ref
    with pytest.raises(NotImplementedError, match="\"lshift_cuda\" not implemented for 'Bool'"):
        bo = fw.zeros(2, dtype=fw.bool, device=DEV)
        P.binary("lshift", bo, bo, (1,), bo, (1,))


def test_logaddexp_infinities():
    inf, nan = float("inf"), float("nan")
    a = ft([inf, -inf, inf, -inf, nan, 1.0])
    b = ft([inf, -inf, -inf, 2.0, 1.0, nan])
    out = empty(6)
    for name in ("logaddexp", "logaddexp2"):
        P.binary(name, out, a, (1,), b, (1,))
        assert out.tolist()[:4] == [inf, -inf, inf, 2.0], name
        assert math.isnan(out[4]) and math.isnan(out[5])


# ---- against the CPU kernels (framework._cpu.pointwise) on the same data ----------------

def cpu_and_cuda(kernel, arity, arrays, dtype, out_dtype=None, ps=()):
    """The kernel's result on cpu and on cuda (NumPy arrays) for the same operands."""
    res = []
    for dev, launch in (("cpu", _cpu.pointwise), (DEV, P)):
        ts = [fw.tensor(v, dtype=dtype, device=dev) for v in arrays]
        out = fw.empty(ts[0].shape, dtype=out_dtype or dtype, device=dev)
        args = [x for t in ts for x in (t, t.stride())]
        getattr(launch, arity)(kernel, out, *args, *ps)
        res.append(to_np(out))
    return res


def assert_same(cpu, cuda, rtol, atol=0.0):
    """Equal up to rtol, NaN where NaN, and the same sign on zeros and infinities."""
    np.testing.assert_allclose(cuda.astype(np.float64), cpu.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True)
    exact = (cpu == 0) | np.isinf(cpu)
    assert np.array_equal(np.signbit(cuda[exact]), np.signbit(cpu[exact]))


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
           0.999, -0.999, 1.001, 1e-8, -1e-8, 1e-30, 7.5, -7.5, 30.0, -30.0, 100.0, -100.0,
           700.0, 1e6, -1e6, 1e30, -1e30, 0.25, 1.5, 6.5, -9.0]
NEW_UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sinc", "erfc",
             "erfinv", "round", "sqrt", "rsqrt"]


@pytest.mark.parametrize("dtype", [fw.float32, fw.float64], ids=str)
@pytest.mark.parametrize("name", NEW_UNARY)
def test_unary_special_values_like_cpu(name, dtype):
    v = np.array(SPECIAL)
    cpu, cuda = cpu_and_cuda(name, "unary", [v], dtype)
    # float32 sinc is computed in float64 here: sinc(n) is ~0, not the CPU's sin(pi_f32 n)
    atol = 1e-7 if name == "sinc" and dtype == fw.float32 else 0.0
    assert_same(cpu, cuda, 1e-13 if dtype == fw.float64 else 2e-7, atol)


@pytest.mark.parametrize("dtype", [fw.float32, fw.float64, fw.float16], ids=str)
@pytest.mark.parametrize("name", ["pow", "atan2", "fmod", "remainder", "div_floor", "div_trunc",
                                  "hypot", "ldexp", "nextafter"])
def test_binary_special_values_like_cpu(name, dtype):
    a, b = np.meshgrid(np.array(SPECIAL[:22]), np.array(SPECIAL[:22]))
    if name == "ldexp":
        b = np.where(np.abs(b) < 1e3, np.round(b), b)
    cpu, cuda = cpu_and_cuda(name, "binary", [a, b], dtype)
    assert_same(cpu, cuda, {fw.float64: 1e-13, fw.float32: 2e-7, fw.float16: 1e-3}[dtype])


@pytest.mark.parametrize("e", [2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 2.5, -1.5, 0.0, 0.1])
def test_pow_scalar_like_cpu(e):
    for dtype in (fw.float32, fw.float64):
        cpu, cuda = cpu_and_cuda("pow_scalar", "unary", [np.array(SPECIAL)], dtype, ps=(e,))
        assert_same(cpu, cuda, 1e-13 if dtype == fw.float64 else 2e-7)


def test_round_decimals_like_cpu():
    v = np.array([1.2345, -2.5551, 125.0, 0.125, -0.375, 1234.5, 2.5e-3, np.nan, -np.inf])
    for d in (0.0, 1.0, 2.0, 3.0, -1.0, -2.0):
        for dtype in (fw.float32, fw.float64, fw.float16):
            cpu, cuda = cpu_and_cuda("round_decimals", "unary", [v], dtype, ps=(d,))
            assert_same(cpu, cuda, 0)


@pytest.mark.parametrize("dtype", [fw.float16, fw.bfloat16, fw.float32, fw.float64], ids=str)
def test_nextafter_steps_own_format(dtype):
    a = np.array([0.0, -0.0, 1.0, 1.0, -1.0, 65504.0, 3.0, np.nan, 2.0, 5.0])
    b = np.array([1.0, -1.0, 2.0, 0.0, -2.0, np.inf, 3.0, 1.0, np.nan, -np.inf])
    cpu, cuda = cpu_and_cuda("nextafter", "binary", [a, b], dtype)
    assert np.array_equal(cpu, cuda, equal_nan=True)
    assert np.array_equal(np.signbit(cpu), np.signbit(cuda))
    assert cuda[a == 1.0][0] > 1.0 > cuda[a == 1.0][1]


INT_DTYPES = [fw.uint8, fw.int8, fw.int16, fw.int32, fw.int64]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["div_trunc", "div_floor", "remainder", "fmod", "pow"])
def test_int_division_and_pow_like_cpu(name, dtype):
    info = np.iinfo(NP_OF[dtype])
    edge = [info.min, info.max, info.min + 1, 0, 1, 2, 3, 7, 100 % (info.max + 1)]
    if info.min < 0:
        edge += [-1, -2, -3, -7]
    a, b = np.meshgrid(np.array(edge), np.array(edge))
    if name != "pow":
        b = np.where(b == 0, 5, b)
    cpu, cuda = cpu_and_cuda(name, "binary", [a, b], dtype)
    assert np.array_equal(cpu, cuda)


@pytest.mark.parametrize("name", ["div_trunc", "div_floor", "remainder", "fmod"])
def test_int_division_by_zero(name):
    for dtype in (fw.int32, fw.uint8):
        a = ft(np.arange(2048) % 7, dtype)
        b = ft(np.where(np.arange(2048) == 1500, 0, 3), dtype)  # one zero, in program 2
        for launch in (_cpu.pointwise, P):
            dev = "cpu" if launch is _cpu.pointwise else DEV
            out = fw.empty((2048,), dtype=dtype, device=dev)
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                launch.binary(name, out, a.to(dev), (1,), b.to(dev), (1,))
    out = empty(3)
    f = ft([1.0, -1.0, 0.0])
    P.binary(name, out, f, (1,), fw.zeros(3, device=DEV), (1,))  # floats: no error


def test_bfloat16_every_bit_pattern():
    # loads widen bfloat16 by a shift and stores round float32 bits to nearest even:
    # subnormals survive (Triton's interpreter's own conversion flushes them)
    f = (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)
    cpu, cuda = cpu_and_cuda("neg", "unary", [f], fw.bfloat16)
    assert np.array_equal(np.isnan(cpu), np.isnan(cuda))
    keep = ~np.isnan(cpu)
    assert np.array_equal(cpu.view(np.uint32)[keep], cuda.view(np.uint32)[keep])
    rng = np.random.default_rng(6)
    bits = rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    bits[:512] = (bits[:512] & 0xFFFF0000) | 0x8000  # ties to even
    x = ft(bits.view(np.float32), fw.float32)
    out = empty(4096, fw.bfloat16)
    P.unary("neg", out, x, (1,))
    ref = to_np(fw.tensor(-bits.view(np.float32), dtype=fw.bfloat16))
    got = to_np(out)
    keep = ~np.isnan(ref)
    assert np.array_equal(np.isnan(ref), np.isnan(got))
    assert np.array_equal(ref.view(np.uint32)[keep], got.view(np.uint32)[keep])


@pytest.mark.parametrize("dtype", [fw.float16, fw.bfloat16], ids=str)
@pytest.mark.parametrize("name", ["mul", "div", "div_trunc", "div_floor"])
def test_scalar_operand_kernels_compute_in_float32(name, dtype):
    # x <op> s with s = p0 unrounded: float32 x and s, one rounding to the 16-bit output
    # (PyTorch's opmath); the second operand is not read
    x = np.linspace(-3, 3, 1517)
    for s in (70000.0, 1e-5, 0.3, -1e39):
        outs = []
        for dev in ("cpu", "cuda"):
            a = fw.tensor(x, dtype=dtype, device=dev)
            wide = fw.empty(x.shape, device=dev)
            out = fw.empty(x.shape, dtype=dtype, device=dev)
            fw._ops.alloc.backend(a.device).pointwise.binary(
                name + "_scalar", out, a, (1,), a, (0,), s)
            fw._ops.alloc.backend(a.device).pointwise.binary(
                name, wide, a.float(), (1,), fw.tensor(s, device=dev), (0,))
            np.testing.assert_array_equal(to_np(out), to_np(wide.to(dtype)))
            outs.append(to_np(out))
        np.testing.assert_array_equal(outs[0], outs[1])


def test_clamp_nan_bound_makes_nan():
    x = ft([-3.0, 0.0, math.nan, 3.0])
    out = empty(4)
    for which, lo, hi in ((1, math.nan, 0.0), (2, 0.0, math.nan), (3, math.nan, 1.0)):
        P.unary("clamp", out, x, (1,), lo, hi, which)
        assert np.isnan(to_np(out)).all()
    P.unary("clamp", out, x, (1,), 2.0, 1.0, 3)   # min > max: max everywhere but NaN
    assert to_np(out)[[0, 1, 3]].tolist() == [1.0, 1.0, 1.0]
