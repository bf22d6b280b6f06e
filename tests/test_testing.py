"""framework.testing (assert_close, assert_allclose, make_tensor) against torch.testing: the
same pass/fail and the same message text on a grid of inputs, on every device."""
import collections
import math
import warnings

import numpy as np
import pytest

import framework as fw
import framework.testing
from helpers import skip_unless_torch, to_np

ft = framework.testing
nan, inf = float("nan"), float("inf")


@pytest.fixture
def torch():
    mod = pytest.importorskip("torch")
    skip_unless_torch(mod, "torch.testing's rules and messages")
    return mod


def outcome(fn):
    """(exception type name, message) of calling ``fn``; ("OK", "") when it returns."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            fn()
    except Exception as e:  # noqa: BLE001 - any error is part of the outcome
        return type(e).__name__, str(e)
    return "OK", ""


def normalized(result):
    """A framework outcome written with torch's names."""
    kind, text = result
    text = text.replace("<class 'framework._tensor.Tensor'>", "<class 'torch.Tensor'>")
    return kind, text.replace("framework.", "torch.")


def assert_same(torch, build, device="cpu", **kwargs):
    """``assert_close(*build(module, device), **kwargs)`` has the same outcome with torch
    (on cpu) and with the framework (on ``device``); returns that outcome."""
    def call(mod, dev, fn):
        args = build(mod, dev)
        return outcome(lambda: fn(*args, **kwargs))
    want = call(torch, "cpu", torch.testing.assert_close)
    got = normalized(call(fw, device, ft.assert_close))
    assert got == want
    return want


def T(mod, dev, values, dtype="float32"):
    return mod.tensor(values, dtype=getattr(mod, dtype), device=dev)


# ---- the public names --------------------------------------------------------------------

def test_public_names_mirror_torch_testing(torch):
    public = {n for n in dir(torch.testing) if not n.startswith("_")}
    # FileCheck checks TorchScript IR text: the framework has no TorchScript
    assert public - {"FileCheck"} == {n for n in dir(ft) if not n.startswith("_")}
    assert ft.__all__ == sorted(public - {"FileCheck"})


# ---- tensors: a grid against the oracle ----------------------------------------------------

TENSOR_CASES = [
    # (actual, expected, dtype, kwargs)
    ([1., 2., 3.], [1., 2., 3.], "float32", {}),
    ([1., 2., 3.], [1., 2.5, 3.], "float32", {}),
    ([1., 2., 3.], [1., 2.00001, 3.], "float32", {}),                # inside rtol * 2
    ([1e-6, 1e-5, 1e-4], [0., 0., 0.], "float32", {}),                # atol only, rel inf
    ([[1., 2.], [3., 4.]], [[1., 2.], [3., 5.]], "float32", {}),
    ([[1., 2.], [3., 4.]], [[1., 2.], [3., 5.]], "float32", {"rtol": 0, "atol": 0}),
    ([[1., 2.], [3., 4.]], [[1., 2.], [3., 5.]], "float32", {"rtol": 0.3, "atol": 0}),
    ([1., 5., 5.], [1., 3., 3.], "float32", {}),                      # ties: first index
    ([1., nan], [1., nan], "float32", {}),
    ([1., nan], [1., nan], "float32", {"equal_nan": True}),
    ([2., nan], [1., nan], "float32", {}),                            # nan wins the max
    ([1., nan], [1., 2.], "float64", {"equal_nan": True}),
    ([1., inf], [1., inf], "float32", {}),
    ([1., -inf], [1., -inf], "float64", {}),
    ([1., inf], [1., -inf], "float32", {}),
    ([1., inf], [1., 1e38], "float32", {}),
    ([1., inf], [1., inf], "float32", {"rtol": 0, "atol": 0}),
    ([1., 2.], [1., 0.], "float64", {}),
    ([1., 2.], [1., 2. + 1e-7], "float64", {}),
    ([0.1, 0.2, 0.3], [0.1001, 0.2, 0.3], "float16", {}),
    ([1., 2., 3.], [1., 2.1, 3.], "float16", {}),
    ([60000., 1.], [-60000., 1.], "float16", {}),                     # the difference overflows
    ([0.1, 0.2, 0.3], [0.1001, 0.2, 0.31], "bfloat16", {}),
    ([1., 2., 3.], [1., 2.1, 3.], "bfloat16", {}),
    ([1 + 1j, 2], [1 + 1j, 2.5j], "complex64", {}),
    ([1 + 1j, 2], [1 + 1j, 2 + 1e-6j], "complex128", {}),
    ([1 + 1j, complex(nan, 0)], [1 + 1j, complex(0, nan)], "complex64", {"equal_nan": True}),
    ([1 + 1j, complex(nan, 0)], [1 + 1j, complex(0, nan)], "complex64", {}),
    ([1, 2, 3], [1, 2, 4], "int64", {}),
    ([1, 2, 3], [1, 2, 0], "int32", {}),
    ([-128, 1], [127, 1], "int8", {}),
    ([1, 2, 3], [1, 2, 4], "uint8", {"rtol": 0.1, "atol": 0.5}),
    ([1, 3, 200], [3, 1, 0], "uint8", {"rtol": 0.5, "atol": 2.}),     # no uint8 wrap-around
    ([-128, 1], [127, 3], "int8", {"rtol": 0., "atol": 300.}),
    ([2**40 + 1, 5], [2**40, 5], "int64", {"rtol": 0., "atol": 0.5}),  # in the float dtype
    ([True, False], [True, True], "bool", {}),
    ([True, False], [True, True], "bool", {"rtol": 1., "atol": 0.}),
    (1.5, 1.5001, "float32", {}),                                    # 0-d: scalar message
    (nan, nan, "float64", {}),
    (nan, nan, "float64", {"equal_nan": True}),
    (True, False, "bool", {}),
    (3, 4, "int16", {}),
    (3 + 1j, 4 + 1j, "complex64", {}),
    (1., 1.01, "bfloat16", {}),
    (1., 1.1, "bfloat16", {}),
    ([], [], "float32", {}),
    ([[], []], [[], []], "int64", {}),
    ([1., 2., 3.], [1., 2., 3.], "float32", {"rtol": 1e-3}),
    ([1., 2., 3.], [1., 2., 3.], "float32", {"atol": 1e-3}),
    ([1., 5., 3.], [1., 2., 3.], "float32", {"msg": "custom"}),
    ([1., 5., 3.], [1., 2., 3.], "float32", {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}),
]


@pytest.mark.parametrize("case", range(len(TENSOR_CASES)))
def test_tensor_grid_matches_torch(torch, device, case):
    actual, expected, dtype, kwargs = TENSOR_CASES[case]
    kind, _ = assert_same(torch, lambda m, d: (T(m, d, actual, dtype), T(m, d, expected, dtype)),
                          device, **kwargs)
    assert kind in ("OK", "AssertionError", "ValueError")


def test_negative_tolerance_is_torchs_wrapped_runtime_error(torch):
    """isclose refuses a negative rtol; assert_close wraps that in its 'Comparing' error."""
    errors = []
    for mod, fn in ((torch, torch.testing.assert_close), (fw, ft.assert_close)):
        with pytest.raises(RuntimeError) as e:
            fn(mod.tensor([1., 5.]), mod.tensor([1., 2.]), rtol=-1., atol=0.)
        errors.append((str(e.value), str(e.value.__cause__)))
    assert normalized(("", errors[1][0]))[1] == errors[0][0]
    assert errors[1][1] == errors[0][1] == "rtol must be greater than or equal to zero, but got -1"


@pytest.mark.parametrize("case", [
    lambda m, d: (T(m, d, [1., 2.]), T(m, d, [1., 2., 3.])),
    lambda m, d: (T(m, d, [[1., 2.]]), T(m, d, [1., 2.])),
    lambda m, d: (T(m, d, 1.), T(m, d, [1.])),
    lambda m, d: (m.zeros(0, 3, device=d), m.zeros(3, 0, device=d)),
    lambda m, d: (m.zeros(0, 3, device=d), m.zeros(0, 3, device=d)),
    lambda m, d: (T(m, d, [1., 2.]), T(m, d, [1., 2.], "float64")),
    lambda m, d: (T(m, d, [1, 2], "int64"), T(m, d, [1., 2.])),
    lambda m, d: (m.ones(3, 2, device=d).t(), m.ones(2, 3, device=d)),
    lambda m, d: (m.arange(12., device=d).reshape(3, 4)[:, ::2],
                  T(m, d, [[0., 2.], [4., 6.], [8., 11.]])),
    lambda m, d: (m.arange(12., device=d).reshape(3, 4)[:, ::2],
                  T(m, d, [[0., 2.], [4., 6.], [8., 10.]])),
    lambda m, d: (m.nn.Parameter(T(m, d, [1., 2.])), T(m, d, [1., 2.5])),
    lambda m, d: (T(m, d, [1., 2.]).requires_grad_() * 2, T(m, d, [2., 4.5])),
], ids=["shape", "shape2d", "shape0d", "empty-shape", "empty", "dtype", "dtype-int",
        "transposed", "noncontiguous", "noncontiguous-mismatch", "parameter", "requires-grad"])
def test_attributes_and_layouts_match_torch(torch, device, case):
    assert_same(torch, case, device)


@pytest.mark.parametrize("kwargs", [{"check_stride": True}, {"check_stride": False}])
def test_check_stride(torch, device, kwargs):
    assert_same(torch, lambda m, d: (m.ones(3, 2, device=d).t(), m.ones(2, 3, device=d)),
                device, **kwargs)
    assert_same(torch, lambda m, d: (m.ones(2, 3, device=d).t().contiguous().t(),
                                     m.ones(2, 3, device=d)), device, **kwargs)


def test_allow_subclasses(torch, device):
    build = lambda m, d: (m.nn.Parameter(T(m, d, [1., 2.])), T(m, d, [1., 2.]))  # noqa: E731
    assert assert_same(torch, build, device)[0] == "OK"
    kind, text = assert_same(torch, build, device, allow_subclasses=False)
    assert kind == "TypeError" and "Parameter" in text


DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int8",
          "uint8", "int16", "int32", "int64", "bool"]


def test_mixed_dtypes_promote_without_check_dtype(torch, device):
    """Every pair of dtypes with check_dtype=False: promoted, compared with the looser
    tolerance of the two; values chosen to land on both sides of it."""
    rng = np.random.default_rng(0)
    for d1 in DTYPES:
        for d2 in DTYPES:
            base = rng.integers(0, 6, (2, 3)).astype(np.float64)
            other = base + rng.choice([0, 1e-6, 1e-4, 1e-2, 1.], (2, 3)) * (rng.random((2, 3)) < .4)
            cast = {"bool": lambda x: x > 2}.get(d1, lambda x: x)
            cast2 = {"bool": lambda x: x > 2}.get(d2, lambda x: x)
            if "int" in d1:
                cast = np.round
            if "int" in d2:
                cast2 = np.round
            a, e = cast(base), cast2(other)
            assert_same(torch, lambda m, d: (T(m, d, a, d1), T(m, d, e, d2)), device,
                        check_dtype=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_near_the_tolerance_matches_torch(torch, device, dtype):
    """Seeded values on both sides of the default (and of given) tolerances: the elements
    torch calls close (each intermediate rounded to the dtype) and its message."""
    rng = np.random.default_rng(DTYPES.index(dtype))
    n = 40
    for trial in range(4):
        kwargs = {}
        if dtype == "bool":
            a = rng.random(n) > .5
            e = a ^ (rng.random(n) > .9)
        elif "int" in dtype:
            a = rng.integers(0 if dtype == "uint8" else -100, 100, n)
            step = rng.integers(-2, 3, n) * (rng.random(n) > .8)
            e = np.clip(a + step, 0 if dtype == "uint8" else -128, 127)
            kwargs = {"rtol": float(rng.uniform(0, .05)), "atol": float(rng.choice([0, 1, 1.5]))}
        else:
            a = rng.uniform(-10, 10, n) * 10.0 ** rng.integers(-5, 5, n)
            if "complex" in dtype:
                a = a + 1j * rng.uniform(-10, 10, n)
            rel = {"float16": 1e-3, "bfloat16": 1.6e-2, "float32": 1.3e-6,
                   "complex64": 1.3e-6}.get(dtype, 1e-7)
            e = a * (1 + rel * rng.uniform(-2, 2, n)) + 1e-5 * rng.uniform(-2, 2, n)
            e[rng.random(n) > .95] = nan
            a[rng.random(n) > .95] = inf
            if trial % 2:
                kwargs = {"rtol": float(rng.uniform(0, .05)), "atol": float(rng.uniform(0, 1e-3))}
            if trial >= 2:
                kwargs["equal_nan"] = True
        ta = T(torch, "cpu", a, dtype)
        te = T(torch, "cpu", e, dtype)
        # the framework gets exactly torch's (rounded) values
        a_vals = ta.float().numpy() if dtype == "bfloat16" else ta.numpy()
        e_vals = te.float().numpy() if dtype == "bfloat16" else te.numpy()
        want = outcome(lambda: torch.testing.assert_close(ta, te, **kwargs))
        got = outcome(lambda: ft.assert_close(T(fw, device, a_vals, dtype),
                                              T(fw, device, e_vals, dtype), **kwargs))
        assert normalized(got) == want


def test_messages_literal(device):
    """The main messages, spelled out (these hold without the oracle)."""
    with pytest.raises(AssertionError) as e:
        ft.assert_close(fw.tensor([1., 2., 3.], device=device),
                        fw.tensor([1., 2.5, 3.], device=device))
    assert str(e.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)")
    with pytest.raises(AssertionError) as e:
        ft.assert_close(fw.tensor([1, 2], device=device), fw.tensor([1, 0], device=device))
    assert str(e.value) == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 2 at index (1,)\n"
        "Greatest relative difference: inf at index (1,)")
    with pytest.raises(AssertionError) as e:
        ft.assert_close(fw.tensor(nan, device=device), fw.tensor(nan, device=device))
    assert str(e.value) == ("Scalars are not close!\n\nExpected nan but got nan.\n"
                            "Absolute difference: nan (up to 1e-05 allowed)\n"
                            "Relative difference: nan (up to 1.3e-06 allowed)")
    ft.assert_close(fw.tensor(nan, device=device), fw.tensor(nan, device=device), equal_nan=True)
    with pytest.raises(AssertionError, match=r"^The values for attribute 'dtype' do not match: "
                       r"framework.float32 != framework.float64.$"):
        ft.assert_close(fw.ones(2, device=device), fw.ones(2, dtype=fw.float64, device=device))
    with pytest.raises(AssertionError, match=r"^The values for attribute 'shape' do not match: "
                       r"framework.Size\(\[2\]\) != framework.Size\(\[3\]\).$"):
        ft.assert_close(fw.ones(2, device=device), fw.ones(3, device=device))
    with pytest.raises(AssertionError, match="^Argh$"):
        ft.assert_close(fw.ones(2, device=device), fw.zeros(2, device=device), msg="Argh")
    with pytest.raises(ValueError, match="^Both 'rtol' and 'atol' must be either specified or "
                       "omitted, but got no atol.$"):
        ft.assert_close(fw.ones(2, device=device), fw.ones(2, device=device), rtol=0.1)


def test_device_mismatch():
    if not fw.cuda.is_available():
        pytest.skip("needs the cuda device (real or simulated)")
    a, b = fw.tensor([1., 2.], device="cuda"), fw.tensor([1., 2.])
    with pytest.raises(AssertionError, match=r"^The values for attribute 'device' do not match: "
                       r"cuda:0 != cpu.$"):
        ft.assert_close(a, b)
    ft.assert_close(a, b, check_device=False)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        ft.assert_close(a, fw.tensor([1., 3.]), check_device=False)


# ---- scalars, numpy arrays, sequences and mappings -------------------------------------------

OTHER_CASES = [
    (lambda m: (1.0, 1.0), {}),
    (lambda m: (1.0, 1.1), {}),
    (lambda m: (1.0, 1.0 + 1e-8), {}),
    (lambda m: (1.0, 1), {}),
    (lambda m: (1.0, 1), {"check_dtype": False}),
    (lambda m: (1, 2), {}),
    (lambda m: (1 + 1j, 1 + 2j), {}),
    (lambda m: (nan, nan), {}),
    (lambda m: (nan, nan), {"equal_nan": True}),
    (lambda m: (inf, inf), {}),
    (lambda m: (inf, -inf), {}),
    (lambda m: (True, False), {}),
    (lambda m: (True, np.bool_(True)), {}),
    (lambda m: (True, 1), {}),
    (lambda m: (np.float32(1.0), np.float32(1.5)), {}),
    (lambda m: (None, None), {}),
    (lambda m: (None, 1), {}),
    (lambda m: ("a", "a"), {}),
    (lambda m: (1, m.tensor(1)), {}),
    (lambda m: (1.0, 2.0), {"rtol": 1.0}),
    (lambda m: ([1, 2.0, (3, 4)], (1, 2.0, [3, 5])), {}),
    (lambda m: ([1, 2], [1, 2, 3]), {}),
    (lambda m: ([1, 2], [1, 2, 3]), {"msg": "ignored for structure"}),
    (lambda m: ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}), {}),
    (lambda m: ({"a": 1, "b": 2}, {"a": 1, "c": 2}), {}),
    (lambda m: (collections.OrderedDict(b=m.tensor([1.]), a=2), {"a": 2, "b": m.tensor([1.5])}),
     {"msg": lambda s: "H\n" + s}),
    (lambda m: ([m.tensor([1.])], [m.tensor([1.])]), {"rtol": 1e-3}),
    (lambda m: ([], []), {"rtol": 1e-3}),
    (lambda m: (m.Size([2, 3]), (2, 4)), {}),
    (lambda m: ([m.tensor([1., 2.]), 1], [m.tensor([1., 3.]), 1]), {"msg": lambda s: f"<{s}>"}),
    (lambda m: (np.array([1., 2.]), np.array([1., 2.5])), {}),
    (lambda m: (np.array([1., 2.]), np.array([1, 2])), {}),
    (lambda m: (np.array([1., 2.], np.float32), np.array([1, 2])), {"check_dtype": False}),
    (lambda m: (np.array(2.), np.array(3.)), {}),
    (lambda m: (np.array([1., 2.]), m.tensor([1., 2.], dtype=m.float64)), {}),
]


@pytest.mark.parametrize("case", range(len(OTHER_CASES)))
def test_scalars_arrays_sequences_mappings_match_torch(torch, case):
    build, kwargs = OTHER_CASES[case]
    kind, text = assert_same(torch, lambda m, d: build(m), **kwargs)
    if kind == "RuntimeError":   # torch's wrapped internal error (True vs 1): same text
        assert text.startswith("Originating a NumberPair() at item  with")


# ---- assert_allclose --------------------------------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.00001])),     # within its float32 rtol 1e-4
    lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.1])),
    lambda m: (m.tensor([1., nan]), m.tensor([1., nan])),        # equal_nan defaults to True
    lambda m: (m.tensor([1., 2.]), [1., 2.]),                    # expected takes actual's dtype
    lambda m: ([1, 2], [1, 3]),
    lambda m: (m.tensor([1., 2.]), m.tensor([1, 2])),            # dtypes are not checked
])
def test_assert_allclose_matches_torch(torch, build):
    def call(mod, fn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                fn(*build(mod))
                result = "OK", ""
            except AssertionError as e:
                result = "AssertionError", str(e)
        assert any(issubclass(x.category, FutureWarning) and "assert_allclose" in str(x.message)
                   for x in w)
        return result
    assert normalized(call(fw, ft.assert_allclose)) == call(torch, torch.testing.assert_allclose)


# ---- make_tensor ------------------------------------------------------------------------------

DEFAULT_RANGES = {fw.bool: (0, 1), fw.uint8: (0, 9), fw.int8: (-9, 9), fw.int16: (-9, 9),
                  fw.int32: (-9, 9), fw.int64: (-9, 9), fw.float16: (-9, 9),
                  fw.bfloat16: (-9, 9), fw.float32: (-9, 9), fw.float64: (-9, 9),
                  fw.complex64: (-9, 9), fw.complex128: (-9, 9)}


@pytest.mark.parametrize("dtype", list(DEFAULT_RANGES), ids=str)
def test_make_tensor_default_ranges(device, dtype):
    t = ft.make_tensor(40, 25, dtype=dtype, device=device)
    assert t.dtype is dtype and tuple(t.shape) == (40, 25) and t.device.type == device
    assert t.is_contiguous() and not t.requires_grad
    vals = to_np(t)
    lo, hi = DEFAULT_RANGES[dtype]
    if dtype.is_floating_point or dtype.is_complex:   # [-9, 9), over the whole range
        for v in ([vals.real, vals.imag] if dtype.is_complex else [vals.astype(np.float64)]):
            assert v.min() >= lo and v.max() < hi
            assert v.min() < lo + 1 and v.max() > hi - 1
    else:                                             # every integer of [lo, hi]
        assert set(np.unique(vals.astype(np.int64)).tolist()) == set(range(lo, hi + 1))


@pytest.mark.parametrize("dtype,low,high", [
    (fw.float32, -1, 1), (fw.float64, 0.5, 0.75), (fw.int64, 3, 6), (fw.uint8, 250, 300),
    (fw.int8, -1000, -120), (fw.bfloat16, 2, 4), (fw.int32, 1.5, 3.2), (fw.float16, -1e6, 1e6),
    (fw.complex64, -2, -1),
])
def test_make_tensor_given_ranges_are_clamped(device, dtype, low, high):
    vals = to_np(ft.make_tensor((1000,), dtype=dtype, device=device, low=low, high=high))
    if dtype.is_floating_point or dtype.is_complex:
        info = fw.finfo(dtype)
        lo, hi = max(low, info.min), min(high, info.max)
        for v in ([vals.real, vals.imag] if dtype.is_complex else [vals]):
            assert np.all(v >= lo) and np.all(v <= hi)
    else:
        info = fw.iinfo(dtype)
        lo, hi = math.ceil(max(low, info.min)), math.ceil(min(high, info.max + 1))
        assert set(np.unique(vals).tolist()) == set(range(lo, hi))


def test_make_tensor_shapes_and_flags(device):
    for shape in [(2, 3), ((2, 3),), ([2, 3],), (fw.Size([2, 3]),)]:
        assert tuple(ft.make_tensor(*shape, dtype=fw.float32, device=device).shape) == (2, 3)
    assert tuple(ft.make_tensor(5, dtype=fw.int64, device=device).shape) == (5,)
    assert tuple(ft.make_tensor((), dtype=fw.int64, device=device).shape) == ()
    assert tuple(ft.make_tensor(dtype=fw.float32, device=device).shape) == ()
    assert ft.make_tensor(0, 3, dtype=fw.float32, device=device).numel() == 0

    for shape in [(4, 5), ((4, 5),), (fw.Size([4, 5]),)]:
        t = ft.make_tensor(*shape, dtype=fw.float32, device=device, noncontiguous=True)
        assert tuple(t.shape) == (4, 5) and not t.is_contiguous() and t.stride() == (10, 2)
        assert t.storage_offset() == 1
    one = ft.make_tensor(1, 1, dtype=fw.float32, device=device, noncontiguous=True)
    assert one.is_contiguous()                 # under two elements: ignored
    n = ft.make_tensor(3, dtype=fw.complex64, device=device, noncontiguous=True)
    assert not n.is_contiguous() and tuple(n.shape) == (3,)

    c = ft.make_tensor(2, 3, 4, 5, dtype=fw.float32, device=device,
                       memory_format=fw.channels_last)
    assert c.is_contiguous(memory_format=fw.channels_last) and not c.is_contiguous()

    for dtype in (fw.float32, fw.bfloat16, fw.complex64):
        g = ft.make_tensor(3, dtype=dtype, device=device, requires_grad=True)
        assert g.requires_grad and g.is_leaf and g.grad_fn is None
        g = ft.make_tensor(3, dtype=dtype, device=device, requires_grad=True, noncontiguous=True)
        assert g.requires_grad and g.is_leaf


@pytest.mark.parametrize("dtype", [fw.bool, fw.uint8, fw.int8, fw.int64], ids=str)
def test_make_tensor_exclude_zero(device, dtype):
    low, high = (0, 2) if dtype in (fw.bool, fw.uint8) else (-1, 1)
    vals = to_np(ft.make_tensor(200, dtype=dtype, device=device, low=low, high=high,
                                exclude_zero=True))
    assert np.all(vals != 0) and np.any(vals == 1)


def test_make_tensor_exclude_zero_replacement(monkeypatch, device):
    """Zeros become finfo.tiny (complex: tiny + 0j), as torch's."""
    from framework.testing import _creation
    monkeypatch.setattr(_creation, "_uniform_", lambda t, low, high: t.zero_())
    for dtype in (fw.float16, fw.bfloat16, fw.float32, fw.float64, fw.complex64, fw.complex128):
        vals = to_np(ft.make_tensor(3, dtype=dtype, device=device, exclude_zero=True))
        np.testing.assert_array_equal(vals, np.full(3, fw.finfo(dtype).tiny, vals.dtype))


def test_make_tensor_uses_the_framework_generator(device):
    fw.manual_seed(7)
    a = to_np(ft.make_tensor(50, dtype=fw.float32, device=device))
    b = to_np(ft.make_tensor(50, dtype=fw.int64, device=device))
    fw.manual_seed(7)
    np.testing.assert_array_equal(a, to_np(ft.make_tensor(50, dtype=fw.float32, device=device)))
    np.testing.assert_array_equal(b, to_np(ft.make_tensor(50, dtype=fw.int64, device=device)))
    assert not np.array_equal(a, to_np(ft.make_tensor(50, dtype=fw.float32, device=device)))


MAKE_TENSOR_ERRORS = [
    dict(dtype="float32", low=3, high=2),
    dict(dtype="int64", low=3, high=3),
    dict(dtype="float32", low=nan),
    dict(dtype="float64", high=nan),
    dict(dtype="int8", low=200, high=300),
    dict(dtype="uint8", low=-10, high=-1),
    dict(dtype="float16", low=7e4, high=8e4),
    dict(dtype="int64", requires_grad=True),
    dict(dtype="bool", requires_grad=True),
    dict(dtype="float32", noncontiguous=True, memory_format="channels_last"),
    dict(dtype="float32", low=2, high=2),                      # a FutureWarning
    dict(dtype="bool", low=-5, high=5),                        # clamped: fine
    dict(dtype="int64", low=-2**70, high=2**70),
]


@pytest.mark.parametrize("case", range(len(MAKE_TENSOR_ERRORS)))
def test_make_tensor_errors_match_torch(torch, case):
    def call(mod, fn):
        kwargs = dict(MAKE_TENSOR_ERRORS[case])
        kwargs["dtype"] = getattr(mod, kwargs["dtype"])
        if "memory_format" in kwargs:
            kwargs["memory_format"] = getattr(mod, kwargs["memory_format"])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", FutureWarning)
                fn(2, 3, device="cpu", **kwargs)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return "OK", ""
    assert normalized(call(fw, ft.make_tensor)) == call(torch, torch.testing.make_tensor)


def test_make_tensor_unsupported_dtype():
    with pytest.raises(TypeError, match="is not supported by torch.testing.make_tensor()"):
        ft.make_tensor(2, dtype="float32", device="cpu")
