"""More of torch.linalg: matrix_exp, cholesky_solve, cholesky_inverse, householder_product
(orgqr), cond, linalg.cross, linalg.vander, tensorinv, tensorsolve, diagonal.

matrix_exp, cholesky_solve and cholesky_inverse run on a host copy as the other LAPACK-like
ops do (linalg_lapack.py) and have derivative formulas in ops.yaml; the rest are composed
of recorded framework ops, so autograd goes through them."""
import builtins
import math

import numpy as np

from .._tensor import _wrap_dim
from . import args as _args
from .linalg_checks import check_bool, check_float, check_matrix, not_implemented
from .linalg_lapack import _LAPACK_TYPES, _back, _finish, _host, _triangular
from .pointwise import broadcast_shapes, require_tensor, type_name


def _fw():
    import framework
    return framework


# ---- matrix exponential -------------------------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# the largest 1-norm for which the [m/m] Pade approximant is accurate to double precision
_THETA = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
          (9, 2.097847961257068e0))
_THETA13 = 5.371920351148152e0
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}


def _expm(a):
    """exp of each square matrix of ``a`` (float64) by scaling and squaring with Pade."""
    n = a.shape[-1]
    if a.size == 0:
        return a.copy()
    eye = np.broadcast_to(np.eye(n), a.shape)
    norm = float(np.abs(a).sum(-2).max()) if a.size else 0.0
    if not math.isfinite(norm):
        return np.full(a.shape, np.nan)
    m, s = 13, 0
    for deg, theta in _THETA:
        if norm <= theta:
            m = deg
            break
    if m == 13 and norm > _THETA13:
        s = builtins.max(0, math.ceil(math.log2(norm / _THETA13)))
        a = a / 2.0 ** s
    b = _PADE[m]
    a2 = a @ a
    if m == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                 + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
    else:
        p = eye
        u_sum, v = b[1] * eye, b[0] * eye
        for j in builtins.range(2, m + 1, 2):
            p = p @ a2
            v = v + b[j] * p
            u_sum = u_sum + b[j + 1] * p
        u = a @ u_sum
    r = np.linalg.solve(v - u, v + u)
    for _ in builtins.range(s):
        r = r @ r
    return r


def matrix_exp(A):
    """The matrix exponential of each square matrix of ``A``: sum_k A^k / k!."""
    check_float("linalg.matrix_exp", A, low_precision=False)
    check_matrix("linalg.matrix_exp", A)
    r = _expm(_host(A).astype(np.float64))
    return _back(r, A.dtype, A._storage.device)


def matrix_exp_(input):
    """torch.matrix_exp: :func:`framework.linalg.matrix_exp`."""
    return matrix_exp(input)


# ---- Cholesky-based solves -------------------------------------------------------------

def _check_chol(op, x, name):
    require_tensor(op, x, name, 1)
    if x.dtype not in _LAPACK_TYPES:
        not_implemented(f"{op}_cpu", x)


def _lower_factor(f, upper):
    """The lower Cholesky factor L (A = L L^H) held in ``f``: its lower triangle, or with
    ``upper`` the conjugate transpose of its upper triangle (A = U^H U)."""
    return np.swapaxes(np.triu(f), -1, -2).conj() if upper else np.tril(f)


def _cholesky_solve(low, b):
    """(L L^H)^-1 b by forward then back substitution (batch dims broadcast)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _triangular(np.swapaxes(low, -1, -2).conj(), _triangular(low, b, False), True)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = input, for A = L L^H given its Cholesky factor L = ``input2`` (A = U^H U
    with ``upper``)."""
    _check_chol("cholesky_solve", input, "input")
    require_tensor("cholesky_solve", input2, "input2", 2)
    check_bool("cholesky_solve", "upper", upper)
    if input.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.dim()} "
                           f"dimensions instead")
    if input2.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.dim()} "
                           f"dimensions instead")
    if input.dtype is not input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{type_name(input.dtype)} and A of type {type_name(input2.dtype)} "
                           f"instead.")
    if input2._shape[-1] != input2._shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{input2._shape[-2]} by {input2._shape[-1]} matrices")
    if input2._shape[-1] != input._shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{input2._shape[-2]} by {input2._shape[-1]} but each b matrix is "
                           f"{input._shape[-2]} by {input._shape[-1]}")
    _args.same_device("cholesky_solve", input, input2)
    b, f = _host(input), _host(input2)
    x = _cholesky_solve(_lower_factor(f, upper), b)
    return _finish(_back(x, input.dtype, input._storage.device), out)


def cholesky_inverse(input, upper=False, *, out=None):
    """(L L^H)^-1 for the Cholesky factor L = ``input`` ((U^H U)^-1 with ``upper``)."""
    require_tensor("cholesky_inverse", input, "input", 1)
    if input.dtype not in _LAPACK_TYPES:
        not_implemented("cholesky_inverse_out_cpu", input)
    check_bool("cholesky_inverse", "upper", upper)
    if input.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    check_matrix("cholesky_inverse", input)
    f = _host(input)
    eye = np.broadcast_to(np.eye(f.shape[-1], dtype=f.dtype), f.shape)
    x = _cholesky_solve(_lower_factor(f, upper), eye)
    return _finish(_back(x, input.dtype, input._storage.device), out)


# ---- Householder products ----------------------------------------------------------------

def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, where v_i is column i
    of ``A`` below the diagonal with an implicit 1 on it (LAPACK's orgqr)."""
    fw = _fw()
    op = "torch.linalg.householder_product"
    require_tensor("linalg_householder_product", A, "input", 1)
    require_tensor("linalg_householder_product", tau, "tau", 2)
    if A.dim() < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A._shape[-2:]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    k = tau._shape[-1] if tau.dim() else 1
    if n < k:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tau.dim() != A.dim() - 1 or tau._shape[:-1] != A._shape[:-2]:
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._shape[:-1])}")
    if A.dtype is not tau.dtype:
        raise RuntimeError(f"{op}: tau dtype {type_name(tau.dtype)} does not match input "
                           f"dtype {type_name(A.dtype)}")
    if A.dtype not in _LAPACK_TYPES:
        not_implemented("orgqr_cpu", A)
    # the strict lower triangle through a 0/1 mask, which (unlike tril) every dtype has
    below = fw.ones(m, n, dtype=A.dtype.to_real(), device=A.device).tril(-1)
    V = A * below + fw.eye(m, n, dtype=A.dtype, device=A.device)
    Q = fw.eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape).clone()
    for i in builtins.range(k - 1, -1, -1):   # Q <- H_i Q, the last reflector first
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * v.matmul(v.mH.matmul(Q))
    return _finish(Q, out)


def orgqr(input, input2):
    """torch.orgqr: alias of :func:`framework.linalg.householder_product`."""
    return _fw().linalg.householder_product(input, input2)


# ---- condition number ----------------------------------------------------------------------

_COND_ORDS = (None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(A, p=None, *, out=None):
    """Condition number of each matrix in the norm ``p``: sigma_max / sigma_min for
    None/2 (-2: the inverse ratio), else norm(A, p) * norm(A^-1, p), inf where A is
    singular."""
    fw = _fw()
    require_tensor("linalg_cond", A, "A", 1)
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        s = fw.linalg.svdvals(A)
        if s._shape[-1] == 0:
            return _finish(fw.zeros(s._shape[:-1], dtype=s.dtype, device=s.device), out)
        hi, lo = s[..., 0], s[..., -1]
        return _finish(lo / hi if p == -2 else hi / lo, out)
    check_float("linalg.inv", A)
    if A.numel() == 0:
        return _finish(fw.zeros(A.shape[:-2], dtype=A.dtype, device=A.device), out)
    check_matrix(f"linalg.cond(ord={p})", A)
    inv, info = fw.linalg.inv_ex(A)
    inv = inv.masked_fill((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
    r = fw.linalg.matrix_norm(A, p) * fw.linalg.matrix_norm(inv, p)
    # 0 * inf (and the SVD of an infinite inverse) count as infinitely ill-conditioned
    return _finish(r.nan_to_num(math.inf, math.inf, -math.inf), out)


# ---- products and shapes --------------------------------------------------------------------

def _cross(a, b, d):
    return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)


def linalg_cross(input, other, *, dim=-1, out=None):
    """Cross products of the 3-vectors along ``dim`` of broadcast ``input`` and ``other``."""
    require_tensor("linalg_cross", input, "input", 1)
    require_tensor("linalg_cross", other, "other", 2)
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                           f"{type_name(other.dtype)}")
    if input.dtype.category == 0:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    shape = broadcast_shapes(input._shape, other._shape)
    d = _wrap_dim(dim, len(shape))
    if input._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input._shape[d]} and {other._shape[d]}")
    a, b = input.expand(*shape), other.expand(*shape)
    return _finish(_cross(a, b, d), out)


def vander(x, *, N=None):
    """The Vandermonde matrix of ``x``: column j holds x ** j, j = 0 .. N - 1."""
    fw = _fw()
    require_tensor("linalg_vander", x, "x", 1)
    if x.dtype.category == 0 or x.dtype.itemsize == 2 and x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {type_name(x.dtype)}")
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    n = x_._shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x_.unsqueeze(-1).expand(*x_.shape, n - 1).cumprod(-1)
    ones = fw.ones(tuple(x_.shape) + (1,), dtype=powers.dtype, device=x.device)
    return fw.cat([ones, powers], -1)


def tensorinv(A, ind=2, *, out=None):
    """The tensor X with tensordot(A, X, ind) = I: A reshaped to a square matrix and
    inverted, then reshaped to A.shape[ind:] + A.shape[:ind]."""
    fw = _fw()
    require_tensor("linalg_tensorinv", A, "A", 1)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    end, start = tuple(A._shape[ind:]), tuple(A._shape[:ind])
    pe, ps = math.prod(end), math.prod(start)
    if pe != ps:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {pe} != {ps}")
    r = fw.linalg.inv(A.reshape(ps, pe))
    return _finish(r.reshape(end + start), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """The tensor X with tensordot(A, X, X.ndim) = B (``dims``: dims of A moved to the end
    first)."""
    fw = _fw()
    require_tensor("linalg_tensorsolve", A, "A", 1)
    require_tensor("linalg_tensorsolve", B, "B", 2)
    if dims is not None:
        dims = [dims] if isinstance(dims, builtins.int) else list(dims)
        nd = A.dim()
        A = A.movedim(dims, list(builtins.range(nd - len(dims), nd)))
    shape = tuple(A._shape[B.dim():])
    pr, po = math.prod(shape), B.numel()
    if pr != po:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {pr} != {po}")
    # B as a column: linalg.solve's derivative wants matrices
    r = fw.linalg.solve(A.reshape(pr, pr), B.reshape(po, 1))
    return _finish(r.reshape(shape), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """linalg.diagonal: :func:`framework.diagonal` with dims (-2, -1) by default."""
    return _fw().diagonal(A, offset, dim1, dim2)
