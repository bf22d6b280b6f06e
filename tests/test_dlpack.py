"""DLPack (``__dlpack__``, ``from_dlpack``) and ``__array__``: zero-copy exchange with NumPy
and PyTorch (the oracle), on cpu and the (simulated) cuda device."""
import ctypes
import gc
import weakref

import numpy as np
import pytest

import framework as fw
from framework import _dlpack
from framework.utils import dlpack as fw_dlpack

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]
NUMPY_DTYPES = [d for d in DTYPES if d != "bfloat16"]   # NumPy has no bfloat16


def _values(dtype, shape=(3, 5)):
    n = int(np.prod(shape))
    src = torch.arange(n).reshape(shape) - n // 3
    if dtype == "bool":
        src = src % 3 == 0
    return src.to(getattr(torch, dtype))


def _fw(t, device="cpu"):
    # a framework tensor with torch's values, made without DLPack
    arr = t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()
    out = fw.tensor(arr.copy())
    if t.dtype == torch.bfloat16:
        out = out.view(fw.bfloat16)
    return out.to(device)


def _ptr(a):
    return a.__array_interface__["data"][0]


# ---- framework -> NumPy ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_to_numpy_shares_memory(dtype):
    t = _fw(_values(dtype))
    a = np.from_dlpack(t)
    assert _ptr(a) == t.data_ptr()
    assert a.dtype == np.dtype(dtype) and a.shape == (3, 5)
    np.testing.assert_array_equal(a, _values(dtype).numpy())
    if dtype != "bool":
        t[0, 0] = 7     # a write through the framework is seen by NumPy
        assert a[0, 0] == 7


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_from_numpy_shares_memory(dtype):
    a = _values(dtype).numpy().copy()
    t = fw.from_dlpack(a)
    assert t.data_ptr() == _ptr(a) and t.dtype == getattr(fw, dtype)
    assert tuple(t.shape) == a.shape and t.stride() == (5, 1)
    np.testing.assert_array_equal(t.numpy(), a)


def test_numpy_non_contiguous_and_offset():
    t = fw.arange(24.0).reshape(4, 6)
    v = t.t()[2:, 1:]                       # strides (1, 6), storage offset 8
    a = np.from_dlpack(v)
    assert _ptr(a) == v.data_ptr() and a.strides == (4, 24)
    np.testing.assert_array_equal(a, np.arange(24.0).reshape(4, 6).T[2:, 1:])
    base = np.arange(30, dtype=np.int32).reshape(5, 6)
    sub = base[1::2, ::3]
    f = fw.from_dlpack(sub)
    assert f.data_ptr() == _ptr(sub) and f.stride() == (12, 3)
    np.testing.assert_array_equal(f.numpy(), sub)
    back = np.from_dlpack(f)                # and back again, still the same memory
    assert _ptr(back) == _ptr(sub) and back.strides == sub.strides


def test_zero_dim_and_empty():
    z = fw.tensor(2.5, dtype=fw.float64)
    a = np.from_dlpack(z)
    assert a.shape == () and a == 2.5 and _ptr(a) == z.data_ptr()
    assert fw.from_dlpack(np.array(3.0, np.float32)).shape == ()
    e = fw.empty(0, 3)
    assert np.from_dlpack(e).shape == (0, 3)
    fe = fw.from_dlpack(np.empty((2, 0), np.int64))
    assert tuple(fe.shape) == (2, 0) and fe.dtype == fw.int64


def test_negative_strides_rejected():
    with pytest.raises(BufferError, match="negative strides"):
        fw.from_dlpack(np.arange(5.0)[::-1])


# ---- framework <-> torch -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_round_trip(dtype, export_path):
    src = _values(dtype)
    t = _fw(src)
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == t.data_ptr() and tt.dtype == src.dtype
    assert torch.equal(tt, src)
    back = fw.from_dlpack(tt)
    assert back.data_ptr() == t.data_ptr() and back.dtype == t.dtype
    f = fw.from_dlpack(src)
    assert f.data_ptr() == src.data_ptr()
    assert torch.equal(torch.from_dlpack(f.clone()), src)


def test_torch_strided_views():
    src = torch.arange(60.0).reshape(3, 4, 5).permute(2, 0, 1)[1:, :, ::2]
    f = fw.from_dlpack(src)
    assert f.data_ptr() == src.data_ptr() and f.stride() == src.stride()
    assert torch.equal(torch.from_dlpack(f.contiguous()), src)
    t = fw.arange(60.0).reshape(3, 4, 5).permute(2, 0, 1)[1:, :, ::2]
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == t.data_ptr() and tt.stride() == t.stride()
    assert torch.equal(tt, src)


def test_utils_dlpack_capsules():
    t = fw.arange(6, dtype=fw.int32)
    cap = fw_dlpack.to_dlpack(t)
    assert "dltensor" in repr(cap) and "versioned" not in repr(cap)
    back = fw_dlpack.from_dlpack(cap)
    assert back.data_ptr() == t.data_ptr()
    assert "used_dltensor" in repr(cap)
    with pytest.raises(ValueError, match="consumed"):
        fw.from_dlpack(cap)
    with pytest.raises(TypeError, match="__dlpack__"):
        fw.from_dlpack([1.0, 2.0])
    # capsules from torch's own to_dlpack
    tt = torch.arange(4.0)
    assert fw.from_dlpack(torch.utils.dlpack.to_dlpack(tt)).data_ptr() == tt.data_ptr()
    assert torch.utils.dlpack.from_dlpack(fw_dlpack.to_dlpack(t)).data_ptr() == t.data_ptr()


def test_versioned_capsules():
    t = fw.arange(4.0)
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))
    assert "versioned" not in repr(t.__dlpack__(max_version=(0, 8)))
    assert "versioned" not in repr(t.__dlpack__())
    cap = t.__dlpack__(max_version=(1, 1))
    m = _dlpack.DLManagedTensorVersioned.from_address(
        _dlpack._capsule_get(ctypes.c_void_p(id(cap)), b"dltensor_versioned"))
    assert (m.version.major, m.version.minor) == (1, 0) and m.flags == 0
    assert fw.from_dlpack(cap).data_ptr() == t.data_ptr()
    copied = t.__dlpack__(max_version=(1, 0), copy=True)
    m = _dlpack.DLManagedTensorVersioned.from_address(
        _dlpack._capsule_get(ctypes.c_void_p(id(copied)), b"dltensor_versioned"))
    assert m.flags & 2                  # DLPACK_FLAG_BITMASK_IS_COPIED
    c = fw.from_dlpack(copied)
    assert c.data_ptr() != t.data_ptr() and fw.equal(c, t)
    assert np.from_dlpack(t, copy=True).__array_interface__["data"][0] != t.data_ptr()


def test_export_errors():
    with pytest.raises(BufferError, match="require gradient"):
        fw.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(AssertionError, match="stream should be None on cpu"):
        fw.ones(2).__dlpack__(stream=3)
    assert fw.ones(2).__dlpack_device__() == (1, 0)
    assert fw.ones(2).__dlpack_device__()[0] is _dlpack.DLDeviceType.kDLCPU


# ---- lifetime ------------------------------------------------------------------------------
@pytest.fixture(params=["numpy_hooks", "ctypes_callbacks"])
def export_path(request, monkeypatch):
    # the export's C hooks come from NumPy where it behaves as relied on, else ctypes
    # callbacks: test both
    if request.param == "ctypes_callbacks":
        monkeypatch.setattr(_dlpack, "_HOOKS", {True: None, False: None})
    return request.param


def test_lifetime_producer_deleted_first(export_path):
    t = fw.arange(1000.0)
    v = t[10:]
    alive = weakref.ref(v)
    a = np.from_dlpack(v)
    del t, v
    gc.collect()
    assert alive() is not None                      # the capsule's deleter has not run
    np.testing.assert_array_equal(a, np.arange(10.0, 1000.0))
    del a
    gc.collect()
    assert alive() is None                          # it ran: the storage is released

    n = np.arange(100, dtype=np.int64)
    f = fw.from_dlpack(n)
    del n
    gc.collect()
    np.testing.assert_array_equal(f.numpy(), np.arange(100))
    tt = torch.arange(50.0)
    g = fw.from_dlpack(tt)
    del tt
    gc.collect()
    assert float(g.sum()) == 1225.0


def test_unconsumed_capsule_released(export_path):
    t, u = fw.arange(8.0), fw.arange(8.0)
    refs = weakref.ref(t), weakref.ref(u)
    cap = t.__dlpack__()
    vcap = u.__dlpack__(max_version=(1, 0))
    del t, u
    gc.collect()
    assert all(r() is not None for r in refs)
    del cap, vcap
    gc.collect()
    assert all(r() is None for r in refs)


def test_rejected_capsule_keeps_the_error(export_path):
    # NumPy drops the capsule while its BufferError is pending: the error must survive
    if export_path == "ctypes_callbacks":
        pytest.skip("a ctypes callback cannot keep a pending error: why NumPy's hooks are used")
    t = fw.ones(3, dtype=fw.bfloat16)
    alive = weakref.ref(t)
    with pytest.raises(RuntimeError, match="Unsupported dtype"):
        np.from_dlpack(t)
    del t
    gc.collect()
    assert alive() is None


def test_deleter_during_unwinding(export_path):
    t = fw.arange(4.0)
    alive = weakref.ref(t)

    def fails(x):
        arr = np.from_dlpack(x)     # freed while the ValueError unwinds this frame
        raise ValueError(f"boom {arr.shape}")

    with pytest.raises(ValueError, match="boom"):
        fails(t)
    del t
    gc.collect()
    assert alive() is None


# ---- cuda (simulated: its memory is host memory, reported as kDLCUDA) ---------------------
def test_cuda_dlpack():
    c = fw.arange(40.0, device="cuda").reshape(5, 8)[:, 1:]
    assert c.__dlpack_device__() == (_dlpack.DLDeviceType.kDLCUDA, 0)
    d = fw.from_dlpack(c)
    assert d.device == c.device and d.data_ptr() == c.data_ptr() and d.stride() == c.stride()
    np.testing.assert_array_equal(d.cpu().numpy(), np.arange(40.0).reshape(5, 8)[:, 1:])
    # NumPy reads host memory only: it refuses kDLCUDA (RuntimeError before NumPy 2.3 or
    # so, BufferError after)
    with pytest.raises((RuntimeError, BufferError), match="Unsupported device"):
        np.from_dlpack(c)
    a = np.from_dlpack(c, device="cpu")   # asks the producer for a cpu copy
    np.testing.assert_array_equal(a, np.arange(40.0).reshape(5, 8)[:, 1:])
    with pytest.raises(BufferError, match="copy=False"):
        c.__dlpack__(dl_device=(1, 0), copy=False)
    h = fw.from_dlpack(c, device="cpu")
    assert h.device.type == "cpu" and fw.equal(h, d.cpu())
    u = fw.from_dlpack(np.arange(5.0), device="cuda")
    assert u.device.type == "cuda" and fw.equal(u.cpu(), fw.arange(5.0, dtype=fw.float64))


# ---- __array__ ------------------------------------------------------------------------------
def test_array_protocol_matches_torch():
    t, tt = fw.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    a = np.asarray(t)
    assert _ptr(a) == t.data_ptr()
    np.testing.assert_array_equal(a, np.asarray(tt))
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert t.__array__(np.float64).dtype == tt.__array__(np.float64).dtype
    assert _ptr(t.__array__(copy=True)) != t.data_ptr()
    assert _ptr(np.array(t, copy=False)) == t.data_ptr()
    with pytest.raises(ValueError, match="avoid copy"):
        t.__array__(np.float64, copy=False)
    assert not hasattr(t, "__array_interface__") and not hasattr(tt, "__array_interface__")
    r, rt = fw.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as fe:
        np.asarray(r)
    with pytest.raises(RuntimeError) as te:
        np.asarray(rt)
    assert str(fe.value) == str(te.value)
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy. Use "
                       r"Tensor.cpu\(\) to copy the tensor to host memory first."):
        np.asarray(fw.ones(2, device="cuda"))
    with pytest.raises(TypeError, match="BFloat16"):
        np.asarray(fw.ones(2, dtype=fw.bfloat16))
