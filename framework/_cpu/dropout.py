"""CPU launchers: dropout kernels (native/dropout.cpp).

Element i of a launch keeps its value when 32-bit word ``i % 4`` of the Philox 4x32-10
counter ``offset + i // 4`` (key ``seed``) is at least ``threshold``; a launch over n
elements uses ``(n + 3) // 4`` counters. framework/kernels/dropout.py computes the same mask.
"""
from .. import _C


def dropout(out, x, residual, seed, offset, threshold, scale):
    """out = x * keep * scale, or residual + x * keep * scale when ``residual`` is not None.
    out, x and residual are contiguous tensors of one floating dtype and shape; the math is
    float32 (float64 for float64). The backward of dropout is this call on the gradient."""
    _C.dropout(out.dtype.code, out.data_ptr(), x.data_ptr(),
               0 if residual is None else residual.data_ptr(), out.numel(), int(seed),
               int(offset), int(threshold), float(scale))
