"""Linear algebra derivatives beyond op_grads.CASES: the modes PyTorch does not
differentiate (same errors), gradients that PyTorch ignores (full_matrices' extra basis
vectors), and repeated singular values / ties, where only some formulas stay finite."""
import math

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")


def _pair(a, device):
    x = fw.tensor(a, dtype=fw.float64, device=device).requires_grad_()
    t = torch.tensor(a, dtype=torch.float64).requires_grad_()
    return x, t


def _grad(T, out, x):
    return T.autograd.grad(out, x)[0]


def _close(g, tg):
    np.testing.assert_allclose(g.detach().cpu().numpy(), tg.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda T, a: T.linalg.qr(a, mode="r")[1],
    lambda T, a: T.linalg.qr(a, mode="complete")[0],
    lambda T, a: T.qr(a, some=False)[1],
], ids=["qr_r", "qr_complete_tall", "old_qr_complete_tall"])
def test_qr_modes_without_derivative_raise_as_torch(call, device):
    a = np.random.default_rng(0).standard_normal((4, 3))
    x, t = _pair(a, device)
    with pytest.raises(RuntimeError) as expected:
        _grad(torch, call(torch, t).sum(), t)
    with pytest.raises(RuntimeError) as got:
        _grad(fw, call(fw, x).sum(), x)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_svd_full_matrices_extra_vectors_have_no_gradient(shape, device):
    """Only the first min(m, n) columns of U / rows of Vh count (PyTorch's documented
    behaviour): the others are an arbitrary basis."""
    a = np.random.default_rng(1).standard_normal(shape)
    x, _ = _pair(a, device)
    k = min(shape)
    U, S, Vh = fw.linalg.svd(x, full_matrices=True)
    g = _grad(fw, U[:, k:].sum() + Vh[k:].sum(), x)
    assert np.all(g.cpu().numpy() == 0)


@pytest.mark.parametrize("call", [
    lambda T, a: T.linalg.svd(a)[1].sum(),
    lambda T, a: T.linalg.svdvals(a).pow(2).sum(),
    lambda T, a: T.linalg.matrix_norm(a, "nuc"),
    lambda T, a: T.svd(a, compute_uv=False)[1].sum(),
], ids=["svd_S", "svdvals", "nuc", "old_svd_no_uv"])
def test_repeated_singular_values_when_only_S_is_used(call, device):
    """An orthogonal matrix (all singular values 2): the gradient through S alone is
    finite, as in PyTorch."""
    q = np.linalg.qr(np.random.default_rng(2).standard_normal((4, 4)))[0] * 2
    x, t = _pair(q, device)
    g = _grad(fw, call(fw, x), x)
    assert np.isfinite(g.cpu().numpy()).all()
    _close(g, _grad(torch, call(torch, t), t))


@pytest.mark.parametrize("ord", [2, -2])
def test_spectral_norm_ties_share_the_gradient(ord, device):
    """Exactly tied largest (smallest) singular values share the gradient evenly."""
    a = np.diag([3.0, -3.0, 1.0, 1.0])
    x, t = _pair(a, device)
    _close(_grad(fw, fw.linalg.matrix_norm(x, ord), x),
           _grad(torch, torch.linalg.matrix_norm(t, ord), t))


@pytest.mark.parametrize("ord", [1, -1, math.inf, -math.inf])
def test_matrix_norm_ties_share_the_gradient(ord, device):
    a = np.array([[1.0, -2.0, 0.5], [2.0, 1.0, -2.5], [-1.0, 3.0, 0.0]])   # ties in both
    x, t = _pair(a, device)
    _close(_grad(fw, fw.linalg.matrix_norm(x, ord), x),
           _grad(torch, torch.linalg.matrix_norm(t, ord), t))


def test_lstsq_gradient_through_solution_and_residuals(device):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    x, t = _pair(a, device)
    y, u = _pair(b, device)
    r = fw.linalg.lstsq(x, y, driver="gelsd")
    tr = torch.linalg.lstsq(t, u, driver="gelsd")
    loss = (r.solution ** 2).sum() + r.residuals.sum()
    tloss = (tr.solution ** 2).sum() + tr.residuals.sum()
    for g, tg in zip(fw.autograd.grad(loss, [x, y]), torch.autograd.grad(tloss, [t, u])):
        _close(g, tg)
    # singular values (and the integer rank) are outputs without a gradient, as in PyTorch
    assert [o.requires_grad for o in r] == [o.requires_grad for o in tr] == \
        [True, True, False, False]


@pytest.mark.parametrize("ord", [2, "nuc", 1, "fro"])
def test_matrix_norm_dtype_argument(ord, device):
    """A float32 input with dtype=float64: the gradient comes back in float32."""
    a = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    x = fw.tensor(a, device=device).requires_grad_()
    t = torch.tensor(a).requires_grad_()
    g = _grad(fw, fw.linalg.matrix_norm(x, ord, dtype=fw.float64), x)
    tg = _grad(torch, torch.linalg.matrix_norm(t, ord, dtype=torch.float64), t)
    assert g.dtype is fw.float32
    np.testing.assert_allclose(g.cpu().numpy(), tg.numpy(), rtol=1e-6, atol=1e-7)


def test_svd_without_uv_gives_placeholders_without_gradient(device):
    x, t = _pair(np.random.default_rng(5).standard_normal((3, 2)), device)
    ours, theirs = fw.svd(x, compute_uv=False), torch.svd(t, compute_uv=False)
    assert [o.requires_grad for o in ours] == [o.requires_grad for o in theirs]
    assert [tuple(o.shape) for o in ours] == [tuple(o.shape) for o in theirs]
