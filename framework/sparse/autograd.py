"""The three autograd nodes sparse tensors need; every other sparse op is written with
dense framework ops over these, so its gradient comes from the dense ops' formulas.

- ``SparseCooTensorWithDimsAndTensors``: values -> sparse tensor (construction). Its
  backward reads the incoming gradient (dense, or sparse) at the tensor's indices.
- ``Values``: sparse tensor -> its values (a coalesced tensor, so no index repeats). Its
  backward is a sparse gradient with the tensor's own indices, as PyTorch's.
- ``Coalesce``: the same dense value, so the gradient passes through unchanged.
"""
from ..autograd.function import Function
from ..autograd import grad_mode


def gradient_at(grad, indices, shape):
    """The gradient ``grad`` (dense or sparse COO) read at ``indices`` (sparse_dim x nnz):
    one row per index, repeated indices included."""
    import framework
    from .base import SparseTensor
    from .coo import SparseCooTensor, linear_index
    if not isinstance(grad, SparseCooTensor):
        grad = grad.to_dense() if isinstance(grad, SparseTensor) else grad
        return grad[tuple(indices.unbind(0))]
    if grad._i is indices:
        return grad._v
    g = grad.coalesce()
    sizes = shape[:indices.shape[0]]
    keys = linear_index(g._i, sizes)
    want = linear_index(indices, sizes)
    if keys.numel() == 0:
        return g._v.new_zeros((indices.shape[1],) + tuple(g._v.shape[1:]))
    pos = framework.searchsorted(keys, want).clamp_(max=keys.numel() - 1)
    found = keys.index_select(0, pos) == want
    vals = g._v.index_select(0, pos)
    return vals * found.reshape((-1,) + (1,) * (vals.dim() - 1)).to(vals.dtype)


class SparseCooTensorWithDimsAndTensors(Function):
    @staticmethod
    def forward(ctx, values, indices, shape, coalesced):
        from .coo import SparseCooTensor
        out = SparseCooTensor._wrap(indices, values.detach(), shape, coalesced)
        ctx.indices, ctx.shape = indices, shape
        return out

    @staticmethod
    def backward(ctx, grad):
        return gradient_at(grad, ctx.indices, ctx.shape), None, None, None


class Values(Function):
    @staticmethod
    def forward(ctx, sparse):
        ctx.indices, ctx.shape = sparse._i, sparse.shape
        return sparse._v.detach()

    @staticmethod
    def backward(ctx, grad):
        from .coo import SparseCooTensor
        return SparseCooTensor._wrap(ctx.indices, grad, ctx.shape, True)


class Coalesce(Function):
    @staticmethod
    def forward(ctx, sparse):
        return sparse._coalesce_nograd()

    @staticmethod
    def backward(ctx, grad):
        return grad


def needs_grad(t):
    return grad_mode._mode.enabled and t._requires_grad
