"""CPU launchers: linalg family (batched strided GEMM on OpenBLAS)."""
from .. import _C


def matmul(out, a, a_stride, b, b_stride, beta=0.0, alpha=1.0):
    """out[..., M, N] = beta * out + alpha * a[..., M, K] @ b[..., K, N] for every batch index.

    ``a_stride``/``b_stride`` are the operands' strides already broadcast to out's batch
    shape (0 where broadcast); beta == 0 means out is not read."""
    shape = out._shape
    _C.matmul(out.dtype.code, out.data_ptr(), out._stride, a.data_ptr(), a_stride,
              b.data_ptr(), b_stride, shape[:-2], shape[-2], shape[-1], a._shape[-1], beta,
              alpha)
