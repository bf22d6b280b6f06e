"""Derivative helpers of the linear algebra ops in ops.yaml (decompositions, solvers,
inverses, matrix norms). Like framework/autograd/formulas.py they are written with
framework ops only, so that with create_graph they are differentiated in turn.

Real inputs only. Decompositions (svd, eigh, qr) assume distinct singular values or
eigenvalues and full rank, as PyTorch's formulas do; otherwise gradients are inf or nan.
"""
import math

import framework  # loaded first: formulas run only after framework is imported

from .formulas import norm_backward


def _used(g):
    """Whether an output's gradient takes part: the engine gives unused outputs zero
    gradients, and some formulas (svd's, with its 1 / (s_j^2 - s_i^2)) must then leave out
    their terms, as PyTorch leaves out undefined gradients."""
    return g is not None and g.numel() > 0 and bool(g.ne(0).any())


def _eye_mask(n, device):
    return framework.eye(n, dtype=framework.bool, device=device)


# ---- determinants, solvers, powers, products ---------------------------------------------

def det_backward(grad, input, result):
    return (grad * result).unsqueeze(-1).unsqueeze(-1) * input.inverse().mT


def solve_backward(grad, A, result, left, wrt_a):
    # mH: the adjoint, which is mT for real tensors (complex: the conjugate Wirtinger rule)
    gb = framework.linalg.solve(A.mH, grad, left=left)
    if not wrt_a:
        return gb
    # a vector right-hand side (B of shape (*, n)): a column for left, a row for right
    vec = result.dim() == A.dim() - 1
    x, g = result, gb
    if vec:
        x, g = (x.unsqueeze(-1), g.unsqueeze(-1)) if left else (x.unsqueeze(-2), g.unsqueeze(-2))
    return -g.matmul(x.mH) if left else -x.mH.matmul(g)


def solve_triangular_backward(grad, A, result, upper, left, unitriangular, wrt_a):
    gB = framework.linalg.solve_triangular(A.mT, grad, upper=not upper, left=left,
                                           unitriangular=unitriangular)
    if not wrt_a:
        return gB
    gA = -gB.matmul(result.mT) if left else -result.mT.matmul(gB)
    gA = gA.triu() if upper else gA.tril()
    if unitriangular:
        gA = gA - gA.diagonal(0, -2, -1).diag_embed()
    return gA


def matrix_power_backward(grad, A, n):
    if n == 0:
        return grad * 0
    if n < 0:
        B = framework.linalg.inv(A)
        gB = matrix_power_backward(grad, B, -n)
        return -B.mT.matmul(gB).matmul(B.mT)
    powers = [None] * n
    eye = framework.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
    powers[0] = eye
    for k in range(1, n):
        powers[k] = powers[k - 1].matmul(A)
    g = grad * 0
    for k in range(n):
        g = g + powers[k].mT.matmul(grad).matmul(powers[n - 1 - k].mT)
    return g


def chain_backward(grad, mats):
    """Gradients of M0 @ M1 @ ... (1-d first/last as row/column vectors, for multi_dot)."""
    ms = list(mats)
    first1, last1 = ms[0].dim() == 1, ms[-1].dim() == 1
    if first1:
        ms[0] = ms[0].unsqueeze(0)
    if last1:
        ms[-1] = ms[-1].unsqueeze(-1)
    g = grad
    if first1:
        g = g.unsqueeze(0)
    if last1:
        g = g.unsqueeze(-1)
    outs = []
    for i in range(len(ms)):
        left = None
        for m in ms[:i]:
            left = m if left is None else left.matmul(m)
        right = None
        for m in ms[i + 1:]:
            right = m if right is None else right.matmul(m)
        gi = g
        if left is not None:
            gi = left.mT.matmul(gi)
        if right is not None:
            gi = gi.matmul(right.mT)
        outs.append(gi.reshape(mats[i].shape))
    return outs


# ---- symmetric decompositions ---------------------------------------------------------------

def cholesky_backward(grad, result, upper):
    L = result.mT if upper else result
    gL = grad.mT if upper else grad
    P = L.mT.matmul(gL)
    P = P.tril() - 0.5 * P.diagonal(0, -2, -1).diag_embed()
    Linv = framework.linalg.inv(L)
    gA = Linv.mT.matmul(P).matmul(Linv)
    return (gA + gA.mT) / 2


def eigh_backward(grads, results):
    L, V = results
    gL, gV = grads
    Vt = V.mT
    inner = gL.diag_embed() if gL is not None else 0
    if gV is not None:
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        eye = _eye_mask(L.shape[-1], L.device)
        F = (1 / E.masked_fill(eye, 1)).masked_fill(eye, 0)
        sym = Vt.matmul(gV)
        inner = inner + F * (sym - sym.mT) / 2
    g = V.matmul(inner).matmul(Vt)
    return (g + g.mT) / 2


def eigvalsh_backward(grad, A, UPLO):
    _, V = framework.linalg.eigh(A, UPLO)
    return V.matmul(grad.diag_embed()).matmul(V.mT)


# ---- singular value decomposition -------------------------------------------------------

def svdvals_backward(grad, A):
    U, _, Vh = framework.linalg.svd(A, full_matrices=False)
    return U.matmul(grad.diag_embed()).matmul(Vh)


def svd_backward(gU, gS, gVh, U, S, Vh):
    """Gradient of A = U diag(S) Vh from the gradients of U, S and Vh (m x m and n x n
    when full_matrices: only their first k = min(m, n) columns / rows count, the others
    being an arbitrary basis, as PyTorch documents)."""
    k = S.shape[-1]
    U, gU = U[..., :k], gU[..., :k]
    Vh, gVh = Vh[..., :k, :], gVh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    use_u, use_v = _used(gU), _used(gVh)
    if not use_u and not use_v:
        return U.matmul(gS.diag_embed()).matmul(Vh)
    Sr, Sc = S.unsqueeze(-2), S.unsqueeze(-1)
    S2 = S * S
    # E[i, j] = s_j^2 - s_i^2 off the diagonal (where the numerator is zero)
    E = (S2.unsqueeze(-2) - S2.unsqueeze(-1)).masked_fill(_eye_mask(k, S.device), 1)
    inner = gS.diag_embed()
    if use_u:
        J = U.mT.matmul(gU)
        inner = inner + (J - J.mT) * Sr / E
    if use_v:
        K = Vh.matmul(gVh.mT)
        inner = inner + Sc * (K - K.mT) / E
    if m > k and use_u:
        # the part of gU outside the span of U: (I - U U^T) gU S^-1 Vh
        gUS = gU / Sr
        return (U.matmul(inner) + gUS - U.matmul(U.mT.matmul(gUS))).matmul(Vh)
    if n > k and use_v:
        gVS = gVh / Sc
        return U.matmul(inner.matmul(Vh) + gVS - gVS.matmul(Vh.mT).matmul(Vh))
    return U.matmul(inner).matmul(Vh)


def linalg_svd_backward(grads, results):
    """framework.linalg.svd: (U, S, Vh)."""
    return svd_backward(*grads, *results)


# ---- QR ------------------------------------------------------------------------------------

def qr_backward(grads, results, mode):
    """Gradient of A = Q R for mode 'reduced' (and 'complete' when m <= n, where it is the
    same): PyTorch's errors otherwise."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    gQ, gR = grads
    Q, R = results
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    if m >= n:
        return _qr_backward_tall(gQ, gR, Q, R)
    # A = [X | Y] with X = Q R1 square and Y = Q R2: R2 = Q^T Y also moves with Q
    R1, R2 = R[..., :m], R[..., m:]
    gR1, gR2 = gR[..., :m], gR[..., m:]
    gX = _qr_backward_tall(gQ + Q.matmul(R2).matmul(gR2.mT), gR1, Q, R1)
    return framework.cat([gX, Q.matmul(gR2)], -1)


def _qr_backward_tall(gQ, gR, Q, R):
    """m >= n: gA = (gQ + Q sym(M)) R^-T, M = R gR^T - gQ^T Q, sym copying M's lower
    triangle to its upper one."""
    M = R.matmul(gR.mT) - gQ.mT.matmul(Q)
    low = M.tril(-1)
    b = gQ + Q.matmul(low + low.mT + M.diagonal(0, -2, -1).diag_embed())
    return framework.linalg.solve_triangular(R.mT, b, upper=False, left=False)


def old_qr_backward(grads, results, some):
    """framework.qr: linalg.qr with mode 'reduced' (some) or 'complete'."""
    return qr_backward(grads, results, "reduced" if some else "complete")


# ---- pseudo-inverse and least squares ------------------------------------------------------

def pinv_backward(grad, A, result):
    """Gradient of P = pinv(A) at constant rank:
    -P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A)."""
    P, G = result, grad
    Gt = G.mH
    first = -P.mH.matmul(G).matmul(P.mH)
    second = (Gt - A.matmul(P.matmul(Gt))).matmul(P).matmul(P.mH)
    third = P.mH.matmul(P).matmul(Gt - Gt.matmul(P).matmul(A))
    return first + second + third


def lstsq_backward(grads, A, B, results, wrt_a):
    """Gradients of the solution X = pinv(A) B and of the residuals |A x_j - b_j|^2 (when
    returned). rank and singular_values are not differentiable (as in PyTorch)."""
    gX, gR = grads[0], grads[1]
    X = results[0]
    # linalg.lstsq's rule: B holds vectors only where its shape is A's without the last dim
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        B, X, gX = B.unsqueeze(-1), X.unsqueeze(-1), gX.unsqueeze(-1)
    P = framework.linalg.pinv(A)
    if wrt_a:
        g = pinv_backward(gX.matmul(B.mT), A, P)
    else:
        g = P.mT.matmul(gX)
    if _used(gR):
        # X minimizes the residuals: only their explicit dependence on A and B counts
        w = 2 * (A.matmul(X) - B) * gR.unsqueeze(-2)
        g = g + w.matmul(X.mT) if wrt_a else g - w
    return g.squeeze(-1) if vector and not wrt_a else g


# ---- norms -----------------------------------------------------------------------------

def _extreme_share(x, ord):
    """d max (ord > 0) or d min of ``x`` over its last dim: shared evenly among ties."""
    r = x.amax(-1, keepdim=True) if ord > 0 else x.amin(-1, keepdim=True)
    mask = (x == r).to(x.dtype)
    return mask / mask.sum(-1, keepdim=True)


def matrix_norm_backward(grad, A, result, ord, dim, keepdim):
    """linalg.matrix_norm over the two dims ``dim``: 'fro', 'nuc', 2/-2 (through the
    singular values), 1/-1 (max/min column sum), inf/-inf (max/min row sum)."""
    if ord == "fro":
        return norm_backward(grad, A, result, 2, list(dim), keepdim)
    nd = A.dim()
    d0, d1 = (d % nd for d in dim)
    g = grad
    if keepdim:
        for d in sorted((d0, d1), reverse=True):
            g = g.squeeze(d)
    # computed in the result's dtype (the ``dtype`` argument), as the forward is
    Am = A.movedim((d0, d1), (-2, -1)).to(grad.dtype)
    g = g.unsqueeze(-1)
    if ord in ("nuc", 2, -2):
        if ord == "nuc":
            gs = g.expand(*g.shape[:-1], min(Am.shape[-2:]))
        else:
            gs = g * _extreme_share(framework.linalg.svdvals(Am), ord)
        gA = svdvals_backward(gs, Am)
    elif ord in (1, -1):
        gA = (g * _extreme_share(Am.abs().sum(-2), ord)).unsqueeze(-2) * Am.sgn()
    elif ord in (math.inf, -math.inf):
        gA = (g * _extreme_share(Am.abs().sum(-1), ord)).unsqueeze(-1) * Am.sgn()
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return gA.movedim((-2, -1), (d0, d1))


def linalg_norm_backward(grad, A, result, ord, dim, keepdim):
    """linalg.norm: a vector norm (int ``dim``, 1-d input, or neither ord nor dim) or a
    matrix norm (2-tuple ``dim``, or a 2-d input with ``ord``)."""
    dims = [dim] if isinstance(dim, int) else dim
    if dims is not None and len(dims) == 2:
        return matrix_norm_backward(grad, A, result, "fro" if ord is None else ord, dims,
                                    keepdim)
    if dims is None and ord is not None and A.dim() == 2:
        return matrix_norm_backward(grad, A, result, ord, (-2, -1), keepdim)
    return norm_backward(grad, A, result, 2 if ord is None else ord, dims, keepdim)
