"""Ready-made parametrizations (PyTorch's ``torch.nn.utils.parametrizations``):
``weight_norm``, ``spectral_norm`` and ``orthogonal``, registered with
:func:`~framework.nn.utils.parametrize.register_parametrization`."""
from enum import Enum, auto

import numpy as np

import framework as _fw

from ..modules.module import Module
from . import parametrize
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _normalize(x, eps):
    return x / _fw.linalg.vector_norm(x).clamp(min=eps)


# ---------------------------------------------------------------------------------------
# orthogonal
# ---------------------------------------------------------------------------------------
def _is_orthogonal(q):
    n, k = q.shape[-2], q.shape[-1]
    eye = _fw.eye(k, dtype=q.dtype, device=q.device)
    eps = 10.0 * n * _fw.finfo(q.dtype).eps
    return _fw.allclose(q.mT @ q, eye, atol=eps)


def _make_orthogonal(a):
    """Q of the QR decomposition of ``a``, with the signs that make diag(R) positive."""
    q, r = _fw.linalg.qr(a)
    return q * _fw.diagonal(r, 0, -2, -1).sgn().unsqueeze(-2)


def _householder_product(a, tau):
    """H_1 H_2 ... H_k restricted to the first k columns, H_i = I - tau_i v_i v_i^T with v_i
    the i-th column of ``a`` below the diagonal and 1 on it (LAPACK's orgqr), composed of
    differentiable ops."""
    n, k = a.shape[-2], a.shape[-1]
    eye = _fw.eye(n, dtype=a.dtype, device=a.device)
    rows = _fw.arange(n, device=a.device).unsqueeze(-1)
    q = eye.expand(*a.shape[:-2], n, n)
    for i in range(k):
        col = a[..., :, i:i + 1]
        v = _fw.where(rows > i, col, _fw.where(rows == i, _fw.ones_like(col), _fw.zeros_like(col)))
        q = q - (q @ v) @ (tau[..., i:i + 1].unsqueeze(-1) * v.mT)
    return q[..., :, :k]


def _matrix_exp(a):
    """exp(a) by scaling and squaring with a degree-18 Taylor polynomial (differentiable)."""
    norm = float(a.detach().abs().sum(-2).amax()) if a.numel() else 0.0
    s = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0.5 else 0
    x = a / (2 ** s)
    eye = _fw.eye(a.shape[-1], dtype=a.dtype, device=a.device).expand(a.shape)
    out = eye
    term = eye
    for i in range(1, 19):
        term = term @ x / i
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _geqrf(a):
    """LAPACK geqrf (Householder QR in compact form) of a batch of matrices, through
    NumPy's raw QR; returns (A, tau) as framework tensors."""
    host = a.detach().cpu().numpy()
    flat = host.reshape((-1,) + host.shape[-2:])
    hs, taus = [], []
    for m in flat:
        h, tau = np.linalg.qr(m, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    h = np.stack(hs).reshape(host.shape)
    tau = np.stack(taus).reshape(host.shape[:-2] + (min(host.shape[-2:]),))
    return (_fw.tensor(h, dtype=a.dtype, device=a.device),
            _fw.tensor(tau, dtype=a.dtype, device=a.device))


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # a skew-symmetric matrix from the lower triangle, mapped to an orthogonal one
            x = x.tril()
            if n != k:
                x = _fw.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _matrix_exp(a)
            else:
                eye = _fw.eye(n, dtype=a.dtype, device=a.device)
                q = _fw.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            # diag(x) as integers flips column signs, so right_inverse can reach any Q
            q = q * _fw.diagonal(x, 0, -2, -1).to(_fw.int32).unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q):
        with _fw.no_grad():
            if q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{self.shape}. Got a tensor of shape {q.shape}.")
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                a, tau = _geqrf(q)
                # diagonal entries: +-1, flipped where LAPACK skipped the reflection
                d = _fw.diagonal(a, 0, -2, -1).sign()
                d = _fw.where(tau == 0.0, -d, d)
                on_diag = _fw.arange(n, device=a.device).unsqueeze(-1) == \
                    _fw.arange(k, device=a.device)
                a = _fw.where(on_diag, d.unsqueeze(-2), a)
                return a.mT if transpose else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                extra = _fw.randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
                q = _make_orthogonal(_fw.cat([q, extra], dim=-1))
            self.base = q
            # base @ forward(-I) == base: the initial weight is reproduced
            neg_eye = _fw.zeros_like(q_init)
            neg_eye.diagonal(0, -2, -1).fill_(-1.0)
            return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    r"""Apply an orthogonal or unitary parametrization to a matrix or a batch of matrices.

    ``orthogonal_map``: ``"matrix_exp"`` (default for square matrices), ``"cayley"`` or
    ``"householder"`` (default otherwise).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, _fw.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---------------------------------------------------------------------------------------
# weight_norm
# ---------------------------------------------------------------------------------------
class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    r"""Apply weight normalization to a parameter: ``w = g * v / ||v||`` with
    ``parametrizations.<name>.original0`` (g) and ``original1`` (v). ``dim=None``
    normalises over the whole tensor. State dicts saved by the old API (``<name>_g``,
    ``<name>_v``) load too."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---------------------------------------------------------------------------------------
# spectral_norm
# ---------------------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = tuple(mat.shape)
            with _fw.no_grad():
                u = _normalize(mat.new_empty(h).normal_(0, 1), self.eps)
                v = _normalize(mat.new_empty(w).normal_(0, 1), self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            # start from a good estimate of the top singular vectors
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        # reshape, not flatten: the framework's no-op flatten re-records onto its input
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, mat, n_power_iterations):
        with _fw.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(_fw.mv(mat, self._v), self.eps))
                self._v.copy_(_normalize(_fw.mv(mat.mT, self._u), self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return _normalize(weight, self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        # clones: the next training forward updates the buffers in place
        u = self._u.clone()
        v = self._v.clone()
        sigma = _fw.dot(u, _fw.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Apply spectral normalization to a parameter: ``W / sigma(W)``, sigma estimated by
    power iteration (``n_power_iterations`` steps per training forward). ``dim`` defaults
    to 0 (1 for ConvTranspose modules)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _fw.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from .spectral_norm import _conv_transpose_types
        dim = 1 if isinstance(module, _conv_transpose_types()) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
