"""Pointwise ops beyond the op table: PyTorch parity on every dtype with special values
(NaN, inf, -0, integer limits), errors, in-place and out=, type promotion, accuracy of the
vectorized float32 functions, and hypothesis checks of broadcasting and strides."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import framework as fw
import framework.nn.functional as F
from helpers import ALL_DTYPES, TOL, launched_kernels, skip_unless_torch, to_np

try:  # PyTorch is the oracle where installed; the tests that need it are marked
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is the oracle of this test")

if torch is not None:
    T_OF = {fw.bool: torch.bool, fw.uint8: torch.uint8, fw.int8: torch.int8,
            fw.int16: torch.int16, fw.int32: torch.int32, fw.int64: torch.int64,
            fw.float16: torch.float16, fw.bfloat16: torch.bfloat16, fw.float32: torch.float32,
            fw.float64: torch.float64}
    FW_OF = {v: k for k, v in T_OF.items()}


def special_values(dt):
    """Values that exercise edges of a dtype: NaN, infinities, signed zeros, limits."""
    if dt is fw.bool:
        return [True, False, True, False]
    if dt.category == 1:
        ii = np.iinfo(dt.np)
        return [0, 1, 2, 3, 7, ii.max, ii.min, ii.max - 1, ii.min + 1] + \
            ([-1, -2, -7] if dt.is_signed else [100, 200])
    vals = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -3.75, 0.999, -0.999, 1e-3, 10.0, -10.0,
            80.0, -80.0, 100.0, -110.0, math.inf, -math.inf, math.nan, 3.0, 1e4, -1e4]
    if dt in (fw.float32, fw.float64):
        vals += [1e-40, -1e-40, 1e30, -1e30, 88.5, -87.5, 9000.0, 123456.7]
    return vals


def pair(values, dt):
    """The same values as a framework tensor (strided) and a torch tensor."""
    t = torch.tensor(values, dtype=torch.float64 if dt.category == 2 else None)
    t = t.to(T_OF[dt])
    big = torch.zeros(t.numel() * 2, dtype=t.dtype)
    big[::2] = t
    f = fw.tensor(big.to(torch.float32 if dt is fw.bfloat16 else big.dtype).numpy(),
                  dtype=dt)[::2]
    return f, t


def compare(got, want, rtol=None, atol=None):
    assert isinstance(got, fw.Tensor)
    assert got.dtype is FW_OF[want.dtype], f"dtype {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape)
    w = want.to(torch.float64).numpy() if want.dtype in (torch.bfloat16, torch.float16) \
        else want.numpy()
    g = to_np(got)
    if got.dtype.is_floating_point:
        r, a = TOL[got.dtype]
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                   rtol=rtol or r, atol=atol or a, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


def same_outcome(fw_call, torch_call, **tol):
    """Both succeed with equal values, or both raise the same error."""
    try:
        want = torch_call()
    except Exception as e:  # noqa: BLE001 - any torch error must be mirrored
        with pytest.raises(type(e)) as info:
            fw_call()
        first = str(e).split("\n")[0]
        assert str(info.value).split("\n")[0] == first
        return
    compare(fw_call(), want, **tol)


UNARY = ["abs", "neg", "sign", "sgn", "signbit", "exp", "exp2", "expm1", "log", "log2",
         "log10", "log1p", "sqrt", "rsqrt", "square", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc",
         "erfinv", "floor", "ceil", "round", "trunc", "frac", "reciprocal", "isnan", "isinf",
         "isposinf", "isneginf", "isfinite", "isreal", "nan_to_num", "deg2rad", "rad2deg",
         "sinc", "relu", "bitwise_not", "logical_not", "positive", "logit", "fix"]
# transcendental functions of huge or pole arguments differ between libms in the last bits
LOOSE = {"tan": 1e-5, "sinh": 1e-5, "cosh": 1e-5, "erfinv": 1e-5, "sinc": 1e-5}


@needs_torch
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(name, dt):
    f, t = pair(special_values(dt), dt)
    tol = {"rtol": LOOSE[name]} if name in LOOSE and dt is fw.float64 else {}
    same_outcome(lambda: getattr(fw, name)(f), lambda: getattr(torch, name)(t), **tol)


FUNCTIONAL = [("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
              ("softplus", {"beta": 2.0, "threshold": 5.0}), ("elu", {"alpha": 0.7}),
              ("selu", {}), ("celu", {"alpha": 1.5}), ("leaky_relu", {"negative_slope": 0.1}),
              ("hardtanh", {"min_val": -2.0, "max_val": 3.0}), ("relu6", {}),
              ("hardsigmoid", {}), ("hardswish", {}), ("relu", {}), ("sigmoid", {}),
              ("tanh", {}), ("threshold", {"threshold": 1.0, "value": 5.0})]


@needs_torch
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name,kw", FUNCTIONAL, ids=lambda v: str(v))
def test_functional_matches_torch(name, kw, dt):
    vals = special_values(dt)
    if name == "gelu" and not kw:  # PyTorch's float32 kernel gives NaN at +inf; we give inf
        vals = [v for v in vals if not (isinstance(v, float) and math.isinf(v))]
    f, t = pair(vals, dt)
    same_outcome(lambda: getattr(F, name)(f, **kw), lambda: getattr(TF, name)(t, **kw))


@needs_torch
def test_functional_inplace():
    for name in ("relu", "relu6", "silu", "elu", "leaky_relu", "hardtanh", "hardswish"):
        x = fw.tensor([-2.0, -0.5, 0.0, 1.5, 7.0])
        ref = getattr(TF, name)(torch.tensor([-2.0, -0.5, 0.0, 1.5, 7.0]))
        r = getattr(F, name)(x, inplace=True)
        assert r is x
        compare(x, ref)
    x = fw.tensor([-1.0, 2.0])
    assert fw.relu_(x) is x and x.tolist() == [0.0, 2.0]
    assert x.relu().tolist() == [0.0, 2.0]


BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow",
          "float_power", "atan2", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "le",
          "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "hypot", "copysign",
          "xlogy", "heaviside", "logaddexp", "logaddexp2", "nextafter", "ldexp", "true_divide",
          "isclose"]


def _binary_values(dt):
    a = special_values(dt)
    b = list(reversed(a))
    if dt.category == 1:  # integer division by zero raises: keep zeros out of divisors
        b = [v if v != 0 else 3 for v in b]
    if dt.category == 1:
        b = [v for v in b] + [1, 2]
        a = a + [5, 6]
    return a, b


@needs_torch
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_torch(name, dt):
    a, b = _binary_values(dt)
    if name in ("pow", "float_power", "bitwise_left_shift", "bitwise_right_shift", "ldexp") \
            and dt.category == 1:
        b = [v % 5 for v in b] if dt is fw.uint8 else [v % 7 - 2 for v in b]
    if name in ("fmod", "remainder"):  # PyTorch's vector float32 fmod is inexact there
        a = [v for v in a if not (isinstance(v, float) and 0 < abs(v) < 1e-30)]
        b = [v for v in b if not (isinstance(v, float) and (0 < abs(v) < 1e-30 or
                                                            abs(v) > 1e20))]
        a, b = a[:len(b)], b[:len(a)]
    if name == "copysign":  # the sign of NaN is not portable
        b = [v if v == v else 1.0 for v in b]
    fa, ta = pair(a, dt)
    fb, tb = pair(b, dt)
    fb2, tb2 = fb.reshape(-1, 1)[: 3], tb.reshape(-1, 1)[:3]  # broadcast against a column
    tol = {"rtol": 1e-5} if name in ("pow", "float_power") and dt is fw.float64 else {}
    same_outcome(lambda: getattr(fw, name)(fa, fb), lambda: getattr(torch, name)(ta, tb), **tol)
    same_outcome(lambda: getattr(fw, name)(fa, fb2), lambda: getattr(torch, name)(ta, tb2),
                 **tol)


SCALARS = [0, 1, 2, 3, -1, -3, 2.5, 0.5, -0.5, -2.0, True, False]


@needs_torch
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "floor_divide", "remainder",
                                  "pow", "eq", "lt", "fmod", "bitwise_and", "copysign",
                                  "xlogy", "rsub"])
def test_binary_with_python_scalar(name, dt):
    a = special_values(dt)
    fa, ta = pair(a, dt)
    for s in SCALARS:
        if name in ("floor_divide", "remainder", "fmod") and s in (0, False) and \
                dt.category < 2:
            continue
        same_outcome(lambda: getattr(fw, name)(fa, s), lambda: getattr(torch, name)(ta, s))


@needs_torch
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
def test_reflected_operators(dt):
    fa, ta = pair([1, 2, 3, 5], dt)
    for s in (2, 2.5, -1, True):
        same_outcome(lambda: s - fa, lambda: s - ta)
        same_outcome(lambda: s / fa, lambda: s / ta)
        same_outcome(lambda: s * fa, lambda: s * ta)
        same_outcome(lambda: s ** fa, lambda: s ** ta)
        same_outcome(lambda: s // fa, lambda: s // ta)
        same_outcome(lambda: s % fa, lambda: s % ta)


TERNARY = [
    ("where", lambda m, a, b, c: m.where(a > b, b, c)),
    ("where scalar", lambda m, a, b, c: m.where(a > b, b, 2)),
    ("lerp", lambda m, a, b, c: m.lerp(a, b, c)),
    ("lerp scalar", lambda m, a, b, c: m.lerp(a, b, 0.75)),
    ("addcmul", lambda m, a, b, c: m.addcmul(a, b, c, value=2)),
    ("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=0.5)),
    ("clamp tensors", lambda m, a, b, c: m.clamp(a, b, c)),
    ("clamp min tensor", lambda m, a, b, c: m.clamp(a, min=b)),
    ("clamp scalars", lambda m, a, b, c: m.clamp(a, -2, 3)),
    ("clamp float min", lambda m, a, b, c: m.clamp(a, min=2.5)),
    ("clamp_max", lambda m, a, b, c: m.clamp_max(a, 0)),
    ("round decimals", lambda m, a, b, c: m.round(a, decimals=2)),
    ("nan_to_num", lambda m, a, b, c: m.nan_to_num(a, nan=1.5, posinf=9.0)),
    ("logit eps", lambda m, a, b, c: m.logit(a, eps=0.25)),
    ("isclose nan", lambda m, a, b, c: m.isclose(a, b, rtol=0.5, atol=1.0, equal_nan=True)),
    ("float_power scalar", lambda m, a, b, c: m.float_power(a, 2)),
]


@needs_torch
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name,call", TERNARY, ids=[t[0] for t in TERNARY])
def test_ternary_and_parametrized_match_torch(name, call, dt):
    a = special_values(dt)
    b = list(reversed(a))
    c = a[len(a) // 2:] + a[:len(a) // 2]
    (fa, ta), (fb, tb), (fc, tc) = pair(a, dt), pair(b, dt), pair(c, dt)
    same_outcome(lambda: call(fw, fa, fb, fc), lambda: call(torch, ta, tb, tc))


MIXED = ["add", "sub", "mul", "div", "eq", "lt", "maximum", "fmin", "bitwise_or", "remainder",
         "atan2", "logical_and", "pow", "copysign", "hypot"]
_PAIRS = [(a, b) for a in ALL_DTYPES for b in ALL_DTYPES]


@needs_torch
@pytest.mark.parametrize("da,db", _PAIRS, ids=[f"{a.name}-{b.name}" for a, b in _PAIRS])
def test_mixed_dtypes_match_torch(da, db):
    """Promotion across every dtype pair, dim-vs-dim, dim-vs-0-d and in-place."""
    (fa, ta), (fb, tb) = pair([1, 2, 3, 0], da), pair([2, 1, 3, 1], db)
    f0, t0 = fb[1], tb[1]  # a 0-d tensor
    for name in MIXED:
        op = getattr(fw, name)
        top = getattr(torch, name)
        same_outcome(lambda: op(fa, fb), lambda: top(ta, tb))
        same_outcome(lambda: op(fa, f0), lambda: top(ta, t0))
        if hasattr(ta, name + "_"):
            same_outcome(lambda: getattr(fa.clone(), name + "_")(fb),
                         lambda: getattr(ta.clone(), name + "_")(tb))


@needs_torch
@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
def test_alpha_matches_torch(dt):
    (fa, ta), (fb, tb) = pair([1, 2, 3, 0], dt), pair([2, 1, 3, 1], dt)
    for name in ("add", "sub", "rsub"):
        for alpha in (2, 0.5, -1, True):
            same_outcome(lambda: getattr(fw, name)(fa, fb, alpha=alpha),
                         lambda: getattr(torch, name)(ta, tb, alpha=alpha))
            same_outcome(lambda: getattr(fw, name)(fa, 3, alpha=alpha),
                         lambda: getattr(torch, name)(ta, 3, alpha=alpha))


@needs_torch
@pytest.mark.parametrize("dt", [fw.float16, fw.bfloat16], ids=str)
def test_16bit_blocks_match_torch(dt):
    """Long contiguous and strided 16-bit tensors (the vectorized conversion blocks)."""
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(1500) * 4
    vals[::97] = np.nan
    vals[5::101] = np.inf
    vals[7::103] = -np.inf
    vals[9::89] = 70000.0  # overflows float16
    vals[11::83] = 1e-6    # subnormal in float16
    (fa, ta), (fb, tb) = pair(vals.tolist(), dt), pair(vals[::-1].tolist(), dt)
    fc, tc = fa.contiguous(), ta.contiguous()
    for x, t in ((fa, ta), (fc, tc)):
        for name in ("exp", "sin", "cos", "tanh", "sigmoid", "neg", "abs", "sqrt", "floor"):
            same_outcome(lambda: getattr(fw, name)(x), lambda: getattr(torch, name)(t))
        # (PyTorch's gelu gives NaN at +-inf for bfloat16: leave the infinities out)
        same_outcome(lambda: F.gelu(fw.where(fw.isinf(x), 0.0, x)),
                     lambda: TF.gelu(torch.where(torch.isinf(t), 0.0, t)))
        for name in ("add", "mul", "sub", "div", "maximum", "atan2", "eq"):
            same_outcome(lambda: getattr(fw, name)(x, fb), lambda: getattr(torch, name)(t, tb))
        same_outcome(lambda: x * 3, lambda: t * 3)
        same_outcome(lambda: x + 0.1, lambda: t + 0.1)


# ---- type promotion ------------------------------------------------------------------------

@pytest.mark.parametrize("a,b,want", [
    (fw.uint8, fw.int8, fw.int16), (fw.bool, fw.bool, fw.bool), (fw.float16, fw.bfloat16,
                                                                 fw.float32),
    (fw.int32, fw.int64, fw.int64), (fw.int64, fw.float16, fw.float16),
    (fw.bool, fw.uint8, fw.uint8), (fw.float32, fw.float64, fw.float64)])
def test_promotion_of_tensors(a, b, want):
    assert (fw.ones(2, dtype=a) + fw.ones(2, dtype=b)).dtype is want


_FLOAT_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "fmax", "fmin", "atan2",
                 "pow", "fmod", "remainder", "hypot", "copysign", "nextafter", "xlogy", "eq",
                 "lt", "ge", "logaddexp", "float_power"]


@pytest.mark.parametrize("low", [fw.bfloat16, fw.float16])
def test_float32_op_with_a_16bit_second_operand(device, low):
    """float32 (op) 16-bit: the cuda kernels read the second operand as it is and widen it
    as they load it; the same values as converting it first, for every binary op, with
    broadcasting and a strided second operand."""
    rng = np.random.default_rng(8)
    a = fw.tensor(rng.standard_normal((5, 7)) * 3, dtype=fw.float32, device=device)
    b = fw.tensor(rng.standard_normal((7, 5)) * 3, dtype=low, device=device).t()
    row = fw.tensor(rng.standard_normal(7), dtype=low, device=device)
    for name in _FLOAT_BINARY:
        fn = getattr(fw, name)
        for other in (b, row):
            got, want = fn(a, other), fn(a, other.float())
            assert got.dtype is want.dtype, name
            np.testing.assert_array_equal(to_np(got), to_np(want), err_msg=name)


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda (or its simulator)")
def test_16bit_second_operand_not_cast_first(monkeypatch):
    a = fw.ones(4, 8, device="cuda")
    b = fw.ones(8, dtype=fw.bfloat16, device="cuda")
    a + b      # compiles first, where kernels compile
    names = launched_kernels(monkeypatch)
    a + b
    assert names == ["_binary_kernel"]


def test_promotion_scalars_and_zero_dim():
    i8 = fw.ones(3, dtype=fw.int8)
    assert (i8 + 1000).dtype is fw.int8            # Python int is weak
    assert (i8 + 1.5).dtype is fw.float32         # but a float scalar lifts the category
    assert (i8 + fw.tensor(5)).dtype is fw.int8   # 0-d of the same category is weak
    assert (i8 + fw.tensor(5.0, dtype=fw.float64)).dtype is fw.float64  # 0-d of higher category
    h = fw.ones(3, dtype=fw.float16)
    assert (h + fw.tensor(2.0, dtype=fw.float64)).dtype is fw.float16
    assert (fw.tensor(1.0, dtype=fw.float64) + fw.tensor(2, dtype=fw.int32)).dtype is fw.float64
    assert (fw.ones(2, dtype=fw.bool) + True).dtype is fw.bool
    assert (fw.ones(2, dtype=fw.bool) + 1).dtype is fw.int64
    assert (fw.tensor([3, 4]) / fw.tensor([2, 8])).dtype is fw.float32
    assert (fw.tensor([3, 4]) / fw.tensor([2, 8])).tolist() == [1.5, 0.5]
    assert fw.div(fw.tensor([7, -7]), 2, rounding_mode="floor").tolist() == [3, -4]
    assert fw.div(fw.tensor([7, -7]), 2, rounding_mode="trunc").tolist() == [3, -3]
    assert fw.exp(fw.tensor([0, 1])).dtype is fw.float32
    assert fw.eq(fw.tensor([1, 2]), 1.0).dtype is fw.bool
    assert fw.where(fw.tensor([True, False]), 1, 2.0).dtype is fw.float32
    assert fw.where(fw.tensor([True, False]), fw.tensor([1], dtype=fw.int32), 2.5).dtype \
        is fw.float32


def test_uint8_int8_values():
    a = fw.tensor([200, 255], dtype=fw.uint8)
    b = fw.tensor([-100, -1], dtype=fw.int8)
    r = a + b
    assert r.dtype is fw.int16 and r.tolist() == [100, 254]


# ---- integer semantics -----------------------------------------------------------------------

def test_integer_wraparound_and_division():
    i8 = fw.tensor([127, -128, 100], dtype=fw.int8)
    assert (i8 + 1).tolist() == [-128, -127, 101]
    assert (i8 * 2).tolist() == [-2, 0, -56]
    assert (fw.tensor([-128], dtype=fw.int8) // -1).tolist() == [-128]
    assert fw.abs(fw.tensor([-128], dtype=fw.int8)).tolist() == [-128]
    big = fw.tensor([-2 ** 63])
    assert (big // -1).tolist() == [-2 ** 63] and (big % -1).tolist() == [0]
    assert fw.fmod(fw.tensor([-7, 7]), fw.tensor([-1, 3])).tolist() == [0, 1]
    assert (fw.tensor([-7, 7]) % fw.tensor([2, -2])).tolist() == [1, -1]
    assert (fw.tensor([1, 2]) << fw.tensor([-1, 63])).tolist() == [0, 0]
    assert (fw.tensor([-8, 8]) >> fw.tensor([70, -1])).tolist() == [-1, 0]
    assert (fw.tensor([1], dtype=fw.int8) << 7).tolist() == [-128]
    assert fw.pow(fw.tensor([0, 2, -2, 1, -1]), fw.tensor([-1, -1, -1, -2, -3])).tolist() == \
        [0, 0, 0, 1, -1]
    assert fw.pow(fw.tensor([2], dtype=fw.int8), 10).tolist() == [0]


@pytest.mark.parametrize("call", [
    lambda: fw.tensor([1, 2]) // 0, lambda: fw.tensor([1, 2]) % 0,
    lambda: fw.fmod(fw.tensor([1, 2]), 0), lambda: fw.div(fw.tensor([1]), 0, rounding_mode="trunc"),
    lambda: fw.tensor([1, 2], dtype=fw.uint8) // fw.tensor([0, 1], dtype=fw.uint8)])
def test_integer_division_by_zero(call):
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        call()


def test_float_division_by_zero():
    r = fw.tensor([1.0, -1.0, 0.0]) / 0
    assert r.tolist()[:2] == [math.inf, -math.inf] and math.isnan(r.tolist()[2])
    assert (fw.tensor([-7.0]) // fw.tensor([0.0])).tolist() == [-math.inf]
    assert math.isnan((fw.tensor([-7.0]) % fw.tensor([0.0])).item())


# ---- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("call,exc,msg", [
    (lambda: fw.ones(3, dtype=fw.int64).add_(1.5), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    (lambda: fw.ones(3, dtype=fw.int64).exp_(), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    (lambda: fw.ones(3, dtype=fw.bool).add_(fw.ones(3, dtype=fw.int64)), RuntimeError,
     "result type Long can't be cast to the desired output type Bool"),
    (lambda: fw.bitwise_and(fw.ones(3), fw.ones(3)), NotImplementedError,
     "\"bitwise_and_cpu\" not implemented for 'Float'"),
    (lambda: ~fw.ones(3), TypeError, "~ (operator.invert) is only implemented on integer"),
    (lambda: fw.ones(3).bitwise_not(), NotImplementedError,
     "\"bitwise_not_cpu\" not implemented for 'Float'"),
    (lambda: fw.pow(fw.tensor([2]), -1), RuntimeError,
     "Integers to negative integer powers are not allowed."),
    (lambda: fw.div(fw.ones(2), 2, rounding_mode="round"), RuntimeError,
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"),
    (lambda: fw.clamp(fw.ones(2)), RuntimeError,
     "torch.clamp: At least one of 'min' or 'max' must not be None"),
    (lambda: fw.where(fw.ones(2), fw.ones(2), fw.ones(2)), RuntimeError,
     "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    (lambda: fw.lerp(fw.ones(2), fw.ones(2, dtype=fw.float64), 0.5), RuntimeError,
     "expected dtype float for `end` but got dtype double"),
    (lambda: fw.addcdiv(fw.ones(2), fw.ones(2, dtype=fw.int64), fw.ones(2, dtype=fw.int64)),
     RuntimeError, "Integer division with addcdiv is no longer supported"),
    (lambda: fw.isclose(fw.ones(2), fw.ones(2, dtype=fw.float64)), RuntimeError,
     "Float did not match Double"),
    (lambda: fw.isclose(fw.ones(2), fw.ones(2), rtol=-1), RuntimeError,
     "rtol must be greater than or equal to zero, but got -1"),
    (lambda: fw.maximum(fw.ones(2), 1.0), TypeError,
     "maximum(): argument 'other' (position 2) must be Tensor, not float"),
    (lambda: fw.ones(2) - fw.ones(2, dtype=fw.bool), RuntimeError,
     "Subtraction, the `-` operator, with a bool tensor is not supported."),
    (lambda: -fw.ones(2, dtype=fw.bool), RuntimeError,
     "Negation, the `-` operator, on a bool tensor is not supported."),
    (lambda: fw.ones(3) + fw.ones(2), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    (lambda: fw.ones(3).add_(fw.ones(2, 3)), RuntimeError,
     "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    (lambda: fw.ones(2, dtype=fw.int64).float_power_(2), RuntimeError,
     "the base given to float_power_ has dtype Long but the operation's result requires dtype "
     "Double"),
    (lambda: F.gelu(fw.ones(2), approximate="x"), RuntimeError,
     "approximate argument must be either none or tanh."),
    (lambda: F.hardtanh(fw.ones(2), 2.0, 1.0), ValueError,
     "min_val cannot be greater than max_val"),
    (lambda: fw.heaviside(fw.ones(2), fw.ones(2, dtype=fw.float64)), RuntimeError,
     "heaviside is not yet implemented for tensors with different dtypes."),
    (lambda: fw.round(fw.ones(2, dtype=fw.int64), decimals=1), NotImplementedError,
     "\"round_cpu\" not implemented for 'Long'"),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc) as info:
        call()
    assert str(info.value).startswith(msg)


# ---- out= and in-place -----------------------------------------------------------------------

def test_out_and_inplace():
    a = fw.tensor([1.0, 2.0, 3.0])
    out = fw.empty(3)
    r = fw.add(a, 1, out=out)
    assert r is out and out.tolist() == [2.0, 3.0, 4.0]
    out64 = fw.empty(3, dtype=fw.float64)
    fw.mul(a, a, out=out64)
    assert out64.tolist() == [1.0, 4.0, 9.0]
    bout = fw.empty(3, dtype=fw.float32)
    fw.lt(a, 2, out=bout)
    assert bout.tolist() == [1.0, 0.0, 0.0]
    i = fw.tensor([1, 5, 9])
    assert i.lt_(2.5) is i and i.tolist() == [1, 0, 0]
    with pytest.warns(UserWarning, match="resized"):
        fw.exp(a, out=fw.empty(2))
    x = fw.arange(6.0).reshape(2, 3)
    t = x.t()  # non-contiguous in-place target
    t.mul_(2)
    assert x.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    x.clamp_(1.0, 7.0)
    assert x.tolist() == [[1.0, 2.0, 4.0], [6.0, 7.0, 7.0]]
    x[:, ::2].sqrt_()
    assert x.tolist()[0][0] == 1.0 and x.tolist()[0][2] == 2.0
    f = fw.tensor([1.5, -2.5])
    f.floor_()
    assert f.tolist() == [1.0, -3.0]
    k = fw.tensor([3, -4])
    assert fw.floor(k, out=fw.empty(2, dtype=fw.float64)).tolist() == [3.0, -4.0]
    w = fw.where(fw.tensor([True, False]), fw.tensor([1.0, 2.0]), 5.0, out=fw.empty(2))
    assert w.tolist() == [1.0, 5.0]


def test_zero_dim_and_empty():
    assert fw.exp(fw.tensor(0.0)).shape == () and fw.exp(fw.tensor(0.0)).item() == 1.0
    assert fw.add(fw.tensor(1), fw.tensor(2)).item() == 3
    e = fw.empty(0, 3)
    assert (e + fw.ones(3)).shape == (0, 3) and fw.sin(e).shape == (0, 3)
    assert fw.where(fw.empty(0, dtype=fw.bool), 1.0, 2.0).shape == (0,)


# ---- accuracy of the vectorized float32 functions ----------------------------------------------

def _ulp_error(got, ref64):
    ref32 = ref64.astype(np.float32)
    ulp = np.spacing(np.abs(ref32)).astype(np.float64)
    ok = np.isfinite(ref64) & (np.abs(ref64) > np.finfo(np.float32).tiny)
    return np.max(np.abs(got.astype(np.float64) - ref64)[ok] / ulp[ok])


@pytest.mark.parametrize("name,ref,lo,hi,max_ulp", [
    ("exp", np.exp, -100, 88, 1.5), ("log", np.log, 1e-30, 1e30, 1.5),
    ("sin", np.sin, -8000, 8000, 2.0), ("cos", np.cos, -8000, 8000, 2.0),
    ("sin", np.sin, -3, 3, 2.0), ("sin", np.sin, -1e6, 1e6, 1.5), ("tanh", np.tanh, -12, 12, 2.0),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), -80, 80, 2.5),
    ("erf", np.vectorize(math.erf), -5, 5, 3.0)])
def test_float32_ulp_accuracy(name, ref, lo, hi, max_ulp):
    rng = np.random.default_rng(1)
    if name == "log":
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 200_000)).astype(np.float32)
    else:
        x = rng.uniform(lo, hi, 200_000).astype(np.float32)
    got = to_np(getattr(fw, name)(fw.from_numpy(x)))
    assert _ulp_error(got, ref(x.astype(np.float64))) <= max_ulp


@pytest.mark.parametrize("name,ref,lo,hi", [("exp", np.exp, -700, 700), ("log", np.log, -600, 600),
                                         ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), -30, 30),
                                         ("tanh", np.tanh, -3, 3), ("tanh", np.tanh, -30, 30),
                                         ("erf", np.vectorize(math.erf), -7, 7)])
def test_float64_vectorized_accuracy(name, ref, lo, hi):
    rng = np.random.default_rng(2)
    x = rng.uniform(lo, hi, 100_000)
    if name == "log":
        x = np.exp(x)
    got = to_np(getattr(fw, name)(fw.from_numpy(x)))
    want = ref(x)
    ulp = np.spacing(np.abs(want))
    assert np.max(np.abs(got - want) / ulp) <= 3.0  # NumPy's own libm is within 1 ulp


@pytest.mark.parametrize("dt", [fw.float16, fw.bfloat16, fw.float32], ids=str)
def test_trig_of_large_arguments(dt):
    """Arguments beyond the vector range reduction take the exact path on every layout."""
    x = fw.tensor([60000.0, -50000.0, 9000.5, 3.0e4, 1.0, 12345.0], dtype=dt)
    a = to_np(x).astype(np.float64)
    for t in (x, x.reshape(2, 3).t()):
        for name, ref in (("sin", np.sin), ("cos", np.cos)):
            got = to_np(getattr(fw, name)(t)).astype(np.float64)
            want = ref(a if t is x else a.reshape(2, 3).T)
            np.testing.assert_allclose(got, want, atol=TOL[dt][1], rtol=TOL[dt][0])


def test_float32_special_arguments():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3e38, -3e38, 1e10, -1e10, 8193.0],
                 dtype=np.float32)
    fx = fw.from_numpy(x)
    with np.errstate(all="ignore"):
        for name, ref in [("exp", np.exp), ("log", np.log), ("sin", np.sin), ("cos", np.cos),
                          ("tanh", np.tanh)]:
            got = to_np(getattr(fw, name)(fx))
            np.testing.assert_allclose(got, ref(x.astype(np.float64)).astype(np.float32),
                                       rtol=2e-7, atol=0, equal_nan=True)
    assert to_np(fw.erf(fx))[:5].tolist()[:4] == [0.0, -0.0, 1.0, -1.0]


# ---- hypothesis: broadcasting and strides against NumPy -----------------------------------------

_DTS = [fw.bool, fw.uint8, fw.int16, fw.int32, fw.int64, fw.float32, fw.float64]


@st.composite
def _operands(draw, count):
    nd = draw(st.integers(0, 3))
    shape = [draw(st.integers(0, 4)) for _ in range(nd)]
    out = []
    for k in range(count):
        s = [n if draw(st.booleans()) else 1 for n in shape]
        s = s[draw(st.integers(0, len(s))):]  # drop leading dims
        dt = fw.bool if k == 0 and count == 3 else draw(st.sampled_from(_DTS))
        step = draw(st.sampled_from([1, 2]))
        transpose = draw(st.booleans()) and len(s) >= 2
        rng = np.random.default_rng(draw(st.integers(0, 1000)))
        full = [n * step if i == len(s) - 1 else n for i, n in enumerate(s)]
        arr = (rng.integers(0, 2, full) > 0) if dt is fw.bool else rng.integers(-9, 9, full)
        t = fw.tensor(arr, dtype=dt)
        if s and step == 2:
            t = t[..., ::2]
        if transpose:
            t = t.transpose(0, 1).contiguous().transpose(0, 1)
        out.append(t)
    return out


def _np_of(t):
    a = to_np(t)
    return a


@needs_torch
@settings(max_examples=60, deadline=None)
@given(_operands(2), st.sampled_from(["add", "mul"]))
def test_hypothesis_add_mul(ops, name):
    a, b = ops
    got = getattr(fw, name)(a, b)
    ta = torch.from_numpy(_np_of(a).copy()).to(T_OF[a.dtype])
    tb = torch.from_numpy(_np_of(b).copy()).to(T_OF[b.dtype])
    compare(got, getattr(torch, name)(ta, tb))


@settings(max_examples=60, deadline=None)
@given(_operands(3))
def test_hypothesis_where(ops):
    c, a, b = ops
    got = fw.where(c, a, b)
    want = np.where(_np_of(c), _np_of(a), _np_of(b))
    if torch is not None:
        ta = torch.from_numpy(_np_of(a).copy()).to(T_OF[a.dtype])
        tb = torch.from_numpy(_np_of(b).copy()).to(T_OF[b.dtype])
        assert got.dtype is FW_OF[torch.result_type(ta, tb)]
    np.testing.assert_array_equal(to_np(got), want.astype(to_np(got).dtype))


# ---- issue 9: memory overlap, float32 opmath with scalars, NaN bounds ----------------------

def _outcome(lib, device, make, call):
    """(result as nested lists or the exception, the base tensor after the call)."""
    base = make(lib, device)
    try:
        r = call(lib, base)
        r = r.tolist() if hasattr(r, "tolist") else r
    except RuntimeError as e:
        r = e
    return r, base.tolist()


def _match_torch(device, make, call):
    """fw on ``device`` does what torch does on the CPU: the same values, or a RuntimeError
    with the same message that leaves the written-to tensor untouched."""
    want, _ = _outcome(torch, "cpu", make, call)
    before = make(fw, device).tolist()
    got, after = _outcome(fw, device, make, call)
    if isinstance(want, Exception):
        assert isinstance(got, RuntimeError), got
        assert str(got).split(".")[0] == str(want).split(".")[0]
        assert after == before       # refused before anything was written
    else:
        np.testing.assert_array_equal(np.array(got, dtype=float), np.array(want, dtype=float))


def _row(lib, device):
    return lib.zeros(1, 4, device=device)


def _sq(lib, device):
    return lib.arange(9.0, device=device).reshape(3, 3)


def _line(lib, device):
    return lib.arange(9.0, device=device) - 4


OVERLAP = {   # name: (base tensor, call writing to a view of it)
    "add_expand": (_row, lambda L, b: b.expand(3, 4).add_(1)),
    "mul_expand": (_row, lambda L, b: b.expand(3, 4).mul_(2)),
    "exp_expand": (_row, lambda L, b: b.expand(3, 4).exp_()),
    "clamp_expand": (_row, lambda L, b: b.expand(3, 4).clamp_(0, 1)),
    "lerp_expand": (_row, lambda L, b: b.expand(3, 4).lerp_(L.ones_like(b.expand(3, 4)), 0.5)),
    "addcmul_expand": (_row, lambda L, b: b.expand(3, 4).addcmul_(b, b)),
    "sigmoid_expand": (_row, lambda L, b: b.expand(3, 4).sigmoid_()),
    "relu_expand": (_row, lambda L, b: L.relu_(b.expand(3, 4))),
    "F_relu_expand": (_row, lambda L, b: L.nn.functional.relu(b.expand(3, 4), inplace=True)),
    "round_int_expand": (lambda L, d: L.zeros(1, 4, dtype=L.int64, device=d),
                         lambda L, b: b.expand(3, 4).round_()),
    "add_out_expand": (_line, lambda L, b: L.add(b, 1, out=b.expand(2, 9))),
    "add_transposed": (_sq, lambda L, b: b.add_(b.t())),
    "add_out_transposed": (_sq, lambda L, b: L.add(b.t(), 1, out=b)),
    "clamp_out_transposed": (_sq, lambda L, b: L.clamp(b.t(), 1, 4, out=b)),
    "where_out_transposed": (_sq, lambda L, b: L.where(b > 2, b, b.t(), out=b)),
    "add_out_shifted": (_line, lambda L, b: L.add(b[:8], b[1:], out=b[1:])),
    "exp_out_shifted": (_line, lambda L, b: L.exp(b[:8], out=b[1:])),
    "mul_shifted": (_line, lambda L, b: b[1:].mul_(b[:8])),
    "maximum_out_shifted": (_line, lambda L, b: L.maximum(b[1:], b[:8], out=b[1:])),
    "floor_int_shifted": (lambda L, d: L.arange(9, device=d),
                          lambda L, b: L.floor(b[:8], out=b[1:])),
    # allowed: the same memory in the same layout, and a fresh output
    "add_self": (_sq, lambda L, b: b.add_(b)),
    "add_out_self": (_sq, lambda L, b: L.mul(b, b, out=b)),
    "add_other_rows": (_sq, lambda L, b: b[0].add_(b[1])),
    "add_row_col": (_sq, lambda L, b: b[0].add_(b[:, 0])),
}


@needs_torch
@pytest.mark.parametrize("name", list(OVERLAP))
def test_memory_overlap_as_torch(name, device):
    _match_torch(device, *OVERLAP[name])


def test_overlap_layouts_torch_cannot_decide_pass(device):
    # neither stride 0 nor dense: PyTorch lets it through ("too hard"), and so do we
    t = fw.zeros(4, device=device)
    t.as_strided((2, 2), (1, 1)).add_(1)
    assert t.tolist()[0] == 1.0


@pytest.mark.parametrize("op", ["add", "where", "neg"])
def test_aliased_inputs_pytorch_lets_through_are_read_first(op, device):
    # a strided corner and its transpose: neither dense nor stride 0, so PyTorch does not
    # refuse them, and its values then depend on its loop order; ours read the input first
    t = fw.arange(16.0, device=device).reshape(4, 4)
    v = t[:3, :3]
    want = v.clone() + v.t() if op == "add" else fw.where(v > 4, v.t(), v) if op == "where" \
        else -v.t()
    if op == "add":
        v.add_(v.t())
    elif op == "where":
        fw.where(v > 4, v.t(), v, out=v)
    else:
        fw.neg(v.t(), out=v)
    assert v.tolist() == want.tolist()


def _bits(t):
    return t.float().numpy() if torch.is_tensor(t) else to_np(t.float())


OPMATH = [   # 16-bit floats with Python scalars compute in float32 and round once
    lambda L, x: x * 70000, lambda L, x: x + 70000, lambda L, x: x - 1e5,
    lambda L, x: x / 1e-5, lambda L, x: x / 3.0, lambda L, x: x * 0.1, lambda L, x: x // 0.3,
    lambda L, x: L.div(x, 0.3, rounding_mode="trunc"), lambda L, x: 0.3 / x,
    lambda L, x: x * L.tensor(70000.0), lambda L, x: x.add(x, alpha=0.1),
    lambda L, x: x.abs().pow(2.5), lambda L, x: x.abs().pow(0.3), lambda L, x: x * 1e39,
    lambda L, x: x.clamp(-0.1, 0.3), lambda L, x: x.lerp(x * 0.5, 0.3),
    lambda L, x: x.addcmul(x, x, value=7e4), lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
]


@needs_torch
@pytest.mark.parametrize("dt", [fw.float16, fw.bfloat16], ids=str)
@pytest.mark.parametrize("i", range(len(OPMATH)))
def test_16bit_float_opmath_with_scalars_bitwise(i, dt, device):
    # 256 values: PyTorch's CPU loops compute a tail shorter than a vector differently
    v = torch.linspace(-3, 3, 252, dtype=torch.float64).tolist() + [0.0, 1e-3, -1.0, 1.0]
    t = torch.tensor(v, dtype=T_OF[dt])
    x = fw.tensor(v, dtype=dt, device=device)
    np.testing.assert_array_equal(_bits(OPMATH[i](fw, x)), _bits(OPMATH[i](torch, t)))


SCALAR_ERRORS = [   # (call, message): scalars PyTorch converts with an overflow check
    (lambda L: L.ones(3, dtype=L.float16).add(L.ones(3, dtype=L.float16), alpha=70000),
     "value cannot be converted to type c10::Half without overflow"),
    (lambda L: L.ones(3, dtype=L.int8).add(L.ones(3, dtype=L.int8), alpha=300),
     "value cannot be converted to type int8_t without overflow"),
    (lambda L: L.ones(3, dtype=L.float16).clamp(-1e5, 1e5),
     "value cannot be converted to type c10::Half without overflow"),
    (lambda L: L.ones(3, dtype=L.int8).clamp(200, 300),
     "value cannot be converted to type int8_t without overflow"),
    (lambda L: L.ones(3).clamp(max=1e39), "value cannot be converted to type float without"),
    (lambda L: L.ones(3, dtype=L.float16).pow(7e4), "value cannot be converted to type c10::Half"),
    (lambda L: L.ones(3).lerp(L.ones(3), 1e39), "value cannot be converted to type float"),
    (lambda L: L.nn.functional.threshold(L.ones(3, dtype=L.float16), 1e-4, 7e4),
     "value cannot be converted to type c10::Half without overflow"),
    (lambda L: L.nn.functional.hardtanh(L.ones(3), -1e39, 1e39),
     "value cannot be converted to type float without overflow"),
]


@needs_torch
@pytest.mark.parametrize("i", range(len(SCALAR_ERRORS)))
def test_scalar_overflow_errors_as_torch(i):
    call, msg = SCALAR_ERRORS[i]
    with pytest.raises(RuntimeError, match=msg):
        call(torch)
    with pytest.raises(RuntimeError, match=msg):
        call(fw)


def test_int_scalars_wrap_as_torch(device):
    assert (fw.zeros(3, dtype=fw.int8, device=device) + 300).tolist() == [44] * 3
    assert (fw.ones(3, dtype=fw.int16, device=device) * 70000).tolist() == [4464] * 3
    assert fw.ones(3, dtype=fw.uint8, device=device).clamp(-1).tolist() == [255] * 3


NAN_CLAMP = [
    lambda L, x: x.clamp(min=math.nan), lambda L, x: x.clamp(max=math.nan),
    lambda L, x: x.clamp(0, math.nan), lambda L, x: x.clamp(math.nan, 0),
    lambda L, x: x.clamp(2, 1), lambda L, x: x.clamp(0.5, 2),
    lambda L, x: x.half().clamp(min=math.nan), lambda L, x: x.long().clamp(min=math.nan),
    lambda L, x: x.clamp(L.tensor([0.0, math.nan, 0.0, 0.0, 0.0], device=x.device),
                         L.tensor([2.0, 2.0, math.nan, 0.0, 1.0], device=x.device)),
    lambda L, x: x.clamp(max=L.tensor([0.0, math.nan, 0.0, 0.0, 9.0], device=x.device)),
    lambda L, x: L.maximum(x, x.flip(0)), lambda L, x: L.minimum(x, x.flip(0)),
    lambda L, x: L.fmax(x, x.flip(0)), lambda L, x: L.fmin(x, x.flip(0)),
    lambda L, x: x.clone().clamp_(min=math.nan),
]


NAN_SCALAR_BOUND = (0, 1, 6, 7, 14)  # the NAN_CLAMP cases whose bound is a NaN scalar


@needs_torch
@pytest.mark.parametrize("i", range(len(NAN_CLAMP)))
def test_nan_in_clamp_and_minmax_as_torch(i, device):
    if i in NAN_SCALAR_BOUND:
        skip_unless_torch(torch, "clamp with a NaN scalar bound giving NaN (2.11 keeps x)")
    v = [1.0, math.nan, 3.0, -1.0, 0.75]
    got = NAN_CLAMP[i](fw, fw.tensor(v, device=device))
    want = NAN_CLAMP[i](torch, torch.tensor(v))
    np.testing.assert_array_equal(to_np(got.double()), want.double().numpy())


def test_broadcast_shapes_takes_ints():
    """An int is a 1-d shape (torch.broadcast_shapes(5, (5, 1)))."""
    torch = pytest.importorskip("torch")
    for shapes in [(5, (5, 1)), ((5, 1), 5), (3, 3), (1, (2, 3)), ((), 4), (2, 1, (0, 1))]:
        assert tuple(fw.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(RuntimeError):
        fw.broadcast_shapes(2, 3)


def test_broadcast_shapes_is_torchs():
    """framework.broadcast_shapes: torch's result (a Size) and its errors, word for word:
    ValueError for a negative length, RuntimeError naming the first shape that does not
    broadcast against those before it."""
    torch = pytest.importorskip("torch")
    cases = [((2, 3), (3, 2)), ((2, -1), (2, 3)), ((-1,), (-1,)), ((5,), (1, 4, 1), (3, 1, 1, 1)),
             ((2,), (3,), (4,)), ((), ()), (), ((2, 3), (4,)), ((4,), (2, 3)),
             ((1, 3), (2, 1), (5, 3)), ((3,), (1, 1, 4)), ([2, 1], (3, 1, 1)), ((0, 1), (3,))]
    for shapes in cases:
        try:
            want = torch.broadcast_shapes(*shapes)
        except Exception as e:   # noqa: BLE001 - the oracle's exception is the expectation
            with pytest.raises(type(e)) as got:
                fw.broadcast_shapes(*shapes)
            assert str(got.value) == str(e), shapes
        else:
            got = fw.broadcast_shapes(*shapes)
            assert isinstance(got, fw.Size) and tuple(got) == tuple(want), shapes
