"""linalg.ldl_factor, linalg.ldl_factor_ex and linalg.ldl_solve: the Bunch-Kaufman
factorization A = P L D L^T P^T of symmetric matrices, in LAPACK's packed form (sytrf
with the lower triangle: L below the diagonal, D's 1x1 and 2x2 blocks on and next to it,
1-based pivots, negative for 2x2 blocks). LAPACK's sytrf / sytrs through
framework._C.lapack (native/lapack.cpp), on a host copy; results go back to the input's
device."""
import math

import numpy as np

from .. import _C, _dtype
from ..return_types import _structseq
from . import args as _args
from .linalg_checks import (LinAlgError, batch_prefix, check_bool, check_float, check_matrix,
                            no_complex)
from .linalg_lapack import _back, _finish, _finish_all, _host
from .pointwise import require_tensor, type_name

_ldl_factor_t = _structseq("linalg_ldl_factor", ("LD", "pivots"))
_ldl_factor_ex_t = _structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))

def _colmajor(a):
    from .linalg_lu import _colmajor as colmajor
    return colmajor(a, a.dtype if a.dtype in (np.float32, np.float64) else np.float64)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info) of the LDL^T factorization with Bunch-Kaufman pivoting; info > 0
    marks a singular D (no error unless ``check_errors``)."""
    op = "torch.linalg.ldl_factor_ex"
    check_float(op, A, low_precision=False)
    no_complex("linalg_ldl_factor_ex", A)
    check_matrix(op, A)
    check_bool("linalg_ldl_factor_ex", "hermitian", hermitian)
    if A.dtype.itemsize == 2:
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for "
                                  f"'{type_name(A.dtype)}'")
    a = _host(A)
    n, nb = a.shape[-1], math.prod(a.shape[:-2])
    flat = _colmajor(a)
    pivots = np.zeros((nb, n), np.int32)
    info = np.zeros(nb, np.int32)
    with np.errstate(all="ignore"):
        _C.lapack.sytrf(flat, pivots, info)
    if check_errors:
        _check_info(op, a, info)
    dev = A._storage.device
    ld = np.tril(np.swapaxes(flat, -1, -2)).reshape(a.shape)   # the upper part is scratch
    return _finish_all(_ldl_factor_ex_t(
        _back(ld, A.dtype, dev),
        _back(pivots.reshape(a.shape[:-1]), _dtype.int32, dev),
        _back(info.reshape(a.shape[:-2]), _dtype.int32, dev)), out)


def _check_info(op, a, info):
    bad = np.nonzero(info > 0)[0]
    if len(bad):
        i, j = int(bad[0]), int(info[bad[0]])
        raise LinAlgError(f"{op}: {batch_prefix(a, i)}The factorization could not be "
                          f"completed because the block diagonal matrix D is singular "
                          f"(D[{j},{j}] is zero).")


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots) of :func:`ldl_factor_ex`; raises where D is singular."""
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    _check_info("torch.linalg.ldl_factor", np.empty(A._shape[:-2] + (0, 0)),
                np.asarray(info._host_array()).reshape(-1))
    return _finish_all(_ldl_factor_t(LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from A's LDL^T factorization (:func:`ldl_factor`)."""
    op = "torch.linalg.ldl_solve"
    require_tensor("linalg_ldl_solve", LD, "LD", 1)
    require_tensor("linalg_ldl_solve", pivots, "pivots", 2)
    require_tensor("linalg_ldl_solve", B, "B", 3)
    no_complex("linalg_ldl_solve", LD, B)
    _args.same_device(op, LD, B)
    check_matrix(op, LD)
    if B.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got -2)")
    if LD.dtype is not B.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{type_name(B.dtype)} and A of type {type_name(LD.dtype)} instead.")
    n = LD._shape[-1]
    if B._shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B._shape[-2]} by {B._shape[-1]}")
    if pivots._shape != LD._shape[:-1]:
        raise RuntimeError(f"{op}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots._shape)} instead")
    if pivots.dtype.category != 1:
        raise RuntimeError(f"{op}: Expected pivots to be integers. Got {type_name(pivots.dtype)}")
    ld, piv, b = _host(LD), np.asarray(pivots._host_array()), _host(B)
    if piv.size and (np.abs(piv).max() > n or (piv == 0).any()):   # sytrs would read outside A
        raise RuntimeError(f"{op}: pivots must be in [1, {n}] (or their negatives for 2x2 "
                           f"blocks). Did you properly pass the result of ldl_factor?")
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    k = b.shape[-1]
    ld_c = _colmajor(np.broadcast_to(ld, batch + (n, n)))
    piv_c = np.ascontiguousarray(np.broadcast_to(piv, batch + (n,)), np.int32).reshape(
        (math.prod(batch), n))
    x = _colmajor(np.broadcast_to(b, batch + (n, k)))
    with np.errstate(all="ignore"):
        _C.lapack.sytrs(ld_c, piv_c, x)
    x = np.swapaxes(x.reshape(batch + (k, n)), -1, -2)
    return _finish(_back(x, LD.dtype, LD._storage.device), out)
