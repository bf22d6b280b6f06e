"""Derivative helpers of the LU family, matrix_exp, cholesky_solve and cholesky_inverse
(ops.yaml rows of framework/_ops/linalg_lu.py and linalg_extra.py). PyTorch's formulas
(FunctionsManual.cpp), written with framework ops so that create_graph differentiates them
in turn. Real inputs only; outputs without a gradient come in as zeros."""
import framework  # loaded first: formulas run only after framework is imported


def _solve_tri(A, B, upper, left=True, unitriangular=False):
    return framework.linalg.solve_triangular(A, B, upper=upper, left=left,
                                             unitriangular=unitriangular)


def linalg_lu_backward(gL, gU, P, L, U, pivot):
    """Gradient of A from those of L and U in A = P L U (square, wide and tall A)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = L.mT.matmul(gL).tril(-1) + gU.matmul(U.mT).triu()
        gA = _solve_tri(U.mT, gA, False, left=False)
        gA = _solve_tri(L.mT, gA, True, unitriangular=True)
    elif m < n:
        U1, gU1, gU2 = U[..., :k], gU[..., :k], gU[..., k:]
        gA = L.mT.matmul(gL) - gU.triu().matmul(U.mT)
        gA = _solve_tri(U1.mT, gA.tril(-1), False, left=False)
        gA = framework.cat([gA + gU1.triu(), gU2], -1)
        gA = _solve_tri(L.mT, gA, True, unitriangular=True)
    else:
        L1, gL1, gL2 = L[..., :k, :], gL[..., :k, :], gL[..., k:, :]
        gA = gU.matmul(U.mT) - L.mT.matmul(gL.tril(-1))
        gA = _solve_tri(L1.mT, gA.triu(), True, unitriangular=True)
        gA = framework.cat([gA + gL1.tril(-1), gL2], -2)
        gA = _solve_tri(U.mT, gA, False, left=False)
    return P.matmul(gA) if pivot else gA


def lu_unpack_backward(grads, LU):
    """Gradient of the packed LU from those of L (strictly below the diagonal) and U."""
    gL, gU = grads[1], grads[2]
    if gL.numel() == 0 and gU.numel() == 0:   # unpack_data=False: L and U are empty
        return framework.zeros_like(LU)
    m, n = LU.shape[-2], LU.shape[-1]
    gL, gU = gL.tril(-1), gU.triu()
    if m < n:
        gL = framework.cat([gL, framework.zeros_like(gU[..., :, m:])], -1)
    elif m > n:
        gU = framework.cat([gU, framework.zeros_like(gL[..., n:, :])], -2)
    return gL + gU


def lu_factor_ex_backward(grad, LU, pivots, pivot):
    """Gradient of A from that of the packed LU (strict lower part: L's, the rest: U's)."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    P, L, U = framework.lu_unpack(LU, pivots)
    gL = grad[..., :, :k].tril(-1)
    gU = grad[..., :k, :].triu()
    return linalg_lu_backward(gL, gU, P, L, U, pivot)


def lu_solve_backward_lu(gX, LU, pivots, X, left, adjoint):
    """Gradient of the packed LU of linalg.lu_solve (PyTorch's linalg_lu_solve_LU)."""
    P, L, U = framework.lu_unpack(LU, pivots)
    if left != adjoint:
        gR = _solve_tri(U.mT, -(gX if left else gX.mT).matmul(X.mT if left else X), False)
        gL = _solve_tri(L.mT, gR.matmul(U.mT), True, unitriangular=True).tril(-1)
        return gL + gR.triu()
    gR = -P.mT.matmul(X if left else X.mT).matmul(gX.mT if left else gX).matmul(P)
    gR = _solve_tri(L.mT, gR, True, left=False, unitriangular=True)
    gU = _solve_tri(U.mT, L.mT.matmul(gR), False, left=False).triu()
    return gR.tril(-1) + gU


def lu_solve_backward_b(gX, LU, pivots, left, adjoint):
    return framework.linalg.lu_solve(LU, pivots, gX, left=left, adjoint=not adjoint)


def solve_ex_backward(grad, A, X, left, wrt_a):
    """Gradients of A and B in A X = B (X A = B when not ``left``); X a vector, or a batch
    of vectors, when its shape is A's without the last dim."""
    vector = left and X.dim() == A.dim() - 1
    g, x = (grad.unsqueeze(-1), X.unsqueeze(-1)) if vector else (grad, X)
    if not left:
        g, x = g.mT, x.mT
    gB = framework.linalg.solve(A.mT if left else A, g)
    if not wrt_a:
        return gB.squeeze(-1) if vector else (gB if left else gB.mT)
    gA = -gB.matmul(x.mT)
    return gA if left else gA.mT


def matrix_exp_backward(grad, A):
    """exp([[A^T, G], [0, A^T]]) holds the gradient in its upper right block."""
    n = A.shape[-1]
    At = A.mT
    top = framework.cat([At, grad], -1)
    bottom = framework.cat([framework.zeros_like(At), At], -1)
    big = framework.linalg.matrix_exp(framework.cat([top, bottom], -2))
    return big[..., :n, n:]


def cholesky_solve_backward(grad, input2, result, upper, wrt_self):
    g_self = framework.cholesky_solve(grad, input2, upper=upper)
    if wrt_self:
        return g_self
    common = g_self.matmul(result.mH)
    common = common + common.mH
    return -input2.matmul(common) if upper else -common.matmul(input2)


def cholesky_inverse_backward(grad, L, upper, result):
    common = result.matmul((grad + grad.mH).matmul(result))
    return -L.matmul(common) if upper else -common.matmul(L)
