"""Factory functions: ``out=`` handling, dtype inference, and bad sizes and values, against
PyTorch. ``like_torch`` is the comparison the bad-input tables of the creation, random and
linear-algebra tests share."""
import math

import numpy as np
import pytest

import framework as fw
from tests.helpers import skip_unless_torch

torch = pytest.importorskip("torch")

FACTORIES = {
    "zeros": lambda m, o: m.zeros(2, 3, out=o),
    "ones": lambda m, o: m.ones(4, out=o),
    "full": lambda m, o: m.full((2,), 3, out=o),
    "arange": lambda m, o: m.arange(5, out=o),
    "linspace": lambda m, o: m.linspace(0, 1, 3, out=o),
    "logspace": lambda m, o: m.logspace(0, 1, 2, out=o),
    "eye": lambda m, o: m.eye(2, 3, out=o),
    "empty": lambda m, o: m.empty(3, 2, out=o),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_factory_out(name, dtype):
    o1, o2 = fw.zeros(0, dtype=getattr(fw, dtype)), torch.zeros(0, dtype=getattr(torch, dtype))
    r1, r2 = FACTORIES[name](fw, o1), FACTORIES[name](torch, o2)
    assert r1 is o1 and tuple(r1.shape) == tuple(r2.shape) and r1.dtype.name == dtype
    if name != "empty":
        assert r1.tolist() == r2.tolist()


@pytest.mark.parametrize("args", [(5,), (1, 4), (0, 1, 0.25), (10, 0, -3), (1.5, 4)])
def test_arange_matches_torch(args):
    a, b = fw.arange(*args), torch.arange(*args)
    assert a.dtype.name == str(b.dtype).split(".")[1] and a.tolist() == b.tolist()


def test_factory_errors():
    with pytest.raises(RuntimeError, match="zeros: Dimension size must be non-negative"):
        fw.zeros(2, -1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        fw.ones(2, -1)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        fw.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
        fw.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        fw.linspace(0, 1, -2)


def test_default_dtypes():
    assert fw.zeros(2).dtype is fw.float32 and fw.ones(2).dtype is fw.float32
    assert fw.full((2,), 1).dtype is fw.int64 and fw.full((2,), 1.0).dtype is fw.float32
    assert fw.full((2,), True).dtype is fw.bool and fw.eye(2).dtype is fw.float32


# ---- bad sizes and values, judged against PyTorch ----------------------------------------

def _outcome(fn, mod, dev):
    try:
        return fn(mod, dev)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return e


def _builtin(cls):
    """The builtin exception class an exception class derives from (PyTorch's LinAlgError
    and OutOfMemoryError count as the RuntimeError they subclass)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def like_torch(fn, device, frag=None):
    """Runs ``fn(module, device)`` with torch on cpu and with the framework on ``device``:
    both raise the same builtin exception class, with ``frag`` in both messages, or both
    return equal values of the same dtype."""
    want, got = _outcome(fn, torch, "cpu"), _outcome(fn, fw, device)
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"no error; torch raised {want!r}"
        assert _builtin(type(got)) is _builtin(type(want)), f"{got!r} != torch's {want!r}"
        if frag is not None and frag not in str(want):
            skip_unless_torch(torch, f"the message {frag!r}")
        assert frag is None or frag in str(want), f"fragment not in torch's {want}"
        assert frag is None or frag in str(got), f"fragment not in {got}"
        return
    assert not isinstance(got, Exception), f"{got!r}; torch returned {want!r}"
    assert _plain(got) == _plain(want)


def _plain(x):
    """Results as nested lists of numbers (NaN as "nan"), tensors with their dtype's name."""
    if hasattr(x, "tolist") and hasattr(x, "dtype"):
        return str(x.dtype).rsplit(".", 1)[-1], _plain(x.tolist())
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    return "nan" if isinstance(x, float) and x != x else x


R, T, V, O, NI = RuntimeError, TypeError, ValueError, OverflowError, NotImplementedError
nan, inf = math.nan, math.inf
OVERFLOW = "value cannot be converted to type"

SIZE_CASES = [
    # (a TypeError's text is PyTorch's own only without keyword arguments: those calls
    # leave out device=)
    ("zeros_float", lambda m, d: m.zeros(2.5, device=d), "must be tuple of ints"),
    ("ones_str", lambda m, d: m.ones("3", device=d), "must be tuple of ints"),
    ("zeros_float_elem", lambda m, d: m.zeros((2, 2.5), device=d), "float"),
    ("zeros_bool", lambda m, d: m.zeros(True, device=d), "must be tuple of ints"),
    ("zeros_float_tensor", lambda m, d: m.zeros(m.tensor(3.0), device=d), "Tensor"),
    ("zeros_int_tensor", lambda m, d: m.zeros(m.tensor(3), device=d), None),
    ("zeros_np_int", lambda m, d: m.zeros(np.int64(2), 2, device=d), None),
    ("empty_negative", lambda m, d: m.empty(2, -3, device=d), "negative dimension -3"),
    ("zeros_negative", lambda m, d: m.zeros(2, -1, device=d),
     "zeros: Dimension size must be non-negative."),
    ("zeros_2_63", lambda m, d: m.zeros(2 ** 63, device=d),
     "argument 'size' failed to unpack the object at pos 1 with error"),
    ("empty_2_64", lambda m, d: m.empty(2, 2 ** 64, device=d),
     "failed to unpack the object at pos 2"),
    ("empty_storage_overflow", lambda m, d: m.empty(2 ** 62, device=d),
     "Storage size calculation overflowed with sizes=[4611686018427387904]"),
    ("zeros_numel_overflow", lambda m, d: m.zeros(2 ** 40, 2 ** 40, device=d),
     "Storage size calculation overflowed"),
    ("eye_float", lambda m, d: m.eye(3.5), "must be int, not float"),
    ("eye_bool", lambda m, d: m.eye(True), "must be int, not bool"),
    ("eye_str", lambda m, d: m.eye("3"), "must be int, not str"),
    ("eye_negative", lambda m, d: m.eye(3, -1, device=d), "m must be greater or equal to 0"),
    ("eye_numel_overflow", lambda m, d: m.eye(2 ** 62, device=d), "numel: integer multiplication"),
    ("eye_np", lambda m, d: m.eye(np.int64(2), device=d), None),
    ("full_size_float", lambda m, d: m.full(2.5, 1.0, device=d), "must be tuple of ints"),
    ("full_size_int", lambda m, d: m.full(2, 1.0, device=d), "must be tuple of ints, not int"),
    ("strided_negative_stride", lambda m, d: m.empty_strided((2, 3), (-1, 1), device=d),
     "Storage size calculation overflowed with sizes=[2, 3] and strides=[-1, 1]"),
    ("strided_short_strides", lambda m, d: m.empty_strided((2, 3), (1,), device=d),
     "dimensionality of sizes (2) must match dimensionality of strides (1)"),
    ("strided_float_stride", lambda m, d: m.empty_strided((2, 3), (1.5, 1), device=d),
     "must be tuple of ints"),
    ("strided_int_size", lambda m, d: m.empty_strided(2, (1,), device=d),
     "must be tuple of ints, not int"),
    ("strided_huge_stride", lambda m, d: m.empty_strided((2, 3), (2 ** 62, 1), device=d),
     "Storage size calculation overflowed"),
    ("strided_negative_size", lambda m, d: m.empty_strided((2, -3), (1, 1), device=d),
     "negative dimension -3"),
    ("strided_zero_strides", lambda m, d: m.empty_strided((2, 3), (0, 0), device=d).shape,
     None),
    ("new_zeros_float", lambda m, d: m.zeros(2, device=d).new_zeros(2.5), "tuple of ints"),
    ("new_empty_float", lambda m, d: m.zeros(2, device=d).new_empty((2, 2.5)), "float"),
    ("new_full_size_float", lambda m, d: m.zeros(2, device=d).new_full(2.5, 1.0),
     "must be tuple of ints"),
    ("new_ones_overflow", lambda m, d: m.zeros(2, device=d).new_ones(2 ** 62),
     "Storage size calculation overflowed"),
]

VALUE_CASES = [
    ("full_int8_300", lambda m, d: m.full((2,), 300, dtype=m.int8, device=d),
     OVERFLOW + " int8_t without overflow"),
    ("full_int8_neg", lambda m, d: m.full((2,), -129, dtype=m.int8, device=d), "int8_t"),
    ("full_int8_frac", lambda m, d: m.full((2,), 127.9, dtype=m.int8, device=d), "int8_t"),
    ("full_uint8_256", lambda m, d: m.full((2,), 256, dtype=m.uint8, device=d), "uint8_t"),
    ("full_uint8_neg256", lambda m, d: m.full((2,), -256, dtype=m.uint8, device=d), "uint8_t"),
    ("full_uint8_neg255", lambda m, d: m.full((2,), -255, dtype=m.uint8, device=d), None),
    ("full_uint8_negfloat", lambda m, d: m.full((2,), -1.0, dtype=m.uint8, device=d), "uint8_t"),
    ("full_int16", lambda m, d: m.full((2,), 2 ** 15, dtype=m.int16, device=d), "int16_t"),
    ("full_int32_inf", lambda m, d: m.full((2,), inf, dtype=m.int32, device=d),
     OVERFLOW + " int without overflow"),
    ("full_int64_nan", lambda m, d: m.full((2,), nan, dtype=m.int64, device=d), "int64_t"),
    ("full_int64_big_float", lambda m, d: m.full((2,), 9.3e18, dtype=m.int64, device=d),
     "int64_t"),
    ("full_2_63", lambda m, d: m.full((2,), 2 ** 63, device=d), "int64_t"),
    ("full_2_63_float64", lambda m, d: m.full((2,), 2 ** 63, dtype=m.float64, device=d), None),
    ("full_2_64", lambda m, d: m.full((2,), 2 ** 64, dtype=m.float64, device=d),
     "int too big to convert"),
    ("full_half_overflow", lambda m, d: m.full((2,), 1e20, dtype=m.float16, device=d),
     "c10::Half"),
    ("full_half_65519", lambda m, d: m.full((2,), 65519.0, dtype=m.float16, device=d),
     "c10::Half"),
    ("full_half_inf", lambda m, d: m.full((2,), -inf, dtype=m.float16, device=d), None),
    ("full_bf16_overflow", lambda m, d: m.full((2,), 1e39, dtype=m.bfloat16, device=d),
     "c10::BFloat16"),
    ("full_float_overflow", lambda m, d: m.full((2,), 3.5e38, device=d), "type float without"),
    ("full_bool_any", lambda m, d: m.full((2,), nan, dtype=m.bool, device=d), None),
    ("full_str", lambda m, d: m.full((2,), "a", device=d), "must be Number, not str"),
    ("full_none", lambda m, d: m.full((2,), None, device=d), "must be Number, not NoneType"),
    ("full_tensor_1d", lambda m, d: m.full((2,), m.tensor([3]), device=d),
     "must be Number, not Tensor"),
    ("full_tensor_0d", lambda m, d: m.full((2,), m.tensor(3), device=d), None),
    ("full_np_float32", lambda m, d: m.full((2,), np.float32(1.5), device=d), None),
    ("full_np_float16", lambda m, d: m.full((2,), np.float16(2.5), device=d), None),
    ("full_np_int64", lambda m, d: m.full((2,), np.int64(2), device=d), None),
    ("full_np_int32", lambda m, d: m.full((2,), np.int32(2), device=d), None),
    ("full_np_bool", lambda m, d: m.full((2,), np.bool_(True), device=d), None),
    ("full_like_overflow", lambda m, d: m.full_like(m.zeros(2, dtype=m.int8, device=d), 1e10),
     "int8_t"),
    ("full_like_str", lambda m, d: m.full_like(m.zeros(2, device=d), "a"), "must be Number"),
    ("new_full_overflow", lambda m, d: m.zeros(2, device=d).new_full((2,), 300, dtype=m.int8),
     "int8_t"),
    ("new_full_np", lambda m, d: m.zeros(2, device=d).new_full((2,), np.float32(1.5)), None),
    ("scalar_tensor_overflow", lambda m, d: m.scalar_tensor(300, dtype=m.int8, device=d),
     "int8_t"),
    ("scalar_tensor_str", lambda m, d: m.scalar_tensor("a", device=d), "must be Number"),
    ("scalar_tensor_np", lambda m, d: m.scalar_tensor(np.float32(1.5), device=d), None),
    ("tensor_2_63", lambda m, d: m.tensor([2 ** 63], device=d), "Overflow when unpacking long"),
    ("tensor_2_64", lambda m, d: m.tensor([2 ** 64], device=d), "Overflow when unpacking long"),
    ("tensor_below_int64", lambda m, d: m.tensor([-2 ** 63 - 1], device=d), "Overflow"),
    ("tensor_scalar_2_63", lambda m, d: m.tensor(2 ** 63, device=d), "Overflow"),
    ("tensor_2_63_float", lambda m, d: m.tensor([2 ** 63], dtype=m.float32, device=d), None),
    ("tensor_int8_300", lambda m, d: m.tensor([300], dtype=m.int8, device=d),
     OVERFLOW + " int8 without overflow"),
    ("tensor_int8_nested", lambda m, d: m.tensor([[1], [300]], dtype=m.int8, device=d), "int8"),
    ("tensor_int8_frac", lambda m, d: m.tensor([127.5], dtype=m.int8, device=d), "int8"),
    ("tensor_uint8_neg256", lambda m, d: m.tensor([-256], dtype=m.uint8, device=d), "uint8"),
    ("tensor_uint8_neg255", lambda m, d: m.tensor([-255], dtype=m.uint8, device=d), None),
    ("tensor_int64_nan", lambda m, d: m.tensor([nan], dtype=m.int64, device=d),
     OVERFLOW + " int64 without"),
    ("tensor_int32_inf", lambda m, d: m.tensor([1.0, inf], dtype=m.int32, device=d), "int32"),
    ("tensor_int32_big", lambda m, d: m.tensor([2 ** 40], dtype=m.int32, device=d), "int32"),
    ("tensor_int32_trunc", lambda m, d: m.tensor([1.7, -2.9], dtype=m.int32, device=d), None),
    ("tensor_half_unchecked", lambda m, d: m.tensor([70000.0], dtype=m.float16, device=d),
     None),
    ("tensor_of_tensor", lambda m, d: m.tensor([m.tensor(300)], dtype=m.int8, device=d),
     "int8"),
    ("tensor_numpy_wraps", lambda m, d: m.tensor(np.array([300]), dtype=m.int8, device=d),
     None),
    ("tensor_none", lambda m, d: m.tensor(None, device=d), "Could not infer dtype of NoneType"),
    ("tensor_list_none", lambda m, d: m.tensor([1, None], device=d), "NoneType"),
    ("tensor_str", lambda m, d: m.tensor([1, "a"], device=d), "invalid data type 'str'"),
    ("tensor_ragged", lambda m, d: m.tensor([[1, 2], [3]], device=d),
     "expected sequence of length 2 at dim 1 (got 1)"),
]

RANGE_CASES = [
    ("arange_int64_wide", lambda m, d: m.arange(-2 ** 63, 2 ** 63 - 1, 2 ** 63 - 1, device=d),
     None),
    ("arange_int64_wide2", lambda m, d: m.arange(-2 ** 63, 2 ** 63 - 1, 2 ** 62, device=d),
     None),
    ("arange_int64_top", lambda m, d: m.arange(2 ** 63 - 10, 2 ** 63 - 1, 3, device=d), None),
    ("arange_float_end_int64", lambda m, d: m.arange(5.5, dtype=m.int64, device=d), None),
    ("arange_trunc_int64", lambda m, d: m.arange(0.5, 0.9, dtype=m.int64, device=d), None),
    ("arange_neg_int64", lambda m, d: m.arange(5.5, 0, -1.5, dtype=m.int64, device=d), None),
    ("arange_frac_int32", lambda m, d: m.arange(0.1, 2.2, 0.3, dtype=m.int32, device=d), None),
    ("arange_frac_int16", lambda m, d: m.arange(0, 5, 0.5, dtype=m.int16, device=d), None),
    ("arange_frac_step_int64", lambda m, d: m.arange(0, 5, 0.5, dtype=m.int64, device=d),
     "step must be nonzero"),
    ("arange_wrap_uint8", lambda m, d: m.arange(-5, 5, 3, dtype=m.uint8, device=d), None),
    ("arange_wrap_int8", lambda m, d: m.arange(0, 300, 100, dtype=m.int8, device=d), None),
    ("arange_step0", lambda m, d: m.arange(0, 5, 0, device=d), "step must be nonzero"),
    ("arange_step_nan", lambda m, d: m.arange(0, 5, nan, device=d), "step must be nonzero"),
    ("arange_sign", lambda m, d: m.arange(0, 5, -1, device=d),
     "upper bound and lower bound inconsistent with step sign"),
    ("arange_sign_float", lambda m, d: m.arange(0.9, 0.1, dtype=m.int64, device=d),
     "inconsistent with step sign"),
    ("arange_end_nan", lambda m, d: m.arange(0, nan, device=d), "unsupported range: 0 -> nan"),
    ("arange_start_nan", lambda m, d: m.arange(nan, 5, device=d), "unsupported range: nan -> 5"),
    ("arange_end_inf", lambda m, d: m.arange(0.5, inf, device=d), "unsupported range: 0.5 -> inf"),
    ("arange_int64_overflow", lambda m, d: m.arange(0, 1e20, dtype=m.int64, device=d),
     OVERFLOW + " int64_t"),
    ("arange_int32_size", lambda m, d: m.arange(0, 1e20, dtype=m.int32, device=d),
     "invalid size, possible overflow?"),
    ("arange_tiny_step", lambda m, d: m.arange(0, 5, 1e-300, device=d), "invalid size"),
    ("arange_storage", lambda m, d: m.arange(2 ** 62, device=d),
     "Storage size calculation overflowed"),
    ("arange_str", lambda m, d: m.arange("a"), "must be Number, not str"),
    ("arange_bool", lambda m, d: m.arange(10, dtype=m.bool, device=d),
     "\"arange_cpu\" not implemented for 'Bool'"),
    ("arange_np_float", lambda m, d: m.arange(np.float32(2.5), device=d), None),
    ("arange_tensor", lambda m, d: m.arange(m.tensor(4), device=d), None),
    ("range_step0", lambda m, d: m.range(0, 5, 0, device=d), "step must be nonzero"),
    ("range_sign", lambda m, d: m.range(0, 5, -1, device=d), "inconsistent with step sign"),
    ("range_nan", lambda m, d: m.range(nan, 5, device=d), "unsupported range"),
    ("range_int64", lambda m, d: m.range(0.5, 3, dtype=m.int64, device=d), None),
    ("range_float", lambda m, d: m.range(2, 0, -0.5, device=d), None),
    ("linspace_int8_overflow", lambda m, d: m.linspace(0, 300, 3, dtype=m.int8, device=d),
     OVERFLOW + " int8_t"),
    ("linspace_int_trunc", lambda m, d: m.linspace(0.5, 9.7, 5, dtype=m.int64, device=d), None),
    ("linspace_int32", lambda m, d: m.linspace(-5, 10, 7, dtype=m.int32, device=d), None),
    ("linspace_int_down", lambda m, d: m.linspace(10, -3, 6, dtype=m.int64, device=d), None),
    ("linspace_int_wide", lambda m, d: m.linspace(-2 ** 62, 2 ** 62, 5, dtype=m.int64,
                                                  device=d), None),
    ("linspace_bool", lambda m, d: m.linspace(0, 1, 5, dtype=m.bool, device=d),
     "\"linspace_cpu\" not implemented for 'Bool'"),
    ("linspace_steps_float", lambda m, d: m.linspace(0, 1, 2.5, device=d), None),
    ("linspace_steps_negative", lambda m, d: m.linspace(0, 1, -1, device=d),
     "number of steps must be non-negative"),
    ("linspace_nan", lambda m, d: m.linspace(0, nan, 3, device=d), None),
    ("linspace_1d_start", lambda m, d: m.linspace(m.ones(2, device=d), 1, 3),
     "linspace only supports 0-dimensional start and end tensors, but got start with 1 "
     "dimension(s)."),
    ("linspace_0d_start", lambda m, d: m.linspace(m.tensor(0.5, device=d), 1, 3), None),
    ("from_numpy_str", lambda m, d: m.from_numpy(np.array(["a"])),
     "can't convert np.ndarray of type numpy.str_"),
    ("logspace_int", lambda m, d: m.logspace(0, 3, 7, dtype=m.int64, device=d), None),
    ("logspace_base2", lambda m, d: m.logspace(0, 2, 5, base=2, dtype=m.int32, device=d), None),
    ("logspace_steps_float", lambda m, d: m.logspace(0, 1, 2.5, device=d), None),
    # integer logspace truncates the bounds first; float32 rounds them to float32
    ("logspace_int_frac", lambda m, d: m.logspace(-2.5, 3.7, 5, dtype=m.int64, device=d), None),
    ("logspace_int_base", lambda m, d: m.logspace(0.5, 3.2, 4, base=2.9, dtype=m.int16,
                                                  device=d), None),
    ("logspace_int8_wraps", lambda m, d: m.logspace(0, 10, 3, dtype=m.int8, device=d), None),
    ("logspace_uint8_neg", lambda m, d: m.logspace(-1, 3, 5, base=2, dtype=m.uint8, device=d),
     None),
    ("logspace_float32", lambda m, d: m.logspace(-2.5, 3.7, 5, base=2.5, device=d), None),
    ("logspace_one_step", lambda m, d: m.logspace(1, 2, 1, device=d), None),
]


@pytest.mark.parametrize("case", SIZE_CASES + VALUE_CASES + RANGE_CASES, ids=lambda c: c[0])
def test_bad_input_like_torch(case, device):
    name, fn, frag = case
    if name == "arange_frac_step_int64":  # the step 0.5 cast to int64 is 0: older torch
        skip_unless_torch(torch, "arange's nonzero-step check after the integer cast "
                          "(torch 2.11 divides by the zero step: SIGFPE kills the worker)")
    like_torch(fn, device, frag)


@pytest.mark.parametrize("call", [
    "zeros(size=(2, 3))", "ones(size=[4])", "empty(size=(0, 2))", "rand(size=(3,))",
    "randn(size=(2, 2))", "zeros(size=())", "ones(size=5)",
    "t.new_ones(size=())", "t.new_zeros(size=(2, 1))", "t.new_empty(size=[3])",
    "zeros(2, size=(3,))", "ones(size=(2,), sizes=3)", "t.new_ones(2, size=(3,))",
])
def test_size_by_keyword(call, device):
    """The factories take ``size=`` by keyword as PyTorch's do, with its errors for a size
    given twice or an unknown keyword."""
    def run(m, t):
        return eval(call if call.startswith("t.") else "m." + call, {"m": m, "t": t})
    try:
        want = run(torch, torch.zeros(1, dtype=torch.float64))
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e).split("(")[0]):
            run(fw, fw.zeros(1, dtype=fw.float64, device=device))
        return
    got = run(fw, fw.zeros(1, dtype=fw.float64, device=device))
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if call.startswith("t."):
        assert got.device.type == device


LAYOUT_FACTORIES = ["zeros(2, 3, {kw})", "ones(4, {kw})", "empty(2, {kw})", "full((2,), 1.5, {kw})",
             "arange(5, {kw})", "range(0, 4, {kw})", "linspace(0, 1, 5, {kw})",
             "logspace(0, 2, 3, {kw})", "eye(3, {kw})", "scalar_tensor(2.0, {kw})",
             "empty_strided((2, 2), (2, 1), {kw})", "zeros_like(t, {kw})", "ones_like(t, {kw})",
             "full_like(t, 7, {kw})", "empty_like(t, {kw})", "t.new_zeros(2, {kw})",
             "t.new_ones(2, {kw})", "t.new_full((2,), 3, {kw})", "t.new_empty(2, {kw})"]


@pytest.mark.parametrize("call", LAYOUT_FACTORIES)
def test_factories_take_layout_and_pin_memory(call):
    """PyTorch's factories take ``layout=`` (strided makes a dense tensor) and
    ``pin_memory=`` (the result in page-locked host memory)."""
    torch = pytest.importorskip("torch")

    def run(m, kw):
        t = m.arange(6, dtype=m.float32).reshape(2, 3)
        return eval(("" if call.startswith("t.") else "m.") + call.format(kw=kw), {"m": m, "t": t})
    want = run(torch, "layout=m.strided")
    got = run(fw, "layout=m.strided")
    assert tuple(got.shape) == tuple(want.shape) and got.layout == fw.strided
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if "empty" not in call:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    pinned = run(fw, "pin_memory=True")
    assert pinned.is_pinned() and not got.is_pinned()
    if "empty" not in call:
        np.testing.assert_array_equal(pinned.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match=r"not implemented for .*sparse_csr layout"):
        run(fw, "layout=m.sparse_csr")


def test_zeros_and_empty_with_sparse_coo_layout():
    torch = pytest.importorskip("torch")
    for name in ("zeros", "empty"):
        got = getattr(fw, name)(2, 3, layout=fw.sparse_coo, dtype=fw.float64)
        want = getattr(torch, name)(2, 3, layout=torch.sparse_coo, dtype=torch.float64)
        assert got.layout == fw.sparse_coo and got._nnz() == want._nnz() == 0
        assert tuple(got.shape) == (2, 3) and got.dtype == fw.float64
        np.testing.assert_array_equal(got.to_dense().numpy(), want.to_dense().numpy())
