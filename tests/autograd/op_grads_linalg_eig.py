"""Gradient cases of linalg.eig and linalg.eigvals: real inputs, real losses (the
eigenvalues as (real, imag) pairs; the eigenvectors through abs(), which does not depend
on their arbitrary phases)."""
R = "real"


def _shifted(T, a):
    # distinct eigenvalues, away from each other: a well-conditioned derivative
    return a + T.diag_embed(T.arange(a.shape[-1], dtype=a.dtype) * 2.0)


def _eig(T, a):
    L, V = T.linalg.eig(_shifted(T, a))
    return T.cat([T.view_as_real(L).flatten(), V.abs().flatten()])


CASES = [
    ("linalg.eigvals", lambda T, a: T.view_as_real(T.linalg.eigvals(_shifted(T, a))),
     [(3, 3)], R),
    ("linalg.eig", _eig, [(2, 3, 3)], R),
]
