"""Small Tensor methods and top-level functions a PyTorch script reaches for:
fill_diagonal_, the legacy ``Tensor.new``, is_nonzero, is_same_size, swapaxes_/swapdims_,
the is_<backend> flags, the function forms of in-place methods, and torch.cuda's RNG
state functions; against PyTorch's."""
import numpy as np
import pytest

import framework as fw
from helpers import to_np

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the oracle")


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return (type(e).__name__, str(e))
    if hasattr(r, "tolist"):
        return ("tensor", r.shape, r.tolist())
    return ("value", r)


@needs_torch
@pytest.mark.parametrize("shape, value, wrap, dtype, transform", [
    ((7, 3), 5, True, "float32", None),
    ((7, 3), 5, False, "float32", None),
    ((8, 3), 1.5, True, "float64", None),
    ((3, 7), 5, True, "float32", None),
    ((4, 4), -2, False, "int64", None),
    ((4, 4), 2.5, False, "int32", None),
    ((3, 3), 1, False, "bool", None),
    ((2, 2, 2), 5, False, "float32", None),
    ((3, 3, 3, 3), 7, True, "float32", None),
    ((0, 0), 1, False, "float32", None),
    ((4, 8), 1, True, "float32", lambda t: t[:, ::2]),         # non-contiguous
    ((6, 4), 3, True, "float32", lambda t: t.t()),             # transposed
    ((3,), 5, False, "float32", None),                         # errors
    ((2, 2, 3), 5, False, "float32", None),
])
def test_fill_diagonal_(device, shape, value, wrap, dtype, transform):
    def run(m, dev):
        t = m.arange(int(np.prod(shape)), device=dev).reshape(shape).to(getattr(m, dtype))
        if transform is not None:
            t = transform(t)
        r = t.fill_diagonal_(value, wrap=wrap)
        assert r is t
        return t
    assert _outcome(lambda: run(fw, device)) == _outcome(lambda: run(torch, "cpu"))


def test_fill_diagonal_gradient(device):
    x = fw.arange(6.0, device=device).reshape(3, 2).requires_grad_()
    y = x * 2
    y.fill_diagonal_(0.0)
    y.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad.cpu()), [[0, 2], [2, 0], [2, 2]])


@needs_torch
def test_legacy_new():
    cases = [lambda m, y: y.new(2, 3).shape, lambda m, y: y.new([1, 2]),
             lambda m, y: y.new((1, 2)), lambda m, y: y.new(),
             lambda m, y: y.new(m.Size([2, 1])).shape, lambda m, y: y.new(3).shape,
             lambda m, y: y.new(np.array([1.0, 2.0])), lambda m, y: y.new(2, device="cpu").shape,
             lambda m, y: y.new(2.5)]
    for case in cases:
        a = _outcome(lambda: case(fw, fw.zeros(2, dtype=fw.float16)))
        b = _outcome(lambda: case(torch, torch.zeros(2, dtype=torch.float16)))
        assert str(a).replace("framework", "torch") == str(b)
    y = fw.zeros(2, dtype=fw.float16)
    assert y.new([1]).dtype is fw.float16
    other = fw.ones(2, dtype=fw.float16)
    same = y.new(other)
    assert same.data_ptr() == other.data_ptr() and not same.requires_grad
    with pytest.raises(TypeError, match="new\\(\\): expected a tensor of dtype"):
        y.new(fw.ones(2))


@needs_torch
def test_is_nonzero_and_is_same_size():
    cases = [lambda m: m.tensor([]).is_nonzero(), lambda m: m.tensor([1, 2]).is_nonzero(),
             lambda m: m.tensor([0.0]).is_nonzero(), lambda m: m.tensor(float("nan")).is_nonzero(),
             lambda m: m.is_nonzero(m.tensor([[3]])), lambda m: m.tensor(False).is_nonzero(),
             lambda m: m.zeros(2).is_same_size(m.zeros(2)),
             lambda m: m.is_same_size(m.zeros(2), m.zeros(1, 2)),
             lambda m: m.is_same_size(m.zeros(2), 3)]
    for case in cases:
        assert _outcome(lambda: case(fw)) == _outcome(lambda: case(torch))


def test_swap_in_place_and_flags():
    z = fw.zeros(2, 3)
    assert z.swapaxes_(0, 1) is z and z.shape == (3, 2) and z.stride() == (1, 3)
    assert z.swapdims_(1, 0).shape == (2, 3)
    for flag in ("is_sparse", "is_quantized", "is_nested", "is_mkldnn", "is_xpu", "is_mps",
                 "is_sparse_csr"):
        assert getattr(z, flag) is False


@needs_torch
@pytest.mark.parametrize("name", ["sqrt_", "exp_", "clamp_", "neg_", "sigmoid_", "trunc_"])
def test_function_forms_of_in_place_methods(name):
    args = (0.5,) if name == "clamp_" else ()
    a, b = fw.tensor([0.25, 1.5, 4.0]), torch.tensor([0.25, 1.5, 4.0])
    assert getattr(fw, name)(a, *args) is a
    getattr(torch, name)(b, *args)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    assert fw.get_device(a) == torch.get_device(b) == -1
    assert fw.is_signed(a) and not fw.is_signed(fw.zeros(1, dtype=fw.uint8))


def test_cuda_rng_state():
    s = fw.cuda.get_rng_state()
    assert s.dtype is fw.uint8 and s.device.type == "cpu" and s.shape == (16,)
    a = fw.rand(5, device="cuda")
    fw.cuda.set_rng_state(s)
    np.testing.assert_array_equal(fw.rand(5, device="cuda").cpu().numpy(), a.cpu().numpy())
    states = fw.cuda.get_rng_state_all()
    assert len(states) == fw.cuda.device_count()
    b = fw.randn(4, device="cuda")
    fw.cuda.set_rng_state_all(states)
    np.testing.assert_array_equal(fw.randn(4, device="cuda").cpu().numpy(), b.cpu().numpy())
    fw.cuda.manual_seed(11)
    assert fw.cuda.initial_seed() == 11
    c = fw.rand(3, device="cuda")
    fw.cuda.manual_seed_all(11)
    np.testing.assert_array_equal(fw.rand(3, device="cuda").cpu().numpy(), c.cpu().numpy())
    fw.cuda.seed_all()
    assert fw.cuda.initial_seed() != 11
    fw.cuda.set_rng_state(s, device=0)
    np.testing.assert_array_equal(fw.rand(5, device="cuda").cpu().numpy(), a.cpu().numpy())


@needs_torch
def test_legacy_tensor_types(monkeypatch):
    from framework import _legacy_types
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                 "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"):
        f, t = getattr(fw, name), getattr(torch, name)
        assert str(f.dtype).split(".")[1] == str(t.dtype).split(".")[1] and not f.is_cuda
        assert fw.cuda.__dict__[name].is_cuda
        for data in ([1, 0], ()):
            a, b = _outcome(lambda: f(data)), _outcome(lambda: t(data))
            assert str(a).replace("framework", "torch") == str(b)
        made = f(2, 3)     # uninitialized: shape and dtype
        assert made.shape == (2, 3) and made.dtype is f.dtype and made.device.type == "cpu"
        assert fw.cuda.__dict__[name](4).device.type == "cuda"
        assert isinstance(fw.zeros(1, dtype=f.dtype), f)
        assert not isinstance(fw.zeros(1, dtype=f.dtype, device="cuda"), f)
        assert isinstance(fw.zeros(1, dtype=f.dtype, device="cuda"), fw.cuda.__dict__[name])
    assert repr(fw.FloatTensor) == "<class 'framework.FloatTensor'>"
    x = fw.arange(3.0)
    assert x.type(fw.IntTensor).dtype is fw.int32 and x.type("torch.DoubleTensor").dtype is \
        fw.float64
    assert x.type(fw.cuda.HalfTensor).device.type == "cuda"
    assert x.type("framework.cuda.LongTensor").dtype is fw.int64
    for call in (lambda m: m.zeros(2).type("torch.Foo"), lambda m: m.FloatTensor(2.5)):
        assert _outcome(lambda: call(fw)) == _outcome(lambda: call(torch))
    monkeypatch.setattr(_legacy_types, "_warned", False)
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            fw.set_default_tensor_type(fw.DoubleTensor)
        assert fw.zeros(1).dtype is fw.float64
        fw.set_default_tensor_type("torch.cuda.FloatTensor")
        assert fw.zeros(1).dtype is fw.float32 and fw.zeros(1).device.type == "cuda"
        with pytest.raises(TypeError, match="only floating-point types are supported"):
            fw.set_default_tensor_type(fw.LongTensor)
    finally:
        fw.set_default_dtype(fw.float32)
        fw.set_default_device(None)
