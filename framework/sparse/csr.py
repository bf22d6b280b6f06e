"""Sparse CSR matrices (PyTorch's ``torch.sparse_csr`` layout), 2-D, without dense dims.

``_crow`` (m + 1) holds where each row's entries start in ``_col`` and ``_v`` (nnz); the
entries of a row are sorted by column. Products go through the COO form (the row of each
entry comes from ``searchsorted`` over ``_crow``); the constructor, conversions and
transposes are those of every compressed layout (``constructors``, ``conversions``). Gradients flow to the
values tensor the matrix was made from: the matrix is a view of it.
"""
from .. import _dtype
from .._tensor import Tensor
from .base import SparseTensor, sparse_csr, sparse_repr
from .coo import SparseCooTensor, _to_args


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
