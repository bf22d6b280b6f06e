"""Triton copy family (the cuda backend of framework/_cpu/copy.py): strided copy with dtype
conversion, and fill. Both go through the pointwise launch machinery (pointwise.py), so
dims are merged, contiguous copies skip index math and big tensors use int64 offsets."""
import triton
import triton.language as tl

from .pointwise import (BLOCK, _down, _index, _launch, _offset, _params_bits, _unary_kernel,
                        geometry)
from .._tensor import Tensor
from .._ops import complex_views
from .launcher import cached, cdiv
from . import float8


@triton.jit
def _identity(x, p0, p1, p2):
    return x


def copy(dst, src, src_stride):
    """dst[...] = src[...] with ``src_stride`` already broadcast to dst's shape; converts
    dtypes as PyTorch does (to bool: != 0; float to int: truncation; either side complex:
    complex_views.copy)."""
    if dst.dtype.is_complex or src.dtype.is_complex:
        return complex_views.copy(copy, fill, dst, src, src_stride)
    if dst.dtype.is_float8 or src.dtype.is_float8:     # bit manipulation on the bytes
        return float8.copy(dst, src, src_stride, copy)
    _launch(_unary_kernel, _identity, dst, (src,), (src_stride,), (0.0, 0.0, 0.0))


def copy_many(dst, srcs):
    """dst[k][...] = srcs[k][...] for every k (the sources share a shape, strides and a
    dtype): one copy launch per source, as stack's general path."""
    shape, stride = dst._shape[1:], dst._stride[1:]
    for k, t in enumerate(srcs):
        copy(Tensor._make(dst._storage, shape, stride, dst._offset + k * dst._stride[0],
                          dst.dtype), t, t._stride)


def concat(dst, srcs):
    """Contiguous dst set to the contiguous srcs (of dst's dtype) one after another: cat
    along the outermost dim (one copy launch per source, as cat's general path; the CPU
    does it in one native call)."""
    pos = dst._offset
    for t in srcs:
        n = t.numel()
        if n:
            flat = (n,), (1,)
            copy(Tensor._make(dst._storage, *flat, pos, dst.dtype),
                 Tensor._make(t._storage, *flat, t._offset, t.dtype), (1,))
        pos += n


@cached
@triton.jit(do_not_specialize=["value"])  # a 1 would become a constant without .to()
def _fill_kernel(out, n, shape, so, value, IS_FLOAT: tl.constexpr, NDIM: tl.constexpr,
                 CONTIG: tl.constexpr, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    if IS_FLOAT:
        v = value.to(tl.int64).to(tl.float64, bitcast=True)
    else:
        v = value.to(tl.int64)
    vals = tl.zeros([BLOCK], dtype=v.dtype) + v
    tl.store(out + _offset(i, shape, so, NDIM, CONTIG), _down(vals, out.dtype.element_ty),
             mask=mask)


def fill(dst, value):
    """Fills dst with a Python number (complex dst: complex_views.fill) (a float is converted on the device)."""
    if dst.dtype.is_complex:
        return complex_views.fill(fill, dst, value)
    if dst.dtype.is_float8:
        return fill(float8.as_bytes(dst), float8.fill_code(dst, value))
    g = geometry(dst, [])
    if g is None:
        return
    n, shape, (so,), contig, idx64 = g
    is_float = isinstance(value, float)
    if is_float:
        (bits,) = _params_bits(value)
    else:
        bits = int(value)
        if not -2**63 <= bits < 2**64:  # beyond int64 and uint64: no Scalar holds it
            raise OverflowError("int too big to convert")  # PyTorch's words
        if dst.dtype.name == "bool":
            bits = int(bits != 0)
        elif bits >= 2**63 and dst.dtype.is_floating_point:  # a uint64 Scalar: its value
            is_float = True
            (bits,) = _params_bits(float(value))
        elif bits >= 2**63:  # uint64 bit patterns
            bits -= 2**64
    _fill_kernel[(cdiv(n, BLOCK),)](dst, n, shape, so, bits, IS_FLOAT=is_float,
                                    NDIM=len(shape), CONTIG=contig, IDX64=idx64, BLOCK=BLOCK)
