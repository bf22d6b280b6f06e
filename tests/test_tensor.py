"""Tensor object: metadata, conversions, NumPy sharing, devices and their errors."""
import warnings

import numpy as np
import pytest

import framework as fw
from helpers import ALL_DTYPES, to_np


def test_metadata(device):
    t = fw.zeros(2, 3, 4, device=device)
    assert t.shape == (2, 3, 4) and t.size() == fw.Size([2, 3, 4]) and t.size(-1) == 4
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12
    assert t.dim() == t.ndim == 3 and t.numel() == 24 and t.element_size() == 4
    assert t.is_contiguous() and not t.transpose(0, 2).is_contiguous()
    assert t[:, 1].data_ptr() == t.data_ptr() + 4 * 4
    assert repr(t.shape) == "framework.Size([2, 3, 4])"
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.size(3)


def test_zero_dim_and_empty(device):
    s = fw.tensor(3.5, device=device)
    assert s.shape == () and s.dim() == 0 and s.numel() == 1 and s.item() == 3.5
    e = fw.zeros(0, 3, device=device)
    assert e.numel() == 0 and e.tolist() == []
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(s)
    with pytest.raises(RuntimeError, match="a Tensor with 0 elements cannot be converted to Scalar"):
        e.item()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tolist_item_roundtrip(dtype, device):
    data = [[0, 1], [1, 0]] if dtype is fw.bool else [[1, 2], [3, 4]]
    t = fw.tensor(data, dtype=dtype, device=device)
    assert t.dtype is dtype
    expected = [[bool(v) for v in r] for r in data] if dtype is fw.bool else data
    assert t.tolist() == expected
    assert t[1, 1].item() == expected[1][1]


def test_numpy_shares_memory():
    t = fw.zeros(2, 3)
    a = t.numpy()
    a[0, 1] = 5
    assert t[0, 1].item() == 5
    arr = np.arange(6.0)
    u = fw.from_numpy(arr)
    u[2] = -1
    assert arr[2] == -1
    v = fw.from_numpy(arr.reshape(2, 3)[:, ::2])
    assert v.stride() == (3, 2) and v.tolist() == [[0.0, -1.0], [3.0, 5.0]]


def test_numpy_errors():
    with pytest.raises(TypeError, match="BFloat16"):
        fw.zeros(2, dtype=fw.bfloat16).numpy()
    with pytest.raises(ValueError, match="negative"):
        fw.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        fw.from_numpy(np.zeros(2, dtype=np.uint16))
    with pytest.raises(RuntimeError, match="requires grad"):
        fw.zeros(2, requires_grad=True).numpy()


def test_tensor_inference():
    assert fw.tensor([1, 2]).dtype is fw.int64
    assert fw.tensor([1, 2.0]).dtype is fw.float32
    assert fw.tensor([True]).dtype is fw.bool
    assert fw.tensor(np.zeros(2, np.float64)).dtype is fw.float64
    assert fw.tensor(np.float64(1.5)).dtype is fw.float64
    assert fw.tensor([fw.tensor(1.0), fw.tensor(2.0)]).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        fw.tensor("abc")


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_to_dtype_matches_numpy_cast(src, dst, device):
    vals = [0, 1, 0, 1] if src is fw.bool else [0, 1, 7, 100]
    t = fw.tensor(vals, dtype=src, device=device)
    r = t.to(dst)
    assert r.dtype is dst
    expected = np.array(vals).astype(np.bool_ if src is fw.bool else np.float64)
    np.testing.assert_array_equal(to_np(r).astype(np.float64), expected.astype(dst.np if dst is not fw.bfloat16 else np.float32).astype(np.float64))


def test_float_to_int_and_rounding():
    t = fw.tensor([-1.7, -0.5, 0.5, 2.9])
    assert t.long().tolist() == [-1, 0, 0, 2]          # truncation like C and PyTorch
    assert fw.tensor([0.1, 1.0 / 3]).bfloat16().float().tolist() == [0.10009765625, 0.333984375]
    assert fw.tensor([65520.0]).half().float().tolist() == [float("inf")]
    assert fw.tensor([1e-8]).half().float().item() == pytest.approx(np.float16(1e-8), abs=1e-9)


def test_conversion_methods():
    t = fw.tensor([1.5, -2.0])
    assert t.double().dtype is fw.float64 and t.half().dtype is fw.float16
    assert t.int().dtype is fw.int32 and t.bool().tolist() == [True, True]
    assert t.to(fw.float32) is t
    assert t.to(fw.float32, copy=True) is not t
    assert t.type() == "framework.FloatTensor"
    assert float(fw.tensor([2.5])) == 2.5 and int(fw.tensor(3)) == 3
    assert [1, 2, 3][fw.tensor(1)] == 2
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(fw.tensor([1, 2]))


def test_clone_contiguous_copy(device):
    a = fw.arange(6, device=device).reshape(2, 3)
    b = a.t().contiguous()
    assert b.is_contiguous() and b.tolist() == [[0, 3], [1, 4], [2, 5]]
    c = a.clone()
    c[0, 0] = 9
    assert a[0, 0].item() == 0
    d = fw.zeros(2, 3, dtype=fw.float64, device=device).copy_(a)
    assert d.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        fw.zeros(3, device=device).copy_(a)


def test_overlapping_copy_raises_as_in_pytorch():
    # PyTorch refuses a copy whose source partly overlaps its destination (the result
    # would depend on the loop order); a copy onto itself is fine
    a = fw.arange(6)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the "
                                           "written-to tensor refer to a single memory"):
        a[1:].copy_(a[:-1])
    assert a.tolist() == [0, 1, 2, 3, 4, 5]
    a.copy_(a)
    with pytest.raises(RuntimeError, match="more than one element of the written-to"):
        a[:1].expand(3).copy_(fw.ones(3, dtype=a.dtype))
    assert a.tolist() == [0, 1, 2, 3, 4, 5]


def test_version_counter_bumps_on_inplace():
    a = fw.zeros(3)
    v = a._version
    a.add_(1)
    a[0] = 2
    assert a._version >= v + 2
    assert a[1:]._version == a._version


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="floating point"):
        fw.zeros(2, dtype=fw.int64, requires_grad=True)
    t = fw.zeros(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf and not t.detach().requires_grad


def test_device_objects():
    assert fw.device("cpu") == "cpu" and str(fw.device("cuda:1")) == "cuda:1"
    assert fw.device("cuda", 0).index == 0
    with pytest.raises(RuntimeError, match="Expected one of"):
        fw.device("tpu")
    with pytest.raises(RuntimeError):
        fw.device("cuda:x")
    if not fw.cuda.is_available():
        with pytest.raises(RuntimeError):
            fw.zeros(2).to("cuda")


# ---- dims given as ints, NumPy ints and 0-d integer tensors; anything else TypeError ----

@pytest.mark.parametrize("dim", [1, -1, np.int64(1), np.int32(-1)])
def test_size_and_stride_take_integer_dims(dim, device):
    x = fw.zeros(3, 2, device=device)
    assert x.size(dim) == 2 and x.stride(dim) == 1
    assert x.size(fw.tensor(1)) == 2


@pytest.mark.parametrize("dim", [1.5, 1.0, True, "1", [1], fw.tensor(1.0)])
def test_size_and_stride_refuse_other_dims(dim, device):
    x = fw.zeros(3, 2, device=device)
    with pytest.raises(TypeError, match="size\\(\\): argument 'dim'"):
        x.size(dim)
    with pytest.raises(TypeError, match="stride\\(\\): argument 'dim'"):
        x.stride(dim)


def test_size_out_of_range_dims(device):
    x = fw.zeros(3, 2, device=device)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(2)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        x.size(2**63)      # PyTorch's parser refuses an int beyond int64 so


def test_zero_dim_tensor_dim_selects_that_dim(device):
    # it used to be taken as a dict key / compared as a tensor and read out of bounds
    y = fw.arange(6.0, device=device).reshape(3, 2)
    idx = fw.tensor([0], device=device)
    r = y.index_select(fw.tensor(1), idx)
    assert r.shape == (3, 1) and r.tolist() == [[0.0], [2.0], [4.0]]
    assert y.index_fill(fw.tensor(1), idx, -1.0).tolist() == [[-1.0, 1.0], [-1.0, 3.0],
                                                              [-1.0, 5.0]]
    assert y.sum(fw.tensor(1)).tolist() == [1.0, 5.0, 9.0]


def test_host_array_of_size_one_dims_with_huge_strides(device):
    u = fw.arange(6.0, device=device).unfold(0, 2, 2**62)
    assert u.stride() == (2**62, 1)
    assert u.tolist() == [[0.0, 1.0]] and u[0, 1].item() == 1.0
    assert u.cpu().numpy().tolist() == [[0.0, 1.0]]
    assert repr(u).startswith("tensor([[0., 1.]]")


class _Reflected:
    """An operand the tensor does not take, with reflected operators of its own."""

    def __radd__(self, other):
        return "radd"

    def __rmul__(self, other):
        return "rmul"

    def __gt__(self, other):
        return "gt"


# each against torch: Python's operator protocol (a TypeError inside an operator gives
# NotImplemented, so the other operand's reflected method runs) and NumPy's (priority,
# ufuncs wrapped back into tensors)
OPERATOR_CASES = [
    "a + _Reflected()", "a * _Reflected()", "a < _Reflected()", "a + 's'", "[1., 2.] + a",
    "a + [1., 2.]", "a @ 3", "a ** 's'", "a + None", "a - (1,)", "a / 'x'", "a < 's'",
    "np.float64(2) * a", "a + np.ones(2)", "np.int64(2) + a", "np.float32(3) < a",
    "a + np.ones((), dtype=np.float64)", "np.sin(a)", "np.greater(a, 1)", "np.maximum(a, 1.5)",
    "np.ones(2) * a",
]


@pytest.mark.parametrize("expr", OPERATOR_CASES)
def test_operators_and_numpy_as_torch(expr):
    torch = pytest.importorskip("torch")

    def run(T):
        a = T.tensor([1., 2.])
        try:
            r = eval(expr, {"np": np, "_Reflected": _Reflected, "a": a})  # noqa: S307
        except Exception as e:  # noqa: BLE001 - compared with torch's below
            return type(e).__name__, str(e).replace("torch.", "").replace("framework.", "")
        if isinstance(r, str):
            return r
        return type(r).__name__, str(r.dtype).split(".")[-1], r.tolist()

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")    # NumPy 2's deprecation of torch's __array_wrap__
        assert run(fw) == run(torch)


def test_inplace_operator_refuses_as_torch():
    a = fw.tensor([1., 2.])
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+=: 'Tensor' and "
                                        "'str'"):
        a += "s"

