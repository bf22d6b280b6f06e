"""CPU launchers: linalg family (batched strided GEMM on OpenBLAS)."""
from .. import _C
from . import reduction
from .copy import copy


def matmul(out, a, a_stride, b, b_stride, beta=0.0, alpha=1.0, c=None, c_stride=None,
           compute=None, row_sums=None):
    """out[..., M, N] = beta * C + alpha * a[..., M, K] @ b[..., K, N] for every batch index,
    C being ``c`` (read through ``c_stride``) when given, else out.

    ``a_stride``/``b_stride`` are the operands' strides already broadcast to out's batch
    shape, ``c_stride`` to out's whole shape (0 where broadcast); beta == 0 means C is not
    read. c must not overlap out unless it is out itself. ``compute``: the dtype the product
    is taken in (None: out's, shared by a, b and c); operands of another dtype are converted
    to it first, and the result is converted into out. ``row_sums``: a contiguous 1-d
    tensor of M that also receives the sums over K of a's rows (a single matrix), taken in
    the product's dtype and rounded to it."""
    if compute is not None:
        a, a_stride = _converted(a, a_stride, compute, True)
        b, b_stride = _converted(b, b_stride, compute, True)
    if row_sums is not None:  # from the operand the product reads, converted once
        _row_sums(row_sums, a, a_stride)
    if compute is not None and compute is not out.dtype:
        res = _converted(out, out._stride, compute)[0]   # (out's own strides)
        if c is None and beta != 0:
            c, c_stride = out, out._stride
        matmul(res, a, a_stride, b, b_stride, beta, alpha, c, c_stride, compute)
        copy(out, res, res._stride)
        return
    if compute is not None and c is not None and beta != 0:
        c, c_stride = _converted(c, c_stride, compute, True)
    shape = out._shape
    if c is not None and beta != 0 and not (c.data_ptr() == out.data_ptr()
                                            and tuple(c_stride) == tuple(out._stride)):
        # the native GEMM scales out in place: C goes there first (a memory pass, no launch)
        copy(out, c, c_stride)
    _C.matmul(out.dtype.code, out.data_ptr(), out._stride, a.data_ptr(), a_stride,
              b.data_ptr(), b_stride, shape[:-2], shape[-2], shape[-1], a._shape[-1], beta,
              alpha)


def _row_sums(res, a, a_stride):
    """res[i] = the sum over k of a[i, k] in a's dtype, rounded to it (one reduction)."""
    geom = (res._shape, (a_stride[-2],), (1,), (0,), (a._shape[-1],), (a_stride[-1],))
    reduction.reduce("sum" if res.dtype is a.dtype else "sum_rounded", a, res, None, geom)


def _converted(t, stride, dtype, fill=False):
    """(t converted to ``dtype`` in a new buffer laid out with t's own strides, ``stride``):
    the operand's broadcast strides read the copy as they read t. ``fill``: with t's
    values (else uninitialised)."""
    if t.dtype is dtype:
        return t, stride
    from .._ops import alloc
    from .._tensor import Tensor
    extent = 1 + sum((n - 1) * s for n, s in zip(t._shape, t._stride)) if t.numel() else 0
    buf = alloc.empty((extent,), dtype, t._storage.device)
    r = Tensor._make(buf._storage, t._shape, t._stride, 0, dtype)
    if fill:
        copy(r, t, t._stride)
    return r, stride
