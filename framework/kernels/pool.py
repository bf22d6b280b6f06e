"""Pooling kernels (Triton): the cuda side of native/pool.cpp, with the same launcher and
semantics: max pooling with indices over contiguous (planes, D, H, W) volumes, with
regular windows (kernel, stride, padding, dilation) or PyTorch's adaptive bins
[floor(o*L/out), ceil((o+1)*L/out)).

A program takes BLOCK consecutive outputs and walks the window offsets (kd, kh, kw) for
all of them at once: masked loads at each offset, then a select where the element is
greater than the running maximum, or NaN (ties keep the first position, NaN propagates, as
on the CPU). The maximum starts at -inf (the dtype's lowest value for integers) at the
window's first valid position. Adaptive bins are walked up to the largest bin size, masked
by each output's own bin end. 16-bit floats compare in float32 (exact), and the chosen
value is stored back unchanged.
"""
import triton
import triton.language as tl

from .pointwise import _down
from .launcher import cached, cdiv

BLOCK = 256

_LOWEST = {"uint8": 0, "int8": -128, "int16": -32768, "int32": -2 ** 31, "int64": -2 ** 63}


@triton.jit
def _first_valid(start, step):
    """The first position >= 0 of start + j * step (start may be negative)."""
    return tl.where(start < 0, start + ((step - 1 - start) // step) * step, start)


@cached
@triton.jit
def _max_pool_kernel(x, v, ind, total, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH,
                     PW, DD, DH, DW, ADAPTIVE: tl.constexpr, CMP: tl.constexpr,
                     LOWEST: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = o < total
    ow = o % OW
    t = o // OW
    oh = t % OH
    t = t // OH
    od = t % OD
    plane = t // OD
    if ADAPTIVE:
        ds = (od * D) // OD
        de = ((od + 1) * D + OD - 1) // OD
        hs = (oh * H) // OH
        he = ((oh + 1) * H + OH - 1) // OH
        ws = (ow * W) // OW
        we = ((ow + 1) * W + OW - 1) // OW
        sd, sh, sw = 1, 1, 1
        fd, fh, fw = ds, hs, ws
    else:
        ds = od * SD - PD
        hs = oh * SH - PH
        ws = ow * SW - PW
        de = tl.minimum(ds + (KD - 1) * DD + 1, D)
        he = tl.minimum(hs + (KH - 1) * DH + 1, H)
        we = tl.minimum(ws + (KW - 1) * DW + 1, W)
        sd, sh, sw = DD, DH, DW
        fd = _first_valid(ds, DD)
        fh = _first_valid(hs, DH)
        fw = _first_valid(ws, DW)
    base = plane * D * H * W
    best = tl.full([BLOCK], LOWEST, CMP)
    at = (fd * H + fh) * W + fw
    for kd in range(0, KD):
        id = ds + kd * sd
        vd = (id >= 0) & (id < de)
        for kh in range(0, KH):
            ih = hs + kh * sh
            vh = vd & (ih >= 0) & (ih < he)
            for kw in range(0, KW):
                iw = ws + kw * sw
                valid = mask & vh & (iw >= 0) & (iw < we)
                pos = (id * H + ih) * W + iw
                val = tl.load(x + base + pos, mask=valid, other=0).to(CMP)
                upd = valid & ((val > best) | (val != val))
                best = tl.where(upd, val, best)
                at = tl.where(upd, pos, at)
    tl.store(v + o, _down(best, v.dtype.element_ty), mask=mask)
    tl.store(ind + o, at, mask=mask)


def max_pool(x, values, indices, planes, in_size, out_size, kernel, stride, padding, dilation,
             adaptive):
    """values, indices = max pooling of contiguous x viewed as (planes, D, H, W) into
    contiguous (planes, OD, OH, OW) outputs; every size argument is a (D, H, W) triple.
    ``adaptive``: PyTorch's adaptive bins (``kernel`` is then the largest bin, the rest is
    unused). Indices are positions within one input volume."""
    name = x.dtype.name
    if name == "bool":
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool'")
    total = planes * out_size[0] * out_size[1] * out_size[2]
    if total == 0:
        return
    if x.dtype.is_floating_point:
        cmp = tl.float64 if name == "float64" else tl.float32
        lowest = float("-inf")
    else:
        cmp = getattr(tl, name)
        lowest = _LOWEST[name]
    _max_pool_kernel[(cdiv(total, BLOCK),)](
        x, values, indices, total, *in_size, *out_size, *kernel, *stride, *padding, *dilation,
        ADAPTIVE=bool(adaptive), CMP=cmp, LOWEST=lowest, BLOCK=BLOCK)
