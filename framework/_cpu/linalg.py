"""CPU launchers: linalg family (batched strided GEMM on OpenBLAS)."""
from .. import _C
from .copy import copy


def matmul(out, a, a_stride, b, b_stride, beta=0.0, alpha=1.0, c=None, c_stride=None):
    """out[..., M, N] = beta * C + alpha * a[..., M, K] @ b[..., K, N] for every batch index,
    C being ``c`` (read through ``c_stride``) when given, else out.

    ``a_stride``/``b_stride`` are the operands' strides already broadcast to out's batch
    shape, ``c_stride`` to out's whole shape (0 where broadcast); beta == 0 means C is not
    read. c must not overlap out unless it is out itself."""
    shape = out._shape
    if c is not None and beta != 0 and not (c.data_ptr() == out.data_ptr()
                                            and tuple(c_stride) == tuple(out._stride)):
        # the native GEMM scales out in place: C goes there first (a memory pass, no launch)
        copy(out, c, c_stride)
    _C.matmul(out.dtype.code, out.data_ptr(), out._stride, a.data_ptr(), a_stride,
              b.data_ptr(), b_stride, shape[:-2], shape[-2], shape[-1], a._shape[-1], beta,
              alpha)
