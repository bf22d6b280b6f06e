"""CPU launchers: unary, binary and ternary pointwise kernels over broadcast strided inputs."""
from .. import _C

# kernel name -> code, as compiled into framework._C
UNARY = _C.unary_ops()
BINARY = _C.binary_ops()
TERNARY = _C.ternary_ops()


def unary(kernel, out, x, x_stride, p0=0.0, p1=0.0, p2=0.0):
    _C.unary(UNARY[kernel], x.dtype.code, out.dtype.code, out.data_ptr(), x.data_ptr(),
             out._shape, out._stride, x_stride, p0, p1, p2)


def binary(kernel, out, a, a_stride, b, b_stride, p0=0.0, p1=0.0, p2=0.0):
    _C.binary(BINARY[kernel], a.dtype.code, out.dtype.code, out.data_ptr(), a.data_ptr(),
              b.data_ptr(), out._shape, out._stride, a_stride, b_stride, p0, p1, p2)


def ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0=0.0):
    _C.ternary(TERNARY[kernel], a.dtype.code, b.dtype.code, out.dtype.code, out.data_ptr(),
               a.data_ptr(), b.data_ptr(), c.data_ptr(), out._shape, out._stride, a_stride,
               b_stride, c_stride, p0)
