"""CPU launchers: shape family. Only repeat_interleave with a tensor of counts has kernels
of its own; the other shape ops are strided copies (framework/_cpu/copy.py)."""
from .. import _C


def repeat_interleave_total(counts):
    """The sum of a 1-d int32/int64 tensor of counts (raises if one is negative)."""
    return _C.repeat_interleave_total(counts.dtype.code, counts.data_ptr(), counts._shape[0],
                                      counts._stride[0])


def repeat_interleave_index(out, counts):
    """out = [0] * counts[0] + [1] * counts[1] + ..., in the counts' dtype."""
    _C.repeat_interleave_index(counts.dtype.code, counts.data_ptr(), counts._shape[0],
                               counts._stride[0], out.data_ptr())


def repeat_interleave_copy(out, src, counts):
    """``out`` (outer, total, inner), contiguous: slice i of ``src`` (outer, n, inner),
    any strides, written counts[i] times in a row."""
    outer, n, inner = src._shape
    so, sn, si = src._stride
    _C.repeat_interleave_copy(src.dtype.itemsize, out.data_ptr(), src.data_ptr(), outer, n,
                              inner, so, sn, si, counts.dtype.code, counts.data_ptr(),
                              counts._stride[0])
