"""Differentiable calls of the LU family, the _ex variants, matrix_exp and the Cholesky
solves for the autograd tests (op_grads.CASES takes them in): (name, fn(T, *inputs),
input shapes, domain). Small shapes: every kernel of their formulas runs in Triton's
interpreter on simulated cuda."""
P = "pos"      # inputs in (0.5, 2): a.tril() is a Cholesky factor
R = "real"


def _eye(T, a):
    return 3 * T.eye(a.shape[-1], dtype=a.dtype, device=a.device)


CASES = [
    ("lu_factor", lambda T, a: T.linalg.lu_factor(a)[0], [(3, 3)], R),
    ("lu_factor_ex_wide", lambda T, a: T.linalg.lu_factor_ex(a)[0], [(2, 3)], R),
    ("lu_factor_ex_tall", lambda T, a: T.linalg.lu_factor_ex(a)[0], [(3, 2)], R),
    ("lu_solve", lambda T, a, b: T.linalg.lu_solve(*T.linalg.lu_factor(a + _eye(T, a)), b),
     [(2, 2), (2, 1)], R),
    ("lu_solve_adjoint_right", lambda T, a, b: T.linalg.lu_solve(
        *T.linalg.lu_factor(a + _eye(T, a)), b, left=False, adjoint=True), [(2, 2), (1, 2)], R),
    ("solve_ex", lambda T, a, b: T.linalg.solve_ex(a + _eye(T, a), b)[0], [(2, 2), (2, 1)], R),
    ("inv_ex", lambda T, a: T.linalg.inv_ex(a + _eye(T, a))[0], [(2, 2)], R),
    ("cholesky_ex", lambda T, a: T.linalg.cholesky_ex(a @ a.mT + _eye(T, a))[0], [(2, 2)], R),
    ("linalg_matrix_exp", lambda T, a: T.linalg.matrix_exp(a), [(3, 3)], R),
    ("matrix_exp", lambda T, a: a.matrix_exp(), [(2, 2, 2)], R),
    ("cholesky_solve", lambda T, b, a: T.cholesky_solve(b, a.tril()), [(2, 1), (2, 2)], P),
    ("cholesky_inverse", lambda T, a: T.cholesky_inverse(a.triu(), upper=True), [(2, 2)], P),
]
