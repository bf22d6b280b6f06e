"""Gaps that PyTorch's docstring examples of torch.linalg and torch.cholesky_* showed,
checked against PyTorch beyond the examples: LinAlgError's class name, lstsq's output shapes
under broadcasting, complex householder_product / matrix_rank / pinv / cholesky_solve /
cholesky_inverse (values and gradients), and float32 lu_factor / lu_solve accuracy."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

_TORCH = {fw.float32: torch.float32, fw.float64: torch.float64,
          fw.complex64: torch.complex64, fw.complex128: torch.complex128}


def rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return a


def pair(a, dtype, device, grad=False):
    x = fw.tensor(a, dtype=dtype, device=device, requires_grad=grad)
    return x, torch.tensor(a, dtype=_TORCH[dtype], requires_grad=grad)


def close(got, want, dtype):
    got = got.detach().cpu().numpy() if isinstance(got, fw.Tensor) else got
    want = want.detach().numpy()
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype)
    tol = 1e-4 if dtype in (fw.float32, fw.complex64) else 1e-10
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def hpd(batch, n, dtype, seed):
    """Hermitian positive-definite matrices and their lower Cholesky factors (float64)."""
    m = rand(batch + (n, n), dtype, seed)
    a = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)
    return a, np.linalg.cholesky(a)


def grads(fn, arrays, dtype):
    """d(Re sum(w * fn(*inputs)))/d(inputs) under the framework and PyTorch (cpu)."""
    out = []
    for T in (fw, torch):
        xs = [T.tensor(a, dtype=dtype if T is fw else _TORCH[dtype], requires_grad=True)
              for a in arrays]
        y = fn(T, *xs)
        w = np.linspace(-1.0, 1.0, int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape))
        w = w + 0.5j if dtype.is_complex else w
        (y * T.tensor(w, dtype=y.dtype)).real.sum().backward()
        out.append([x.grad for x in xs])
    return out


# ---- LinAlgError --------------------------------------------------------------------------

def test_linalg_error_class_is_torchs(device):
    assert fw.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    assert issubclass(fw.linalg.LinAlgError, RuntimeError)
    names = []
    for T, d in ((torch, "cpu"), (fw, device)):
        with pytest.raises(T.linalg.LinAlgError) as e:
            T.linalg.inv(T.zeros(2, 2, device=d))
        names.append(type(e.value).__name__)
    assert names == ["_LinAlgError"] * 2


# ---- lstsq --------------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [
    ((1, 3, 3), (2, 3, 3)),     # the docstring's case: A broadcast over B's batch
    ((2, 4, 3), (1, 4, 2)),     # B broadcast over A's batch (tall A: residuals)
    ((2, 4, 3), (2, 4)),        # a batch of vectors
    ((1, 4, 3), (4, 2)),        # B has one dim fewer and is not a vector
    ((3, 3), (3,))])
def test_lstsq_shapes_and_values_match_torch(sa, sb, device):
    a, b = rand(sa, fw.float64, 0), rand(sb, fw.float64, 1)
    a[..., 0, :] = 0        # rank deficient: no residuals from gelsd / gelss
    if sa == (2, 4, 3):
        a[1] = rand((4, 3), fw.float64, 2)      # ... unless every matrix has full rank
    (xa, ta), (xb, tb) = pair(a, fw.float64, device), pair(b, fw.float64, device)
    for driver in ("gelsy", "gelsd", "gelss"):
        got = fw.linalg.lstsq(xa, xb, driver=driver)
        want = torch.linalg.lstsq(ta, tb, driver=driver)
        for g, w in zip(got, want):
            close(g, w, fw.float64)


def test_lstsq_broadcast_errors_and_gradient():
    for sa, sb in (((1, 3, 3), (2, 3)), ((2, 3, 3), (3, 3))):
        msgs = []
        for T in (torch, fw):
            with pytest.raises(RuntimeError) as e:
                T.linalg.lstsq(T.ones(sa, dtype=T.float64), T.ones(sb, dtype=T.float64))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    a, b = rand((1, 4, 3), fw.float64, 3), rand((4, 2), fw.float64, 4)
    got, want = grads(lambda T, x, y: T.linalg.lstsq(x, y, driver="gelsd").solution, [a, b],
                      fw.float64)
    for g, w in zip(got, want):
        close(g, w, fw.float64)


# ---- complex householder_product, matrix_rank, pinv ----------------------------------------

@pytest.mark.parametrize("dtype", [fw.complex128, fw.complex64, fw.float32])
def test_householder_product_matches_torch(dtype, device):
    (x, t), (xt, tt) = pair(rand((3, 5, 3), dtype, 0), dtype, device), \
        pair(rand((3, 2), dtype, 1), dtype, device)
    close(fw.linalg.householder_product(x, xt), torch.linalg.householder_product(t, tt), dtype)
    close(fw.orgqr(x, xt), torch.orgqr(t, tt), dtype)


def test_householder_product_complex_gradient():
    got, want = grads(lambda T, h, tau: T.linalg.householder_product(h, tau),
                      [rand((2, 4, 3), fw.complex128, 0), rand((2, 3), fw.complex128, 1)],
                      fw.complex128)
    for g, w in zip(got, want):
        close(g, w, fw.complex128)


@pytest.mark.parametrize("dtype", [fw.complex64, fw.complex128])
def test_matrix_rank_complex_matches_torch(dtype, device):
    low = rand((2, 3, 5, 2), dtype, 0) @ rand((2, 3, 2, 5), dtype, 1)     # rank 2
    full = rand((2, 3, 5, 5), dtype, 2)
    mats = np.concatenate([low, full], 1)
    herm = mats @ np.conj(np.swapaxes(mats, -1, -2))
    for a in (mats, herm):
        x, t = pair(a, dtype, device)
        for kw in ({}, {"hermitian": True}, {"atol": 1.0, "rtol": 0.0},
                   {"atol": 30.0, "rtol": 0.0, "hermitian": True}, {"rtol": 0.05}):
            if kw.get("hermitian") and a is mats:
                continue
            close(fw.linalg.matrix_rank(x, **kw), torch.linalg.matrix_rank(t, **kw), dtype)


@pytest.mark.parametrize("dtype", [fw.complex64, fw.complex128, fw.float64])
def test_pinv_matches_torch(dtype, device):
    a = rand((2, 5, 3), dtype, 0)
    x, t = pair(a, dtype, device)
    close(fw.linalg.pinv(x), torch.linalg.pinv(t), dtype)
    h = a @ np.conj(np.swapaxes(a, -1, -2))     # Hermitian of rank 3
    x, t = pair(h, dtype, device)
    close(fw.linalg.pinv(x, hermitian=True), torch.linalg.pinv(t, hermitian=True), dtype)
    close(fw.linalg.pinv(x, hermitian=True, rtol=0.5),
          torch.linalg.pinv(t, hermitian=True, rtol=0.5), dtype)


def test_pinv_complex_gradient():
    a = rand((2, 4, 3), fw.complex128, 0)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(4)
    for arr, kw in ((a, {}), (h, {"hermitian": True})):
        got, want = grads(lambda T, x: T.linalg.pinv(x, **kw), [arr], fw.complex128)
        close(got[0], want[0], fw.complex128)


# ---- complex cholesky_solve and cholesky_inverse -----------------------------------------

@pytest.mark.parametrize("dtype", [fw.complex64, fw.complex128, fw.float32])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_match_torch(dtype, upper, device):
    _, low = hpd((2, 1), 4, dtype, 0)
    f = np.conj(np.swapaxes(low, -1, -2)) if upper else low
    (xf, tf), (xb, tb) = pair(f, dtype, device), pair(rand((3, 4, 2), dtype, 1), dtype, device)
    close(fw.cholesky_solve(xb, xf, upper=upper), torch.cholesky_solve(tb, tf, upper=upper),
          dtype)
    close(fw.cholesky_inverse(xf[0, 0], upper=upper),
          torch.cholesky_inverse(tf[0, 0], upper=upper), dtype)
    close(xf.cholesky_inverse(upper), tf.cholesky_inverse(upper), dtype)


def test_cholesky_solve_and_inverse_complex_gradients():
    a, low = hpd((2,), 3, fw.complex128, 0)
    b = rand((2, 3, 2), fw.complex128, 1)
    for upper in (False, True):
        f = np.conj(np.swapaxes(low, -1, -2)) if upper else low
        got, want = grads(lambda T, y, L: T.cholesky_solve(y, L, upper=upper), [b, f],
                          fw.complex128)
        for g, w in zip(got, want):
            close(g, w, fw.complex128)
        got, want = grads(lambda T, L: T.cholesky_inverse(L, upper=upper), [f], fw.complex128)
        close(got[0], want[0], fw.complex128)


# ---- float32 LU solves ------------------------------------------------------------------

def test_lu_solve_float32_is_as_accurate_as_torchs(device):
    """The docstring's `torch.allclose(A @ X, B)` on float32 random data holds or not by
    rounding (a B entry near 0 gives allclose a tolerance under one ulp of A @ X): the
    framework's X agrees with PyTorch's to float32 rounding and its residual is within
    LAPACK's backward error bound, for every left/adjoint combination."""
    a, b = rand((2, 3, 3), fw.float32, 0), rand((2, 3, 4), fw.float32, 1)
    (xa, ta), (xb, tb) = pair(a, fw.float32, device), pair(b, fw.float32, device)
    lu, piv = fw.linalg.lu_factor(xa)
    tlu, tpiv = torch.linalg.lu_factor(ta)
    assert (piv.cpu().numpy() == tpiv.numpy()).all()
    eps = np.finfo(np.float32).eps
    for left, adjoint in ((True, False), (True, True), (False, False), (False, True)):
        rhs, trhs = (xb, tb) if left else (xb.mT, tb.mT)
        x = fw.linalg.lu_solve(lu, piv, rhs, left=left, adjoint=adjoint)
        close(x, torch.linalg.lu_solve(tlu, tpiv, trhs, left=left, adjoint=adjoint),
              fw.float32)
        op = np.swapaxes(a, -1, -2) if adjoint else a
        xn = x.cpu().numpy().astype(np.float64)
        r = (op @ xn if left else xn @ op) - rhs.cpu().numpy()
        bound = 10 * eps * (np.abs(op) @ np.abs(xn) if left else np.abs(xn) @ np.abs(op))
        assert (np.abs(r) <= bound).all()


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float64"])
def test_ormqr_applies_q_or_its_conjugate_transpose(dtype):
    """ormqr multiplies by Q from geqrf's reflectors, or by Q^H with transpose=True (the
    conjugate transpose for complex, as LAPACK's)."""
    rng = np.random.default_rng(5)
    cplx = dtype.startswith("complex")
    a = rng.standard_normal((5, 3)) + (1j * rng.standard_normal((5, 3)) if cplx else 0)
    c = rng.standard_normal((5, 4)) + (1j * rng.standard_normal((5, 4)) if cplx else 0)
    h, tau = torch.geqrf(torch.tensor(a).to(getattr(torch, dtype)))
    tc = torch.tensor(c).to(getattr(torch, dtype))
    for left, transpose in ((True, False), (True, True), (False, False), (False, True)):
        other = tc if left else tc.mT.contiguous()
        want = torch.ormqr(h, tau, other, left=left, transpose=transpose)
        got = fw.ormqr(fw.tensor(h.numpy()), fw.tensor(tau.numpy()), fw.tensor(other.numpy()),
                       left=left, transpose=transpose)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
