"""Sparse CSR matrices (PyTorch's ``torch.sparse_csr`` layout), 2-D, without dense dims.

``_crow`` (m + 1) holds where each row's entries start in ``_col`` and ``_v`` (nnz); the
entries of a row are sorted by column. Products and conversions go through the COO form
(the row of each entry comes from ``searchsorted`` over ``_crow``). Gradients flow to the
values tensor the matrix was made from: the matrix is a view of it.
"""
from .. import _dtype
from .._tensor import Tensor
from .base import SparseTensor, shape_of, sparse_csr, sparse_repr
from .coo import SparseCooTensor, _as_index_tensor, _to_args, _values_tensor


class SparseCsrTensor(SparseTensor):
    """A sparse matrix in CSR layout (compressed row indices, column indices, values)."""

    __slots__ = ("_crow", "_col", "_v")
    _layout = sparse_csr
    _backend = "SparseCsr"

    @classmethod
    def _wrap(cls, crow, col, values, shape):
        t = object.__new__(cls)
        t._init(shape, values.dtype, values.device)
        t._crow, t._col, t._v = crow, col, values
        # the values' graph is the matrix's: a product reads them with autograd on
        t._requires_grad = values._requires_grad
        return t

    def _nnz(self):
        return self._col.shape[0]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def crow_indices(self):
        return self._crow

    def col_indices(self):
        return self._col

    def values(self):
        return self._v

    @property
    def grad_fn(self):
        return None

    def _rows(self):
        """The row of each stored entry."""
        import framework
        pos = framework.arange(self._nnz(), device=self.device, dtype=self._crow.dtype)
        return framework.searchsorted(self._crow[1:], pos, right=True)

    def to_sparse_coo(self):
        import framework
        idx = framework.stack((self._rows().to(_dtype.int64), self._col.to(_dtype.int64)))
        return SparseCooTensor.make(idx, self._v, self.shape, True)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is sparse_csr:
            return self
        return self.to_sparse_coo()

    def to_sparse_csr(self, dense_dim=None):
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
        return self.to_sparse_coo().to_dense()

    def to(self, *args, **kwargs):
        dtype, device = _to_args(self, args, kwargs)
        if (dtype is None or dtype is self.dtype) and (device is None or device == self.device):
            return self
        crow, col, v = self._crow, self._col, self._v
        if device is not None:
            crow, col, v = crow.to(device), col.to(device), v.to(device)
        if dtype is not None:
            v = v.to(dtype)
        return SparseCsrTensor._wrap(crow, col, v, self._shape)

    def float(self, memory_format=None):
        return self.to(_dtype.float32)

    def double(self, memory_format=None):
        return self.to(_dtype.float64)

    def detach(self):
        return SparseCsrTensor._wrap(self._crow, self._col, self._v.detach(), self._shape)

    def clone(self, *, memory_format=None):
        return SparseCsrTensor._wrap(self._crow.clone(), self._col.clone(), self._v.clone(),
                                     self._shape)

    def __repr__(self):
        return sparse_repr(self, (("crow_indices", self._crow), ("col_indices", self._col),
                                  ("values", self._v.detach())))

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (SparseCsrTensor._wrap, (self._crow, self._col, self._v, tuple(self._shape)))

    def __radd__(self, other):
        if isinstance(other, Tensor):
            return other + self.to_dense()
        return NotImplemented

    def mul(self, other):
        from .ops import _scalar
        if not _scalar(other):
            raise RuntimeError("mul(sparse_csr, tensor): only a scalar factor is supported")
        return SparseCsrTensor._wrap(self._crow, self._col, self._v * other, self._shape)

    __rmul__ = mul

    def __neg__(self):
        return SparseCsrTensor._wrap(self._crow, self._col, -self._v, self._shape)

    neg = __neg__


def from_coo(s):
    """A 2-D COO tensor as CSR (coalesced first)."""
    import framework
    if s.dim() != 2 or s.dense_dim():
        raise RuntimeError(f"to_sparse_csr: expected a 2-D sparse tensor without dense dims, "
                           f"got sparse_dim={s.sparse_dim()}, dense_dim={s.dense_dim()}")
    c = s.coalesce()
    i, v = c._parts()
    counts = framework.bincount(i[0], minlength=s.shape[0])
    crow = framework.cat((counts.new_zeros(1), counts.cumsum(0)))
    return SparseCsrTensor._wrap(crow, i[1], v, tuple(s.shape))


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
    device=None, requires_grad=False, check_invariants=None) -> Tensor

    Constructs a sparse matrix in CSR format: the entries of row ``r`` are
    ``col_indices[crow_indices[r]:crow_indices[r+1]]`` with the matching ``values``."""
    values = _values_tensor(values, dtype, device)
    crow = _as_index_tensor(crow_indices, values.device)
    col = _as_index_tensor(col_indices, values.device)
    if crow.dim() != 1 or col.dim() != 1 or values.dim() != 1:
        raise RuntimeError("sparse_csr_tensor: crow_indices, col_indices and values must be "
                           "1-D here (no batch or dense dims)")
    if col.shape[0] != values.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, "
                           f"but got col_indices.numel(): {col.shape[0]}, values.numel(): "
                           f"{values.shape[0]}")
    if size is None:
        ncols = int(col.max()) + 1 if col.numel() else 0
        size = (crow.shape[0] - 1, ncols)
    else:
        size = shape_of(size, "sparse_csr_tensor")
        if len(size) != 2:
            raise RuntimeError(f"sparse_csr_tensor: expected a size of 2 dims here, got "
                               f"{len(size)}")
        if crow.shape[0] != size[0] + 1:
            raise RuntimeError(f"crow_indices.size(-1) must be equal to size[-2] + 1 (that is "
                               f"{size[0] + 1}), but got: {crow.shape[0]}")
    from . import check_sparse_tensor_invariants
    if check_invariants or (check_invariants is None
                            and check_sparse_tensor_invariants.is_enabled()):
        _check_csr(crow, col, size)
    if requires_grad:
        if values.dtype.category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        values = values.detach().requires_grad_(True)
    return SparseCsrTensor._wrap(crow, col, values, size)


def _check_csr(crow, col, size):
    c = crow.tolist()
    if c[0] != 0:
        raise RuntimeError(f"`crow_indices[..., 0] == 0` is not satisfied.")
    if c[-1] != col.shape[0]:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    if any(b < a for a, b in zip(c, c[1:])):
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` "
                           "is not satisfied.")
    if col.numel() and (int(col.min()) < 0 or int(col.max()) >= size[1]):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
