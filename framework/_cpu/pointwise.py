"""CPU launchers: unary, binary and ternary pointwise kernels over broadcast strided inputs."""
from .. import _C

# kernel name -> code, as compiled into framework._C
UNARY = _C.unary_ops()
BINARY = _C.binary_ops()
TERNARY = _C.ternary_ops()


def unary(kernel, out, x, x_stride, p0=0.0, p1=0.0, p2=0.0):
    try:
        _C.unary(UNARY[kernel], x.dtype.code, out.dtype.code, out.data_ptr(), x.data_ptr(),
                 out._shape, out._stride, x_stride, p0, p1, p2)
    except RuntimeError:
        _refuse_float8(kernel, x, out)
        raise


def binary(kernel, out, a, a_stride, b, b_stride, p0=0.0, p1=0.0, p2=0.0):
    try:
        _C.binary(BINARY[kernel], a.dtype.code, out.dtype.code, out.data_ptr(), a.data_ptr(),
                  b.data_ptr(), out._shape, out._stride, a_stride, b_stride, p0, p1, p2)
    except RuntimeError:
        _refuse_float8(kernel, a, b, out)
        raise


def ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0=0.0):
    try:
        _C.ternary(TERNARY[kernel], a.dtype.code, b.dtype.code, out.dtype.code,
                   out.data_ptr(), a.data_ptr(), b.data_ptr(), c.data_ptr(), out._shape,
                   out._stride, a_stride, b_stride, c_stride, p0)
    except RuntimeError:
        _refuse_float8(kernel, a, b, c, out)
        raise


def _refuse_float8(kernel, *tensors):
    """PyTorch's NotImplementedError for a float8 operand (the native kernels have no float8
    cases: they raise an internal error, turned into this one off the fast path)."""
    for t in tensors:
        if t.dtype.is_float8:
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for "
                                      f"'{t.dtype.scalar_name}'") from None
