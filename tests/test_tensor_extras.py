"""Tensor.apply_/map_/map2_, dim_order, resize/resize_as, as_subclass, nonzero_static,
to_dense, hardshrink/prelu methods, const_data_ptr, volatile: against PyTorch."""
import warnings

import numpy as np
import pytest

import framework as fw
from framework import _frombuffer as fb, _tensor_extras

torch = pytest.importorskip("torch")


def setup_module(module):
    _tensor_extras.install(fw.Tensor)


def _np(t):
    return t.cpu().numpy() if isinstance(t, fw.Tensor) else t.numpy()


def _same(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_array_equal(_np(a), _np(b))


def _both(fn):
    """fn(lib) on framework and torch: the same result, or the same error type and text
    (framework's type names in place of torch's)."""
    out = []
    for lib in (fw, torch):
        try:
            out.append(("ok", fn(lib)))
        except Exception as e:  # noqa: BLE001
            out.append((type(e), str(e).replace("framework.", "torch.")))
    (kf, vf), (kt, vt) = out
    assert kf == kt, (vf, vt)
    return vf, vt


# ---- apply_ / map_ / map2_ -----------------------------------------------------------------

@pytest.mark.parametrize("dtype,fn", [
    ("float32", lambda x: x * 2 + 1),
    ("float64", lambda x: -x),
    ("int64", lambda x: x * 1.5),
    ("int32", lambda x: x - 7),
    ("uint8", lambda x: -1),
    ("bool", lambda x: not x),
    ("float32", lambda x: True),
    ("int64", lambda x: "a"),
    ("float32", lambda x: "a"),
    ("float32", lambda x: None),
    ("int64", lambda x: 2 ** 70),
    ("uint8", lambda x: 300),
])
def test_apply_(dtype, fn):
    vals = np.array([[0, 1, 2], [3, 0, 5]])

    def run(lib):
        t = lib.tensor(vals, dtype=getattr(lib, dtype))
        r = t.apply_(fn)
        assert r is t
        return t

    a, b = _both(run)
    if not isinstance(a, str):
        _same(a, b)


def test_apply_order_and_views():
    seen = {}
    for lib in (fw, torch):
        base = lib.arange(12.).reshape(3, 4)
        x = base.t()[1:]                       # a non-contiguous view
        order = []
        x.apply_(lambda v: order.append(v) or v * 10)
        seen[lib] = (order, base)
    assert seen[fw][0] == seen[torch][0]
    _same(seen[fw][1], seen[torch][1])


def test_apply_requires_grad_error():
    _both(lambda lib: lib.ones(2, requires_grad=True).apply_(lambda v: v))


def test_apply_version_bump():
    t = fw.ones(3)
    v = t._version
    t.apply_(lambda x: x)
    assert t._version > v


@pytest.mark.parametrize("other", [[1., 2., 3.], [[1.], [2.]], [[1., 2., 3.], [4., 5., 6.]],
                                   [1., 2.], 5.0])
def test_map_(other):
    def run(lib):
        t = lib.arange(6.).reshape(2, 3)
        o = lib.tensor(other) if isinstance(other, list) else other
        r = t.map_(o, lambda a, b: a * 10 + b)
        assert r is t
        return t

    a, b = _both(run)
    if not isinstance(a, str):
        _same(a, b)


def test_map_errors():
    _both(lambda lib: lib.ones(3).map_(lib.ones(3, dtype=lib.int64), lambda a, b: a))
    _both(lambda lib: lib.ones(3, dtype=lib.int64).map_(lib.ones(1), lambda a, b: a))
    _both(lambda lib: lib.ones(3).map_(lib.ones(3, requires_grad=True), lambda a, b: a))
    _both(lambda lib: lib.ones(3).map_(lib.arange(6.).reshape(2, 3), lambda a, b: a))


@pytest.mark.parametrize("x,y", [([1., 2., 3.], [[1.], [2.]]), ([[7.]], [2., 3., 4.])])
def test_map2_(x, y):
    def run(lib):
        t = lib.arange(6.).reshape(2, 3)
        t.map2_(lib.tensor(x), lib.tensor(y), lambda a, b, c: a + b * c)
        return t

    _same(*_both(run))


def test_map2_errors():
    _both(lambda lib: lib.ones(2).map2_(lib.ones(1), lib.ones(1, dtype=lib.int64),
                                        lambda a, b, c: a))
    _both(lambda lib: lib.ones(2).map2_(lib.ones(1, dtype=lib.int64), lib.ones(1),
                                        lambda a, b, c: a))
    _both(lambda lib: lib.ones(2).map2_(lib.ones(3), lib.ones(1), lambda a, b, c: a))
    _both(lambda lib: lib.ones(2, requires_grad=True).map2_(lib.ones(1), lib.ones(1),
                                                             lambda a, b, c: a))


def test_callbacks_cpu_only(device):
    if device == "cpu":
        pytest.skip("the cuda errors")
    t = fw.ones(2, device=device)
    with pytest.raises(TypeError, match="apply_ is only implemented on CPU tensors"):
        t.apply_(lambda v: v)
    with pytest.raises(TypeError, match="map_ is only implemented on CPU tensors"):
        t.map_(fw.ones(2, device=device), lambda a, b: a)
    with pytest.raises(TypeError, match="map2_ is only implemented on CPU tensors"):
        t.map2_(fw.ones(2, device=device), fw.ones(2, device=device), lambda a, b, c: a)
    with pytest.raises(TypeError, match=r"map_: expected framework.FloatTensor for 'other' "
                                        r"\(got framework.cuda.FloatTensor\)"):
        fw.ones(2).map_(t, lambda a, b: a)


# ---- dim_order --------------------------------------------------------------------------------

_LAYOUTS = [
    lambda lib: lib.empty(2, 3, 4, 5),
    lambda lib: lib.empty(2, 3, 4, 5).transpose(1, 2),
    lambda lib: lib.empty(2, 3, 4, 5).to(memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, 4, 5, 6).to(memory_format=lib.channels_last_3d),
    lambda lib: lib.empty(1, 2, 3, 4),
    # torch's channels_last strides of a (2, 1, 4, 4) tensor (framework's .to() gives
    # (16, 16, 4, 1) there, both layouts being valid)
    lambda lib: lib.empty(32).as_strided((2, 1, 4, 4), (16, 1, 4, 1)),
    lambda lib: lib.empty(6).as_strided((2, 3, 1, 1), (3, 1, 3, 3)),
    lambda lib: lib.empty(2, 3, 4, 5)[:, ::2],
    lambda lib: lib.empty(2, 3, 4, 5).permute(3, 1, 0, 2),
    lambda lib: lib.empty(2, 3).expand(4, 2, 3),
    lambda lib: lib.empty(6).as_strided((2, 3), (1, 1)),
    lambda lib: lib.empty(5),
    lambda lib: lib.tensor(1.),
    lambda lib: lib.empty(3, 3).t(),
]


@pytest.mark.parametrize("i", range(len(_LAYOUTS)))
@pytest.mark.parametrize("check", [False, True, "cf", "cf+cl", "x", ["x"]])
def test_dim_order(i, check):
    def run(lib):
        amb = {"cf": [lib.contiguous_format],
               "cf+cl": [lib.contiguous_format, lib.channels_last]}.get(check, check)
        return _LAYOUTS[i](lib).dim_order(ambiguity_check=amb)

    a, b = _both(run)
    assert a == b


def test_dim_order_device(device):
    t = fw.empty(2, 3, 4, 5, device=device).to(memory_format=fw.channels_last)
    assert t.dim_order() == (0, 2, 3, 1)
    assert t.permute(0, 3, 1, 2).dim_order() == (0, 3, 1, 2)


# ---- resize / resize_as -----------------------------------------------------------------------

@pytest.mark.parametrize("sizes", [(3, 2), (6,), (1, 6, 1), (4,), (4, 4)])
def test_resize(sizes):
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                return lib.arange(6.).reshape(2, 3).resize(*sizes)
            finally:
                assert [str(x.message) for x in w] == ["non-inplace resize is deprecated"]

    a, b = _both(run)
    if not isinstance(a, str):
        _same(a, b)


def test_resize_noncontiguous_and_as():
    def run(lib):
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            return lib.arange(6.).reshape(2, 3).t().resize_as(lib.empty(3, 2))

    _same(*_both(run))
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        _both(lambda lib: lib.arange(6.).reshape(2, 3).resize_as(lib.empty(5)))


def test_resize_grad(device):
    x = fw.arange(6., device=device).reshape(2, 3).requires_grad_()
    with pytest.warns(UserWarning):
        y = x.resize(3, 2)
    (y * fw.arange(6., device=device).reshape(3, 2)).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.arange(6.).reshape(2, 3))


# ---- as_subclass ------------------------------------------------------------------------------

class _Sub(fw.Tensor):
    def double_it(self):
        return self * 2


def test_as_subclass(device):
    x = fw.tensor([1., 2.], device=device)
    s = x.as_subclass(_Sub)
    assert type(s) is _Sub and isinstance(s, fw.Tensor)
    assert s.data_ptr() == x.data_ptr()
    s[0] = 5.
    assert _np(x).tolist() == [5., 2.]
    assert x._version == s._version
    assert _np(s.double_it()).tolist() == [10., 4.]
    p = x.as_subclass(fw.nn.Parameter)
    assert type(p) is fw.nn.Parameter


def test_as_subclass_grad():
    x = fw.tensor([1., 2.], requires_grad=True)
    s = x.as_subclass(_Sub)
    assert s.requires_grad and not s.is_leaf
    (s * 3).sum().backward()
    assert _np(x.grad).tolist() == [3., 3.]


def test_as_subclass_errors():
    _both(lambda lib: lib.ones(2).as_subclass(int))
    _both(lambda lib: lib.ones(2).as_subclass(3))


# ---- nonzero_static ---------------------------------------------------------------------------

@pytest.mark.parametrize("vals", [[0, 1, 2, 0, 3], [[0, 1], [2, 0]], [0, 0], 3, 0, [[1.5, 0.],
                                                                                     [0., -1.]]])
@pytest.mark.parametrize("size,fill", [(2, -1), (4, -5), (0, -1), (7, 9), (-1, -1)])
def test_nonzero_static(vals, size, fill):
    def run(lib):
        f = _tensor_extras.nonzero_static if lib is fw else torch.nonzero_static
        return f(lib.tensor(vals), size=size, fill_value=fill)

    a, b = _both(run)
    if not isinstance(a, str):
        _same(a, b)


def test_nonzero_static_method_and_device(device):
    t = fw.tensor([[0, 1], [2, 0]], device=device)
    r = t.nonzero_static(size=3, fill_value=-2)
    assert r.device.type == device and r.dtype == fw.int64
    assert _np(r).tolist() == [[0, 1], [1, 0], [-2, -2]]
    assert _np(t.nonzero_static(size=1)).tolist() == [[0, 1]]


def test_nonzero_static_errors():
    _both(lambda lib: (_tensor_extras.nonzero_static if lib is fw else torch.nonzero_static)(
        lib.ones(2), size=1.5))


# ---- small methods ----------------------------------------------------------------------------

def test_to_dense(device):
    t = fw.tensor([1, 2], device=device)
    assert t.to_dense() is t
    assert t.to_dense(fw.int64) is t
    d = t.to_dense(fw.float64, masked_grad=True)
    assert d.dtype == fw.float64 and d.device.type == device
    assert _np(d).tolist() == [1., 2.]


def test_hardshrink_prelu_methods(device):
    x = fw.tensor([-1., -0.3, 0.2, 0.7], device=device)
    tx = torch.tensor([-1., -0.3, 0.2, 0.7])
    np.testing.assert_array_equal(_np(x.hardshrink()), tx.hardshrink().numpy())
    np.testing.assert_array_equal(_np(x.hardshrink(0.25)), tx.hardshrink(0.25).numpy())
    w = fw.tensor([0.25], device=device)
    np.testing.assert_allclose(_np(x.prelu(w)), tx.prelu(torch.tensor([0.25])).numpy())


def test_data_ptrs(device):
    t = fw.ones(4, device=device)[1:]
    assert t.const_data_ptr() == t.data_ptr() == t.mutable_data_ptr()


def test_volatile():
    t = fw.ones(2)
    with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always "
                                         r"False\)"):
        assert t.volatile is False
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        t.volatile = True


def test_install_keeps_existing():
    class T:
        def dim_order(self):
            return "mine"

    _tensor_extras.install(T)
    assert T().dim_order() == "mine"
    assert T.apply_ is _tensor_extras.apply_


# ---- frombuffer / from_file ---------------------------------------------------------------

def _fromb(lib):
    return fb.frombuffer if lib is fw else torch.frombuffer


@pytest.mark.parametrize("dtype", ["int16", "uint8", "int32", "float32", "float64", "bfloat16",
                                   "bool", "int8", "float16", "int64"])
@pytest.mark.parametrize("count,offset", [(-1, 0), (1, 0), (-1, 8), (2, 8), (3, 1), (0, 0),
                                          (-1, 16), (-1, -1), (100, 0), (-1, 1), (-1, 3)])
def test_frombuffer(dtype, count, offset):
    def run(lib):
        buf = bytearray(range(1, 17))
        return _fromb(lib)(buf, dtype=getattr(lib, dtype), count=count, offset=offset)

    a, b = _both(run)
    if not isinstance(a, str):
        _same(a.view(fw.uint8) if dtype == "bfloat16" else a,
              b.view(torch.uint8) if dtype == "bfloat16" else b)


def test_frombuffer_shares_memory():
    import array
    buf = bytearray(8)
    t = fb.frombuffer(buf, dtype=fw.int16, offset=2)
    t[0] = 258
    assert buf[2:4] == bytearray(b"\x02\x01")
    buf[7] = 1
    assert t.tolist() == [258, 0, 256]
    a = array.array("i", [1, 2, 3])
    u = fb.frombuffer(a, dtype=fw.int32)
    u[2] = 9
    assert a.tolist() == [1, 2, 9]
    g = fb.frombuffer(bytearray(8), dtype=fw.float32, requires_grad=True)
    assert g.requires_grad and g.is_leaf


def test_frombuffer_errors():
    _both(lambda lib: _fromb(lib)(bytearray(), dtype=lib.int16))
    _both(lambda lib: _fromb(lib)([1, 2], dtype=lib.uint8))
    _both(lambda lib: _fromb(lib)(bytearray(3), dtype=lib.int16))


def test_frombuffer_readonly_warns():
    fb._warned_readonly = False
    with pytest.warns(UserWarning, match="The given buffer is not writable"):
        t = fb.frombuffer(b"abcd", dtype=fw.uint8)
    assert t.tolist() == [97, 98, 99, 100]


def _from_file(lib):
    return fb.from_file if lib is fw else torch.from_file


@pytest.mark.parametrize("shared", [None, False, True])
@pytest.mark.parametrize("size,dtype", [(6, None), (4, "float32"), (0, None), (3, "float64"),
                                        (10, None), (12, "int16"), (2, "int32")])
def test_from_file(tmp_path, shared, size, dtype):
    def run(lib):
        fn = tmp_path / f"{lib.__name__}.bin"
        np.arange(6, dtype=np.float32).tofile(fn)
        dt = None if dtype is None else getattr(lib, dtype)
        t = _from_file(lib)(str(fn), shared=shared, size=size, dtype=dt)
        return t.clone(), fn.stat().st_size

    a, b = _both(run)
    if not isinstance(a, str):
        _same(a[0], b[0])
        assert a[1] == b[1]


def test_from_file_write_through(tmp_path):
    fn = tmp_path / "a.bin"
    np.arange(6, dtype=np.float32).tofile(fn)
    t = fb.from_file(fn, shared=True, size=6)
    t[0] = 42
    del t
    assert np.fromfile(fn, dtype=np.float32).tolist() == [42, 1, 2, 3, 4, 5]
    t = fb.from_file(fn, shared=False, size=6)
    t[1] = 43
    assert t.tolist() == [42, 43, 2, 3, 4, 5]
    del t
    assert np.fromfile(fn, dtype=np.float32).tolist() == [42, 1, 2, 3, 4, 5]


def test_from_file_errors(tmp_path):
    fn = tmp_path / "a.bin"
    np.arange(6, dtype=np.float32).tofile(fn)
    for lib in (fw, torch):
        with pytest.raises(RuntimeError, match=r"size <24> is smaller than the required "
                                                r"mapping size <40>"):
            _from_file(lib)(str(fn), size=10)
        with pytest.raises(RuntimeError, match="unable to open file .* in read-only mode: No "
                                               "such file or directory"):
            _from_file(lib)(str(tmp_path / "nope"), size=3)
    t = fb.from_file(str(tmp_path / "new.bin"), shared=True, size=3)
    assert t.tolist() == [0., 0., 0.]
    assert (tmp_path / "new.bin").stat().st_size == 12
