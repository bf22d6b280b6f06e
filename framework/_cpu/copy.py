"""CPU launchers: strided copy with dtype conversion, and fill."""
from .. import _C


def copy(dst, src, src_stride):
    """dst[...] = src[...] with ``src_stride`` already broadcast to dst's shape."""
    _C.copy(dst.dtype.code, dst.data_ptr(), dst._stride, src.dtype.code, src.data_ptr(),
            src_stride, dst._shape)


def fill(dst, value):
    """Fills dst with a Python number."""
    if isinstance(value, float):
        _C.fill(dst.dtype.code, dst.data_ptr(), dst._stride, dst._shape, value, 0, True)
    else:
        _C.fill(dst.dtype.code, dst.data_ptr(), dst._stride, dst._shape, 0.0, int(value), False)
