"""Tensor printing against PyTorch's own ``repr`` (``torch.`` read as ``framework.``)."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from framework import _dtype
from framework import _tensor_str as ts

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


def ours(t, device="cpu", suffixes=None):
    """Our repr of torch tensor ``t`` (its grad suffix taken from ``t`` unless given)."""
    if suffixes is None and t.grad_fn is not None:
        suffixes = ["grad_fn=<" + type(t.grad_fn).__name__ + ">"]
    elif suffixes is None and t.requires_grad:
        suffixes = ["requires_grad=True"]
    values = t.detach()
    if values.dtype in (torch.float16, torch.bfloat16):
        values = values.float()
    return ts.tensor_repr(values.numpy(), str(t.dtype).split(".")[-1], device, suffixes)


def theirs(t):
    return repr(t).replace("torch.", "framework.")


def check(t):
    assert ours(t) == theirs(t)


@pytest.fixture(autouse=True)
def _restore_printoptions():
    yield
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")


def set_both(**kwargs):
    torch.set_printoptions(**kwargs)
    ts.set_printoptions(**kwargs)


# ---------------------------------------------------------------- fixed cases

def test_literal_examples():
    assert ts.tensor_repr(np.array([1, 2], np.int32), "int32") == \
        "tensor([1, 2], dtype=framework.int32)"
    assert ts.tensor_repr(np.array(1.5, np.float32), "float32") == "tensor(1.5000)"
    assert ts.tensor_repr(np.zeros((0, 3), np.float32), "float32") == "tensor([], size=(0, 3))"
    assert ts.tensor_repr(np.zeros((0,), np.float32), "float32") == "tensor([])"
    assert ts.tensor_repr(np.array([1.0, 2.0], np.float32), "float32") == "tensor([1., 2.])"
    assert ts.tensor_repr(np.array([True, False]), "bool") == "tensor([ True, False])"
    assert ts.tensor_repr(np.array([0.5], np.float32), "float32", "cuda:0",
                          ["requires_grad=True"]) == \
        "tensor([0.5000], device='cuda:0', requires_grad=True)"


def test_unknown_dtype_name():
    with pytest.raises(ValueError, match="unknown dtype name 'quint8'"):
        ts.tensor_repr(np.zeros(2, np.float32), "quint8")


def test_numpy_views_and_int_values_for_float_dtype():
    arr = np.arange(24, dtype=np.float64).reshape(4, 6)[::2, ::-3].T
    assert ts.tensor_repr(arr, "float64") == theirs(torch.tensor(arr.copy()))
    assert ts.tensor_repr(np.array([1, 2]), "float32") == "tensor([1., 2.])"


FIXED = [
    lambda: torch.tensor([1.0, 2.0]),
    lambda: torch.tensor(1.5),
    lambda: torch.tensor(-3),
    lambda: torch.tensor(True),
    lambda: torch.tensor(float("nan")),
    lambda: torch.tensor(-float("inf")),
    lambda: torch.tensor(1e-9),
    lambda: torch.tensor(123456789.0),
    lambda: torch.tensor([0.0, -0.0]),
    lambda: torch.tensor([-0.0, 1.5]),
    lambda: torch.tensor([-0.0, 2.0]),
    lambda: torch.tensor([float("nan"), 1.0, float("inf"), -float("inf")]),
    lambda: torch.tensor([float("nan"), 1.25]),
    lambda: torch.tensor([float("nan"), 1e-7]),
    lambda: torch.tensor([float("nan"), float("inf")]),
    lambda: torch.tensor([1e-5, 1.0]),
    lambda: torch.tensor([1e-4, 1.0]),
    lambda: torch.tensor([1.0, 1000.0]),
    lambda: torch.tensor([1.0, 1001.0]),
    lambda: torch.tensor([1.5, 1001.0]),
    lambda: torch.tensor([1e8, 1.0e8 + 8]),
    lambda: torch.tensor([1e8]),
    lambda: torch.tensor([1.1e8]),
    lambda: torch.tensor([3e38, -3e38]),
    lambda: torch.tensor([1e-45, 1.0]),
    lambda: torch.tensor([1e300, -1e-300], dtype=torch.float64),
    lambda: torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64),
    lambda: torch.tensor([65504.0, -1.0], dtype=torch.float16),
    lambda: torch.tensor([1e-7, 1.0], dtype=torch.float16),
    lambda: torch.tensor([1e38, 3.3], dtype=torch.bfloat16),
    lambda: torch.tensor([1.0, 2.0], dtype=torch.bfloat16),
    lambda: torch.tensor([2**63 - 1, -2**63], dtype=torch.int64),
    lambda: torch.tensor([255, 0], dtype=torch.uint8),
    lambda: torch.tensor([-128, 7], dtype=torch.int8),
    lambda: torch.tensor([True, True]),
    lambda: torch.arange(100),
    lambda: torch.arange(100, dtype=torch.int16) * 300,
    lambda: torch.arange(1000.0),
    lambda: torch.arange(1001.0),
    lambda: torch.arange(1001),
    lambda: torch.arange(5000) - 2500,
    lambda: torch.arange(24.0).reshape(2, 3, 4),
    lambda: torch.arange(120.0).reshape(2, 3, 4, 5) / 7,
    lambda: torch.arange(720).reshape(2, 3, 4, 5, 6),
    lambda: torch.arange(3000.0).reshape(3, 1000),
    lambda: torch.arange(3000.0).reshape(1000, 3),
    lambda: torch.arange(3000.0).reshape(1000, 3) * 1e-6,
    lambda: torch.arange(8000.0).reshape(20, 20, 20),
    lambda: torch.arange(16000).reshape(2, 2, 2, 2000),
    lambda: torch.arange(12.0).reshape(3, 4).t(),
    lambda: torch.arange(30).reshape(2, 15) * 1000000,
    lambda: torch.arange(60.0).reshape(3, 20)[:, ::3],
    lambda: torch.ones(1, 1, 1),
    lambda: torch.zeros(2, 1, 3, dtype=torch.int32),
    lambda: torch.zeros(0),
    lambda: torch.zeros(0, dtype=torch.int64),
    lambda: torch.zeros(0, dtype=torch.bool),
    lambda: torch.zeros(0, dtype=torch.float64),
    lambda: torch.zeros(0, 3),
    lambda: torch.zeros(2, 0, 3, dtype=torch.int8),
    lambda: torch.zeros(0, 0, dtype=torch.bfloat16),
    lambda: torch.zeros(2000, 0),
]


@pytest.mark.parametrize("make", FIXED, ids=[str(i) for i in range(len(FIXED))])
def test_fixed(make):
    check(make())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (2, 1, 2, 3), (30,)])
def test_every_dtype(dtype, shape):
    gen = torch.Generator().manual_seed(DTYPES.index(dtype) * 100 + len(shape) * 10 + sum(shape))
    t = torch.randn(shape, generator=gen) * 50
    check(t.to(getattr(torch, dtype)))


def test_random_gaussians_of_every_scale():
    gen = torch.Generator().manual_seed(0)
    for scale in [1e-12, 1e-6, 1e-3, 0.1, 1.0, 10.0, 1e4, 1e7, 1e9, 1e20]:
        for shape in [(5,), (4, 6), (2, 3, 9), (40, 40)]:
            check(torch.randn(shape, generator=gen) * scale)
            check(torch.randn(shape, generator=gen, dtype=torch.float64) * scale)


def test_random_ints():
    gen = torch.Generator().manual_seed(1)
    for high in [2, 10, 1000, 10**6, 2**40]:
        for shape in [(9,), (5, 7), (3, 4, 5), (2, 3, 2, 2), (1100,)]:
            check(torch.randint(-high, high, shape, generator=gen))
            check(torch.randint(-min(high, 127), min(high, 127), shape, generator=gen,
                                dtype=torch.int8))


def test_suffixes_requires_grad_and_grad_fn():
    a = torch.randn(3, requires_grad=True)
    check(a)
    b = a + 1
    assert ours(b, suffixes=["grad_fn=<AddBackward0>"]) == theirs(b)
    c = torch.randn(4, 4, dtype=torch.float64, requires_grad=True) * 2
    assert ours(c, suffixes=["grad_fn=<MulBackward0>"]) == theirs(c)
    e = (torch.arange(10.0, requires_grad=True) * 1000).to(torch.float16)
    assert ours(e, suffixes=["grad_fn=<ToCopyBackward0>"]) == theirs(e)
    assert ours(e, suffixes=["grad_fn=<ToCopyBackward0>"]).count("\n") == 1
    d = torch.arange(12.0).reshape(3, 4).requires_grad_()
    check(d)


def torch_style_with_device(t, device, extra=()):
    """What PyTorch prints for ``t`` living on ``device`` (built from its own helpers)."""
    suffixes = ["device='" + device + "'"]
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype != torch.get_default_dtype():
            suffixes.append("dtype=" + str(t.dtype))
        body = "[]"
    else:
        if t.dtype not in (torch.get_default_dtype(), torch.int64, torch.bool):
            suffixes.append("dtype=" + str(t.dtype))
        body = torch._tensor_str._tensor_str(t, len("tensor("))
    out = torch._tensor_str._add_suffixes("tensor(" + body, suffixes + list(extra), 7, False)
    return out.replace("torch.", "framework.")


@pytest.mark.parametrize("make", [
    lambda: torch.tensor([1.0, 2.0]),
    lambda: torch.tensor(3, dtype=torch.int32),
    lambda: torch.zeros(0, 2),
    lambda: torch.arange(24, dtype=torch.int16).reshape(2, 3, 4),
    lambda: torch.arange(17.0) * 123456,
    lambda: torch.randn(3, 4, dtype=torch.float64),
])
def test_device_suffix(make):
    t = make()
    for extra in ([], ["requires_grad=True"], ["grad_fn=<AddBackward0>"]):
        assert ours(t, "cuda:0", extra) == torch_style_with_device(t, "cuda:0", extra)
    assert "device='cuda:1'" in ours(t, "cuda:1")


def test_suffix_wraps_to_new_line():
    t = torch.arange(10, dtype=torch.int32) * 1000
    assert "\n       dtype=framework.int32" in ours(t)
    check(t)
    t = torch.tensor([1.0, 2.0])
    assert ours(t, "cuda:0", ["grad_fn=<" + "X" * 60 + ">"]) == \
        torch_style_with_device(t, "cuda:0", ["grad_fn=<" + "X" * 60 + ">"])


def test_default_dtype_float64():
    old = torch.get_default_dtype()
    old_ours = _dtype.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    _dtype.set_default_dtype(_dtype.float64)
    try:
        for t in [torch.tensor([1.5], dtype=torch.float32), torch.tensor([1.5]),
                  torch.zeros(0, dtype=torch.float32), torch.zeros(0), torch.tensor([1, 2])]:
            check(t)
    finally:
        torch.set_default_dtype(old)
        _dtype.set_default_dtype(old_ours)


# ---------------------------------------------------------------- print options

OPTIONS = [
    dict(precision=2), dict(precision=0), dict(precision=10), dict(threshold=5),
    dict(threshold=0), dict(threshold=math.inf), dict(edgeitems=1), dict(edgeitems=0),
    dict(edgeitems=0, threshold=5), dict(edgeitems=5, threshold=10), dict(linewidth=40),
    dict(linewidth=200), dict(linewidth=1), dict(profile="short"), dict(profile="full"),
    dict(profile="default"), dict(sci_mode=True), dict(sci_mode=False),
    dict(sci_mode=True, precision=1), dict(profile="short", precision=6, sci_mode=False),
]

OPTION_TENSORS = [
    lambda: torch.tensor([1.0, 2.0]),
    lambda: torch.tensor(2.5),
    lambda: torch.tensor(7),
    lambda: torch.tensor([1e-6, 1.0, 1234.5678]),
    lambda: torch.tensor([float("nan"), 0.0, -float("inf"), 3.0]),
    lambda: torch.tensor([123456.0, -7.0]),
    lambda: torch.arange(20) * 37,
    lambda: torch.arange(20.0) / 3,
    lambda: torch.arange(60.0).reshape(3, 4, 5) - 30,
    lambda: torch.arange(120).reshape(2, 3, 4, 5),
    lambda: torch.arange(2000.0).reshape(40, 50) / 9,
    lambda: torch.arange(1200, dtype=torch.int32),
    lambda: torch.zeros(0, 4),
    lambda: torch.tensor([True, False, True]),
]


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_printoptions(options):
    set_both(**options)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    for make in OPTION_TENSORS:
        check(make())


def test_get_printoptions_defaults_and_context_manager():
    assert ts.get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3,
                                         linewidth=80, sci_mode=None)
    with ts.printoptions(precision=1):
        assert ts.get_printoptions()["precision"] == 1
        assert ours(torch.tensor([1.25])) == "tensor([1.2])"
    assert ts.get_printoptions()["precision"] == 4
    ts.set_printoptions(precision=2, sci_mode=True)
    ts.set_printoptions(linewidth=100)   # as in PyTorch, this resets sci_mode
    assert ts.get_printoptions()["sci_mode"] is None
    assert ts.get_printoptions()["precision"] == 2


# ---------------------------------------------------------------- random (hypothesis)

def _magnitude_floats(width):
    finite = st.floats(width=width, allow_nan=False, allow_infinity=False)
    scaled = st.builds(lambda m, e: m * 10.0 ** e, st.floats(-10, 10, width=width),
                       st.integers(-8, 9 if width == 16 else 12))
    specials = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -2.0, 1e8])
    return st.one_of(finite, scaled, scaled, specials,
                     st.integers(-10**6, 10**6).map(float))


def _rounded(np_dtype):
    def cast(value):
        with np.errstate(over="ignore"):   # too large for the dtype: becomes inf
            return np_dtype(value).item()
    return cast


def _float_case(width):
    np_dtype = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    return hnp.arrays(np_dtype, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6),
                      elements=_magnitude_floats(width).map(_rounded(np_dtype)))


HSET = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@HSET
@given(_float_case(32))
def test_hypothesis_float32(arr):
    check(torch.from_numpy(arr.copy()))


@HSET
@given(_float_case(64))
def test_hypothesis_float64(arr):
    check(torch.from_numpy(arr.copy()))


@HSET
@given(_float_case(16))
def test_hypothesis_float16(arr):
    check(torch.from_numpy(arr.copy()))


@HSET
@given(_float_case(32))
def test_hypothesis_bfloat16(arr):
    check(torch.from_numpy(arr.copy()).to(torch.bfloat16))


@HSET
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=7),
                  elements=st.integers(-2**63, 2**63 - 1)),
       st.sampled_from(["int64", "int32", "int16", "int8", "uint8", "bool"]))
def test_hypothesis_ints(arr, dtype):
    check(torch.from_numpy(arr.copy()).to(getattr(torch, dtype)))


@HSET
@given(_float_case(32), st.integers(0, 12), st.integers(0, 3), st.integers(1, 3),
       st.integers(20, 120), st.sampled_from([None, True, False]))
def test_hypothesis_with_options(arr, threshold, edgeitems, precision, linewidth, sci_mode):
    set_both(threshold=threshold, edgeitems=edgeitems, precision=precision,
             linewidth=linewidth, sci_mode=sci_mode)
    check(torch.from_numpy(arr.copy()))
    check(torch.from_numpy(arr.copy()).to(torch.int32))


# ---------------------------------------------------------------- framework.Tensor

FW_CASES = [
    (np.array([1.5, 2.0], np.float32), "float32"),
    (np.array(2.25), "float64"),
    (np.arange(12, dtype=np.int64).reshape(3, 4) * 1000, "int64"),
    (np.arange(12).reshape(3, 4) - 6, "int8"),
    (np.array([True, False, True]), "bool"),
    (np.linspace(-3, 3, 24).reshape(2, 3, 4), "bfloat16"),
    (np.linspace(-1e-5, 6e4, 30).reshape(5, 6), "float16"),
    (np.arange(3000.0).reshape(3, 1000), "float32"),
    (np.zeros((0, 3)), "float32"),
    (np.zeros(0), "int32"),
]


@pytest.mark.parametrize("values,dtype", FW_CASES, ids=[c[1] + str(c[0].shape) for c in FW_CASES])
def test_framework_tensor_repr(device, values, dtype):
    import framework as fw

    x = fw.tensor(values.tolist(), dtype=getattr(fw, dtype), device=device)
    t = torch.tensor(values.tolist(), dtype=getattr(torch, dtype))
    expected = theirs(t) if device == "cpu" else torch_style_with_device(t, str(x.device))
    assert repr(x) == expected
    assert str(x) == expected
    if x.dim() == 2:   # a non-contiguous view: the transpose
        expected = theirs(t.t()) if device == "cpu" else torch_style_with_device(
            t.t(), str(x.device))
        assert repr(x.t()) == expected
    if x.dtype.is_floating_point and x.numel() > 0:
        x.requires_grad_()
        t.requires_grad_()
        expected = theirs(t) if device == "cpu" else torch_style_with_device(
            t.detach(), str(x.device), ["requires_grad=True"])
        assert repr(x) == expected


def test_framework_set_printoptions_exported():
    import framework as fw

    fw.set_printoptions(precision=2, linewidth=30)
    torch.set_printoptions(precision=2, linewidth=30)
    values = (np.arange(10) / 3).tolist()
    assert repr(fw.tensor(values)) == theirs(torch.tensor(values))
    assert repr(fw.tensor(values)).count("\n") == 3   # three values a line
