"""Triton copy family (the cuda backend of framework/_cpu/copy.py): strided copy with dtype
conversion, and fill. Both go through the pointwise launch machinery (pointwise.py), so
dims are merged, contiguous copies skip index math and big tensors use int64 offsets."""
import struct

import triton
import triton.language as tl

from .pointwise import BLOCK, _down, _index, _offset, _unary_kernel, _launch, collapse


@triton.jit
def _identity(x, p0, p1, p2):
    return x


def copy(dst, src, src_stride):
    """dst[...] = src[...] with ``src_stride`` already broadcast to dst's shape; converts
    dtypes as PyTorch does (to bool: != 0; float to int: truncation)."""
    _launch(_unary_kernel, _identity, dst, (src,), (src_stride,), (0.0, 0.0, 0.0))


@triton.jit
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
    """Fills dst with a Python number (a float is converted on the device)."""
    n = 1
    for s in dst._shape:
        n *= s
    if n == 0:
        return
    shape, (so,) = collapse(dst._shape, [dst._stride])
    is_float = isinstance(value, float)
    if is_float:
        bits = struct.unpack("<q", struct.pack("<d", value))[0]
    else:
        bits = int(value)
        if dst.dtype.name == "bool":
            bits = int(bits != 0)
        elif bits >= 2**63:  # uint64 bit patterns
            bits -= 2**64
    extent = sum((sz - 1) * abs(x) for sz, x in zip(shape, so)) + 1
    idx64 = max(n, extent) + BLOCK >= 2**31
    contig = len(shape) == 1 and so[0] == 1
    _fill_kernel[(triton.cdiv(n, BLOCK),)](dst, n, shape, so, bits, IS_FLOAT=is_float,
                                           NDIM=len(shape), CONTIG=contig, IDX64=idx64,
                                           BLOCK=BLOCK)
