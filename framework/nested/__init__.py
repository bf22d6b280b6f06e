"""framework.nested: nested tensors (PyTorch's ``torch.nested``), jagged and strided.

A nested tensor holds a batch of tensors that differ in the size of one dim, such as
sequences of different lengths, without padding: ``values`` (the components concatenated
along the ragged dim) and ``offsets`` (where each starts). Its shape shows the ragged dim
as a symbol ``j1``. Pointwise ops, ``linear``, norms, softmax, reductions, reshapes and
``scaled_dot_product_attention`` (per sequence) work on it and are differentiable.

The strided layout (the default, as in PyTorch) allows components that differ in any dim;
it lives in strided_tensor.py.
"""
import numpy as np

from .._ops.memory_format import strided
from .._tensor import Tensor
from . import ops
from .tensor import NestedInt, NestedTensor, jagged
from . import strided_tensor as _strided
from .strided_tensor import StridedNestedTensor

__all__ = ["nested_tensor", "as_nested_tensor", "nested_tensor_from_jagged", "narrow",
           "to_padded_tensor", "masked_select"]

ops.install()

_RAGGED_ERROR = ("Cannot represent given tensor list as a nested tensor with the jagged "
                 "layout. Note that the jagged layout only allows for a single ragged "
                 "dimension. For example: (B, *, D_0, D_1, ..., D_N), with ragged * dim.")


def _is_strided(layout):
    """Whether ``layout`` (None: strided, as in PyTorch) is the strided one."""
    if layout is None or layout is strided:
        return True
    if layout is jagged:
        return False
    raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")


def _offsets_of(lens, device):
    import framework
    return framework.tensor(np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
                            device=device)


def _from_list(ts, dtype, device, op):
    """The components as tensors of one dtype and device, checked for one ragged dim."""
    import framework
    if len(ts) == 0:
        raise RuntimeError("Cannot construct a nested tensor from an empty tensor list")
    ts = [t if isinstance(t, Tensor) else framework.tensor(t, dtype=dtype) for t in ts]
    if any(isinstance(t, NestedTensor) for t in ts):
        raise RuntimeError(f"{op}(): expected a list of dense tensors")
    if any(t.dim() == 0 for t in ts):
        raise RuntimeError("Cannot construct a nested tensor from a list of zero-dim tensors")
    if any(t.dim() != ts[0].dim() or t.shape[1:] != ts[0].shape[1:] for t in ts):
        raise RuntimeError(_RAGGED_ERROR)
    dtype = ts[0].dtype if dtype is None else dtype
    device = ts[0].device if device is None else device
    return [t.to(device=device, dtype=dtype) for t in ts], device


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """nested_tensor(tensor_list, *, dtype=None, layout=None, device=None,
    requires_grad=False, pin_memory=False) -> Tensor

    A new leaf nested tensor with copies of the tensors in ``tensor_list``, which have the
    same number of dims. The strided layout (the default) allows them to differ in any dim;
    the jagged layout only in their first."""
    import framework
    if _is_strided(layout):
        return _strided.nested_from_list(tensor_list, dtype, device, requires_grad,
                                         pin_memory)
    ts, device = _from_list(tensor_list, dtype, device, "nested_tensor")
    values = framework.cat([t.detach() for t in ts]) if len(ts) > 1 else ts[0].detach().clone()
    if ts[0].dim() == 1:    # 1-d components: a (B, j) nested tensor of scalars
        values = values.reshape(-1)
    nt = NestedTensor.make(values, _offsets_of([t.shape[0] for t in ts], device))
    if pin_memory:
        nt = NestedTensor.make(values.pin_memory(), nt._offsets)
    return nt.requires_grad_(requires_grad) if requires_grad else nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """as_nested_tensor(ts, dtype=None, device=None, layout=None) -> Tensor

    A nested tensor from a list of tensors (copied into one, keeping autograd history, so
    gradients flow back to them) or from a dense (B, S, ...) tensor (a view, with all
    lengths S); a nested tensor of the given ``layout`` is returned as is (converted to
    ``dtype``/``device``). The default layout is the strided one, as in PyTorch."""
    import framework
    if isinstance(ts, Tensor) and ts.is_nested:
        # as PyTorch: only with the nested tensor's own layout given (None is strided)
        if layout is not ts.layout:
            raise RuntimeError("as_nested_tensor(): Converting between nested tensor layouts "
                               "is not supported")
        return ts.to(device=device or ts.device, dtype=dtype or ts.dtype)
    if _is_strided(layout):
        return _strided.as_nested(ts, dtype, device)
    if isinstance(ts, Tensor):
        if ts.dim() < 2:
            raise RuntimeError("as_nested_tensor(): expected a tensor with at least 2 dims "
                               f"(B, S, ...), but got shape {tuple(ts.shape)}")
        B, S = ts.shape[0], ts.shape[1]
        values = ts.to(device=device or ts.device, dtype=dtype or ts.dtype)
        values = values.reshape((B * S,) + tuple(ts.shape[2:]))
        return NestedTensor.make(values, _offsets_of([S] * B, values.device))
    if not isinstance(ts, (list, tuple)):
        raise TypeError("as_nested_tensor(): Expected ts to be a tensor or a list of tensors, "
                        f"but got {type(ts).__name__}")
    parts, device = _from_list(list(ts), dtype, device, "as_nested_tensor")
    values = framework.cat(parts) if len(parts) > 1 else parts[0]
    return NestedTensor.make(values, _offsets_of([t.shape[0] for t in parts], device))


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None):
    """nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
    min_seqlen=None, max_seqlen=None) -> Tensor

    A nested tensor viewing ``values``, whose dim ``jagged_dim - 1`` holds the components
    one after another: component i starts at ``offsets[i]`` and is ``lengths[i]`` long (by
    default ``offsets[i + 1] - offsets[i]``). Gradients flow to ``values``."""
    import framework
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or "
                               "lengths is required.")
        offsets = framework.cat([lengths.new_zeros(1), lengths.cumsum(0)]).to(framework.int64)
        lengths = None
    jagged_dim = 1 if jagged_dim is None else jagged_dim
    if not 1 <= jagged_dim <= values.dim():
        raise RuntimeError(f"nested_tensor_from_jagged(): jagged_dim={jagged_dim} is out of "
                           f"range for values of shape {tuple(values.shape)}")
    if offsets.dim() != 1 or offsets.dtype.is_floating_point:
        raise RuntimeError("nested_tensor_from_jagged(): offsets must be a 1-d integer tensor")
    return NestedTensor.make(values, offsets, lengths, jagged_dim, min_seqlen, max_seqlen)


def narrow(tensor, dim, start, length, layout=strided):
    """narrow(tensor, dim, start, length, layout=framework.strided) -> Tensor

    With layout=framework.jagged: a nested tensor viewing rows
    ``start[i]:start[i] + length[i]`` of each batch
    entry of the dense (B, S, ...) ``tensor`` along ``dim`` (which must be 1); ``start`` and
    ``length`` are ints or (B,) tensors. The result has holes (``lengths()`` is set).
    With the strided layout (the default): copies of the batch entries
    ``start:start + length`` (dim 0 only, integer ``start`` and ``length``)."""
    import framework
    if _is_strided(layout):
        return _strided.narrow(tensor, dim, start, length)
    if dim != 1:
        raise RuntimeError("jagged layout only supports dim=1")
    B, S = tensor.shape[0], tensor.shape[1]
    values = tensor.reshape((B * S,) + tuple(tensor.shape[2:]))
    idx = framework.arange(B, device=tensor.device) * S
    starts = idx + (start.to(tensor.device) if isinstance(start, Tensor) else start)
    offsets = framework.cat([starts, idx.new_full((1,), B * S)]).to(framework.int64)
    lengths = length.to(tensor.device) if isinstance(length, Tensor) else \
        framework.full((B,), length, dtype=framework.int64, device=tensor.device)
    return NestedTensor.make(values, offsets, lengths.to(framework.int64))


def to_padded_tensor(input, padding, output_size=None):
    """to_padded_tensor(input, padding, output_size=None) -> Tensor

    A dense tensor with each component of ``input`` padded with ``padding`` along the ragged
    dim to the longest component (or to ``output_size``'s size of that dim). A strided
    nested tensor is padded at the end of every dim, to the largest size there or to
    ``output_size``."""
    if isinstance(input, StridedNestedTensor):
        return _strided.to_padded(input, padding, output_size)
    if not isinstance(input, NestedTensor):
        raise RuntimeError("to_padded_tensor(): expected input to be a nested tensor, but got "
                           f"a dense tensor of shape {tuple(input.shape)}")
    length = None if output_size is None else output_size[input._ragged_idx]
    return ops.to_padded(input, padding, length)


def masked_select(tensor, mask):
    """masked_select(tensor, mask) -> Tensor

    A (B, j) jagged nested tensor holding, for each row of the 2-d ``tensor``, the elements
    where ``mask`` (broadcast to it) is True."""
    import framework
    if tensor.dim() != 2:
        raise RuntimeError("masked_select(): only 2-d tensors (B, S) are supported, but got "
                           f"shape {tuple(tensor.shape)}")
    mask = mask.expand(tensor.shape)
    values = framework.masked_select(tensor, mask)
    lens = mask.sum(-1).tolist()
    return NestedTensor.make(values, _offsets_of(lens, tensor.device))
