"""Collectives that autograd differentiates through (PyTorch's
``torch.distributed.nn.functional``).

Unlike ``framework.distributed``'s in-place collectives, each of these returns new tensors
and records a node whose backward is the adjoint collective: the gradient of
``all_gather`` is the reduce-scatter of the output gradients, of ``broadcast`` a reduce
to the source, of ``scatter`` a gather, and so on. That is what contrastive losses over the
embeddings of every rank need: ``all_gather`` the features, compute the loss, and each
rank's features get the gradient summed over all ranks.
"""
import warnings

from ... import compiler as _compiler
from ...autograd.function import Function
from .. import collectives as dist
from ..mpi_backend import ReduceOp
from ..process_group import group, get_rank, get_world_size

__all__ = ["broadcast", "gather", "scatter", "reduce", "reduce_scatter", "all_gather",
           "all_to_all", "all_to_all_single", "all_reduce"]


def _not_supported_under_compile(name, *, suggestion=None):
    msg = f"torch.distributed.nn.functional.{name} is not supported under torch.compile."
    if suggestion:
        msg += f" Use {suggestion} instead."
    raise RuntimeError(msg)


def _deprecated(name, suggestion):
    warnings.warn(f"torch.distributed.nn.functional.{name} is deprecated, use {suggestion} "
                  "instead.", category=FutureWarning, stacklevel=3)


def _check_compile(name, suggestion=None):
    if _compiler.is_compiling():
        _not_supported_under_compile(name, suggestion=suggestion)


def broadcast(tensor, src, group=group.WORLD):
    """Broadcasts the tensor to the whole group; returns the received tensor.

    ``tensor`` must have the same number of elements in all processes. The gradient of
    the source's input is the sum of every rank's output gradient; other ranks get zeros.
    """
    _check_compile("broadcast", "torch.distributed._functional_collectives.broadcast")
    _deprecated("broadcast", "torch.distributed._functional_collectives.broadcast")
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=group.WORLD):
    """Gathers a list of tensors in a single process; returns a tuple of one tensor per
    rank (zeros on ranks other than ``dst``)."""
    _check_compile("gather")
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=group.WORLD):
    """Scatters a list of tensors to all processes in a group; returns this rank's part.
    ``tensors`` is one tensor per rank on ``src``; the other ranks pass tensors of the
    same shape (their values are not used)."""
    _check_compile("scatter")
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=group.WORLD):
    """Reduces the tensor data across all machines; only rank ``dst`` receives the
    result."""
    _check_compile("reduce")
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=group.WORLD):
    """Reduces, then scatters a list of tensors to all processes in a group; returns
    ``output`` filled with this rank's part."""
    _check_compile("reduce_scatter",
                   "torch.distributed._functional_collectives.reduce_scatter_single")
    _deprecated("reduce_scatter",
                "torch.distributed._functional_collectives.reduce_scatter_single")
    return _Reduce_Scatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=group.WORLD):
    """Gathers tensors from the whole group; returns a tuple of one tensor per rank."""
    _check_compile("all_gather",
                   "torch.distributed._functional_collectives.all_gather_single")
    _deprecated("all_gather", "torch.distributed._functional_collectives.all_gather_single")
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=group.WORLD):
    """Sends ``input_tensor_list[i]`` to rank ``i``; returns the tensors received, one per
    rank, in ``output_tensor_list``'s tensors."""
    _check_compile("all_to_all")
    return _AlltoAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=group.WORLD):
    """Splits ``input`` along dim 0, sends part ``i`` to rank ``i`` and returns the
    concatenation of the parts received (in ``output``)."""
    _check_compile("all_to_all_single",
                   "torch.distributed._functional_collectives.all_to_all_single")
    _deprecated("all_to_all_single",
                "torch.distributed._functional_collectives.all_to_all_single")
    return _AlltoAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=group.WORLD):
    """Reduces the tensor data across all machines; every rank gets the result. The
    gradient is the all-reduce (with ``op``, as PyTorch) of the output gradients."""
    _check_compile("all_reduce", "torch.distributed._functional_collectives.all_reduce")
    _deprecated("all_reduce", "torch.distributed._functional_collectives.all_reduce")
    return _AllReduce.apply(op, group, tensor)


def _empty_like(t):
    from ..._ops import creation
    return creation.empty(tuple(t.shape), dtype=t.dtype, device=t.device)


def _zeros_like(t):
    from ..._ops import creation
    return creation.zeros(tuple(t.shape), dtype=t.dtype, device=t.device)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        ctx.rank = get_rank(group=group)
        # the collectives work in place: broadcast into a copy, never into the input
        tensor = tensor.clone()
        dist.broadcast(tensor, src, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        gx = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad_output)
        if ctx.src != ctx.rank:
            gx = gx * 0
        return None, None, gx


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        tensor_list = [_zeros_like(tensor) for _ in range(get_world_size(group=group))]
        tensor = tensor.contiguous()
        if get_rank(group=group) == dst:
            dist.gather(tensor, tensor_list, dst, group=group)
        else:
            dist.gather(tensor, None, dst, group=group)
        return tuple(tensor_list)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None, None, _Scatter.apply(ctx.dst, ctx.group, *grad_outputs))


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        if not all(t.shape == tensors[0].shape for t in tensors):
            raise ValueError("scatter: all tensors must have the same shape, got "
                             f"{[list(t.shape) for t in tensors]}")
        output = _zeros_like(tensors[0])
        if get_rank(group=group) == src:
            dist.scatter(output, [t.contiguous() for t in tensors], src, group=group)
        else:
            dist.scatter(output, None, src, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad_output)


class _Reduce(Function):
    @staticmethod
    def forward(ctx, src, op, group, tensor):
        ctx.src, ctx.group = src, group
        tensor = tensor.clone()
        dist.reduce(tensor, src, op=op, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None, _Broadcast.apply(ctx.src, ctx.group, grad_output))


class _Reduce_Scatter(Function):
    @staticmethod
    def forward(ctx, op, group, tensor, *input_tensor_list):
        ctx.group = group
        tensor = tensor.contiguous()
        dist.reduce_scatter(tensor, [t.contiguous() for t in input_tensor_list], op=op,
                            group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None) + _AllGather.apply(ctx.group, grad_output)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        tensor = tensor.contiguous()
        ctx.group = group
        out = [_empty_like(tensor) for _ in range(get_world_size(group=group))]
        dist.all_gather(out, tensor, group=group)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grad_outputs):
        # both backends here reduce-scatter natively (PyTorch emulates it with all_to_all
        # and a sum on backends that lack it: the same values)
        rank = get_rank(group=ctx.group)
        gx = _empty_like(grad_outputs[rank])
        gx = _Reduce_Scatter.apply(ReduceOp.SUM, ctx.group, gx, *grad_outputs)
        return None, gx


class _AlltoAll(Function):
    @staticmethod
    def forward(ctx, group, out_tensor_list, *tensors):
        ctx.group = group
        ctx.input_tensor_size_list = [tuple(tensors[i].shape)
                                      for i in range(get_world_size(group=group))]
        dist.all_to_all(out_tensor_list, [t.contiguous() for t in tensors], group=group)
        return tuple(out_tensor_list)

    @staticmethod
    def backward(ctx, *grad_outputs):
        from ..._ops import creation
        g = grad_outputs[0]
        tensor_list = [creation.empty(s, dtype=g.dtype, device=g.device)
                       for s in ctx.input_tensor_size_list]
        return (None, None) + _AlltoAll.apply(ctx.group, tensor_list, *grad_outputs)


class _AlltoAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group = group
        ctx.input_size = tuple(input.shape)
        # the gradient travels back: what was sent is what gets received
        ctx.output_split_sizes = input_split_sizes
        ctx.input_split_sizes = output_split_sizes
        dist.all_to_all_single(output, input, output_split_sizes=output_split_sizes,
                               input_split_sizes=input_split_sizes, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        from ..._ops import creation
        tensor = creation.empty(ctx.input_size, dtype=grad_output.dtype,
                                device=grad_output.device)
        return (None, None, None, None,
                _AlltoAllSingle.apply(ctx.group, tensor, ctx.output_split_sizes,
                                      ctx.input_split_sizes, grad_output.contiguous()))


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.group, ctx.op = group, op
        tensor = tensor.clone().contiguous()
        dist.all_reduce(tensor, op=op, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output))
