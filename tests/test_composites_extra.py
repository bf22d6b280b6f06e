"""The small composites of framework/_ops/composites_extra.py and aten_composites.py against
torch on both devices: values, float64 gradients of the differentiable ones (renorm,
cholesky, triangular_solve, ravel, constant_pad_nd, split_with_sizes, native_batch_norm,
grid_sampler_2d, ormqr) and the errors. NumPy cases are in tests/opdb/composites_extra.py
and tests/opdb/aten_composites.py."""
import numpy as np
import pytest

import framework as fw
from helpers import assert_close, skip_unless_torch, to_np

torch = pytest.importorskip("torch")


def _pair(a, device, grad=True):
    x = fw.tensor(a, device=device, requires_grad=grad)
    t = torch.tensor(a, requires_grad=grad)
    return x, t


def _check_grad(fn, tfn, arrays, device, w_seed=0):
    xs, ts = zip(*[_pair(a, device) for a in arrays])
    out, tout = fn(*xs), tfn(*ts)
    if isinstance(tout, (tuple, list)):
        out, tout = out[0], tout[0]
    assert_close(out, tout.detach().numpy(), rtol=1e-9, atol=1e-10)
    w = np.random.default_rng(w_seed).uniform(0.5, 1.5, tuple(tout.shape))
    (out * fw.tensor(w, device=device)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for x, t in zip(xs, ts):
        assert_close(x.grad, t.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_renorm(device):
    a = np.random.default_rng(0).uniform(-2, 2, (4, 3, 5))
    for p, dim, maxnorm in ((2, 0, 3.0), (1, 1, 4.0), (3.5, -1, 2.0)):
        _check_grad(lambda x: fw.renorm(x, p, dim, maxnorm),
                    lambda t: torch.renorm(t, p, dim, maxnorm), [a], device)
    with pytest.raises(RuntimeError):
        fw.renorm(fw.ones(3, device=device), 2, 0, 1.0)
    with pytest.raises(RuntimeError):
        fw.renorm(fw.ones(3, 2, device=device), -1, 0, 1.0)


def test_cholesky_and_triangular_solve(device):
    rng = np.random.default_rng(1)
    m = rng.uniform(-1, 1, (2, 4, 4))
    spd = m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)
    for upper in (False, True):
        _check_grad(lambda x: fw.cholesky((x + x.mT) / 2, upper),
                    lambda t: torch.cholesky((t + t.mT) / 2, upper), [spd], device)
    a = rng.uniform(-1, 1, (4, 4)) + 4 * np.eye(4)
    b = rng.uniform(-1, 1, (2, 4, 3))
    for kw in ({}, {"upper": False, "transpose": True}, {"unitriangular": True}):
        _check_grad(lambda y, x: fw.triangular_solve(y, x, **kw),
                    lambda y, x: torch.triangular_solve(y, x, **kw), [b, a], device)
    res = fw.triangular_solve(fw.tensor(b, device=device), fw.tensor(a, device=device))
    assert res._fields == ("solution", "cloned_coefficient")
    assert tuple(res.cloned_coefficient.shape) == (2, 4, 4)


def test_ravel_pad_split_grads(device):
    a = np.random.default_rng(2).uniform(-1, 1, (3, 6))
    _check_grad(lambda x: x.t().ravel(), lambda t: t.t().ravel(), [a], device)
    _check_grad(lambda x: fw.constant_pad_nd(x, [2, -1, 0, 1], 0.5),
                lambda t: torch.constant_pad_nd(t, [2, -1, 0, 1], 0.5), [a], device)
    _check_grad(lambda x: fw.split_with_sizes(x, [1, 5], 1)[1] * 2,
                lambda t: torch.split_with_sizes(t, [1, 5], 1)[1] * 2, [a], device)
    with pytest.raises(RuntimeError):
        fw.split_with_sizes(fw.ones(4, device=device), [1, 2])


def test_unravel_index(device):
    idx = np.array([[0, 5, -1], [23, 7, 12]])
    got = fw.unravel_index(fw.tensor(idx, device=device), (2, 3, 4))
    ref = torch.unravel_index(torch.tensor(idx), (2, 3, 4))
    assert len(got) == 3
    for g, r in zip(got, ref):
        assert g.dtype == fw.int64
        np.testing.assert_array_equal(to_np(g), r.numpy())
    with pytest.raises(TypeError):
        fw.unravel_index(fw.ones(2, device=device), (2,))
    with pytest.raises(ValueError):
        fw.unravel_index(fw.tensor([1], device=device), (2, -1))


# ---- framework/_ops/aten_composites.py -----------------------------------------------------
def test_native_batch_norm(device):
    rng = np.random.default_rng(3)
    x, w, b = rng.uniform(-2, 2, (4, 3, 5)), rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, 3)
    rm, rv = rng.uniform(-1, 1, 3), rng.uniform(0.5, 2, 3)
    for training in (True, False):
        fr, tr = fw.tensor(rm, device=device), torch.tensor(rm)
        fv, tv = fw.tensor(rv, device=device), torch.tensor(rv)
        _check_grad(lambda x, w, b: fw.native_batch_norm(x, w, b, fr, fv, training, 0.3, 1e-3),
                    lambda x, w, b: torch.native_batch_norm(x, w, b, tr, tv, training, 0.3,
                                                            1e-3), [x, w, b], device)
        assert_close(fr, tr.numpy(), rtol=1e-9, atol=1e-10)
        assert_close(fv, tv.numpy(), rtol=1e-9, atol=1e-10)
        out = fw.native_batch_norm(fw.tensor(x, device=device), None, None, fr, fv, training,
                                   0.3, 1e-3)
        ref = torch.native_batch_norm(torch.tensor(x), None, None, tr, tv, training, 0.3, 1e-3)
        for o, r in zip(out, ref):
            assert_close(o, r.numpy(), rtol=1e-9, atol=1e-10)


def test_grid_sampler_grads(device):
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (1, 2, 4, 5))
    g = rng.uniform(-1.1, 1.1, (1, 3, 3, 2))
    _check_grad(lambda x, g: fw.grid_sampler_2d(x, g, 0, 1, False),
                lambda x, g: torch.grid_sampler_2d(x, g, 0, 1, False), [x, g], device)
    with pytest.raises(RuntimeError):
        fw.grid_sampler_2d(fw.tensor(x[0], device=device), fw.tensor(g, device=device), 0, 0,
                           False)


def test_geqrf_ormqr(device):
    rng = np.random.default_rng(5)
    a, c = rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, (5, 2))
    h, tau = fw.geqrf(fw.tensor(a, device=device))
    th, ttau = torch.geqrf(torch.tensor(a))
    assert_close(h, th.numpy(), rtol=1e-9, atol=1e-10)
    assert_close(tau, ttau.numpy(), rtol=1e-9, atol=1e-10)
    hn, tn = th.numpy(), ttau.numpy()
    for left, transpose in ((True, False), (True, True), (False, True)):
        cc = c if left else c.T
        _check_grad(lambda h, t, y: fw.ormqr(h, t, y, left, transpose),
                    lambda h, t, y: torch.ormqr(h, t, y, left, transpose), [hn, tn, cc],
                    device)


def test_lowrank_shapes(device):
    a = np.random.default_rng(6).uniform(-1, 1, (6, 4))
    for q in (2, 4):
        got = fw.svd_lowrank(fw.tensor(a, device=device), q=q)
        ref = torch.svd_lowrank(torch.tensor(a), q=q)
        assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in ref]
    s = fw.pca_lowrank(fw.tensor(a, device=device), q=4)[1]
    np.testing.assert_allclose(to_np(s), np.linalg.svd(a - a.mean(0), compute_uv=False),
                               rtol=1e-8)
    with pytest.raises(ValueError):
        fw.pca_lowrank(fw.tensor(a, device=device), q=9)


def test_linear_cross_entropy(device):
    if not hasattr(torch.nn.functional, "linear_cross_entropy"):
        skip_unless_torch(torch, "F.linear_cross_entropy")
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((4, 2, 3))
    b, cw = rng.standard_normal((4, 2)), rng.uniform(0.5, 1.5, 4)
    t = rng.integers(0, 4, (5, 2))
    ft, tt = fw.tensor(t, device=device), torch.tensor(t)
    fcw, tcw = fw.tensor(cw, device=device), torch.tensor(cw)
    _check_grad(lambda x, w, b: fw.nn.functional.linear_cross_entropy(
                    x, w, ft, linear_bias=b, weight=fcw, label_smoothing=0.1),
                lambda x, w, b: torch.nn.functional.linear_cross_entropy(
                    x, w, tt, linear_bias=b, weight=tcw, label_smoothing=0.1),
                [x, w, b], device)
