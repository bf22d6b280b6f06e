"""Triton dropout kernels (the cuda backend of framework/_cpu/dropout.py).

``_dropout_kernel`` computes out = x * keep * scale, or the fused residual add
out = r + x * keep * scale, over contiguous buffers of n elements. The keep mask is never
stored: element i uses 32-bit word ``i % 4`` of ``tl.randint4x(seed, offset + i // 4)``
(Philox 4x32-10, one counter for four elements) and is kept when that word is >= threshold
(``round(p * 2**32)``), as native/dropout.cpp does, so both devices draw the same masks.
The backward is this kernel on the gradient, without residual, with the same (seed, offset).
"""
import struct

import triton
import triton.language as tl

from .pointwise import _down, _up
from .launcher import cached, cdiv

GROUPS = 256  # Philox counters per program: a (GROUPS, 4) tile of 1024 elements


@cached
@triton.jit
def _dropout_kernel(x_ptr, r_ptr, out_ptr, n, seed: tl.uint64, offset: tl.uint64,
                    threshold: tl.uint64, scale_bits, HAS_RESIDUAL: tl.constexpr,
                    GROUPS: tl.constexpr):
    """Each program handles GROUPS counters: the elements 4 g + j (g its counters, j < 4),
    laid out as a (GROUPS, 4) tile so that word j of counter g meets element 4 g + j without
    any shuffle. Math in float32 (float64 for float64 data). ``scale_bits``: the float64
    scale's bits (a Python float argument would be typed float32 by Triton)."""
    scale = scale_bits.to(tl.int64).to(tl.float64, bitcast=True)
    g = tl.program_id(0).to(tl.int64) * GROUPS + tl.arange(0, GROUPS).to(tl.int64)
    w0, w1, w2, w3 = tl.randint4x(seed, offset + g.to(tl.uint64))
    j = tl.arange(0, 4)[None, :]
    w = tl.where(j == 0, w0[:, None],
                 tl.where(j == 1, w1[:, None], tl.where(j == 2, w2[:, None], w3[:, None])))
    idx = g[:, None] * 4 + j
    mask = idx < n
    x = _up(tl.load(x_ptr + idx, mask=mask, other=0))
    keep = w.to(tl.uint64) >= threshold
    f = tl.where(keep, scale.to(x.dtype), 0.0).to(x.dtype)
    if HAS_RESIDUAL:
        # an explicit fma, as native/dropout.cpp: one rounding, the same bits on every device
        y = tl.fma(x, f, _up(tl.load(r_ptr + idx, mask=mask, other=0)))
    else:
        y = x * f
    tl.store(out_ptr + idx, _down(y, out_ptr.dtype.element_ty), mask=mask)


# ---- launchers: same names and arguments as framework/_cpu/dropout.py

def dropout(out, x, residual, seed, offset, threshold, scale):
    """out = x * keep * scale, or residual + x * keep * scale when ``residual`` is not None
    (contiguous tensors of one floating dtype and shape; see native/dropout.cpp)."""
    n = out.numel()
    if n == 0:
        return
    grid = (cdiv(n, 4 * GROUPS),)
    _dropout_kernel[grid](x, x if residual is None else residual, out, n, int(seed),
                          int(offset), int(threshold),
                          struct.unpack("<q", struct.pack("<d", float(scale)))[0],
                          HAS_RESIDUAL=residual is not None, GROUPS=GROUPS)
