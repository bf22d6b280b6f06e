"""nn.Linear, nn.Bilinear, nn.Identity, nn.Flatten, nn.Unflatten and F.linear/F.bilinear
against PyTorch: forward, input and parameter gradients, init, state_dict, repr, errors."""
import math

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, fw_tensor, to_np

torch = pytest.importorskip("torch")


def _rand(*shape, dtype=np.float32):
    return np.random.randn(*shape).astype(dtype)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 7), (1, 7), (2, 3, 7), (7,), (0, 7), (2, 0, 7)])
def test_linear_module(device, bias, shape):
    t = torch.nn.Linear(7, 4, bias=bias)
    f = nn.Linear(7, 4, bias=bias)
    compare_module(torch, f, t, [_rand(*shape)], device)


def test_linear_crosses_blocks_float64(device):
    # sizes past one kernel block in every dimension, and float64
    t = torch.nn.Linear(67, 41).double()
    f = nn.Linear(67, 41, dtype=fw.float64)
    compare_module(torch, f, t, [np.random.randn(37, 67)], device, rtol=1e-10, atol=1e-10)


def test_linear_zero_features(device):
    # in_features=0: output is the bias; weight grad empty
    t = torch.nn.Linear(0, 3)
    f = nn.Linear(0, 3)
    compare_module(torch, f, t, [_rand(4, 0)], device)


def test_linear_init_and_state():
    fw.manual_seed(0)
    m = nn.Linear(50, 30)
    bound = 1 / math.sqrt(50)
    w, b = to_np(m.weight), to_np(m.bias)
    assert w.shape == (30, 50) and b.shape == (30,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # U(-bound, bound): mean 0, variance bound^2 / 3 (1500 samples)
    assert abs(w.mean()) < 0.1 * bound
    assert abs(w.var() / (bound ** 2 / 3) - 1) < 0.15
    assert np.abs(w).max() > 0.9 * bound
    assert m.weight.requires_grad and isinstance(m.weight, nn.Parameter)
    assert list(m.state_dict()) == ["weight", "bias"]
    assert repr(m) == "Linear(in_features=50, out_features=30, bias=True)"
    m2 = nn.Linear(3, 2, bias=False, dtype=fw.float64)
    assert m2.bias is None and m2.weight.dtype == fw.float64
    assert list(m2.state_dict()) == ["weight"]
    assert repr(m2) == "Linear(in_features=3, out_features=2, bias=False)"
    # different draws per layer
    assert not np.array_equal(to_np(nn.Linear(50, 30).weight), w)


def test_bilinear_init_and_state():
    fw.manual_seed(1)
    m = nn.Bilinear(20, 7, 30)
    bound = 1 / math.sqrt(20)
    w, b = to_np(m.weight), to_np(m.bias)
    assert w.shape == (30, 20, 7) and b.shape == (30,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.var() / (bound ** 2 / 3) - 1) < 0.15
    assert repr(m) == "Bilinear(in1_features=20, in2_features=7, out_features=30, bias=True)"
    assert list(m.state_dict()) == ["weight", "bias"]
    assert nn.Bilinear(2, 3, 4, bias=False).bias is None


def test_linear_cuda_factory():
    if not fw.cuda.is_available():
        pytest.skip("no cuda device")
    m = nn.Linear(3, 2, device="cuda")
    assert m.weight.device.type == "cuda" and m.bias.device.type == "cuda"


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 4)), ((1, 3), (1, 4)), ((2, 3, 3), (2, 3, 4)),
                                    ((3,), (4,)), ((0, 3), (0, 4))])
def test_bilinear_module(device, bias, shapes):
    t = torch.nn.Bilinear(3, 4, 6, bias=bias)
    f = nn.Bilinear(3, 4, 6, bias=bias)
    compare_module(torch, f, t, [_rand(*shapes[0]), _rand(*shapes[1])], device)


def test_functional_linear_bilinear(device):
    x, w, b = _rand(4, 5), _rand(3, 5), _rand(3)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    fx, fw_, fb = (fw_tensor(a, device, requires_grad=True) for a in (x, w, b))
    out_t = torch.nn.functional.linear(tx, tw, tb)
    out_f = F.linear(fx, fw_, fb)
    assert_close(out_f, to_np(out_t), rtol=1e-5, atol=1e-5)
    g = np.random.randn(4, 3).astype(np.float32)
    out_t.backward(torch.tensor(g))
    out_f.backward(fw_tensor(g, device))
    for ft, tt in ((fx, tx), (fw_, tw), (fb, tb)):
        assert_close(ft.grad, to_np(tt.grad), rtol=1e-5, atol=1e-5)
    # a 1-D weight is a dot product with the last dimension; a 0-d bias broadcasts
    out = F.linear(fw_tensor(x, device), fw_tensor(w[0], device), fw_tensor(np.float32(2.0),
                                                                             device))
    assert_close(out, x @ w[0] + 2, rtol=1e-5, atol=1e-5)
    w3 = _rand(2, 5, 3)
    out = F.bilinear(fw_tensor(x, device), fw_tensor(_rand(4, 3) * 0 + 1, device),
                     fw_tensor(w3, device))
    assert_close(out, np.einsum("ni,oij,nj->no", x, w3, np.ones((4, 3))), rtol=1e-5,
                 atol=1e-5)


def test_linear_errors(device):
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(4x3 and 5x2\)"):
        F.linear(fw.randn(4, 3, device=device), fw.randn(2, 5, device=device))
    with pytest.raises(RuntimeError, match=r"\(8x3 and 5x2\)"):
        F.linear(fw.randn(2, 4, 3, device=device), fw.randn(2, 5, device=device))
    with pytest.raises(RuntimeError, match=r"\(1x3 and 5x2\)"):
        F.linear(fw.randn(3, device=device), fw.randn(2, 5, device=device))
    m = nn.Linear(5, 2).to(device)
    with pytest.raises(RuntimeError, match=r"\(4x3 and 5x2\)"):
        m(fw.randn(4, 3, device=device))
    with pytest.raises(RuntimeError, match="both arguments to linear need to be at least 1D, "
                                           "but they are 0D and 2D"):
        F.linear(fw.randn((), device=device), fw.randn(2, 1, device=device))
    with pytest.raises(RuntimeError, match="expanded size"):
        F.linear(fw.randn(4, 5, device=device), fw.randn(2, 5, device=device),
                 fw.randn(3, device=device))


def test_bilinear_errors(device):
    w = fw.randn(5, 3, 2, device=device)
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 3 but "
                                           "expected 2"):
        F.bilinear(fw.randn(4, 3, device=device), fw.randn(4, 3, device=device), w)
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 4 but "
                                           "expected 3"):
        F.bilinear(fw.randn(4, 4, device=device), fw.randn(4, 2, device=device), w)
    with pytest.raises(RuntimeError, match="input batch dimensions do not match at dim 0: got "
                                           "4 and 5"):
        F.bilinear(fw.randn(4, 3, device=device), fw.randn(5, 2, device=device), w)
    with pytest.raises(RuntimeError, match="input dimensions do not match: got 2 and 3"):
        F.bilinear(fw.randn(4, 3, device=device), fw.randn(1, 4, 2, device=device), w)
    with pytest.raises(RuntimeError, match="bias size does not match weight size: got 4 but "
                                           "expected 5"):
        F.bilinear(fw.randn(4, 3, device=device), fw.randn(4, 2, device=device), w,
                   fw.randn(4, device=device))


def test_identity(device):
    m = nn.Identity(3, foo=1)
    x = fw.randn(2, 3, device=device)
    assert m(x) is x
    assert repr(m) == "Identity()" and list(m.state_dict()) == []


@pytest.mark.parametrize("args,shape", [((), (2, 3, 4, 5)), ((0, -1), (2, 3, 4)),
                                        ((1, 2), (2, 3, 4, 5)), ((2,), (1, 3, 4, 5)),
                                        ((), (0, 3, 4))])
def test_flatten(device, args, shape):
    t, f = torch.nn.Flatten(*args), nn.Flatten(*args)
    compare_module(torch, f, t, [_rand(*shape)], device)
    assert repr(f) == repr(t)


@pytest.mark.parametrize("dim,sizes,shape", [(1, (2, 5), (3, 10)), (1, [2, -1], (3, 10, 2)),
                                             (-1, (3, 1, 2), (2, 6)), (0, (1, 2), (2, 3))])
def test_unflatten(device, dim, sizes, shape):
    t, f = torch.nn.Unflatten(dim, sizes), nn.Unflatten(dim, sizes)
    compare_module(torch, f, t, [_rand(*shape)], device)
    assert repr(f) == repr(t)


def test_unflatten_errors(device):
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found "
                                        "type int"):
        nn.Unflatten(1, 3)
    with pytest.raises(TypeError, match="found element of type str at pos 1"):
        nn.Unflatten(1, (2, "a"))
    with pytest.raises(RuntimeError):
        nn.Unflatten(1, (2, 4))(fw.randn(3, 10, device=device))
