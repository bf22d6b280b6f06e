"""LU-based linear algebra: linalg.lu_factor(_ex), linalg.lu, torch.lu, lu_unpack,
linalg.lu_solve (and torch.lu_solve), linalg.solve_ex, linalg.inv_ex, linalg.cholesky_ex.

As the other decompositions (linalg_lapack.py), the factorizations run on a host copy,
batched over leading dims, and return tensors on the input's device. NumPy exposes no
getrf, so LU and its solves call LAPACK's getrf / getrs through framework._C.lapack
(native/lapack.cpp, on the OpenBLAS the extension links): the pivots, info and partial
results of a singular matrix are LAPACK's, as PyTorch's.
"""
import builtins
import math

import numpy as np

from .. import _C, _dtype
from ..return_types import _structseq
from . import args as _args
from .linalg_checks import LinAlgError, batch_prefix, check_bool, potrf_info
from .linalg_lapack import _back, _finish_all, _host
from .pointwise import require_tensor, type_name

_lu_factor_t = _structseq("linalg_lu_factor", ("LU", "pivots"))
_lu_factor_ex_t = _structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_lu_t = _structseq("linalg_lu", ("P", "L", "U"))
_lu_unpack_t = _structseq("lu_unpack", ("P", "L", "U"))
_solve_ex_t = _structseq("linalg_solve_ex", ("result", "info"))
_inv_ex_t = _structseq("linalg_inv_ex", ("inverse", "info"))
_cholesky_ex_t = _structseq("linalg_cholesky_ex", ("L", "info"))


# ---- host kernels ----------------------------------------------------------------------------

def _colmajor(a, dtype):
    """Writable column-major (LAPACK's layout) copies of the matrices of ``a``, in one
    C-contiguous array flattened over the batch dims."""
    m, n = a.shape[-2:]
    return np.array(np.swapaxes(a, -1, -2), dtype, order="C").reshape(
        (math.prod(a.shape[:-2]), n, m))


def getrf(a, pivot=True):
    """LU of each (m, n) matrix of ``a``: (packed LU, 1-based int32 pivots, int32 info)."""
    dt = a.dtype if a.dtype in (np.float32, np.float64) else np.float64
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    nb = math.prod(batch)
    if not pivot:
        return _getrf_nopivot(np.array(a, dt), batch, m, n, k, nb)
    buf = _colmajor(a, dt)
    piv = np.zeros((nb, k), np.int32)
    info = np.zeros(nb, np.int32)
    _C.lapack.getrf(buf, piv, info)
    lu = np.swapaxes(buf.reshape(batch + (n, m)), -1, -2)
    return lu, piv.reshape(batch + (k,)), info.reshape(batch)


def _getrf_nopivot(a, batch, m, n, k, nb):
    """LU without row interchanges (what the GPU's getrf does with pivot=False), vectorised
    over the batch; a zero pivot sets info and divides by zero."""
    lu = a.reshape((nb, m, n)).copy()
    info = np.zeros(nb, np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in builtins.range(k):
            d = lu[:, j, j]
            info[(info == 0) & (d == 0)] = j + 1
            lu[:, j + 1:, j] /= d[:, None]
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    piv = np.tile(np.arange(1, k + 1, dtype=np.int32), (nb, 1))
    return lu.reshape(batch + (m, n)), piv.reshape(batch + (k,)), info.reshape(batch)


def perm_of(piv, m):
    """The row order ``perm`` with A[perm] = L U (sequential swaps of getrf's pivots)."""
    batch, k = piv.shape[:-1], piv.shape[-1]
    flat = piv.reshape((math.prod(batch), k)).astype(np.int64) - 1
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for i in builtins.range(k):
        t = perm[:, i].copy()
        perm[:, i] = perm[rows, flat[:, i]]
        perm[rows, flat[:, i]] = t
    return perm.reshape(batch + (m,))


def getrs(lu, piv, b, adjoint=False):
    """X with A X = B (A^T X = B when ``adjoint``) from getrf's output; batch dims of lu,
    piv and b broadcast."""
    n, k = lu.shape[-1], b.shape[-1]
    batch = np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b.shape[:-2])
    dt = np.result_type(lu, b)
    lu_c = _colmajor(np.broadcast_to(lu, batch + (n, n)), dt)
    piv_c = np.ascontiguousarray(np.broadcast_to(piv, batch + (n,)), np.int32).reshape(
        (math.prod(batch), n))
    x = _colmajor(np.broadcast_to(b, batch + (n, k)), dt)
    with np.errstate(all="ignore"):
        _C.lapack.getrs(lu_c, piv_c, x, bool(adjoint))
    return np.swapaxes(x.reshape(batch + (k, n)), -1, -2)


# ---- checks ---------------------------------------------------------------------------------

def _check_lu_input(op, A, kernel="lu_cpu"):
    require_tensor(op, A, "A", 1)
    if A.dim() < 2:
        name = "linalg.lu" if op == "linalg.lu" else "torch.lu_factor"
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A._shape)} instead")
    if not A.dtype.is_floating_point or A.dtype.itemsize == 2:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(A.dtype)}'")


def _check_pivot(op, A, pivot):
    check_bool(op, "pivot", pivot)
    if not pivot and A._storage.device.type == "cpu":
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _zero_u_message(op, arr, i, j):
    return (f"{op}: {batch_prefix(arr, i)}U[{j},{j}] is zero and using it on lu_solve would "
            f"result in a division by zero. If you still want to perform the factorization, "
            f"consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _raise_info(op, arr, info, text):
    flat = np.asarray(info).reshape(-1)
    bad = np.nonzero(flat > 0)[0]
    if len(bad):
        i = int(bad[0])
        raise LinAlgError(text(op, arr, i, int(flat[i])))


# ---- LU factorization ----------------------------------------------------------------------

def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LU factorization with partial pivoting in LAPACK's packed form: (LU, pivots, info),
    pivots 1-based int32 and info > 0 where U has a zero on its diagonal (no error unless
    ``check_errors``)."""
    _check_lu_input("linalg.lu_factor_ex", A)
    _check_pivot("linalg_lu_factor_ex", A, pivot)
    a = _host(A)
    lu, piv, info = getrf(a, pivot)
    if check_errors:
        _raise_info("torch.linalg.lu_factor_ex", a, info, _zero_u_message)
    dev = A._storage.device
    return _finish_all(_lu_factor_ex_t(_back(lu, A.dtype, dev), _back(piv, _dtype.int32, dev),
                                       _back(info, _dtype.int32, dev)), out)


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of :func:`lu_factor_ex`; raises where U has a zero on its diagonal."""
    from . import dispatcher
    _check_lu_input("linalg.lu_factor", A)
    _check_pivot("linalg_lu_factor", A, pivot)
    lu, piv, info = dispatcher.function("linalg.lu_factor_ex")(A, pivot=pivot)
    _raise_info("torch.linalg.lu_factor", np.empty(A._shape[:-2] + (0, 0)), info._host_array(),
                _zero_u_message)
    return _finish_all(_lu_factor_t(lu, piv), out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) with A = P L U from lu_factor's packed output; a part not asked for is an
    empty tensor."""
    from .creation import zeros
    require_tensor("lu_unpack", LU_data, "LU_data", 1)
    require_tensor("lu_unpack", LU_pivots, "LU_pivots", 2)
    if LU_pivots.dtype is not _dtype.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data._shape)} instead")
    (m, n), dev = LU_data._shape[-2:], LU_data._storage.device
    k = min(m, n)
    piv = np.asarray(LU_pivots._host_array())
    if piv.shape[-1:] != (k,) or (unpack_pivots and piv.size and
                                  (piv.min() < 1 or piv.max() > m)):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")
    empty = zeros((0,), dtype=LU_data.dtype, device=dev)
    if unpack_data:
        lu = _host(LU_data)
        L = _back(np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype), LU_data.dtype,
                  dev)
        U = _back(np.triu(lu[..., :k, :]), LU_data.dtype, dev)
    else:
        L = U = empty
    if unpack_pivots:
        perm = perm_of(piv, m)
        p = np.zeros(perm.shape + (m,))
        np.put_along_axis(p, perm[..., None], 1.0, axis=-1)   # row perm[i] of P^T is e_i
        P = _back(np.swapaxes(p, -1, -2), LU_data.dtype, dev)
    else:
        P = empty
    return _finish_all(_lu_unpack_t(P, L, U), out)


def lu(A, *, pivot=True, out=None):
    """linalg.lu: A = P L U with P a permutation matrix, L unit lower trapezoidal and U
    upper trapezoidal."""
    from . import dispatcher
    _check_lu_input("linalg.lu", A)
    _check_pivot("linalg_lu", A, pivot)
    lu_, piv, _ = dispatcher.function("linalg.lu_factor_ex")(A, pivot=pivot)
    P, L, U = dispatcher.function("lu_unpack")(lu_, piv)
    return _finish_all(_lu_t(P, L, U), out)


def lu_deprecated(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots) of :func:`framework.linalg.lu_factor_ex`, and its info with
    ``get_infos``; never raises on a singular matrix."""
    from . import dispatcher
    import warnings
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                  "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.",
                  UserWarning, stacklevel=2)
    r = dispatcher.function("linalg.lu_factor_ex")(A, pivot=pivot)
    res = tuple(r) if get_infos else tuple(r[:2])
    if out is not None:
        return tuple(_finish_all(_lu_factor_ex_t(*r) if get_infos else _lu_factor_t(*r[:2]),
                                 out))
    return res


# ---- solvers ---------------------------------------------------------------------------------

def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B from A's LU factorization (A^T X = B with ``adjoint``; X A = B, or
    X A^T = B, when not ``left``)."""
    require_tensor("linalg.lu_solve", LU, "LU", 1)
    require_tensor("linalg.lu_solve", pivots, "pivots", 2)
    require_tensor("linalg.lu_solve", B, "B", 3)
    _args.same_device("linalg.lu_solve", LU, B)
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {type_name(LU.dtype)} and B of type "
                           f"{type_name(B.dtype)} instead")
    if LU.dim() < 2:
        raise RuntimeError("torch.linalg.lu_solve: The input tensor A must have at least 2 "
                           "dimensions.")
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if LU._shape[-1] != LU._shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but they "
                           f"are {LU._shape[-2]} by {LU._shape[-1]} matrices")
    n = LU._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {B._shape[-2]}x{B._shape[-1]})")
    if pivots.dtype is not _dtype.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    if pivots._shape[-1:] != (n,):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if not LU.dtype.is_floating_point or LU.dtype.itemsize == 2:
        raise NotImplementedError(f"\"lu_solve_cpu\" not implemented for "
                                  f"'{type_name(LU.dtype)}'")
    lu_, piv, b = _host(LU), np.asarray(pivots._host_array()), _host(B)
    if piv.size and piv.max() > n:   # getrs would read outside the matrix
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to "
                           "LU.size(-2). Did you properly pass the result of lu_factor?")
    if piv.size and piv.min() < 1:
        raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did "
                           "you properly pass the result of lu_factor?")
    if left:
        x = getrs(lu_, piv, b, adjoint)
    else:   # X op(A) = B  <=>  op(A)^T X^T = B^T
        x = np.swapaxes(getrs(lu_, piv, np.swapaxes(b, -1, -2), not adjoint), -1, -2)
    from .linalg_lapack import _finish
    return _finish(_back(x, LU.dtype, LU._storage.device), out)


def lu_solve_deprecated(input, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU_data, LU_pivots): :func:`framework.linalg.lu_solve`."""
    from . import dispatcher
    from .linalg_lapack import _finish
    import warnings
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be "
                  "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has "
                  "its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be "
                  "replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning,
                  stacklevel=2)
    return _finish(dispatcher.function("linalg.lu_solve")(LU_data, LU_pivots, input), out)


def _solve_shapes(op, A, B, left):
    """(a, b as a batch of matrices, vector flag) for linalg.solve's rules."""
    from .linalg_checks import check_float, check_matrix, not_implemented
    check_float(op, A, low_precision=False)
    if A.dtype.itemsize == 2:
        not_implemented("lu_cpu", A)
    check_matrix(op, A)
    require_tensor(op, B, "B", 2)
    _args.same_device(op, A, B)
    if B.dim() == 0:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type "
                           f"{type_name(A.dtype)} and B of type {type_name(B.dtype)} instead")
    a, b = _host(A), _host(B)
    n = a.shape[-1]
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    if bm.ndim < 2 or (bm.shape[-2] if left else bm.shape[-1]) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{bm.shape[-2] if bm.ndim >= 2 else 1}x{bm.shape[-1]})")
    if not left:
        bm = np.swapaxes(bm, -1, -2)
    return a, bm, vector


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(X, info) of linalg.solve: info > 0 marks a singular matrix (no error unless
    ``check_errors``)."""
    from .linalg_checks import no_complex
    no_complex("linalg_solve_ex", A, B)
    a, bm, vector = _solve_shapes("linalg.solve", A, B, left)
    lu_, piv, info = getrf(a)
    if check_errors:
        _raise_info("torch.linalg.solve_ex", a, info, lambda op, arr, i, j: (
            f"{op}: {batch_prefix(arr, i)}The solver failed because the input matrix is "
            f"singular."))
    x = getrs(lu_, piv, bm, adjoint=not left)
    x = x[..., 0] if vector else (x if left else np.swapaxes(x, -1, -2))
    dev = A._storage.device
    return _finish_all(_solve_ex_t(_back(x, A.dtype, dev), _back(info, _dtype.int32, dev)), out)


def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info) of linalg.inv: info > 0 marks a singular matrix (no error unless
    ``check_errors``)."""
    from .linalg_checks import check_float, check_matrix, no_complex
    check_float("linalg.inv", A)
    no_complex("linalg_inv_ex", A)
    check_matrix("linalg.inv", A)
    a = _host(A)
    lu_, piv, info = getrf(a)
    if check_errors:
        _raise_info("linalg.inv_ex", a, info, lambda op, arr, i, j: (
            f"{op}: {batch_prefix(arr, i)}The diagonal element {j} is zero, the inversion "
            f"could not be completed because the input matrix is singular."))
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    x = getrs(lu_, piv, eye)
    dev = A._storage.device
    return _finish_all(_inv_ex_t(_back(x, A.dtype, dev), _back(info, _dtype.int32, dev)), out)


def potrf(a):
    """Lower Cholesky factors of the lower triangles of ``a`` and potrf's info per matrix;
    where it fails, the columns before the failing one are computed and the rest of the
    lower triangle is left as it was (LAPACK's partial result)."""
    n = a.shape[-1]
    flat = a.reshape((math.prod(a.shape[:-2]), n, n))
    out = np.tril(flat).copy()
    info = np.zeros(len(flat), np.int32)
    for i, m in enumerate(flat):
        sym = np.tril(m) + np.tril(m, -1).T
        try:
            with np.errstate(invalid="ignore"):
                out[i] = np.linalg.cholesky(sym)
            if np.isfinite(out[i]).all():
                continue
        except np.linalg.LinAlgError:
            pass
        info[i] = potrf_info(sym) or n
        with np.errstate(all="ignore"):
            for j in builtins.range(info[i]):
                d = out[i, j, j] - out[i, j, :j] @ out[i, j, :j]
                if j == info[i] - 1:
                    out[i, j, j] = d
                    break
                out[i, j, j] = np.sqrt(d)
                out[i, j + 1:, j] = (out[i, j + 1:, j] - out[i, j + 1:, :j] @ out[i, j, :j]) \
                    / out[i, j, j]
    return out.reshape(a.shape), info.reshape(a.shape[:-2])


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info) of linalg.cholesky: info > 0 is the order of the leading minor that is not
    positive-definite (no error unless ``check_errors``)."""
    from .linalg_checks import check_float, check_matrix
    check_float("linalg.cholesky", A, low_precision=False)
    if A.dtype.itemsize == 2:
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for "
                                  f"'{type_name(A.dtype)}'")
    check_matrix("linalg.cholesky", A)
    check_bool("linalg_cholesky_ex", "upper", upper)
    a = _host(A)
    low, info = potrf(a)
    if check_errors:
        _raise_info("linalg.cholesky_ex", a, info, lambda op, arr, i, j: (
            f"{op}: {batch_prefix(arr, i)}The factorization could not be completed because the "
            f"input is not positive-definite (the leading minor of order {j} is not "
            f"positive-definite)."))
    r = np.swapaxes(low, -1, -2).conj() if upper else low
    dev = A._storage.device
    return _finish_all(_cholesky_ex_t(_back(r, A.dtype, dev), _back(info, _dtype.int32, dev)),
                       out)
