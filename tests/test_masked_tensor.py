"""framework.masked.MaskedTensor and framework.masked._ops against PyTorch 2.13's prototype
torch.masked.MaskedTensor."""
import warnings

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of MaskedTensors")

DATA = [[1.5, -2.0, 0.25, 3.0, -1.0], [0.5, 4.0, -3.5, 2.0, 1.0], [2.5, -0.5, 1.0, -4.0, 0.75]]
MASK = [[True, False, True, True, False], [False, False, False, False, False],
        [True, True, False, True, True]]


def _pair(device="cpu", data=DATA, mask=MASK, requires_grad=False, dtype="float32"):
    f = fw.masked.masked_tensor(fw.tensor(data, dtype=getattr(fw, dtype), device=device),
                                fw.tensor(mask, device=device), requires_grad=requires_grad)
    t = torch.masked.masked_tensor(torch.tensor(data, dtype=getattr(torch, dtype)),
                                   torch.tensor(mask), requires_grad=requires_grad)
    return f, t


def _check(f, t, rtol=1e-5):
    """Same class, shape, dtype, mask, and data where the mask is True."""
    assert fw.masked.is_masked_tensor(f), type(f)
    assert torch.masked.is_masked_tensor(t)
    assert tuple(f.shape) == tuple(t.shape)
    assert str(f.dtype).rpartition(".")[2] == str(t.dtype).rpartition(".")[2]
    mask = f.get_mask().cpu().numpy()
    np.testing.assert_array_equal(mask, t.get_mask().numpy())
    fd = f.get_data().detach().cpu().numpy()
    td = t.get_data().detach().numpy()
    np.testing.assert_allclose(fd[mask], td[mask], rtol=rtol, atol=1e-6)


def test_construction_repr_and_errors():
    f, t = _pair()
    assert repr(f) == repr(t) and str(f) == str(t)
    for data, mask in [([[1, 22], [333, 4]], [[True, True], [True, False]]),
                       ([True, False, True], [True, False, False]),
                       ([1.5, 2.25], [True, True])]:
        f, t = _pair(data=data, mask=mask, dtype="int64" if isinstance(data[0], list) else
                     ("bool" if isinstance(data[0], bool) else "float32"))
        assert repr(f) == repr(t)
    for value, m in [(3.5, False), (3.5, True), (7, True)]:
        f = fw.masked.MaskedTensor(fw.tensor(value), fw.tensor(m))
        t = torch.masked.MaskedTensor(torch.tensor(value), torch.tensor(m))
        assert repr(f) == repr(t)
    # a copy: changing the source leaves the MaskedTensor alone
    src = fw.tensor([1.0, 2.0])
    f = fw.masked.masked_tensor(src, fw.tensor([True, True]))
    src.add_(10)
    assert f.get_data().tolist() == [1.0, 2.0]
    assert isinstance(f, fw.Tensor) and fw.masked.is_masked_tensor(f)
    assert not fw.masked.is_masked_tensor(src)
    with pytest.warns(UserWarning, match="prototype stage"):
        fw.masked.MaskedTensor(fw.ones(2), fw.ones(2, dtype=fw.bool))
    bad = [((fw.ones(2).tolist(), fw.ones(2, dtype=fw.bool)), TypeError, "data must be a Tensor"),
           ((fw.ones(2), [True, False]), TypeError, "mask must be a Tensor"),
           ((fw.ones(2), fw.ones(2)), TypeError, "mask must have dtype bool."),
           ((fw.ones(2), fw.ones(3, dtype=fw.bool)), ValueError, r"data.size\(\) must equal"),
           ((fw.ones(2), fw.ones(1, 2, dtype=fw.bool)), ValueError, r"data.dim\(\) must equal"),
           ((fw.ones(2, dtype=fw.bfloat16), fw.ones(2, dtype=fw.bool)), TypeError,
            "bfloat16 is not supported in MaskedTensor.")]
    for (d, m), exc, msg in bad:
        with pytest.raises(exc, match=msg):
            fw.masked.MaskedTensor(d, m)
    # the same errors in PyTorch
    with pytest.raises(TypeError, match="mask must have dtype bool."):
        torch.masked.MaskedTensor(torch.ones(2), torch.ones(2))
    with pytest.raises(ValueError, match=r"data.size\(\) must equal"):
        torch.masked.MaskedTensor(torch.ones(2), torch.ones(3, dtype=torch.bool))


def test_pointwise_ops(device):
    f, t = _pair(device)
    g, u = _pair(device, data=[[v * 0.5 + 1 for v in row] for row in DATA])
    ops = [lambda x, y, L: x.exp(), lambda x, y, L: L.sin(x), lambda x, y, L: abs(-x),
           lambda x, y, L: x ** 2, lambda x, y, L: x.clamp(min=0.0), lambda x, y, L: x + 1,
           lambda x, y, L: 2 * x, lambda x, y, L: x / y, lambda x, y, L: 3 / y,
           lambda x, y, L: L.maximum(x, y),
           lambda x, y, L: L.logaddexp(x, y),
           lambda x, y, L: x < y, lambda x, y, L: x > 0.5, lambda x, y, L: x == y]
    for op in ops:
        _check(op(f, g, fw), op(t, u, torch))
    _check(f - fw.arange(5.0, device=device), t - torch.arange(5.0))
    # a plain tensor of a larger shape: the mask is broadcast along
    _check(f[0] * fw.ones(2, 5, device=device), t[0] * torch.ones(2, 5))
    # in place: the mask is kept
    f2, t2 = _pair(device)
    f2.mul_(g).exp_()
    t2.mul_(u).exp_()
    _check(f2, t2)
    # binary ops need equal masks, and take no keyword arguments
    h, v = _pair(device, mask=[[not m for m in row] for row in MASK])
    for x, y in ((f, h), (t, v)):
        with pytest.raises(ValueError, match="Input masks must match"):
            x + y
        with pytest.raises(ValueError, match=r"len\(kwargs\) must equal 0"):
            (fw if x is f else torch).add(x, x, alpha=2)
    # ops PyTorch does not support on MaskedTensors raise TypeError
    for x, L in ((f, fw), (t, torch)):
        with pytest.raises(TypeError):
            L.relu(x)
        with pytest.raises(TypeError):
            L.log_softmax(x, 1)
        with pytest.raises(TypeError):
            x.T


def test_reductions(device):
    f, t = _pair(device)
    calls = [("sum", (), {}), ("sum", (1,), {}), ("sum", ((0, 1),), {}),
             ("sum", (1,), {"keepdim": True}), ("sum", (), {"dim": 0}),
             ("sum", (1,), {"dtype": "float64"}), ("mean", (), {}), ("mean", (1,), {}),
             ("amax", (1,), {"keepdim": True}), ("amin", (0,), {}), ("argmax", (1,), {}),
             ("argmin", (), {}), ("prod", (0,), {}), ("var", (1,), {}), ("std", (), {})]
    for name, args, kwargs in calls:
        fk = {k: getattr(fw, v) if k == "dtype" else v for k, v in kwargs.items()}
        tk = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
        _check(getattr(f, name)(*args, **fk), getattr(t, name)(*args, **tk))
    _check(fw.sum(f, 1), torch.sum(t, 1))
    _check((f > 0).all(1), (t > 0).all(1))
    _check((f > 0).all(), (t > 0).all())
    # integer data: the sum is int64
    fi, ti = _pair(device, data=[[int(v * 4) for v in row] for row in DATA], dtype="int32")
    _check(fi.sum(1), ti.sum(1))
    with pytest.raises(TypeError, match="unexpected keyword argument 'p'"):
        f.sum(1, p=2)


def test_softmax(device):
    f, t = _pair(device)
    for dim in (0, 1, -1):
        _check(fw.softmax(f, dim), torch.softmax(t, dim))
    _check(fw.nn.functional.softmax(f, dim=1), torch.nn.functional.softmax(t, dim=1))
    _check(f.softmax(0), t.softmax(0))
    # fully masked-out rows stay masked out
    assert not f.softmax(1).get_mask()[1].any()


def test_views_where_and_conversions(device):
    f, t = _pair(device)
    for op in [lambda x, L: x[0], lambda x, L: x[:, 1:4], lambda x, L: x.t(),
               lambda x, L: x.view(5, 3), lambda x, L: x.reshape(15),
               lambda x, L: x.narrow(1, 1, 3),
               lambda x, L: x.flatten(), lambda x, L: x.unfold(1, 2, 1), lambda x, L: x.char(),
               lambda x, L: x.unsqueeze(0), lambda x, L: L.cat([x, x], 1),
               lambda x, L: L.stack([x, x]), lambda x, L: x.transpose(0, 1),
               lambda x, L: x.to(L.float64), lambda x, L: x.double(), lambda x, L: x.clone(),
               lambda x, L: x.detach(), lambda x, L: L.ones_like(x)]:
        _check(op(f, fw), op(t, torch))
    for a, b in zip(fw.split(f, 2, 1), torch.split(t, 2, 1)):
        _check(a, b)
    cond = [[True, False, False, True, True]] * 3
    g, u = _pair(device, mask=[[True] * 5] * 3)
    _check(fw.where(fw.tensor(cond, device=device), f, g),
           torch.where(torch.tensor(cond), t, u))
    # to_tensor fills the masked-out elements
    np.testing.assert_array_equal(f.to_tensor(-7.0).cpu().numpy(), t.to_tensor(-7.0).numpy())
    # views and detach are copies, as in PyTorch
    d = f.detach()
    d.add_(100.0)
    row = f[0]
    row.add_(100.0)
    _check(f, t)
    assert f.size() == (3, 5) and f.dim() == 2 and f.numel() == 15


def test_autograd(device):
    f, t = _pair(device, requires_grad=True)
    for x, L in ((f, fw), (t, torch)):
        (x * 2).exp().sum(1).sum().backward()
    assert f.requires_grad and f.is_leaf
    _check(f.grad, t.grad, rtol=1e-4)
    # softmax, a plain weight, mean over valid elements
    f, t = _pair(device, requires_grad=True)
    w = [0.5, -1.0, 2.0, 1.5, 3.0]
    (fw.softmax(f, 1) * fw.tensor(w, device=device)).mean().backward()
    (torch.softmax(t, 1) * torch.tensor(w)).mean().backward()
    _check(f.grad, t.grad, rtol=1e-4)
    # get_data is differentiable with respect to the MaskedTensor
    f, t = _pair(device, requires_grad=True)
    (f.get_data() * 3).sum().backward()
    (t.get_data() * 3).sum().backward()
    _check(f.grad, t.grad)
    # as_masked_tensor: gradients reach the data
    d = fw.tensor(DATA, device=device, requires_grad=True)
    fw.masked.as_masked_tensor(d, fw.tensor(MASK, device=device)).sum().backward()
    np.testing.assert_array_equal(d.grad.cpu().numpy(), np.array(MASK, dtype=np.float32))


def test_masked_ops_module(device):
    assert fw.masked._ops.logaddexp is fw.masked.logaddexp
    assert fw.masked._ops.sum is fw.masked.sum
    a = [-100.0, -200.0, -300.0, 1.0]
    b = [-1.0, -2.0, -3.0, 2.0]
    ma = [True, False, True, True]
    mb = [True, False, False, True]
    got = fw.masked._ops.logaddexp(fw.tensor(a, device=device), fw.tensor(b, device=device),
                                   input_mask=fw.tensor(ma, device=device),
                                   other_mask=fw.tensor(mb, device=device))
    want = torch.masked._ops.logaddexp(torch.tensor(a), torch.tensor(b),
                                       input_mask=torch.tensor(ma), other_mask=torch.tensor(mb))
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6)
    # a MaskedTensor's mask stands in for the mask argument
    f, t = _pair(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(fw.masked.sum(f, 1).cpu().numpy(),
                                   torch.masked.sum(t, 1).detach().numpy(), rtol=1e-6)
