"""CPU launchers: reductions over any set of dims of a strided input."""
from .. import _C
from .._ops import alloc
from . import copy


def reduce(kernel, x, out0, out1, geom, p0=0.0, p1=0.0):
    """Runs reduction ``kernel`` of ``x`` into ``out0`` (and ``out1``: indices, mean or max).
    ``sum_rounded`` (the sum of a 16-bit float ``x`` in x's dtype, stored into a wider
    contiguous ``out0``): the sum into a temporary of x's dtype, then a copy.

    ``geom`` = (kept shape, input strides of the kept dims, out0 strides, out1 strides,
    reduced shape, input strides of the reduced dims), all in elements."""
    if kernel == "sum_rounded":
        tmp = alloc.empty(out0._shape, x.dtype, out0._storage.device)
        reduce("sum", x, tmp, None, geom)   # (geom's out0 strides: out0's, contiguous)
        copy.copy(out0, tmp, tmp._stride)
        return
    _C.reduce(kernel, x.dtype.code, x.data_ptr(), 0 if out0 is None else out0.data_ptr(),
              0 if out1 is None else out1.data_ptr(), *geom, p0, p1)
