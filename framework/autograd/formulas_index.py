"""Derivative helpers of the indexing, gather and scatter ops (see formulas.py, which
gives them to the formulas of ops.yaml)."""
import framework
from .function import delayed_error


def index_backward(grad, input, index):
    """Gradient of ``input[index]`` (any indexing): summed into the positions it read."""
    pos = framework.arange(input.numel(), device=input.device).reshape(input.shape)[index]
    flat = grad.new_zeros(input.numel())
    return flat.index_add(0, pos.reshape(-1), grad.reshape(-1)).reshape(input.shape)


def index_put_values_backward(grad, indices, values):
    return grad[tuple(indices)]


def masked_select_backward(grad, input, mask):
    shape = framework._ops.pointwise.broadcast_shapes(input.shape, mask.shape)
    return grad.new_zeros(shape).masked_scatter(mask.expand(shape), grad)


def masked_scatter_source_backward(grad, mask, source):
    sel = grad.masked_select(mask.expand(grad.shape))
    n = source.numel()
    if sel.numel() < n:
        sel = framework.cat([sel, sel.new_zeros(n - sel.numel())])
    return sel.reshape(source.shape)


def take_backward(grad, input, index):
    n = input.numel()
    idx = index.reshape(-1) % max(n, 1)
    return grad.new_zeros(n).index_add(0, idx, grad.reshape(-1)).reshape(input.shape)


def put_input_backward(grad, index, accumulate):
    return grad if accumulate else grad.put(index, grad.new_zeros(index.shape))


def setitem_self_backward(grad, index):
    g = grad.clone()
    g[index] = 0
    return g


def scatter_reduce_backward(grad, input, dim, index, src, reduce, include_self, result,
                            wrt_input):
    """Gradient of scatter_reduce w.r.t. input or src, as PyTorch defines it: mean divides
    by the count of each slot, amax/amin share the gradient evenly among the elements equal
    to the result (self counted even with include_self=False, as PyTorch does), prod gives
    a zero element the product of the others."""
    if reduce not in ("sum", "mean", "amax", "amin", "prod"):
        # the forward takes the old names "max"/"min"; PyTorch's backward does not
        raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    if reduce == "sum":
        g = grad if wrt_input else grad.gather(dim, index)
    elif reduce == "mean":
        n = (grad.new_ones(grad.shape) if include_self else grad.new_zeros(grad.shape))
        n = n.scatter_add(dim, index, grad.new_ones(index.shape))
        n = n.masked_fill(n == 0, 1)
        g = grad / n if wrt_input else grad.gather(dim, index) / n.gather(dim, index)
    elif reduce in ("amax", "amin"):
        value = result.gather(dim, index)
        n = (input == result).to(grad.dtype).scatter_add(dim, index,
                                                         (src == value).to(grad.dtype))
        share = grad / n
        g = share * (input == result) if wrt_input else share.gather(dim, index) * (src == value)
    else:   # prod (the forward call checked the name)
        g = _scatter_prod_backward(grad, input, dim, index, src, include_self, result,
                                   wrt_input)
    if wrt_input and not include_self:
        g = g.scatter(dim, index, 0)
    return g


def _scatter_prod_backward(grad, input, dim, index, src, include_self, result, wrt_input):
    if wrt_input:
        # a zero of input gets the product of what was scattered onto it
        masked = input.masked_fill(input == 0, 1)
        return grad * masked.scatter_reduce(dim, index, src, "prod",
                                            include_self=include_self) / masked
    zero = src == 0
    zeros = grad.new_zeros(grad.shape).scatter_add(dim, index, zero.to(grad.dtype))
    zeros = zeros.gather(dim, index)
    single = zero & (zeros == 1)
    # the only zero in its slot: the product of the others, computed with it replaced by 1
    others = input.scatter_reduce(dim, index, src.masked_fill(single, 1), "prod",
                                  include_self=include_self)
    g = framework.where(single, (grad * others).gather(dim, index),
                        (grad * result).gather(dim, index) / src.masked_fill(zero, 1))
    # several zeros in a slot: right to first order, but its derivative is not
    if framework.is_grad_enabled() and bool((zeros > 1).any()):
        g = delayed_error(g, "scatter_reduce(): Double backward is unsupported for src when "
                             ">1 zeros in src are scattered to the same position")
    return g
