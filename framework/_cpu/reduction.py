"""CPU launchers: reductions over any set of dims of a strided input."""
from .. import _C


def reduce(kernel, x, out0, out1, geom, p0=0.0, p1=0.0):
    """Runs reduction ``kernel`` of ``x`` into ``out0`` (and ``out1``: indices, mean or max).

    ``geom`` = (kept shape, input strides of the kept dims, out0 strides, out1 strides,
    reduced shape, input strides of the reduced dims), all in elements."""
    _C.reduce(kernel, x.dtype.code, x.data_ptr(), 0 if out0 is None else out0.data_ptr(),
              0 if out1 is None else out1.data_ptr(), *geom, p0, p1)
