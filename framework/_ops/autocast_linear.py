"""``linear`` under autocast as one GEMM: ``framework._autocast_linear(input, weight, bias,
dtype)`` is ``linear(input.to(dtype), weight.to(dtype), bias.to(dtype))`` with the casts
done by the GEMM as it loads its operands (the same rounding to nearest even, so the same
bits). A float32 weight and bias then cost no cast kernels, no lower-precision copies and no
ToCopy nodes, forward or backward: three to six launches a layer fewer.

The backward (``_autocast_linear_backward``, one call for the three gradients) gives what
the unfused ops give: each gradient is computed in ``dtype`` and rounded to it, then
converted to its input's dtype (the ToCopy backward), the rounding done by the GEMM's
epilogue. It has no derivative itself: a backward that builds a graph (``create_graph``,
a gradient penalty) takes the unfused ops' formulas instead (:func:`backward`).

framework/_ops/autocast.py routes ``nn.functional.linear`` here when autocast would cast
its floating operands (2-d or more) to float16 or bfloat16.
"""
from .. import _dtype
from .._tensor import Tensor
from ..autograd import grad_mode
from . import alloc
from .linalg import _cpp
from .reduction import sum_rounded

_LOWER = (_dtype.float16, _dtype.bfloat16)
_FLOATS = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


def applies(input, weight, bias, dtype):
    """Whether autocast's linear can run here: floating operands of at most float32 on one
    device, 2-d or more input, a 2-d weight and a 1-d bias (or none)."""
    if dtype not in _LOWER or not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        return False
    if input.dtype not in _FLOATS[:3] or weight.dtype not in _FLOATS[:3]:
        return False
    if input.dim() < 2 or weight.dim() != 2:
        return False
    dev = input._storage.device
    if weight._storage.device is not dev:
        return False
    if bias is not None:
        if not isinstance(bias, Tensor) or bias.dim() != 1 or bias.dtype not in _FLOATS[:3] \
                or bias._storage.device is not dev:
            return False
    return True


def _check(input, weight, bias):
    if input.dim() < 2 or weight.dim() != 2 or (bias is not None and bias.dim() != 1):
        raise RuntimeError(f"_autocast_linear: expected an input of 2 or more dims, a 2-d "
                           f"weight and a 1-d bias, got {list(input._shape)}, "
                           f"{list(weight._shape)} and "
                           f"{None if bias is None else list(bias._shape)}")
    k, (n, kw) = input._shape[-1], weight._shape
    if k != kw:
        rows = input.numel() // k if k else 0
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                           f"{kw}x{n})")
    if bias is not None and bias._shape[0] != n:
        raise RuntimeError(f"The size of tensor a ({n}) must match the size of tensor b "
                           f"({bias._shape[0]}) at non-singleton dimension 1")
    if not (input.dtype in _FLOATS and weight.dtype in _FLOATS):
        raise RuntimeError(f"_autocast_linear: expected floating operands, got "
                           f"{_cpp(input.dtype)} and {_cpp(weight.dtype)}")


def _batched(strides, nd):
    """A matrix's (row, column) strides for a product of ``nd`` dims (batch dims: 0)."""
    return (0,) * (nd - 2) + tuple(strides)


def autocast_linear(input, weight, bias, dtype):
    """``input @ weight^T + bias`` of ``dtype`` (float16 or bfloat16), each operand rounded
    to ``dtype`` as autocast's casts would round it."""
    _check(input, weight, bias)
    dev = input._storage.device
    nd = input.dim()
    out = alloc.empty(input._shape[:-1] + weight._shape[:1], dtype, dev)
    if out.numel():
        ws = weight._stride
        c, sc = None, None
        if bias is not None:
            c, sc = bias, _batched((0, bias._stride[0]), nd)
        alloc.backend(dev).linalg.matmul(out, input, input._stride, weight,
                                         _batched((ws[1], ws[0]), nd),
                                         0 if bias is None else 1, 1, c, sc, dtype)
    return out


def _rows(t):
    """``t`` as a 2-d (rows, last dim) tensor: an alias when its leading dims step over
    whole rows, else a copy."""
    shape, st = t._shape, t._stride
    rows = 1
    for s in shape[:-1]:
        rows *= s
    ok = all(st[d] == st[d + 1] * shape[d + 1] or shape[d] == 1
             for d in range(len(shape) - 2))
    if not ok:
        return t.reshape(rows, shape[-1])
    row_stride = st[-2] if len(shape) > 1 else shape[-1]
    return Tensor._make(t._storage, (rows, shape[-1]), (row_stride, st[-1]), t._offset,
                        t.dtype)


def autocast_linear_backward(grad_out, input, weight, bias, dtype, output_mask):
    """(grad_input, grad_weight, grad_bias) of _autocast_linear, those of ``output_mask``:
    each taken in ``dtype`` and rounded to it, in its input's dtype."""
    dev = input._storage.device
    kernels = alloc.backend(dev).linalg
    gi = gw = gb = None
    nd = grad_out.dim()
    if output_mask[0]:
        gi = alloc.empty(input._shape, input.dtype, dev)
        if gi.numel():
            kernels.matmul(gi, grad_out, grad_out._stride, weight,
                           _batched(weight._stride, nd), 0, 1, None, None, dtype)
    want_gb = output_mask[2] and bias is not None
    if output_mask[1]:
        gw = alloc.empty(weight._shape, weight.dtype, dev)
        g2, x2 = _rows(grad_out), _rows(input)
        if g2._shape[0] == 0:
            gw.zero_()
        elif gw.numel():
            (rows, n), (sr, sn) = g2._shape, g2._stride
            g2t = Tensor._make(g2._storage, (n, rows), (sn, sr), g2._offset, g2.dtype)
            if want_gb and dtype in _FLOATS[:3]:
                # the bias gradient: the sums of g2t's rows, in the same (tensor-core) GEMM
                gb = alloc.empty(bias._shape, bias.dtype, dev)
            kernels.matmul(gw, g2t, g2t._stride, x2, x2._stride, 0, 1, None, None, dtype,
                           gb)
    if want_gb and gb is None:
        # the unfused backward's sum in dtype, then its ToCopy: one reduction
        g = grad_out.to(dtype)      # (itself when it is of dtype already)
        dims = list(range(nd - 1))
        gb = sum_rounded(g, dims, bias.dtype) if bias.dtype is not dtype else g.sum(dims)
    return gi, gw, gb


def backward(grad_out, input, weight, bias, dtype, output_mask):
    """The derivative formulas' entry: the fused backward, or, where the backward itself
    records (grad mode on and an operand requiring grad: ``create_graph``), the gradients
    of the unfused ``linear(input.to(dtype), weight.to(dtype), bias.to(dtype))`` from
    differentiable ops, in the same dtypes."""
    if not (grad_mode._mode.enabled and any(
            t is not None and t._requires_grad for t in (grad_out, input, weight, bias))):
        return autocast_linear_backward(grad_out, input, weight, bias, dtype, output_mask)
    g = grad_out.to(dtype)
    gi = gw = gb = None
    if output_mask[0]:
        gi = g.matmul(weight.to(dtype)).to(input.dtype)
    if output_mask[1]:
        n, k = weight._shape
        gw = g.reshape(-1, n).t().matmul(input.to(dtype).reshape(-1, k)).to(weight.dtype)
    if output_mask[2] and bias is not None:
        gb = g.sum(tuple(range(g.dim() - 1))).to(bias.dtype)
    return gi, gw, gb
