"""framework.linalg decompositions, solvers and norms: norm, vector_norm, matrix_norm,
solve, inv, det, cholesky, qr, svd, eigh, lstsq (and torch.inverse/det/svd).

These run NumPy's LAPACK bindings on a host copy (batched over leading dims) and return
tensors on the input's device: LAPACK is what a well-kept library does best, and these
ops are rarely the hot path. Checks and error messages follow PyTorch's.
"""
import builtins
import collections
import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from . import alloc
from . import args as _args
from .linalg_checks import (LinAlgError, batch_prefix, check_bool, check_float, check_matrix,
                            first_failure, nan_whole, no_complex, not_implemented, potrf_info,
                            singular,
                            host_svd, zero_pivot)
from .pointwise import broadcast_shapes, require_tensor, type_name


_qr_t = collections.namedtuple("linalg_qr", ["Q", "R"])
_svd_t = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
_old_svd_t = collections.namedtuple("svd", ["U", "S", "V"])
_old_qr_t = collections.namedtuple("qr", ["Q", "R"])
_eigh_t = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_slogdet_t = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
_lstsq_t = collections.namedtuple("linalg_lstsq",
                                  ["solution", "residuals", "rank", "singular_values"])


# ---- host round trip ---------------------------------------------------------------------

def _host(x):
    """A NumPy copy of ``x`` in its dtype (float16/bfloat16 widened to float32)."""
    arr = np.array(x._host_array())
    return arr.astype(np.float32) if arr.dtype == np.float16 else arr


def _back(arr, dtype, device):
    from .creation import _from_array
    return _from_array(np.asarray(arr), dtype, device)


# ---- solvers and inverses ------------------------------------------------------------------

def inv(A, *, out=None):
    """The inverse of each square matrix in ``A`` (batched over leading dims)."""
    check_float("linalg.inv", A)
    check_matrix("linalg.inv", A)
    a = _host(A)
    try:
        r = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        i, m = first_failure(a, singular)
        raise LinAlgError(f"linalg.inv: {batch_prefix(a, i)}The diagonal element "
                          f"{zero_pivot(m)} is zero, the inversion could not be completed "
                          f"because the input matrix is singular.") from None
    return _finish(_back(nan_whole(a, r), A.dtype, A._storage.device), out)


def inverse(input, *, out=None):
    """Alias of :func:`framework.linalg.inv`."""
    return inv(input, out=out)


def det(A, *, out=None):
    """The determinant of each square matrix in ``A``."""
    check_float("linalg.det", A, low_precision=False)
    if A.dtype.itemsize == 2:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{type_name(A.dtype)}'")
    check_matrix("linalg.det", A)
    return _finish(_back(np.linalg.det(_host(A)), A.dtype, A._storage.device), out)


def solve(A, B, *, left=True, out=None):
    """The solution X of A X = B (or X A = B when ``left=False``); B may be a vector or a
    batch of vectors when its shape allows it (PyTorch's rule)."""
    check_float("linalg.solve", A, low_precision=False)
    if A.dtype.itemsize == 2:
        not_implemented("lu_cpu", A)
    check_matrix("linalg.solve", A)
    require_tensor("linalg_solve", B, "B", 2)
    _args.same_device("linalg.solve", A, B)
    if B.dim() == 0:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {type_name(A.dtype)} and B of type "
                           f"{type_name(B.dtype)} instead")
    a, b = _host(A), _host(B)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a = np.swapaxes(a, -1, -2)
        b = np.swapaxes(b, -1, -2) if b.ndim > 1 else b
    n = a.shape[-1]
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    if bm.ndim < 2 or bm.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{bm.shape[-2] if bm.ndim >= 2 else 1}x{bm.shape[-1]})")
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    bm = np.broadcast_to(bm, batch + bm.shape[-2:])
    try:
        x = np.linalg.solve(a, bm)
    except np.linalg.LinAlgError:
        i, _ = first_failure(a, singular)
        raise LinAlgError(f"torch.linalg.solve: {batch_prefix(a, i)}The solver failed "
                          f"because the input matrix is singular.") from None
    x = nan_whole(a, x)
    x = x[..., 0] if vector else x
    if not left and not vector:
        x = np.swapaxes(x, -1, -2)
    return _finish(_back(x, A.dtype, A._storage.device), out)


def cholesky(A, *, upper=False, out=None):
    """Lower (or upper) triangular L with A = L L^T for symmetric positive-definite A."""
    check_float("linalg.cholesky", A, low_precision=False)
    if A.dtype.itemsize == 2:
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for "
                                  f"'{type_name(A.dtype)}'")
    check_matrix("linalg.cholesky", A)
    check_bool("linalg_cholesky", "upper", upper)
    a = _host(A)
    # LAPACK reads only the lower triangle, as PyTorch does (Hermitian: conjugated above)
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2).conj()
    try:
        with np.errstate(invalid="ignore"):
            r = np.linalg.cholesky(sym)
    except np.linalg.LinAlgError:
        r = None
    if r is None or not np.isfinite(r).all():   # NumPy lets NaN through: ask potrf
        i, m = first_failure(sym, potrf_info)
        order = potrf_info(m) or (m.shape[0] if r is None else 0)
    else:
        order = 0
    if order:
        raise LinAlgError(f"linalg.cholesky: {batch_prefix(a, i)}The factorization could not "
                          f"be completed because the input is not positive-definite (the "
                          f"leading minor of order {order} is not positive-definite).") from None
    if upper:
        r = np.swapaxes(r, -1, -2).conj()
    return _finish(_back(r, A.dtype, A._storage.device), out)


def qr(A, mode="reduced", *, out=None):
    """QR decomposition A = Q R; ``mode`` is 'reduced', 'complete' or 'r' (Q empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    check_float("linalg.qr", A, low_precision=False)
    check_matrix("linalg.qr", A, square=False)
    q, r = np.linalg.qr(_host(A), mode="complete" if mode == "complete" else "reduced")
    dev = A._storage.device
    if mode == "r":
        q = np.zeros((0,), q.dtype)
    return _finish_all(_qr_t(_back(q, A.dtype, dev), _back(r, A.dtype, dev)), out)


def qr_(input, some=True, *, out=None):
    """torch.qr: :func:`framework.linalg.qr` with mode 'reduced' (``some``) or 'complete'."""
    q, r = qr(input, "reduced" if some else "complete")
    return _finish_all(_old_qr_t(q, r), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition A = U diag(S) Vh, singular values descending."""
    check_float("linalg.svd", A, low_precision=False)
    if A.dtype.itemsize == 2:
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for "
                                  f"'{type_name(A.dtype)}'")
    check_matrix("linalg.svd", A, square=False)
    u, s, vh = host_svd(_host(A), full_matrices=full_matrices)
    dev = A._storage.device
    return _finish_all(_svd_t(_back(u, A.dtype, dev), _back(s, A.dtype.to_real(), dev),
                              _back(vh, A.dtype, dev)), out)


def det_alias(input):
    """torch.det: alias of :func:`framework.linalg.det`."""
    return det(input)


def svd_(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: returns (U, S, V) with V (not its transpose); ``some`` gives the reduced
    form. Without ``compute_uv`` U and V are zero-filled (and get no gradient). Made of the
    recorded linalg.svd / linalg.svdvals, so autograd goes through them."""
    from . import dispatcher
    if compute_uv:
        u, s, vh = dispatcher.function("linalg.svd")(input, full_matrices=not some)
        return _finish_all(_old_svd_t(u, s, vh.mT), out)
    check_matrix("svd", input, square=False)
    from .creation import zeros
    s = dispatcher.function("linalg.svdvals")(input)
    batch, (m, n) = tuple(input.shape[:-2]), tuple(input.shape[-2:])
    u = zeros(batch + (m, m), dtype=s.dtype, device=s.device)
    v = zeros(batch + (n, n), dtype=s.dtype, device=s.device)
    return _finish_all(_old_svd_t(u, s, v), out)


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending, real) and orthonormal eigenvectors of symmetric (Hermitian)
    matrices; reads only the ``UPLO`` triangle."""
    require_tensor("linalg.eigh", A, "A", 1)
    if A.dtype.category < 2 or A.dtype.itemsize == 2:
        not_implemented("linalg_eigh_cpu", A)
    check_matrix("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = np.linalg.eigh(_host(A), UPLO=UPLO)
    dev = A._storage.device
    return _finish_all(_eigh_t(_back(w, A.dtype.to_real(), dev), _back(v, A.dtype, dev)), out)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")
# the dtypes LAPACK works in
_LAPACK_TYPES = (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of A X = B (minimum norm) as PyTorch's CPU drivers return it:
    rank except for 'gels', singular values for 'gelsd'/'gelss', residuals for tall A of
    full rank except with 'gelsy' (the default)."""
    require_tensor("linalg.lstsq", A, "A", 1)
    require_tensor("linalg.lstsq", B, "B", 2)
    no_complex("linalg_lstsq", A, B)
    _args.same_device("linalg.lstsq", A, B)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {type_name(A.dtype)} and other's "
                           f"dtype {type_name(B.dtype)}")
    if A.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if not 0 <= A.dim() - B.dim() <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if rcond is not None:
        rcond = builtins.float(_args.scalar("linalg_lstsq", "rcond", rcond))
    a, b = _host(A), _host(B)
    # B is a vector (or a batch of vectors) only where its shape is A's without the last dim
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    if bm.shape[-2] != a.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match "
                           f"other.size({-1 if vector else -2})")
    # a matrix B with one dim fewer than A: PyTorch broadcasts A's batch dims against all of
    # B's dims but its last, each batch element solving against the whole of B
    bbatch = b.shape[:-1] if b.ndim == a.ndim - 1 and not vector else bm.shape[:-2]
    batch = tuple(broadcast_shapes(a.shape[:-2], bbatch))
    (m, n), k = a.shape[-2:], bm.shape[-1]
    nb = math.prod(batch)
    # rank and singular values are A's, over A's own batch dims; which matrix of A each
    # element of the broadcast batch solves with:
    na = math.prod(a.shape[:-2])
    which = np.broadcast_to(np.arange(na).reshape(a.shape[:-2]), batch).reshape(nb)
    a_own = a.reshape((na, m, n))
    bm = np.broadcast_to(bm, batch + (m, k)).reshape((nb, m, k))
    x = np.zeros((nb, n, k), a.dtype)
    ranks = np.zeros(len(a_own), np.int64)
    svs = np.zeros((len(a_own), min(m, n)), a.dtype)
    for i in builtins.range(nb if a.size and bm.size else 0):
        rc = rcond if rcond is not None else np.finfo(a.dtype).eps * max(m, n)
        j = which[i]
        x[i], _, ranks[j], svs[j] = np.linalg.lstsq(a_own[j], bm[i], rcond=rc)
        # gels needs full rank, min(m, n): a wide A of full row rank has a minimum-norm
        # solution through its LQ factorization
        if driver == "gels" and ranks[j] < min(m, n):
            raise LinAlgError(f"torch.linalg.lstsq: The least squares solution could not be "
                              f"computed because the input matrix does not have full rank "
                              f"(error code: {ranks[j] + 1}).")
    dev = A._storage.device
    # PyTorch's rule: residuals for m > n except with gelsy; with gelsd/gelss only when
    # every matrix has rank n (an empty batch or n == 0 included). An empty A or B skips
    # LAPACK there: zero solution and rank, and (gels) zero residuals.
    full = m > n and driver != "gelsy" and (driver == "gels" or (ranks == n).all())
    res = ((a_own[which] @ x - bm) ** 2).sum(-2) if full else None
    if full and driver == "gels" and not (a.size and bm.size):
        res[...] = 0
    x = x.reshape(batch + (n, k))
    none = np.zeros((0,), a.dtype)
    abatch = a.shape[:-2]
    return _lstsq_t(_back(x[..., 0] if vector else x, A.dtype, dev),
                    _back(res.reshape(batch + (k,)) if full else none, A.dtype, dev),
                    _back(ranks.reshape(abatch) if driver != "gels" else none, _dtype.int64,
                          dev),
                    _back(svs.reshape(abatch + (min(m, n),)) if driver in ("gelsd", "gelss")
                          else none, A.dtype, dev))


def _finish_all(results, out):
    """Copies a tuple of results into the tensors of a tuple ``out=`` (then returns those)."""
    if out is None:
        return results
    if len(out) != len(results):
        raise RuntimeError(f"expected out to be a tuple of {len(results)} tensors, got "
                           f"{len(out)}")
    return type(results)(*[_finish(r, o) for r, o in zip(results, out)])


def _finish(res, out):
    if out is None:
        return res
    from .pointwise import check_out
    target = check_out("linalg", out, res._shape, res.dtype, False)
    alloc.backend(target._storage.device).copy.copy(target, res, res._stride)
    return target


# ---- norms ----------------------------------------------------------------------------

def _dims_arg(dim, nd):
    if dim is None:
        return tuple(range(nd))
    dims = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
    wrapped = tuple(_wrap_dim(d, nd) for d in dims)
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


def _out_dtype(op, x, dtype):
    if dtype is not None:
        if dtype.category < 2:
            raise RuntimeError(f"{op}: dtype should be floating point or complex. Got "
                               f"{type_name(dtype)}")
        return dtype
    if x.dtype.category < 2:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{type_name(x.dtype)}")
    return x.dtype


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ``ord``-norm of ``x`` over ``dim`` (all dims by default) viewed as a vector:
    (sum |x|^ord)^(1/ord); ord=inf/-inf give max/min |x|, ord=0 counts non-zeros."""
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg_vector_norm(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(x).__name__}")
    if not isinstance(ord, (builtins.int, builtins.float)) or isinstance(ord, builtins.bool):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    if x.dtype.is_complex:      # the norm of the moduli (a real result)
        from .reduction import _moduli
        x, dtype = _moduli(x, dtype)
    rdt = _out_dtype("linalg.vector_norm", x, dtype)
    dims = _dims_arg(dim, x.dim())
    if out is None and rdt is x.dtype and x.dtype.name in ("float32", "float64") and \
            ord in (1, 2, math.inf) and x.numel():
        # the device's own reduction (pairwise sums in the dtype, as PyTorch's): no copy to
        # the host, no float64 temporaries (clip_grad_norm_ calls this once per parameter)
        from .reduction import norm
        return norm(x, ord, list(dims), keepdim)
    a = np.abs(_host(x).astype(np.float64))
    if x.dim() and any(x._shape[d] == 0 for d in dims) and (ord < 0 or ord == math.inf):
        from .reduction import empty_norm_error
        empty_norm_error(ord, x, dim)
    if x.dim() == 0:
        a = a.reshape(1)
        dims = (0,)
    if ord == math.inf:
        r = a.max(axis=dims, keepdims=True)
    elif ord == -math.inf:
        r = a.min(axis=dims, keepdims=True)
    elif ord == 0:
        r = (a != 0).sum(axis=dims, keepdims=True).astype(np.float64)
    elif ord == 1:
        r = a.sum(axis=dims, keepdims=True)
    elif ord == 2:
        r = np.sqrt((a * a).sum(axis=dims, keepdims=True))
    else:
        with np.errstate(divide="ignore"):
            r = (a ** ord).sum(axis=dims, keepdims=True) ** (1.0 / ord)
    if x.dim() == 0:
        r = r.reshape(())
    elif not keepdim:
        r = r.squeeze(axis=dims)
    return _finish(_back(r, rdt, x._storage.device), out)


_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm over the two dims ``dim``: 'fro', 'nuc', inf/-inf (max/min row sum),
    1/-1 (max/min column sum), 2/-2 (largest/smallest singular value)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_matrix_norm(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    rdt = _out_dtype("linalg.matrix_norm", A, dtype)
    if isinstance(dim, builtins.int) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{dim if isinstance(dim, builtins.int) else ' '.join(map(str, dim))}")
    d0, d1 = (_wrap_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    wide = np.complex128 if A.dtype.is_complex else np.float64
    rdt = rdt.to_real()     # the norms of complex matrices are real
    a = np.moveaxis(_host(A).astype(wide), (d0, d1), (-2, -1))
    if ord == "fro":
        r = np.sqrt((a * a.conj()).real.sum(axis=(-2, -1)))
    elif ord in ("nuc", 2, -2):
        s = (np.linalg.svd(a, compute_uv=False) if a.size else
             np.zeros(a.shape[:-2] + (min(a.shape[-2:]),)))
        r = s.sum(-1) if ord == "nuc" else _extreme(s, ord < 0, -1)
    elif ord in (math.inf, -math.inf):
        r = _extreme(np.abs(a).sum(-1), ord < 0)
    else:
        r = _extreme(np.abs(a).sum(-2), ord < 0)
    if keepdim:
        r = np.expand_dims(r, tuple(sorted((d0, d1))))
    return _finish(_back(r, rdt, A._storage.device), out)


def _extreme(v, smallest, name_dim=None):
    """max (or min) over the last axis of ``v`` as PyTorch's matrix norms take it: the max
    of nothing is 0, the min of nothing an error naming the reduced dim."""
    if v.shape[-1] == 0:
        if smallest:
            d = v.ndim - 1 if name_dim is None else name_dim
            raise IndexError(f"amin(): Expected reduction dim {d} to have non-zero size.")
        return np.zeros(v.shape[:-1])
    return v.min(-1) if smallest else v.max(-1)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """framework.linalg.norm: a vector norm (1-d input or an int ``dim``) or a matrix norm
    (2-d input or a 2-tuple ``dim``); with neither ord nor dim, the 2-norm of the flattened
    input."""
    require_tensor("linalg_norm", A, "input", 1)
    if dim is not None:
        dims = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
        if len(dims) == 1:
            if isinstance(ord, str):
                raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dims[0]}")
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype,
                               out=out)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype, out=out)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.dim()}D.")
    if A.dim() == 1 and not isinstance(ord, str):   # a str ord is a matrix norm's
        return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)


# ---- more LAPACK-backed functions ---------------------------------------------------------

def slogdet(A, *, out=None):
    """(sign, log|det|) of each square matrix: stable where det itself would overflow."""
    check_float("linalg.slogdet", A, low_precision=False)
    if A.dtype.itemsize == 2:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{type_name(A.dtype)}'")
    check_matrix("linalg.slogdet", A)
    sign, logabs = np.linalg.slogdet(_host(A))
    dev = A._storage.device
    return _finish_all(_slogdet_t(_back(sign, A.dtype, dev), _back(logabs, A.dtype.to_real(),
                                                                    dev)), out)


def slogdet_alias(input):
    """torch.slogdet: alias of :func:`framework.linalg.slogdet`."""
    return slogdet(input)


def logdet(input):
    """log(det(input)): nan for a negative determinant, -inf for a singular matrix."""
    sign, logabs = np.linalg.slogdet(_host(_check_logdet(input)))
    if input.dtype.is_complex:      # log|det| + i arg(det)
        r = logabs + 1j * np.angle(sign)
    else:
        r = np.where(sign < 0, np.nan, logabs)
    return _back(r, input.dtype, input._storage.device)


def _check_logdet(x):
    check_float("linalg.det", x, low_precision=False)
    check_matrix("linalg.det", x)
    return x


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose pseudo-inverse; singular values below max(atol, rtol * sigma_max) are
    treated as zero (rtol defaults to eps * max(m, n) where atol is not positive).
    ``atol``/``rtol`` may be tensors broadcast over the batch. ``hermitian=True`` uses
    the eigendecomposition of the lower triangle."""
    require_tensor("linalg.pinv", A, "A", 1)
    if A.dim() < 2 or A.dtype not in _LAPACK_TYPES:
        raise RuntimeError(f"linalg.pinv({type_name(A.dtype)}{{{list(A._shape)}}}): expected a "
                           f"tensor with 2 or more dimensions of float, double, cfloat or "
                           f"cdouble types")
    a = _host(A)
    if hermitian:
        check_matrix("linalg.eigh", A)
        w, u = np.linalg.eigh(a, UPLO="L") if a.size else (np.zeros(a.shape[:-1], a.dtype), a)
        mag = np.abs(w)
        cut = _cutoff(a, mag, atol, rtol)
        inv_w = np.where(mag > cut, 1.0 / np.where(w == 0, 1, w), 0.0)
        r = np.matmul(u * inv_w[..., None, :], _adjoint(u))
    else:
        u, s, vh = host_svd(a, full_matrices=False)
        cut = _cutoff(a, s, atol, rtol)
        inv_s = np.where(s > cut, 1.0 / np.where(s == 0, 1, s), 0.0)
        r = np.matmul(_adjoint(vh) * inv_s[..., None, :], _adjoint(u))
    return _finish(_back(r.astype(a.dtype), A.dtype, A._storage.device), out)


def _adjoint(x):
    """The conjugate transpose of each matrix of ``x``."""
    return np.swapaxes(x, -1, -2).conj()


def pinverse(input, rcond=1e-15):
    """torch.pinverse: pseudo-inverse with relative cutoff ``rcond``."""
    return pinv(input, rtol=rcond)


def _cutoff(a, s, atol, rtol):
    """max(atol, rtol * max(s)) per matrix, with a trailing dim of 1 (PyTorch's
    get_atol_rtol): atol/rtol numbers or tensors that broadcast over the batch; rtol
    defaults to eps * max(m, n) where atol is not given or not positive."""
    def host(x):
        return _host(x).astype(np.float64) if isinstance(x, Tensor) else np.float64(x)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    at = np.float64(0.0) if atol is None else host(atol)
    if rtol is None:
        default = np.finfo(a.dtype).eps * max(a.shape[-2:])
        rt = np.float64(default) if atol is None else np.where(at > 0, 0.0, default)
    else:
        rt = host(rtol)
    return np.maximum(np.expand_dims(at, -1), np.expand_dims(rt, -1) * smax)


def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of symmetric matrices."""
    return _finish(eigh(A, UPLO).eigenvalues, out)


def svdvals(A, *, driver=None, out=None):
    """Singular values (descending) of each matrix."""
    check_float("linalg.svd", A, low_precision=False)
    check_matrix("linalg.svd", A, square=False)
    s = host_svd(_host(A), compute_uv=False)
    return _finish(_back(s, A.dtype.to_real(), A._storage.device), out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Number of singular values above max(atol, rtol * sigma_max) (an int64 tensor)."""
    require_tensor("linalg.matrix_rank", A, "A", 1)
    if A.dtype not in _LAPACK_TYPES:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    a = _host(A)
    if hermitian:
        check_matrix("linalg.eigh", A)
        s = np.abs(np.linalg.eigvalsh(a, UPLO="L")) if a.size else np.zeros(a.shape[:-1], a.dtype)
    else:
        s = host_svd(a, compute_uv=False)
    r = (s > _cutoff(a, s, atol, rtol)).sum(-1)
    return _finish(_back(r, _dtype.int64, A._storage.device), out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solution X of A X = B (or X A = B) for triangular A, reading only its ``upper`` or
    lower triangle (with ones on the diagonal when ``unitriangular``)."""
    require_tensor("linalg.solve_triangular", A, "A", 1)
    if not A.dtype.is_floating_point or A.dtype.itemsize == 2:
        not_implemented("triangular_solve_cpu", A)
    check_bool("linalg_solve_triangular", "upper", upper)
    check_matrix("linalg.solve_triangular", A)
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {type_name(A.dtype)} and B of type "
                           f"{type_name(B.dtype)} instead")
    a, b = _host(A), _host(B)
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {eq} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t - np.einsum("...ii->...i", t)[..., None] * np.eye(n) + np.eye(n)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        t, b = np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    with np.errstate(divide="ignore", invalid="ignore"):
        x = _triangular(np.broadcast_to(t, batch + t.shape[-2:]),
                        np.broadcast_to(b, batch + b.shape[-2:]), upper != (not left))
    if not left:
        x = np.swapaxes(x, -1, -2)
    return _finish(_back(x, A.dtype, A._storage.device), out)


def _triangular(t, b, upper):
    """Back/forward substitution over the last two dims (inf/nan for a zero diagonal, as
    LAPACK's trtrs would give, instead of an error)."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-1], b.shape[:-1]) + (b.shape[-1],),
                 np.result_type(t, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        acc = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x
