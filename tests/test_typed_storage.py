"""Tensor.storage() (TypedStorage), Tensor.untyped_storage() (UntypedStorage), legacy
FloatStorage-style names and framework.is_storage, against PyTorch."""
import warnings

import numpy as np
import pytest

import framework as fw
from framework import _typed_storage

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _both(values, fw_dtype, torch_dtype, device="cpu"):
    return (fw.tensor(values, dtype=fw_dtype, device=device),
            torch.tensor(values, dtype=torch_dtype))


@pytest.mark.parametrize("fw_dtype,torch_dtype,values", [
    (fw.float32, torch.float32, [0.5, 1.5, -2.0, 3.25, 4.0, 5.5]),
    (fw.int64, torch.int64, [1, -2, 3, 4, 5, 6]),
    (fw.bool, torch.bool, [True, False, True, True, False, False]),
    (fw.float16, torch.float16, [0.5, 1.5, -2.0, 3.25, 4.0, 5.5]),
])
def test_typed_storage_matches_torch(device, fw_dtype, torch_dtype, values):
    f, t = _both(values, fw_dtype, torch_dtype, device)
    fs, ts = f[2:].storage(), t[2:].storage()        # a view's storage is the whole buffer
    assert isinstance(fs, fw.TypedStorage)
    assert fs.dtype is fw_dtype
    assert fs.size() == len(fs) == ts.size() == 6
    assert fs.element_size() == ts.element_size()
    assert fs.nbytes() == ts.nbytes()
    assert fs.data_ptr() == f.data_ptr()                # the buffer's start, not the view's
    assert fs.device == f.device and fs.is_cuda == (device == "cuda")
    assert fs.tolist() == ts.tolist()
    assert [fs[i] for i in (0, 3, -1)] == [ts[i] for i in (0, 3, -1)]
    assert type(fs[1]) is type(ts[1])
    assert list(fs) == list(ts)


def test_writes_are_shared_with_the_tensor(device):
    f, t = _both([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], fw.float32, torch.float32, device)
    fs, ts = f[2:].storage(), t[2:].storage()
    for s in (fs, ts):
        s[0] = 10
        s[1:3] = 7
        s[-1] = -1.5
    np.testing.assert_array_equal(f.cpu().numpy(), t.numpy())
    assert f.tolist() == [10.0, 7.0, 7.0, 3.0, 4.0, -1.5]
    fs.fill_(2.5)
    assert f.tolist() == [2.5] * 6
    # and the tensor's writes are seen through the storage
    f.mul_(2)
    assert fs.tolist() == [5.0] * 6


def test_untyped_and_cpu(device):
    f, t = _both([1.0, 2.0, 3.0], fw.float32, torch.float32, device)
    fs, ts = f.storage(), t.storage()
    u = fs.untyped()
    assert u is fs._untyped_storage and isinstance(u, fw.UntypedStorage)
    assert u.data_ptr() == f.data_ptr() and u.nbytes() == 12
    host = fs.cpu()
    assert isinstance(host, fw.TypedStorage) and host.device.type == "cpu"
    assert host.tolist() == ts.cpu().tolist()
    if device == "cpu":
        assert host.data_ptr() == fs.data_ptr()
    c = fs.clone()
    assert c.data_ptr() != fs.data_ptr() and c.tolist() == fs.tolist()


def test_untyped_storage_matches_torch():
    f, t = _both([1.0, 2.0, -3.0], fw.float32, torch.float32)
    fu, tu = f.untyped_storage(), t.untyped_storage()
    assert isinstance(fu, fw.UntypedStorage)
    assert len(fu) == len(tu) == fu.size() == fu.nbytes() == 12
    assert fu.element_size() == tu.element_size() == 1
    assert fu.tolist() == tu.tolist()
    assert [fu[i] for i in (0, 3, -1)] == [tu[i] for i in (0, 3, -1)]
    assert fu[2:6].tolist() == tu[2:6].tolist()
    assert fu[2:6].data_ptr() == fu.data_ptr() + 2
    fu[3] = 0xC0         # 1.0 -> -2.0: the sign and exponent byte of a float32
    tu[3] = 0xC0
    assert f.tolist() == t.tolist() == [-4.0, 2.0, -3.0]
    with pytest.raises(IndexError, match="index 12 out of range for storage of size 12"):
        fu[12]
    assert fw.UntypedStorage(5).size() == 5
    assert fw.UntypedStorage([1, 2, 3]).tolist() == torch.UntypedStorage([1, 2, 3]).tolist()


def test_index_errors_match_torch():
    f, t = _both([1.0, 2.0], fw.float32, torch.float32)
    fs, ts = f.storage(), t.storage()
    for idx in (2, -3):
        with pytest.raises(IndexError) as fe:
            fs[idx]
        with pytest.raises(IndexError) as te:
            ts[idx]
        assert str(fe.value) == str(te.value)
    with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage"):
        fs[0:1]
    with pytest.raises(RuntimeError, match="can't index a"):
        fs["a"]
    with pytest.raises(TypeError, match="can't assign a str"):
        fs[0] = "a"


def test_deprecation_warning_once(monkeypatch):
    monkeypatch.setattr(_typed_storage, "_warned", False)
    t = fw.zeros(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t.storage()
        t.storage()
    assert len(w) == 1 and w[0].category is UserWarning
    assert str(w[0].message).startswith("TypedStorage is deprecated. It will be removed")
    assert w[0].filename == __file__          # points at the caller
    torch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        torch.zeros(2).storage()
        torch.zeros(2).storage()
    assert [str(x.message) for x in tw] == [str(w[0].message)]


def test_constructors_and_legacy_names():
    assert fw.TypedStorage().size() == 0
    assert fw.TypedStorage().dtype is fw.get_default_dtype()
    s = fw.TypedStorage(4, dtype=fw.int64)
    assert s.size() == 4 and s.dtype is fw.int64
    assert fw.TypedStorage([1, 2], dtype=fw.int64).tolist() == [1, 2]
    u = fw.tensor([1.0, 2.0]).untyped_storage()
    w = fw.TypedStorage(wrap_storage=u, dtype=fw.float32)
    assert w.tolist() == [1.0, 2.0] and w.data_ptr() == u.data_ptr()
    assert fw.FloatStorage(3).size() == torch.FloatStorage(3).size() == 3
    assert fw.FloatStorage.dtype is fw.float32 and fw.LongStorage.dtype is fw.int64
    fs = fw.zeros(2).storage()
    assert isinstance(fs, fw.FloatStorage) and not isinstance(fs, fw.LongStorage)
    assert fs.type() == torch.zeros(2).storage().type().replace("torch.", "framework.")


def test_is_storage():
    f = fw.zeros(2)
    t = torch.zeros(2)
    for fobj, tobj in ((f.storage(), t.storage()), (f.untyped_storage(), t.untyped_storage()),
                       (f, t), ([1], [1])):
        assert fw.is_storage(fobj) == torch.is_storage(tobj)


def test_set_from_storage():
    s = fw.tensor([1.0, 2.0, 3.0]).storage()
    x = fw.empty(0).set_(s)
    assert x.tolist() == [1.0, 2.0, 3.0] and x.data_ptr() == s.data_ptr()


def test_pickle_and_deepcopy_copy_the_data(device):
    import copy
    import pickle
    t = fw.tensor([1.5, -2.0, 3.0], device=device)
    for s in (t.storage(), t.untyped_storage()):
        for c in (copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
            assert type(c) is type(s) and c.tolist() == s.tolist()
            assert c.device == s.device and c.data_ptr() != s.data_ptr()
    assert pickle.loads(pickle.dumps(t.storage())).dtype is fw.float32
