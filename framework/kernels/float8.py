"""Triton casts to and from the float8 dtypes (the cuda side of copy/fill for them).

Kernels see a float8 tensor as its bytes (a uint8 view) and convert with integer bit
manipulation, the rules of framework/_float8.py: the same on a GPU and in Triton's
interpreter (which has no float8 arithmetic), and bit-exact to PyTorch's plain cast."""
import numpy as np
import triton
import triton.language as tl

from .. import _dtype, _float8
from .._float8_ops import as_bytes
from .pointwise import _launch, _unary_kernel


@triton.jit
def _decode(x, E: tl.constexpr, M: tl.constexpr, BIAS: tl.constexpr, KIND: tl.constexpr,
            SUB_SCALE: tl.constexpr):
    """float32 values of float8 codes (KIND 0: e4m3fn, 1: e5m2, 2: fnuz)."""
    c = x.to(tl.int32) & 0xFF
    sign = (c >> 7) << 31
    ex = (c >> M) & ((1 << E) - 1)
    man = c & ((1 << M) - 1)
    normal = ((ex + (127 - BIAS)) << 23) | (man << (23 - M))
    sub = (man.to(tl.float32) * SUB_SCALE).to(tl.int32, bitcast=True)
    r = tl.where(ex == 0, sub, normal)
    if KIND == 0:
        r = tl.where((c & 0x7F) == 0x7F, 0x7F800000 | (man << (23 - M)), r)
    elif KIND == 1:     # inf, or a NaN made quiet (as PyTorch widens it)
        r = tl.where(ex == (1 << E) - 1,
                     0x7F800000 | (man << (23 - M)) | tl.where(man != 0, 0x400000, 0), r)
    r = r | sign
    if KIND == 2:
        r = tl.where(c == 0x80, 0x7F800001, r)
    return r.to(tl.float32, bitcast=True)


@triton.jit
def _encode(v, M: tl.constexpr, BIAS: tl.constexpr, KIND: tl.constexpr, TOP: tl.constexpr,
            MAGIC: tl.constexpr, MAGIC_BITS: tl.constexpr):
    """float8 codes (int32) of values, rounded to float32 first as PyTorch does."""
    b = v.to(tl.float32).to(tl.int32, bitcast=True)
    sign = (b >> 31) & 1
    a = b & 0x7FFFFFFF
    # below the smallest normal: one float add rounds to the subnormal step
    sub = (a.to(tl.float32, bitcast=True) + MAGIC).to(tl.int32, bitcast=True) - MAGIC_BITS
    odd = (a >> (23 - M)) & 1
    normal = (a - ((127 - BIAS) << 23) + ((1 << (22 - M)) - 1) + odd) >> (23 - M)
    r = tl.where(a < ((128 - BIAS) << 23), sub, normal)
    over = (r > TOP) | (a >= 0x7F800000)
    nan = a > 0x7F800000
    if KIND == 0:       # saturate
        r = tl.where(nan, 0x7F, tl.where(over, TOP, r)) | (sign << 7)
    elif KIND == 1:     # to inf
        r = tl.where(nan, 0x7F, tl.where(over, 0x7C, r)) | (sign << 7)
    else:               # to the one NaN; no -0
        r = tl.where(over, 0x80, tl.where(r == 0, 0, r | (sign << 7)))
    return r


# one decode and one encode function per format, as the pointwise kernel's OP
@triton.jit
def _dec_e4m3fn(x, p0, p1, p2):
    return _decode(x, 4, 3, 7, 0, 0.001953125)


@triton.jit
def _dec_e5m2(x, p0, p1, p2):
    return _decode(x, 5, 2, 15, 1, 1.52587890625e-05)


@triton.jit
def _dec_e4m3fnuz(x, p0, p1, p2):
    return _decode(x, 4, 3, 8, 2, 0.0009765625)


@triton.jit
def _dec_e5m2fnuz(x, p0, p1, p2):
    return _decode(x, 5, 2, 16, 2, 7.62939453125e-06)


@triton.jit
def _enc_e4m3fn(x, p0, p1, p2):
    return _encode(x, 3, 7, 0, 0x7E, 16384.0, 0x46800000)


@triton.jit
def _enc_e5m2(x, p0, p1, p2):
    return _encode(x, 2, 15, 1, 0x7B, 128.0, 0x43000000)


@triton.jit
def _enc_e4m3fnuz(x, p0, p1, p2):
    return _encode(x, 3, 8, 2, 0x7F, 8192.0, 0x46000000)


@triton.jit
def _enc_e5m2fnuz(x, p0, p1, p2):
    return _encode(x, 2, 16, 2, 0x7F, 64.0, 0x42800000)


_DECODE = {"float8_e4m3fn": _dec_e4m3fn, "float8_e5m2": _dec_e5m2,
           "float8_e4m3fnuz": _dec_e4m3fnuz, "float8_e5m2fnuz": _dec_e5m2fnuz}
_ENCODE = {"float8_e4m3fn": _enc_e4m3fn, "float8_e5m2": _enc_e5m2,
           "float8_e4m3fnuz": _enc_e4m3fnuz, "float8_e5m2fnuz": _enc_e5m2fnuz}


def copy(dst, src, src_stride, generic_copy):
    """dst[...] = src[...] where either is float8: raw bytes between equal float8 dtypes,
    else decoded to float32 / encoded from the source as the pointwise kernel loads it."""
    ps = (0.0, 0.0, 0.0)
    if dst.dtype is src.dtype:
        return generic_copy(as_bytes(dst), as_bytes(src), src_stride)
    if src.dtype.is_float8 and dst.dtype.is_float8:   # through a float32 temporary
        from .._ops import alloc
        tmp = alloc.empty(dst._shape, _dtype.float32, dst._storage.device)
        _launch(_unary_kernel, _DECODE[src.dtype.name], tmp, (as_bytes(src),), (src_stride,), ps)
        return _launch(_unary_kernel, _ENCODE[dst.dtype.name], as_bytes(dst), (tmp,),
                       (tmp._stride,), ps)
    if src.dtype.is_float8:
        return _launch(_unary_kernel, _DECODE[src.dtype.name], dst, (as_bytes(src),),
                       (src_stride,), ps)
    return _launch(_unary_kernel, _ENCODE[dst.dtype.name], as_bytes(dst), (src,),
                   (src_stride,), ps)


def fill_code(dst, value):
    """The byte a float8 fill stores: the value rounded to float32, then encoded."""
    with np.errstate(over="ignore"):
        v = np.float32(value)
    return int(_float8.encode(np.array([v]), dst.dtype.name)[0])
