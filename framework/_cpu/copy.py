"""CPU launchers: strided copy with dtype conversion, and fill."""
from .. import _C
from .. import _dtype
from .._ops import complex_views

_UINT8 = _dtype.uint8.code


def copy(dst, src, src_stride):
    """dst[...] = src[...] with ``src_stride`` already broadcast to dst's shape (either may
    be complex: complex_views.copy)."""
    if dst.dtype.is_complex or src.dtype.is_complex:
        return complex_views.copy(copy, fill, dst, src, src_stride)
    dc = sc = dst.dtype.code
    if src.dtype is not dst.dtype:
        sc = src.dtype.code
    elif dst.dtype.is_float8:   # bytes: a float8 copy keeps NaN payloads, as PyTorch's
        dc = sc = _UINT8
    _C.copy(dc, dst.data_ptr(), dst._stride, sc, src.data_ptr(), src_stride, dst._shape)


def copy_many(dst, srcs):
    """dst[k][...] = srcs[k][...] for every k, in one native call split among threads by
    source: the sources share a shape (dst's but the first dim), strides and a dtype (stack
    of a batch)."""
    src = srcs[0]
    if dst.dtype.is_complex or src.dtype.is_complex:
        for k, t in enumerate(srcs):
            copy(_slice(dst, k), t, t._stride)
        return
    dc, sc = dst.dtype.code, src.dtype.code
    if dc == sc and dst.dtype.is_float8:
        dc = sc = _UINT8
    _C.copy_many(dc, dst.data_ptr(), dst._stride[0], dst._stride[1:], sc,
                 [t.data_ptr() for t in srcs], src._stride, src._shape)


def _slice(t, k):
    """t[k] as a view."""
    return t._make(t._storage, t._shape[1:], t._stride[1:], t._offset + k * t._stride[0],
                   t.dtype)


def concat(dst, srcs):
    """Contiguous dst set to the contiguous srcs (of dst's dtype) one after another, in one
    native call: cat along the outermost dim."""
    size = dst.dtype.itemsize
    _C.concat_bytes(dst.data_ptr(), [t.data_ptr() for t in srcs],
                    [t.numel() * size for t in srcs])


def fill(dst, value):
    """Fills dst with a Python number (complex dst: complex_views.fill)."""
    if dst.dtype.is_complex:
        return complex_views.fill(fill, dst, value)
    if isinstance(value, float):
        _C.fill(dst.dtype.code, dst.data_ptr(), dst._stride, dst._shape, value, 0, True)
    else:
        _C.fill(dst.dtype.code, dst.data_ptr(), dst._stride, dst._shape, 0.0, int(value), False)
