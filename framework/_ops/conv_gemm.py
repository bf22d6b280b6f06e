"""Convolutions as implicit GEMMs: the internal ops _conv_gemm (forward), _conv_gemm_input
(input gradient) and _conv_gemm_weight (weight gradient) over 1 or 2 spatial dims, and
the rule that sends conv1d/conv2d on cuda to them (framework/_ops/conv.py).

On cuda the kernels (framework/kernels/conv_gemm.py) gather the im2col columns tile by
tile inside the GEMM, so the columns (C*KH*KW x N*OH*OW) never exist in memory; on the CPU
the same ops write the columns and call one GEMM (framework/_cpu/conv_gemm.py), and
conv1d/conv2d there keep their im2col composite.

Each op is linear in each of its two tensors, and the three are each other's adjoints,
so their derivatives (ops.yaml) are the same three ops: for y = conv(x, w),
dx = _conv_gemm_input(dy, w), dw = _conv_gemm_weight(dy, x); the derivative of
_conv_gemm_input(dy, w) with respect to dy (given ddx) is conv(ddx, w), with respect to w
_conv_gemm_weight(dy, ddx); that of _conv_gemm_weight(dy, x) (given ddw) conv(x, ddw) and
_conv_gemm_input(dy, ddw). Double backward needs nothing else.

``padding`` is the left padding per dim; the output size (``grid_size``, or the gradient's
own shape) implies the right one, so padding="same" with an even kernel fits.
"""
import math

from . import alloc, args
from .pointwise import require_tensor
from .views import contiguous

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def takes(x, nsp):
    """Whether a convolution over ``nsp`` spatial dims of x runs on the implicit-GEMM
    kernels: on cuda, with 1 or 2 spatial dims and a floating dtype (integer convolutions
    and 3-d ones keep the im2col path)."""
    return x._storage.device.type == "cuda" and nsp <= 2 and x.dtype.name in _FLOATS


def _ints(op, name, value, nsp):
    v = args.int_list(op, name, (value,))
    if len(v) != nsp:
        raise RuntimeError(f"{op}: {name} must have {nsp} values, got {list(v)}")
    return v


def _check(op, a, a_name, b, b_name, groups, stride, padding, dilation):
    """Common checks; returns (spatial dims, groups, stride, padding, dilation)."""
    require_tensor(op, a, a_name, 1)
    require_tensor(op, b, b_name, 2)
    nsp = a.dim() - 2
    if not 1 <= nsp <= 2 or b.dim() != a.dim():
        raise RuntimeError(f"{op}: expected 3-d or 4-d {a_name} and {b_name} of the same "
                           f"rank, got {list(a._shape)} and {list(b._shape)}")
    args.same_device(op, a, b)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: expected {a_name} and {b_name} of one dtype, got "
                           f"{a.dtype} and {b.dtype}")
    groups = args.to_int(op, "groups", groups)
    stride = _ints(op, "stride", stride, nsp)
    padding = _ints(op, "padding", padding, nsp)
    dilation = _ints(op, "dilation", dilation, nsp)
    if groups < 1 or min(stride) < 1 or min(dilation) < 1 or min(padding) < 0:
        raise RuntimeError(f"{op}: expected groups, stride and dilation >= 1 and padding "
                           f">= 0, got groups={groups}, stride={list(stride)}, "
                           f"padding={list(padding)}, dilation={list(dilation)}")
    return nsp, groups, stride, padding, dilation


def _need(op, ok, what):
    if not ok:
        raise RuntimeError(f"{op}: {what}")


def _zeros(shape, like):
    out = alloc.empty(shape, like.dtype, like._storage.device)
    alloc.backend(out._storage.device).copy.fill(out, 0)
    return out


def conv_gemm(input, weight, bias, stride, padding, dilation, groups, grid_size):
    """The convolution of input (N, C, *spatial) with weight (O, C/groups, *kernel), plus
    bias (O,) when given: an (N, O, *grid_size) tensor (1 or 2 spatial dims)."""
    op = "_conv_gemm"
    nsp, groups, stride, padding, dilation = _check(op, input, "input", weight, "weight",
                                                    groups, stride, padding, dilation)
    grid = _ints(op, "grid_size", grid_size, nsp)
    (n, c), (o, cg) = input._shape[:2], weight._shape[:2]
    _need(op, o % groups == 0 and c == cg * groups and min(grid) >= 0,
          f"input {list(input._shape)}, weight {list(weight._shape)}, groups={groups} and "
          f"grid_size={list(grid)} do not fit")
    if bias is not None:
        require_tensor(op, bias, "bias", 3)
        args.same_device(op, input, bias)
        _need(op, bias.dim() == 1 and bias._shape[0] == o and bias.dtype is input.dtype,
              f"expected a bias of {o} elements of {input.dtype}, got {list(bias._shape)} "
              f"{bias.dtype}")
        bias = contiguous(bias)
    out = alloc.empty((n, o) + grid, input.dtype, input._storage.device)
    if out.numel():
        alloc.backend(out._storage.device).conv_gemm.forward(
            input, contiguous(weight), bias, out, stride, padding, dilation, groups)
    return out


def conv_gemm_input(grad_output, weight, input_size, stride, padding, dilation, groups):
    """The gradient of a convolution with respect to its input (N, C, *input_size), given
    grad_output (N, O, *grid) and weight (O, C/groups, *kernel)."""
    op = "_conv_gemm_input"
    nsp, groups, stride, padding, dilation = _check(op, grad_output, "grad_output", weight,
                                                    "weight", groups, stride, padding,
                                                    dilation)
    size = _ints(op, "input_size", input_size, nsp)
    n, o = grad_output._shape[:2]
    _need(op, o == weight._shape[0] and o % groups == 0 and min(size) >= 0,
          f"grad_output {list(grad_output._shape)}, weight {list(weight._shape)}, "
          f"groups={groups} and input_size={list(size)} do not fit")
    shape = (n, weight._shape[1] * groups) + size
    if grad_output.numel() == 0:
        return _zeros(shape, grad_output)
    out = alloc.empty(shape, grad_output.dtype, grad_output._storage.device)
    if out.numel():
        alloc.backend(out._storage.device).conv_gemm.input_grad(
            grad_output, contiguous(weight), out, stride, padding, dilation, groups)
    return out


def conv_gemm_weight(grad_output, input, kernel_size, stride, padding, dilation, groups):
    """The gradient of a convolution with respect to its weight (O, C/groups,
    *kernel_size), given grad_output (N, O, *grid) and input (N, C, *spatial)."""
    op = "_conv_gemm_weight"
    nsp, groups, stride, padding, dilation = _check(op, grad_output, "grad_output", input,
                                                    "input", groups, stride, padding,
                                                    dilation)
    kernel = _ints(op, "kernel_size", kernel_size, nsp)
    (n, o), c = grad_output._shape[:2], input._shape[1]
    _need(op, n == input._shape[0] and o % groups == 0 and c % groups == 0
          and min(kernel) >= 1,
          f"grad_output {list(grad_output._shape)}, input {list(input._shape)}, "
          f"groups={groups} and kernel_size={list(kernel)} do not fit")
    shape = (o, c // groups) + kernel
    if grad_output.numel() == 0 or input.numel() == 0 or math.prod(shape) == 0:
        return _zeros(shape, grad_output)
    out = alloc.empty(shape, grad_output.dtype, grad_output._storage.device)
    alloc.backend(out._storage.device).conv_gemm.weight_grad(
        grad_output, input, out, stride, padding, dilation, groups)
    return out

