"""Input checks and failure reports of the LAPACK-backed linear algebra
(framework/_ops/linalg_lapack.py): dtype and shape checks, and where a decomposition fails
(singular, not positive-definite, non-finite input), the index and text PyTorch reports."""
import math

import numpy as np

from .pointwise import require_tensor, type_name


class _LinAlgError(RuntimeError):
    """Raised when a decomposition or solve fails on its input (torch.linalg.LinAlgError)."""


# PyTorch's class is torch._C._LinAlgError, exposed as torch.linalg.LinAlgError: code that
# reports type(e).__name__ sees "_LinAlgError" there, and must see it here too
LinAlgError = _LinAlgError


def check_float(op, x, low_precision=True):
    require_tensor(op, x, "A", 1)
    if x.dtype.category < 2:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{type_name(x.dtype)}")
    if low_precision and x.dtype.itemsize == 2:
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {type_name(x.dtype)}")


def check_matrix(op, x, square=True):
    if x.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if square and x._shape[-1] != x._shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{x._shape[-2]} by {x._shape[-1]} matrices")


def not_implemented(kernel, x):
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(x.dtype)}'")


def no_complex(kernel, *xs):
    """Refuses complex inputs of an op whose complex case is not written yet (PyTorch has
    it): a NotImplementedError, never a wrong answer."""
    for x in xs:
        if getattr(getattr(x, "dtype", None), "is_complex", False):
            not_implemented(kernel, x)


def check_bool(op, name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{op}(): argument '{name}' must be bool, not {type(v).__name__}")


def nan_whole(a, r):
    """``r`` with the result of every matrix of ``a`` that holds a NaN made all NaN, as
    PyTorch's LU-based inverse and solve leave it (NumPy's leaves some entries finite)."""
    bad = np.isnan(a).any(axis=(-2, -1))
    if bad.any():
        r = np.array(r)
        r[np.broadcast_to(bad, r.shape[:-2])] = np.nan
    return r


def host_svd(a, **kw):
    """np.linalg.svd, failing with PyTorch's LinAlgError."""
    try:
        return np.linalg.svd(a, **kw)
    except np.linalg.LinAlgError:
        why = ("the input matrix contained non-finite values" if not np.isfinite(a).all() else
               "the input matrix is ill-conditioned or has too many repeated singular values")
        raise LinAlgError(f"linalg.svd: The algorithm failed to converge because {why}.") \
            from None


def batch_prefix(arr, i):
    return f"(Batch element {i}): " if arr.ndim > 2 else ""


def first_failure(arr, fails):
    """Index (flat over batch dims) of the first matrix for which ``fails`` is true."""
    flat = arr.reshape((-1,) + arr.shape[-2:])
    for i, m in enumerate(flat):
        if fails(m):
            return i, m
    return 0, flat[0]


def singular(m):
    try:
        np.linalg.inv(m)
        return False
    except np.linalg.LinAlgError:
        return True


def zero_pivot(m):
    """1-based index of the first zero pivot of LU with partial pivoting (as getrf)."""
    a = np.array(m, dtype=np.float64)
    n = a.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if a[p, j] == 0:
            return j + 1
        a[[j, p]] = a[[p, j]]
        a[j + 1:, j:] -= np.outer(a[j + 1:, j] / a[j, j], a[j, j:])
    return n


def potrf_info(m):
    """LAPACK potrf's info for the lower triangle of ``m``: the order of the first leading
    minor whose pivot is not > 0 (NaN included), else 0. The column under an infinite pivot
    comes out NaN, as in PyTorch's LAPACK."""
    n = m.shape[0]
    low = np.zeros((n, n))
    with np.errstate(all="ignore"):
        for j in range(n):
            d = m[j, j] - low[j, :j] @ low[j, :j]
            if not d > 0:
                return j + 1
            low[j, j] = math.sqrt(d)
            col = (m[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
            low[j + 1:, j] = np.nan if math.isinf(low[j, j]) else col
    return 0
