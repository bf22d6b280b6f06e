"""CPU launchers: convolution family (native/conv.cpp), im2col and col2im over 1, 2 or 3
spatial dims. ``kernel_size``, ``dilation``, ``padding`` and ``stride`` are tuples with
one value per spatial dim; the launchers make every problem 3-d by adding leading size-1
spatial dims (kernel 1, stride 1, no padding), so the last spatial dim stays the kernels'
innermost loop. The columns ``cols`` (N, C*prod(kernel_size), *grid) may have any strides
on their first two dims (the ops keep the batch inside the rows: (C*KK, N, *grid) memory);
their grid dims must be contiguous."""
from .. import _C


def _lead(values, fill):
    """``values`` (one per spatial dim) preceded by ``fill`` up to 3 dims."""
    return [fill] * (3 - len(values)) + list(values)


def _x_strides(x):
    return list(x._stride[:2]) + _lead(x._stride[2:], 0)


def im2col(x, cols, kernel_size, dilation, padding, stride):
    """cols (N, C*prod(kernel_size), *grid) = the sliding blocks of x (N, C, *spatial), any
    strides; zero where a block reads padding."""
    _C.im2col(x.dtype.code, x.data_ptr(), _x_strides(x), cols.data_ptr(),
              list(cols._stride[:2]), list(x._shape[:2]), _lead(x._shape[2:], 1),
              _lead(cols._shape[2:], 1), _lead(kernel_size, 1), _lead(dilation, 1),
              _lead(padding, 0), _lead(stride, 1))


def col2im(cols, out, kernel_size, dilation, padding, stride):
    """out (N, C, *spatial), contiguous = the columns cols (N, C*prod(kernel_size), *grid)
    each added back onto the element im2col read it from."""
    _C.col2im(cols.dtype.code, cols.data_ptr(), list(cols._stride[:2]), out.data_ptr(),
              list(out._shape[:2]), _lead(out._shape[2:], 1), _lead(cols._shape[2:], 1),
              _lead(kernel_size, 1), _lead(dilation, 1), _lead(padding, 0), _lead(stride, 1))
