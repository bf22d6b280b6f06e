"""CPU launchers: pooling kernels (native/pool.cpp)."""
from .. import _C


def max_pool(x, values, indices, planes, in_size, out_size, kernel, stride, padding, dilation,
             adaptive):
    """values, indices = max pooling of contiguous x viewed as (planes, D, H, W) into
    contiguous (planes, OD, OH, OW) outputs; every size argument is a (D, H, W) triple.
    ``adaptive``: PyTorch's adaptive bins (``kernel`` is then the largest bin, the rest is
    unused). Indices are positions within one input volume."""
    _C.max_pool(x.dtype.code, x.data_ptr(), values.data_ptr(), indices.data_ptr(), planes,
                tuple(in_size), tuple(out_size), tuple(kernel), tuple(stride), tuple(padding),
                tuple(dilation), bool(adaptive))
