"""CPU launchers: unary, binary and ternary pointwise kernels over broadcast strided inputs.

The native kernels have no float8 cases: they raise, and the few ops PyTorch runs on
float8 go to framework/_float8_ops.py off the fast path (which raises for the rest)."""
from .. import _C, _float8_ops

# kernel name -> code, as compiled into framework._C
UNARY = _C.unary_ops()
BINARY = _C.binary_ops()
TERNARY = _C.ternary_ops()


def unary(kernel, out, x, x_stride, p0=0.0, p1=0.0, p2=0.0):
    try:
        _C.unary(UNARY[kernel], x.dtype.code, out.dtype.code, out.data_ptr(), x.data_ptr(),
                 out._shape, out._stride, x_stride, p0, p1, p2)
        return
    except RuntimeError:
        if not (x.dtype.is_float8 or out.dtype.is_float8):
            raise
    _float8_ops.unary(kernel, out, x, x_stride, p0, p1, p2)


def binary(kernel, out, a, a_stride, b, b_stride, p0=0.0, p1=0.0, p2=0.0):
    try:
        _C.binary(BINARY[kernel], a.dtype.code, out.dtype.code, out.data_ptr(), a.data_ptr(),
                  b.data_ptr(), out._shape, out._stride, a_stride, b_stride, p0, p1, p2)
        return
    except RuntimeError:
        if not (a.dtype.is_float8 or b.dtype.is_float8 or out.dtype.is_float8):
            raise
    _float8_ops.binary(kernel, out, a, a_stride, b, b_stride, p0, p1, p2)


def ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0=0.0):
    try:
        _C.ternary(TERNARY[kernel], a.dtype.code, b.dtype.code, out.dtype.code,
                   out.data_ptr(), a.data_ptr(), b.data_ptr(), c.data_ptr(), out._shape,
                   out._stride, a_stride, b_stride, c_stride, p0)
        return
    except RuntimeError:
        if not (b.dtype.is_float8 or c.dtype.is_float8 or out.dtype.is_float8):
            raise
    _float8_ops.ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0)

