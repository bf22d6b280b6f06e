"""Tests of the LU / LDL family, the _ex variants, matrix_exp, Cholesky solves,
householder_product, cond, linalg.cross/vander/tensorinv/tensorsolve/diagonal against
PyTorch on both devices: values (batched, non-contiguous, float32), info and error
messages, and float64 gradients (gradcheck and PyTorch's); and addmm / baddbmm / linear
with a bias or C operand (read in the GEMM's epilogue) against NumPy float64."""
import warnings

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def pair(a, device, dtype=fw.float64, T=False):
    """The same values as a framework tensor (a transposed view when ``T``) and torch's."""
    tdt = torch.float64 if dtype is fw.float64 else torch.float32
    if T:
        x = fw.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dtype,
                      device=device).mT
    else:
        x = fw.tensor(a, dtype=dtype, device=device)
    return x, torch.tensor(a, dtype=tdt)


def close(got, expect, tol=1e-10):
    got = got.detach().cpu().numpy() if isinstance(got, fw.Tensor) else np.asarray(got)
    expect = expect.detach().numpy()
    assert got.shape == expect.shape, f"{got.shape} != {expect.shape}"
    scale = max(1.0, float(np.abs(expect).max())) if expect.size else 1.0
    np.testing.assert_allclose(got, expect, rtol=tol, atol=tol * scale)


def same_error(fn):
    """Runs ``fn(T)`` on torch and framework: same exception type name and message."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(fw)
    assert str(got.value) == str(want.value)
    assert type(got.value).__name__.replace("_", "") == \
        type(want.value).__name__.replace("_", "") or isinstance(got.value, RuntimeError)


# ---- LU -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype,T", [
    ((4, 4), fw.float64, False), ((2, 3, 5), fw.float64, True), ((5, 3), fw.float32, False),
    ((2, 1, 6, 6), fw.float32, True), ((0, 3, 3), fw.float64, False)])
def test_lu_factor_and_lu_match_torch(shape, dtype, T, device):
    x, t = pair(rand(shape), device, dtype, T)
    tol = 1e-10 if dtype is fw.float64 else 1e-5
    for got, want in zip(fw.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t)):
        close(got, want, tol)
    lu, piv = fw.linalg.lu_factor(x)
    assert piv.dtype is fw.int32 and lu.dtype is dtype
    for got, want in zip(fw.linalg.lu(x), torch.linalg.lu(t)):
        close(got, want, tol)
    for got, want in zip(fw.lu_unpack(lu, piv), torch.lu_unpack(*torch.linalg.lu_factor(t))):
        close(got, want, tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for got, want in zip(fw.lu(x, get_infos=True), torch.lu(t, get_infos=True)):
            close(got, want, tol)


def test_lu_unpack_parts_and_singular_info(device):
    a = np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]])
    x, t = pair(a, device)
    for got, want in zip(fw.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t)):
        close(got, want)
    lu, piv = torch.linalg.lu_factor_ex(t)[:2]
    flu, fpiv = fw.linalg.lu_factor_ex(x)[:2]
    P, L, U = fw.lu_unpack(flu, fpiv, unpack_data=False)
    close(P, torch.lu_unpack(lu, piv)[0])
    assert L.shape == (0,) and U.shape == (0,)
    P, L, U = fw.lu_unpack(flu, fpiv, unpack_pivots=False)
    assert P.shape == (0,)
    close(L @ U, torch.tensor(a)[torch.lu_unpack(lu, piv)[0].argmax(0)])


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False),
                                          (False, True)])
def test_lu_solve_matches_torch(left, adjoint, device):
    a = rand((2, 4, 4), 1)
    b = rand((3, 1, 4, 2) if left else (3, 1, 2, 4), 2)   # batch dims broadcast
    xa, ta = pair(a, device)
    xb, tb = pair(b, device, T=True)
    lu, piv = torch.linalg.lu_factor(ta)
    flu, fpiv = fw.linalg.lu_factor(xa)
    close(fw.linalg.lu_solve(flu, fpiv, xb, left=left, adjoint=adjoint),
          torch.linalg.lu_solve(lu, piv, tb, left=left, adjoint=adjoint))
    if left and not adjoint:
        with pytest.warns(UserWarning, match="lu_solve is deprecated"):
            got = fw.lu_solve(xb, flu, fpiv)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close(got, torch.lu_solve(tb, lu, piv))


def test_solve_inv_cholesky_ex_match_torch(device):
    a, b = rand((2, 4, 4), 3), rand((2, 4, 3), 4)
    (xa, ta), (xb, tb) = pair(a, device, T=True), pair(b, device)
    for got, want in zip(fw.linalg.solve_ex(xa, xb), torch.linalg.solve_ex(ta, tb)):
        close(got, want)
    for got, want in zip(fw.linalg.solve_ex(xa, xb.mT, left=False),
                         torch.linalg.solve_ex(ta, tb.mT, left=False)):
        close(got, want)
    close(fw.linalg.solve_ex(xa, xb[..., 0])[0], torch.linalg.solve_ex(ta, tb[..., 0])[0])
    for got, want in zip(fw.linalg.inv_ex(xa), torch.linalg.inv_ex(ta)):
        close(got, want)
    s = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    xs, ts = pair(s, device, fw.float32)
    for upper in (False, True):
        for got, want in zip(fw.linalg.cholesky_ex(xs, upper=upper),
                             torch.linalg.cholesky_ex(ts, upper=upper)):
            close(got, want, 1e-5)


def test_singular_inputs_give_info_or_raise_as_torch(device):
    sing = np.stack([np.eye(3), np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]])])
    x, t = pair(sing, device)
    close(fw.linalg.solve_ex(x, fw.ones(2, 3, 1, dtype=fw.float64, device=device))[1],
          torch.linalg.solve_ex(t, torch.ones(2, 3, 1, dtype=torch.float64))[1])
    close(fw.linalg.inv_ex(x)[1], torch.linalg.inv_ex(t)[1])
    close(fw.linalg.cholesky_ex(x)[1], torch.linalg.cholesky_ex(t)[1])
    close(fw.linalg.cholesky_ex(x)[0], torch.linalg.cholesky_ex(t)[0])

    def args(T):
        return T.tensor(sing, dtype=T.float64) if T is torch else x
    same_error(lambda T: T.linalg.lu_factor(args(T)))
    same_error(lambda T: T.linalg.lu_factor_ex(args(T)[1], check_errors=True))
    same_error(lambda T: T.linalg.solve_ex(args(T), T.ones(2, 3, 1, dtype=T.float64,
                                                          device=args(T).device),
                                           check_errors=True))
    same_error(lambda T: T.linalg.inv_ex(args(T), check_errors=True))
    same_error(lambda T: T.linalg.cholesky_ex(args(T), check_errors=True))
    same_error(lambda T: T.linalg.solve(args(T), T.ones(2, 3, 1, dtype=T.float64,
                                                        device=args(T).device)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(fw.lu(x)[0], torch.lu(t)[0])    # torch.lu does not raise


@pytest.mark.parametrize("call", [
    lambda T, d: T.linalg.lu_factor(T.ones(3, device=d)),
    lambda T, d: T.linalg.lu_factor(T.ones(3, 3, dtype=T.int64, device=d)),
    lambda T, d: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3, device=d)),
                                   T.ones(4, 2, device=d)),
    lambda T, d: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3, device=d)), T.ones(3, device=d)),
    lambda T, d: T.linalg.lu_solve(T.linalg.lu_factor(T.eye(3, device=d))[0],
                                   T.linalg.lu_factor(T.eye(3, device=d))[1].long(),
                                   T.ones(3, 2, device=d)),
    lambda T, d: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3, device=d)),
                                   T.ones(3, 2, dtype=T.float64, device=d)),
    lambda T, d: T.lu_unpack(T.eye(3, device=d), T.ones(3, dtype=T.int64, device=d)),
    lambda T, d: T.lu_unpack(T.eye(3, device=d), T.tensor([1, 4, 3], dtype=T.int32, device=d)),
    lambda T, d: T.linalg.lu_solve(T.eye(3, device=d), T.tensor([5, 2, 3], dtype=T.int32,
                                                                 device=d), T.ones(3, 1, device=d)),
    lambda T, d: T.linalg.lu(T.ones(3, device=d)),
    lambda T, d: T.linalg.cond(T.ones(3, device=d), 1),
    lambda T, d: T.cholesky_solve(T.ones(3, 2, device=d), T.ones(3, 2, device=d)),
    lambda T, d: T.linalg.ldl_solve(T.eye(3, device=d), T.ones(2, dtype=T.int32, device=d),
                                    T.ones(3, 1, device=d)),
    lambda T, d: T.linalg.solve_ex(T.eye(3, device=d), T.ones(3, device=d), left=False),
    lambda T, d: T.linalg.matrix_exp(T.ones(2, 2, dtype=T.int64, device=d)),
    lambda T, d: T.linalg.matrix_exp(T.ones(2, 3, device=d)),
    lambda T, d: T.cholesky_solve(T.ones(3, 2, device=d), T.eye(2, device=d)),
    lambda T, d: T.cholesky_solve(T.ones(3, 2, device=d), T.eye(3, dtype=T.float64, device=d)),
    lambda T, d: T.cholesky_inverse(T.ones(2, 3, device=d)),
    lambda T, d: T.linalg.householder_product(T.ones(2, 3, device=d), T.ones(1, device=d)),
    lambda T, d: T.linalg.householder_product(T.ones(3, 2, device=d), T.ones(3, device=d)),
    lambda T, d: T.linalg.householder_product(T.ones(2, 3, 2, device=d), T.ones(3, 1, device=d)),
    lambda T, d: T.linalg.cond(T.ones(2, 3, device=d), 1),
    lambda T, d: T.linalg.cond(T.ones(3, 3, device=d), 3),
    lambda T, d: T.linalg.cross(T.ones(2, 3, device=d), T.ones(3, device=d)),
    lambda T, d: T.linalg.cross(T.ones(2, 2, device=d), T.ones(2, 2, device=d)),
    lambda T, d: T.linalg.cross(T.ones(2, 3, device=d), T.ones(2, 3, dtype=T.float64, device=d)),
    lambda T, d: T.linalg.cross(T.ones(2, 3, dtype=T.bool, device=d),
                                T.ones(2, 3, dtype=T.bool, device=d)),
    lambda T, d: T.linalg.vander(T.ones(2, device=d), N=1),
    lambda T, d: T.linalg.vander(T.ones(2, dtype=T.bool, device=d)),
    lambda T, d: T.linalg.tensorinv(T.ones(4, 3, 2, device=d), ind=1),
    lambda T, d: T.linalg.tensorinv(T.ones(4, 2, 2, device=d), ind=0),
    lambda T, d: T.linalg.tensorsolve(T.ones(2, 3, 6, device=d), T.ones(3, 3, device=d)),
    lambda T, d: T.linalg.ldl_factor_ex(T.ones(2, 3, device=d)),
    lambda T, d: T.linalg.ldl_solve(*T.linalg.ldl_factor(T.eye(3, device=d)),
                                    T.ones(2, 1, device=d)),
    lambda T, d: T.linalg.ldl_solve(*T.linalg.ldl_factor(T.eye(3, device=d)),
                                    T.ones(3, 1, dtype=T.float64, device=d)),
    lambda T, d: T.linalg.inv_ex(T.ones(2, 2, dtype=T.int64, device=d)),
    lambda T, d: T.linalg.cholesky_ex(T.ones(2, 2, dtype=T.float16, device=d)),
    lambda T, d: T.linalg.cond(T.ones(2, 2, dtype=T.int64, device=d), 1),
    lambda T, d: T.cholesky_inverse(T.ones(2, 2, dtype=T.int64, device=d)),
    lambda T, d: T.linalg.householder_product(T.ones(2, 2, dtype=T.int64, device=d),
                                              T.ones(1, dtype=T.int64, device=d)),
    lambda T, d: T.linalg.ldl_factor(T.ones(2, 2, dtype=T.int64, device=d)),
    lambda T, d: T.linalg.solve_ex(T.ones(2, 2, dtype=T.int64, device=d),
                                   T.ones(2, dtype=T.int64, device=d)),
    lambda T, d: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3, device=d)), T.ones(3, 2, device=d)
                                   .mT),
], ids=lambda c: "")
def test_errors_match_torch(call, device):
    same_error(lambda T: call(T, device if T is fw else "cpu"))


def test_lu_without_pivoting(device):
    a = rand((2, 4, 4), 5) + 4 * np.eye(4)
    x, t = pair(a, device)
    if device == "cpu":
        same_error(lambda T: T.linalg.lu(x if T is fw else t, pivot=False))
        return
    P, L, U = fw.linalg.lu(x, pivot=False)
    close(L @ U, t)
    close(P, torch.eye(4, dtype=torch.float64).expand(2, 4, 4))


# ---- matrix functions and Cholesky solves ------------------------------------------------

@pytest.mark.parametrize("scale", [1e-3, 0.3, 1.5, 4.0, 40.0])
def test_matrix_exp_matches_torch(scale, device):
    a = rand((2, 5, 5), 6) * scale / 3
    x, t = pair(a, device)
    close(fw.linalg.matrix_exp(x), torch.linalg.matrix_exp(t), 1e-11)
    x32, t32 = pair(a, device, fw.float32, T=True)
    close(x32.matrix_exp(), torch.matrix_exp(t32), 1e-5)
    close(fw.linalg.matrix_exp(fw.zeros(0, 0, device=device)),
          torch.linalg.matrix_exp(torch.zeros(0, 0)))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper, device):
    a = rand((2, 4, 4), 7)
    s = a @ np.swapaxes(a, -1, -2) + np.eye(4)
    f = torch.linalg.cholesky(torch.tensor(s), upper=upper).numpy()
    (xf, tf), (xb, tb) = pair(f, device, T=True), pair(rand((3, 1, 4, 2), 8), device)
    close(fw.cholesky_solve(xb, xf, upper), torch.cholesky_solve(tb, tf, upper))
    close(xf.cholesky_inverse(upper), tf.cholesky_inverse(upper))


def test_householder_product_and_orgqr(device):
    h, tau = rand((2, 6, 4), 9), rand((2, 3), 10)
    (xh, th), (xt, tt) = pair(h, device, T=True), pair(tau, device)
    close(fw.linalg.householder_product(xh, xt), torch.linalg.householder_product(th, tt))
    close(xh.orgqr(xt), th.orgqr(tt))
    # geqrf's reflectors give back the Q of QR
    qr_h, qr_tau = torch.geqrf(th)
    close(fw.linalg.householder_product(pair(qr_h.numpy(), device)[0],
                                        pair(qr_tau.numpy(), device)[0]),
          torch.linalg.qr(th).Q)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", float("inf"), -float("inf"), 1, -1])
def test_cond_matches_torch(p, device):
    a = rand((2, 4, 4), 11)
    x, t = pair(a, device, T=True)
    close(fw.linalg.cond(x, p), torch.linalg.cond(t, p), 1e-9)
    sing = np.array([[1., 2], [2, 4]])
    xs, ts = pair(sing, device)
    if p not in (None, 2, -2, "nuc"):   # the SVD's ratio of a singular matrix is rounding
        close(fw.linalg.cond(xs, p), torch.linalg.cond(ts, p))
    else:   # torch's "nuc" takes the SVD of an all-inf inverse: LAPACK's garbage, or inf
        c = fw.linalg.cond(xs, p).item()
        assert c < 1e-15 if p == -2 else c > 1e15
    if p in (None, 2, -2):
        close(fw.linalg.cond(pair(rand((3, 5), 12), device)[0], p),
              torch.linalg.cond(torch.tensor(rand((3, 5), 12)), p), 1e-9)


def test_cross_vander_tensorinv_tensorsolve_diagonal(device):
    (xa, ta), (xb, tb) = pair(rand((4, 1, 3), 13), device), pair(rand((1, 5, 3), 14), device)
    close(fw.linalg.cross(xa, xb), torch.linalg.cross(ta, tb))
    close(fw.linalg.cross(xa.mT, xb.mT, dim=-2), torch.linalg.cross(ta.mT, tb.mT, dim=-2))
    xi = fw.tensor([[1, 2, 3], [0, -1, 2]], dtype=fw.int32, device=device)
    ti = torch.tensor([[1, 2, 3], [0, -1, 2]], dtype=torch.int32)
    got, want = fw.linalg.vander(xi, N=4), torch.linalg.vander(ti, N=4)
    assert got.dtype is fw.int64 and want.dtype is torch.int64
    close(got, want)
    close(fw.linalg.vander(pair(rand(5, 15), device)[0]), torch.linalg.vander(
        torch.tensor(rand(5, 15))))
    x, t = pair(rand((4, 6, 8, 3), 16), device)
    close(fw.linalg.tensorinv(x, ind=2), torch.linalg.tensorinv(t, ind=2), 1e-9)
    (xa, ta), (xb, tb) = pair(rand((6, 2, 3), 17), device), pair(rand((2, 3), 18), device)
    close(fw.linalg.tensorsolve(xa, xb, dims=(0,)), torch.linalg.tensorsolve(ta, tb, dims=(0,)),
          1e-9)
    close(fw.linalg.diagonal(x, offset=-1, dim1=0, dim2=2),
          torch.linalg.diagonal(t, offset=-1, dim1=0, dim2=2))


@pytest.mark.parametrize("n", [1, 3, 6])
def test_ldl_factor_and_solve_match_torch(n, device):
    a = rand((4, n, n), 19 + n)
    a = a + np.swapaxes(a, -1, -2)
    a[1, range(n), range(n)] = 0          # zero diagonal: 2x2 pivots
    a[2] *= 1e-3
    x, t = pair(a, device, T=True)
    for got, want in zip(fw.linalg.ldl_factor_ex(x), torch.linalg.ldl_factor_ex(t)):
        close(got, want)
    ld, piv = torch.linalg.ldl_factor_ex(t)[:2]
    fld, fpiv = fw.linalg.ldl_factor(x) if n > 1 else fw.linalg.ldl_factor_ex(x)[:2]
    b = rand((4, n, 2), 30)
    if n > 1:
        close(fw.linalg.ldl_solve(fld, fpiv, pair(b, device)[0]),
              torch.linalg.ldl_solve(ld, piv, torch.tensor(b)), 1e-9)


# ---- gradients ---------------------------------------------------------------------------

A4 = rand((2, 4, 4), 40)
B4 = rand((2, 4, 2), 41)
SPD = A4 @ np.swapaxes(A4, -1, -2) + np.eye(4)
CHOL = np.linalg.cholesky(SPD)
LU4, PIV4 = (t.numpy() for t in torch.linalg.lu_factor(torch.tensor(A4)))


def _piv(T, x):
    return T.tensor(PIV4, device=x.device)


GRADS = [
    ("lu_factor", lambda T, a: T.linalg.lu_factor(a)[0], [A4]),
    ("lu_factor_wide", lambda T, a: T.linalg.lu_factor(a)[0], [rand((3, 5), 42)]),
    ("lu_tall", lambda T, a: T.cat([p.flatten() for p in T.linalg.lu(a)[1:]]), [rand((5, 3), 43)]),
    ("lu_solve", lambda T, lu, b: T.linalg.lu_solve(lu, _piv(T, lu), b), [LU4, B4]),
    ("lu_solve_adjoint", lambda T, lu, b: T.linalg.lu_solve(lu, _piv(T, lu), b, adjoint=True),
     [LU4, B4]),
    ("lu_solve_right", lambda T, lu, b: T.linalg.lu_solve(lu, _piv(T, lu), b, left=False),
     [LU4, B4.swapaxes(-1, -2)]),
    ("lu_solve_right_adjoint", lambda T, lu, b: T.linalg.lu_solve(lu, _piv(T, lu), b, left=False,
                                                                   adjoint=True),
     [LU4, B4.swapaxes(-1, -2)]),
    ("solve_ex", lambda T, a, b: T.linalg.solve_ex(a, b)[0], [A4, B4]),
    ("solve_ex_vector", lambda T, a, b: T.linalg.solve_ex(a, b)[0], [A4[0], B4[0, :, 0]]),
    ("inv_ex", lambda T, a: T.linalg.inv_ex(a)[0], [A4]),
    ("cholesky_ex", lambda T, a: T.linalg.cholesky_ex((a + a.mT) / 2, upper=True)[0], [SPD]),
    ("matrix_exp", lambda T, a: T.linalg.matrix_exp(a), [A4]),
    ("cholesky_solve", lambda T, b, f: T.cholesky_solve(b, f.tril()), [B4, CHOL]),
    ("cholesky_inverse", lambda T, f: T.cholesky_inverse(f.mT.triu(), upper=True), [CHOL]),
    ("householder", lambda T, h, t: T.linalg.householder_product(h, t),
     [rand((5, 3), 44), rand(2, 45)]),
    ("cond_2", lambda T, a: T.linalg.cond(a), [A4]),
    ("cond_1", lambda T, a: T.linalg.cond(a, 1), [A4]),   # torch's own backward fails here
    ("cross", lambda T, a, b: T.linalg.cross(a, b), [rand((2, 3), 46), rand((2, 3), 47)]),
    ("vander", lambda T, x: T.linalg.vander(x, N=4), [rand(3, 48)]),
    ("tensorinv", lambda T, a: T.linalg.tensorinv(a, ind=1), [rand((4, 2, 2), 49)]),
    ("tensorsolve", lambda T, a, b: T.linalg.tensorsolve(a, b), [rand((2, 2, 4), 50),
                                                                  rand((2, 2), 51)]),
]


@pytest.mark.parametrize("name,fn,arrays", GRADS, ids=[g[0] for g in GRADS])
def test_gradients(name, fn, arrays, device):
    xs = [fw.tensor(a, dtype=fw.float64, device=device).requires_grad_() for a in arrays]
    ts = [torch.tensor(a, dtype=torch.float64).requires_grad_() for a in arrays]
    if device == "cpu":    # finite differences once; the cuda run checks against torch
        assert fw.autograd.gradcheck(lambda *x: fn(fw, *x), xs)
    if name == "cond_1":
        return
    out, tout = fn(fw, *xs), fn(torch, *ts)
    w = rand(tuple(tout.shape), 60)
    got = fw.autograd.grad((out * fw.tensor(w, device=device)).sum(), xs)
    want = torch.autograd.grad((tout * torch.tensor(w)).sum(), ts)
    for g, t in zip(got, want):
        close(g, t, 1e-9)


def test_matrix_exp_second_order():
    """Its derivative is a matrix_exp too: gradgradcheck (cpu only: it is slow under the
    interpreter, and test_gradients compares the cuda derivative with torch's)."""
    x = fw.tensor(A4[0] / 2, dtype=fw.float64).requires_grad_()
    assert fw.autograd.gradgradcheck(lambda a: fw.linalg.matrix_exp(a), [x])


def test_ldl_factor_has_no_derivative(device):
    x = fw.tensor(SPD[0], device=device).requires_grad_()
    with pytest.raises(RuntimeError):
        fw.linalg.ldl_factor(x)[0].sum().backward()


# ---- addmm, baddbmm, linear: C read in the GEMM's epilogue -------------------------------

ADD_TOL = {fw.float32: 1e-5, fw.float16: 2e-3, fw.bfloat16: 1.6e-2, fw.int32: 0.0}


def exact(shape, dtype, device, seed, T=False, fill=None):
    """A tensor of values exact in ``dtype`` (stored transposed when ``T``; all ``fill`` if
    given) and its float64 values."""
    rng = np.random.default_rng(seed)
    if fill is not None:
        arr = np.full(shape, fill)
    elif dtype.is_floating_point:
        arr = rng.standard_normal(shape)
    else:
        arr = rng.integers(-6, 7, shape).astype(np.float64)
    if T:
        t = fw.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype=dtype,
                      device=device).mT
    else:
        t = fw.tensor(arr, dtype=dtype, device=device)
    return t, t.cpu().double().numpy()


def close_to(got, ref, dtype):
    assert got.dtype is dtype
    tol = ADD_TOL[dtype]
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(got.detach().cpu().double().numpy(), ref, rtol=tol,
                               atol=tol * scale)


@pytest.mark.parametrize("dtype", [fw.float32, fw.float16, fw.bfloat16, fw.int32], ids=str)
@pytest.mark.parametrize("kind", ["row", "full", "T"])
@pytest.mark.parametrize("beta,alpha", [(0, 1), (1, 1), (0.5, 2)])
def test_addmm_bias(device, dtype, kind, beta, alpha):
    # 33x17 @ 17x40 crosses tile edges; with beta == 0, C is NaN and must not be read
    if not dtype.is_floating_point and beta == 0.5:
        beta = 3
    a, na = exact((33, 17), dtype, device, 70)
    b, nb = exact((17, 40), dtype, device, 71, T=True)
    nan = np.nan if beta == 0 and dtype.is_floating_point else None
    c, nc = exact((40,) if kind == "row" else (33, 40), dtype, device, 72, kind == "T", nan)
    ref = alpha * (na @ nb) + (0 if beta == 0 else beta * nc)
    close_to(fw.addmm(c, a, b, beta=beta, alpha=alpha), ref, dtype)


@pytest.mark.parametrize("dtype", [fw.float32, fw.bfloat16], ids=str)
def test_addmm_bias_long_k(device, dtype):
    # M = N = 16, K = 4096: the cuda GEMM splits K, and its reduction adds C
    x, nx = exact((16, 4096), dtype, device, 73)
    w, nw = exact((16, 4096), dtype, device, 74)
    bias, nbias = exact((16,), dtype, device, 75)
    close_to(fw.nn.functional.linear(x, w, bias), nx @ nw.T + nbias, dtype)
    c, nc = exact((16, 16), dtype, device, 76, T=True)
    close_to(fw.addmm(c, x, w.t(), beta=0.5, alpha=2), 0.5 * nc + 2 * (nx @ nw.T), dtype)
    nan = fw.full((16,), float("nan"), dtype=dtype, device=device)
    close_to(fw.addmm(nan, x, w.t(), beta=0), nx @ nw.T, dtype)


def test_addmm_bias_general_paths(device):
    # out=, baddbmm with a broadcast row, and a C that is part of out (read before written)
    a, na = exact((2, 9, 20), fw.float32, device, 77)
    b, nb = exact((2, 20, 11), fw.float32, device, 78, T=True)
    c, nc = exact((11,), fw.float32, device, 79)
    close_to(fw.baddbmm(c, a, b, beta=0.5, alpha=2), 0.5 * nc + 2 * np.matmul(na, nb),
             fw.float32)
    out = fw.full((9, 11), float("nan"), device=device)
    assert fw.addmm(c, a[0], b[0], out=out) is out
    close_to(out, nc + na[0] @ nb[0], fw.float32)
    o, no = exact((9, 11), fw.float32, device, 80)
    fw.addmm(o[2], a[0], b[0], beta=2, out=o)
    close_to(o, 2 * no[2] + na[0] @ nb[0], fw.float32)
    t = o.clone()
    t.addmm_(a[1], b[1], beta=0.5)
    close_to(t, 0.5 * o.cpu().double().numpy() + na[1] @ nb[1], fw.float32)
