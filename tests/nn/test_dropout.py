"""Dropout family: the fraction zeroed, the scaling of kept values, gradient = mask / (1 - p),
channel-wise masks, alpha dropout's affine map and statistics, train/eval, inplace, p
validation and the modules' repr, checked against PyTorch where values are deterministic."""
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import fw_tensor, to_np

torch = pytest.importorskip("torch")

ALPHA = 1.7580993408473766


def _x(shape, device, requires_grad=True):
    # values bounded away from zero, so a zero output means a dropped element
    a = np.random.uniform(0.5, 2.0, shape).astype(np.float32) * np.random.choice([-1, 1], shape)
    return a, fw_tensor(a.astype(np.float32), device, requires_grad=requires_grad)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_statistics_and_grad(device, p):
    a, x = _x((40, 501), device)
    fw.manual_seed(123)
    out = F.dropout(x, p)
    o = to_np(out)
    kept = o != 0
    # fraction dropped within 5 binomial standard deviations of p (n = 20040)
    sd = (p * (1 - p) / a.size) ** 0.5
    assert abs((1 - kept.mean()) - p) < 5 * sd
    np.testing.assert_allclose(o[kept], a[kept] / (1 - p), rtol=1e-6)
    g = np.random.randn(*a.shape).astype(np.float32)
    out.backward(fw_tensor(g, device))
    np.testing.assert_allclose(to_np(x.grad), g * kept / (1 - p), rtol=1e-6, atol=1e-7)


def test_dropout_seed_reproducible(device):
    x = fw.ones(300, device=device)
    fw.manual_seed(7)
    a = to_np(F.dropout(x, 0.5))
    fw.manual_seed(7)
    b = to_np(F.dropout(x, 0.5))
    c = to_np(F.dropout(x, 0.5))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)


def test_dropout_edge_cases(device):
    a, x = _x((3, 5), device)
    # eval mode and p=0 return the input unchanged
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    # p=1 zeroes everything, gradient zero
    out = F.dropout(x, 1.0)
    assert_close(out, np.zeros((3, 5)))
    out.sum().backward()
    assert_close(x.grad, np.zeros((3, 5)))
    # empty input
    assert F.dropout(fw.empty(0, 3, device=device), 0.5).shape == (0, 3)
    # torch agrees on the deterministic cases
    tx = torch.tensor(a)
    assert_close(F.dropout(fw_tensor(a, device), 1.0), torch.nn.functional.dropout(tx, 1.0)
                 .numpy())


def test_dropout_inplace(device):
    a, _ = _x((50, 40), device)
    x = fw_tensor(a, device)
    fw.manual_seed(3)
    out = F.dropout(x, 0.3, inplace=True)
    assert out is x
    o = to_np(x)
    kept = o != 0
    assert 0.2 < 1 - kept.mean() < 0.4
    np.testing.assert_allclose(o[kept], a[kept] / 0.7, rtol=1e-6)
    # in place on a non-leaf keeps the gradient: mask / (1 - p)
    leaf = fw_tensor(a, device, requires_grad=True)
    y = leaf * 1
    out = F.dropout(y, 0.3, inplace=True)
    out.sum().backward()
    kept = to_np(out) != 0
    np.testing.assert_allclose(to_np(leaf.grad), kept / 0.7, rtol=1e-6)


@pytest.mark.parametrize("fn", ["dropout", "dropout1d", "dropout2d", "dropout3d",
                                "alpha_dropout", "feature_alpha_dropout"])
@pytest.mark.parametrize("p", [1.5, -0.1])
def test_dropout_p_validation(device, fn, p):
    x = fw.randn(2, 3, 4, 5, device=device)
    with pytest.raises(ValueError) as e:
        getattr(F, fn)(x, p, True)
    assert str(e.value) == f"dropout probability has to be between 0 and 1, but got {p}"
    with pytest.raises(ValueError) as e:
        getattr(torch.nn.functional, fn)(torch.randn(2, 3, 4, 5), p, True)
    assert str(e.value) == f"dropout probability has to be between 0 and 1, but got {p}"


@pytest.mark.parametrize("cls", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                                 "AlphaDropout", "FeatureAlphaDropout"])
def test_dropout_modules_repr_and_validation(cls):
    for args in [(), (0.2,), (0.3, True)]:
        assert repr(getattr(nn, cls)(*args)) == repr(getattr(torch.nn, cls)(*args))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        getattr(nn, cls)(1.5)
    assert list(getattr(nn, cls)().state_dict()) == []


def _channel_mask_check(out, a, p, batched_dims):
    """Every (sample, channel) slice is either all dropped or all kept and scaled."""
    o = to_np(out)
    lead = o.reshape(o.shape[:batched_dims] + (-1,))
    ref = a.reshape(lead.shape)
    zero = (lead == 0).all(-1)
    kept = ~zero
    np.testing.assert_allclose(lead[kept], ref[kept] / (1 - p), rtol=1e-6)
    return zero


@pytest.mark.parametrize("fn,shape,batched", [("dropout1d", (30, 40, 3), 2),
                                              ("dropout1d", (300, 3), 1),
                                              ("dropout2d", (30, 40, 2, 3), 2),
                                              ("dropout2d", (300, 2, 3), 2),
                                              ("dropout3d", (30, 40, 2, 1, 2), 2),
                                              ("dropout3d", (300, 2, 1, 2), 1)])
def test_channel_dropout(device, fn, shape, batched):
    p = 0.4
    a, x = _x(shape, device)
    fw.manual_seed(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(F, fn)(x, p)
    assert tuple(out.shape) == shape
    zero = _channel_mask_check(out, a, p, batched)
    sd = (p * (1 - p) / zero.size) ** 0.5
    assert abs(zero.mean() - p) < 5 * sd
    g = np.random.randn(*shape).astype(np.float32)
    out.backward(fw_tensor(g, device))
    kept = to_np(out) != 0
    np.testing.assert_allclose(to_np(x.grad), g * kept / (1 - p), rtol=1e-6, atol=1e-7)
    # eval mode: identity
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(to_np(getattr(F, fn)(x, p, training=False)), a)


def test_channel_dropout_module_train_eval(device):
    m = nn.Dropout2d(0.5).to(device)
    a, x = _x((4, 6, 3, 3), device)
    m.eval()
    assert m(x) is x
    m.train()
    out = m(x)
    _channel_mask_check(out, a, 0.5, 2)


def test_channel_dropout_warnings_and_errors(device):
    x = fw.randn(2, 3, 4, 5, device=device)
    with pytest.raises(RuntimeError) as e:
        F.dropout1d(x)
    assert str(e.value).startswith("dropout1d: Expected 2D or 3D input, but received a 4D "
                                   "input.")
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d"):
        F.dropout2d(fw.randn(2, 3, 4, device=device))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d"):
        F.dropout2d(fw.randn(2, 3, device=device))
    with pytest.warns(UserWarning, match="dropout3d: Received a 2-D input to dropout3d"):
        F.dropout3d(fw.randn(2, 3, device=device))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in "
                                           "the input"):
        F.feature_alpha_dropout(fw.randn(4, device=device), 0.5, True)


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout(device, p):
    a = np.random.randn(60, 400).astype(np.float32)
    x = fw_tensor(a, device, requires_grad=True)
    # default training=False: identity
    assert F.alpha_dropout(x, p) is x
    fw.manual_seed(5)
    out = F.alpha_dropout(x, p, True)
    o = to_np(out)
    coef = ((ALPHA ** 2 * p + 1) * (1 - p)) ** -0.5
    dropped_value = coef * ALPHA * (p - 1)
    dropped = np.isclose(o, dropped_value, rtol=0, atol=1e-6) & ~np.isclose(
        a * coef + ALPHA * coef * p, dropped_value, rtol=0, atol=1e-6)
    sd = (p * (1 - p) / a.size) ** 0.5
    assert abs(dropped.mean() - p) < 5 * sd
    np.testing.assert_allclose(o[~dropped], (a * coef + ALPHA * coef * p)[~dropped],
                               rtol=1e-5, atol=1e-6)
    # self-normalizing: zero mean, unit variance kept for a standard normal input
    assert abs(o.mean()) < 0.05 and abs(o.std() - 1) < 0.05
    g = np.random.randn(*a.shape).astype(np.float32)
    out.backward(fw_tensor(g, device))
    np.testing.assert_allclose(to_np(x.grad), g * (~dropped) * coef, rtol=1e-5, atol=1e-6)
    # PyTorch drops to the same value
    t = torch.nn.functional.alpha_dropout(torch.tensor(a), p, True).numpy()
    assert np.isclose(t, dropped_value, atol=1e-6).mean() > p - 5 * sd


def test_alpha_dropout_inplace_and_p1(device):
    a = np.random.randn(20, 30).astype(np.float32)
    x = fw_tensor(a, device)
    out = F.alpha_dropout(x, 0.3, True, inplace=True)
    assert out is x
    assert not np.allclose(to_np(x), a)
    out = F.alpha_dropout(fw_tensor(a, device), 1.0, True)
    assert_close(out, torch.nn.functional.alpha_dropout(torch.tensor(a), 1.0, True).numpy())


def test_feature_alpha_dropout(device):
    p = 0.5
    a = np.random.randn(20, 30, 2, 3).astype(np.float32)
    x = fw_tensor(a, device, requires_grad=True)
    assert F.feature_alpha_dropout(x, p) is x
    m = nn.FeatureAlphaDropout(p).to(device)
    out = m(x)
    coef = ((ALPHA ** 2 * p + 1) * (1 - p)) ** -0.5
    o = to_np(out).reshape(20, 30, 6)
    dropped = np.isclose(o, coef * ALPHA * (p - 1), atol=1e-6).all(-1)
    assert 0.35 < dropped.mean() < 0.65
    kept = ~dropped
    np.testing.assert_allclose(o[kept], (a.reshape(20, 30, 6) * coef + ALPHA * coef * p)[kept],
                               rtol=1e-5, atol=1e-6)
    out.sum().backward()
    gexp = np.broadcast_to((kept * coef)[..., None], (20, 30, 6)).reshape(a.shape)
    np.testing.assert_allclose(to_np(x.grad), gexp, rtol=1e-5)
    m.eval()
    assert m(x) is x


def test_dropout_module_in_model(device):
    m = nn.Dropout(0.5).to(device)
    x = fw.ones(1000, device=device)
    out = to_np(m(x))
    assert set(np.unique(out).tolist()) <= {0.0, 2.0}
    m.eval()
    assert m(x) is x
