"""Cases for linalg.eig and linalg.eigvals: eigenvalues against NumPy's (LAPACK geev), and
the eigen-equation A V = V diag(L) with unit-norm eigenvectors."""
import numpy as np

from helpers import make, to_np
from opdb import Case


def _eig(fw, device):
    out = []
    for dtype, shape in ((fw.float64, (2, 4, 4)), (fw.float32, (5, 5)), (fw.complex128, (3, 3))):
        t, a = make(shape, dtype, device, seed=7)
        L, V = fw.linalg.eig(t)
        assert L.dtype is dtype.to_complex() and V.dtype is dtype.to_complex()
        assert L.device == t.device and V.device == t.device
        l, v = to_np(L).astype(np.complex128), to_np(V).astype(np.complex128)
        tol = 1e-4 if dtype is fw.float32 else 1e-10
        np.testing.assert_allclose(a @ v, v * l[..., None, :], atol=tol * 10, rtol=tol)
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=tol)
        out.append((fw.linalg.eigvals(t), np.linalg.eigvals(a.astype(np.complex128))))
        out.append((L, np.linalg.eig(a.astype(np.complex128 if dtype.is_complex else np.float64))[0]))
    L, V = fw.linalg.eig(fw.zeros(2, 0, 0, device=device))
    out.append((L, np.zeros((2, 0), np.complex64)))
    return out


CASES = {
    "linalg.eig": [Case(_eig)],
    "linalg.eigvals": [Case(lambda fw, device: _eig(fw, device)[:1])],
}
