"""COO ops that reshape or combine sparse tensors (``cat``, ``unsqueeze``), the batched
product ``bmm`` and ``pow``: index arithmetic on the indices, ordinary (differentiable)
ops on the values."""
import framework

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from .autograd import needs_grad
from .base import SparseTensor
from .coo import SparseCooTensor


def cat(tensors, dim=0):
    """Concatenates COO tensors along ``dim``: along a sparse dim the indices are shifted
    by the sizes before them; along a dense dim the values are padded with zeros."""
    tensors = list(tensors)
    for k, t in enumerate(tensors):
        if not isinstance(t, SparseTensor):
            raise RuntimeError("Concatenating sparse tensors, but a dense tensor was found at "
                               f"position {k}.")
    first = tensors[0]
    d = _wrap_dim(dim, first.dim())
    for k, t in enumerate(tensors[1:], 1):
        if t.dim() != first.dim() or any(a != b for j, (a, b) in
                                         enumerate(zip(t.shape, first.shape)) if j != d):
            raise RuntimeError(f"All tensors must have the same shape: {list(first.shape)} "
                               "(except in the concatenating dimension), but found shape: "
                               f"{list(t.shape)} at position {k}.")
    dtype = first.dtype
    for t in tensors[1:]:
        dtype = framework.promote_types(dtype, t.dtype)
    parts = [t._parts() for t in tensors]
    nsp = first.sparse_dim()
    shape = list(first.shape)
    shape[d] = sum(t.shape[d] for t in tensors)
    indices, values, offset = [], [], 0
    for t, (i, v) in zip(tensors, parts):
        v = v.to(dtype)
        if d < nsp:
            i = i.clone()
            i[d] += offset
        else:
            # the values' dim for d, padded to the full length with zeros on either side
            vd = d - nsp + 1
            before = list(v.shape)
            before[vd] = offset
            after = list(v.shape)
            after[vd] = shape[d] - offset - t.shape[d]
            v = framework.cat([v.new_zeros(before), v, v.new_zeros(after)], dim=vd)
        offset += t.shape[d]
        indices.append(i)
        values.append(v)
    return SparseCooTensor.make(framework.cat(indices, dim=1), framework.cat(values, dim=0),
                                tuple(shape), False)


def unsqueeze(self, dim):
    """A size-1 dim inserted at ``dim`` (a sparse dim when it falls among them); the result
    is marked uncoalesced, as PyTorch's is."""
    d = _wrap_dim(dim, self.dim() + 1)
    i, v = self._parts()
    nsp = i.shape[0]
    shape = list(self.shape)
    shape.insert(d, 1)
    if d <= nsp:
        zero = i.new_zeros((1, i.shape[1]))
        return SparseCooTensor.make(framework.cat([i[:d], zero, i[d:]], dim=0), v,
                                    tuple(shape), False)
    return SparseCooTensor.make(i, v.unsqueeze(d - nsp + 1), tuple(shape), False)


def bmm(self, mat2):
    """Batched product of a 3-D COO tensor (b x n x m) with a dense b x m x p tensor: a
    dense b x n x p tensor."""
    if self.dense_dim() != 0:
        raise RuntimeError(f"bmm_sparse: Tensor 'self' must have 0 dense dims, but has "
                           f"{self.dense_dim()}")
    if self.sparse_dim() != 3:
        raise RuntimeError(f"bmm_sparse: Tensor 'self' must have 3 sparse dims, but has "
                           f"{self.sparse_dim()}")
    if not isinstance(mat2, Tensor) or mat2.dim() != 3:
        raise RuntimeError(f"bmm_sparse: Tensor 'mat2' must have 3 dims, but has "
                           f"{getattr(mat2, 'ndim', 0)}")
    b, n, m = self.shape
    if mat2.shape[0] != b:
        raise RuntimeError("bmm_sparse: 'self.size(0)' and 'mat2.size(0)' must match")
    if mat2.shape[1] != m:
        raise RuntimeError("bmm_sparse: 'self.size(2)' and 'mat2.size(1)' must match")
    if mat2.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype.scalar_name} but found "
                           f"{mat2.dtype.scalar_name}")
    if needs_grad(self):
        return _DenseGradBmm.apply(self, mat2)
    return _bmm(self, mat2)


def _bmm(s, d):
    # one block-diagonal (b*n) x (b*m) matrix times the stacked right-hand sides
    b, n, m = s.shape
    i, v = s._i, s._v
    flat = framework.stack([i[0] * n + i[1], i[0] * m + i[2]])
    block = SparseCooTensor._wrap(flat, v, (b * n, b * m), s._coalesced)
    return block.mm(d.reshape(b * m, d.shape[2])).reshape(b, n, d.shape[2])


class _DenseGradBmm(Function):
    """``bmm`` of a COO tensor that requires grad: PyTorch gives it a dense gradient, the
    full ``grad @ mat2^T`` (not only at the stored entries)."""

    @staticmethod
    def forward(ctx, s, d):
        ctx.s, ctx.d = s.detach(), d.detach()
        return _bmm(ctx.s, ctx.d)

    @staticmethod
    def backward(ctx, grad):
        gs = grad.bmm(ctx.d.transpose(1, 2)) if ctx.needs_input_grad[0] else None
        gd = _bmm(ctx.s.transpose(1, 2), grad) if ctx.needs_input_grad[1] else None
        return gs, gd


def pow(self, exponent):
    """The stored values raised to a scalar ``exponent`` (coalesced first: duplicates are
    summed before the power)."""
    if isinstance(exponent, Tensor):
        raise NotImplementedError("Could not run 'aten::pow.Tensor_Tensor' with arguments "
                                  f"from the '{self._backend_name()}' backend.")
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    t = self.coalesce()
    i, v = t._parts()
    return SparseCooTensor.make(i, v.pow(exponent), tuple(self.shape), True)


def install(cls):
    """Sets the ops above as methods of the COO class."""
    cls.unsqueeze, cls.bmm, cls.pow, cls.__pow__ = unsqueeze, bmm, pow, pow
