"""framework.linalg.eig and eigvals: eigen-decomposition of general square matrices, whose
eigenvalues and eigenvectors are complex even for real input (as in PyTorch).

As the other decompositions (linalg_lapack.py), LAPACK's geev through NumPy on a host copy,
results returned on the input's device. NumPy's geev normalises each eigenvector to unit
2-norm with its largest component real, as PyTorch's does."""
import collections

import numpy as np

from .linalg_checks import check_float, check_matrix
from .linalg_lapack import _back, _finish, _finish_all, _host

_eig_t = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def _host_eig(op, A, vectors):
    check_float(op, A)
    check_matrix(op, A)
    a = _host(A)
    if a.size and not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    cdt = A.dtype.to_complex()
    if not a.size:      # NumPy refuses empty batches and 0x0 matrices
        w = np.zeros(a.shape[:-1], cdt.np)
        v = np.zeros(a.shape, cdt.np) if vectors else None
    elif vectors:
        w, v = np.linalg.eig(a)
    else:
        w, v = np.linalg.eigvals(a), None
    dev = A._storage.device
    w = _back(np.asarray(w, cdt.np), cdt, dev)
    return w, (_back(np.asarray(v, cdt.np), cdt, dev) if vectors else None)


def eig(A, *, out=None):
    """Eigenvalues and eigenvectors (columns, unit norm) of each square matrix in ``A``;
    complex results (complex64 for float32 and complex64 input, complex128 otherwise)."""
    w, v = _host_eig("linalg.eig", A, True)
    return _finish_all(_eig_t(w, v), out)


def eigvals(A, *, out=None):
    """Eigenvalues of each square matrix in ``A`` (complex)."""
    return _finish(_host_eig("linalg.eigvals", A, False)[0], out)
