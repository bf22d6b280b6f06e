"""CPU launchers: conv_gemm family, the counterpart of framework/kernels/conv_gemm.py (1-d
and 2-d convolutions and their input and weight gradients as GEMMs). The CPU does what
im2col + OpenBLAS does best: it writes the columns (native/conv.cpp) into a scratch
buffer and multiplies them in one batched GEMM (native/linalg.cpp). framework.conv2d on
the CPU keeps its own im2col composite; these launchers serve the internal ops
_conv_gemm, _conv_gemm_input and _conv_gemm_weight, which run here too.

``stride``, ``padding`` (left padding; the output size implies the right one) and
``dilation`` have one value per spatial dim; weight and bias are contiguous."""
import math

from .._ops import alloc
from .._tensor import Tensor
from . import conv, copy, linalg

_make = Tensor._make


def _view(t, shape, strides):
    return _make(t._storage, tuple(shape), tuple(strides), t._offset, t.dtype)


def _columns(x, kernel, grid, stride, padding, dilation, row_major):
    """The columns of x (N, C, *spatial) in a new buffer: laid out (N, C*KK, L) when
    ``row_major`` is false, (C*KK, N, L) when true; returned as that 3-d view."""
    n, c = x._shape[:2]
    rows, length = c * math.prod(kernel), math.prod(grid)
    buf = alloc.empty((n * rows * length,), x.dtype, x._storage.device)
    batch, row = (length, n * length) if row_major else (rows * length, length)
    cols = _view(buf, (n, rows) + tuple(grid), (batch, row) + alloc.contiguous_strides(grid))
    conv.im2col(x, cols, kernel, dilation, padding, stride)
    return _view(buf, (rows, n, length) if row_major else (n, rows, length),
                 (row, batch, 1) if row_major else (batch, row, 1))


def _flat(t):
    """t (N, C, *spatial) as an (N, C, L) view, copied when its spatial dims do not merge."""
    n, c = t._shape[:2]
    length = math.prod(t._shape[2:])
    if tuple(t._stride[2:]) == alloc.contiguous_strides(tuple(t._shape[2:])) or length <= 1:
        return _view(t, (n, c, length), (t._stride[0], t._stride[1], 1))
    dense = alloc.empty(tuple(t._shape), t.dtype, t._storage.device)
    copy.copy(dense, t, t._stride)
    return _view(dense, (n, c, length), (c * length, length, 1))


def forward(x, weight, bias, out, stride, padding, dilation, groups):
    """out (N, O, *grid) = the convolution of x (N, C, *spatial) with weight
    (O, C/groups, *kernel), plus bias (O,) when it is not None; 1 or 2 spatial dims.
    ``padding`` is the left padding per dim (the output size implies the right one)."""
    n, o = out._shape[:2]
    kernel, grid = weight._shape[2:], out._shape[2:]
    length = math.prod(grid)
    og, kg = o // groups, weight._shape[1] * math.prod(kernel)
    cols = _columns(x, kernel, grid, stride, padding, dilation, False)     # (N, C*KK, L)
    beta = 0.0
    if bias is not None:        # the GEMM adds onto the bias broadcast over out
        copy.copy(out, bias, (0, bias._stride[0]) + (0,) * len(grid))
        beta = 1.0
    # per (sample, group): out[n, g] (OG, L) = W[g] (OG, KG) @ cols[n, g] (KG, L)
    dest = _view(out, (n, groups, og, length), (o * length, og * length, length, 1))
    a = _view(weight, (groups, og, kg), (og * kg, kg, 1))
    b = _view(cols, (n, groups, kg, length), (cols._stride[0], kg * length, length, 1))
    linalg.matmul(dest, a, (0, og * kg, kg, 1), b, b._stride, beta)


def weight_grad(grad, x, out, stride, padding, dilation, groups):
    """out (O, C/groups, *kernel), contiguous = the gradient of the convolution's weight:
    the sum over batch and output positions of grad (N, O, *grid) times the input
    elements x (N, C, *spatial) each weight element multiplied."""
    n, o = grad._shape[:2]
    kernel, grid = out._shape[2:], grad._shape[2:]
    length = math.prod(grid)
    og, kg = o // groups, out._shape[1] * math.prod(kernel)
    cols = _columns(x, kernel, grid, stride, padding, dilation, True)      # (C*KK, N, L)
    # grad as (O, N*L): one GEMM per group over the whole batch
    gt = alloc.empty((o * n * length,), grad.dtype, grad._storage.device)
    g = _flat(grad)
    copy.copy(_view(gt, (n, o, length), (length, n * length, 1)), g, g._stride)
    dest = _view(out, (groups, og, kg), (og * kg, kg, 1))
    a = _view(gt, (groups, og, n * length), (og * n * length, n * length, 1))
    b = _view(cols, (groups, n * length, kg), (kg * n * length, 1, n * length))
    linalg.matmul(dest, a, a._stride, b, b._stride)


def input_grad(grad, weight, out, stride, padding, dilation, groups):
    """out (N, C, *spatial) = the gradient of the convolution's input: each input element
    gets the sum of grad (N, O, *grid) times weight (O, C/groups, *kernel) over the output
    positions and kernel offsets that read it."""
    n, o = grad._shape[:2]
    kernel, grid = weight._shape[2:], grad._shape[2:]
    length = math.prod(grid)
    og, kg = o // groups, weight._shape[1] * math.prod(kernel)
    # per (sample, group): cols[n, g] (KG, L) = W[g]^T (KG, OG) @ grad[n, g] (OG, L)
    buf = alloc.empty((n * groups * kg * length,), grad.dtype, grad._storage.device)
    dest = _view(buf, (n, groups, kg, length), (groups * kg * length, kg * length, length, 1))
    g = _flat(grad)
    b = _view(g, (n, groups, og, length), (g._stride[0], og * g._stride[1], g._stride[1], 1))
    a = _view(weight, (groups, kg, og), (og * kg, 1, kg))
    linalg.matmul(dest, a, (0, og * kg, 1, kg), b, b._stride)
    cols = _view(buf, (n, groups * kg) + tuple(grid),
                 (groups * kg * length, length) + alloc.contiguous_strides(grid))
    conv.col2im(cols, out, kernel, dilation, padding, stride)
