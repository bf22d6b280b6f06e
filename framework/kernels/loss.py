"""Loss kernels (Triton): the cuda side of native/loss.cpp, with the same launchers and
semantics. Cross entropy with class indices over contiguous (rows, C) logits, int64
targets (rows,) and an optional (C,) weight; 16-bit floats and float32 compute in float32,
float64 in float64.

Forward: a program takes R rows of up to BC classes at a time ([R, BC] tiles; many short
rows share a program, a long row is walked in BC-wide tiles) and makes one pass over the
logits: the online maximum m and sum s of exp(x - ref) (ref = m, or 0 while m is -inf),
and with label smoothing S = sum_c w_c (x_c - ref), moved to each new ref by
(ref_old - ref_new) * (weights seen so far). Then lse = ref + log(s), the target's logit is
one gathered load, and
    loss = (1 - eps) w_y (lse - x_y) + eps / C * (log(s) * sum_c w_c - S)
(0 where the target is ignore_index; lse - x_y is computed as (ref - x_y) + log(s)). The
backward keeps (ref, log(s)) per row: two numbers rather than their sum lse, so that
(x - ref) - log(s) keeps log_softmax's precision for large logits (ref + log(s) would round
to float32's spacing near 1e4).

Backward: dx_c = g * (exp((x_c - ref) - log(s)) * a - eps / C * w_c - [c == y] b) with
a = (1 - eps) w_y + eps / C * sum_c w_c and b = (1 - eps) w_y, g the row's scale; one read
of the logits, one write of the gradient, no probabilities stored between the two.

Triton passes a Python float as float32: label_smoothing travels as two float32 parts
(hi + lo), so float64 rows see it in float64.
"""
import triton
import triton.language as tl

from .._ops import alloc
from .copy import fill
from .pointwise import _down
from .softmax import _MIN_BLOCK, TILE, _pow2  # noqa: F401  (the row tiling of softmax)
from .launcher import cached, cdiv


@triton.jit
def _ref(m):
    """The point exp() is taken against: the running maximum, or 0 while it is -inf."""
    return tl.where(m == float("-inf"), 0.0, m)


@cached
@triton.jit
def _ce_forward_kernel(x, tgt, w, loss, stats, wrow, first_bad, rows, C, ignore, eps_hi,
                       eps_lo, HAS_W: tl.constexpr, SMOOTH: tl.constexpr, ACC: tl.constexpr,
                       R: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    rmask = r < rows
    cols = tl.arange(0, BC).to(tl.int64)
    base = r * C
    m = tl.full([R], float("-inf"), ACC)
    s = tl.zeros([R], ACC)
    S = tl.zeros([R], ACC)
    wseen = tl.zeros([R], ACC)
    for c0 in range(0, C, BC):
        c = c0 + cols
        cm = c < C
        mask = rmask[:, None] & cm[None, :]
        v = tl.load(x + base[:, None] + c[None, :], mask=mask, other=float("-inf")).to(ACC)
        nm = tl.maximum(m, tl.max(v, axis=1))
        ref_old = _ref(m)
        ref = _ref(nm)
        s = s * tl.exp(m - ref) + tl.sum(tl.exp(v - ref[:, None]), axis=1)
        if SMOOTH:
            if HAS_W:
                wc = tl.load(w + c, mask=cm, other=0).to(ACC)
            else:
                wc = tl.where(cm, 1.0, 0.0).to(ACC)
            d = tl.where(mask, wc[None, :] * (v - ref[:, None]), 0.0)
            S = S + (ref_old - ref) * wseen + tl.sum(d, axis=1)
            wseen = wseen + tl.sum(wc, axis=0)
        m = nm
    log_s = tl.log(s)
    ref = _ref(m)
    t = tl.load(tgt + r, mask=rmask, other=0)
    counted = rmask & (t != ignore)
    bad = counted & ((t < 0) | (t >= C))
    # the first row whose target is out of range (first_bad starts at rows): its row is not
    # read, and the launcher raises
    tl.atomic_min(first_bad + r * 0, r, mask=bad)
    keep = counted & ~bad
    tc = tl.where(keep, t, 0)
    xy = tl.load(x + base + tc, mask=keep, other=0).to(ACC)
    if HAS_W:
        wy = tl.load(w + tc, mask=keep, other=0).to(ACC)
    else:
        wy = tl.where(keep, 1.0, 0.0).to(ACC)
    nll = (ref - xy) + log_s
    if SMOOTH:
        eps = tl.zeros([R], ACC) + eps_hi + eps_lo
        out = (1 - eps) * wy * nll + eps / C * (log_s * wseen - S)
    else:
        out = wy * nll
    tl.store(loss + r, tl.where(keep, out, 0.0), mask=rmask)
    tl.store(stats + r, ref, mask=rmask)
    tl.store(stats + rows + r, log_s, mask=rmask)
    tl.store(wrow + r, tl.where(keep, wy, 0.0), mask=rmask)


@cached
@triton.jit
def _ce_backward_kernel(x, tgt, w, wsum, stats, grow, g_stride, gx, rows, C, ignore, eps_hi,
                        eps_lo,
                        HAS_W: tl.constexpr, SMOOTH: tl.constexpr, ACC: tl.constexpr,
                        R: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    rmask = r < rows
    cols = tl.arange(0, BC).to(tl.int64)
    base = r * C
    t = tl.load(tgt + r, mask=rmask, other=0)
    keep = rmask & (t != ignore)
    tc = tl.where(keep, t, -1)
    M = tl.load(stats + r, mask=keep, other=0).to(ACC)
    L = tl.load(stats + rows + r, mask=keep, other=0).to(ACC)
    g = tl.load(grow + r * g_stride, mask=keep, other=0).to(ACC)
    if HAS_W:
        wy = tl.load(w + tc, mask=keep, other=0).to(ACC)
    else:
        wy = tl.where(keep, 1.0, 0.0).to(ACC)
    if SMOOTH:
        eps = tl.zeros([R], ACC) + eps_hi + eps_lo
        e = eps / C
        if HAS_W:
            ws = tl.load(wsum).to(ACC)
        else:
            ws = C * 1.0
        bg = (1 - eps) * wy * g
        ag = bg + (e * ws) * g
        eg = e * g
    else:
        bg = wy * g
        ag = bg
        eg = g * 0
    for c0 in range(0, C, BC):
        c = c0 + cols
        cm = c < C
        mask = rmask[:, None] & cm[None, :]
        off = base[:, None] + c[None, :]
        v = tl.load(x + off, mask=mask, other=0).to(ACC)
        d = tl.exp((v - M[:, None]) - L[:, None]) * ag[:, None]
        if SMOOTH:
            if HAS_W:
                wc = tl.load(w + c, mask=cm, other=0).to(ACC)
                d = d - eg[:, None] * wc[None, :]
            else:
                d = d - eg[:, None]
        d = tl.where(c[None, :] == tc[:, None], d - bg[:, None], d)
        d = tl.where(keep[:, None], d, 0.0)
        tl.store(gx + off, _down(d, gx.dtype.element_ty), mask=mask)


def _acc(x):
    return tl.float64 if x.dtype.name == "float64" else tl.float32


def _require_float(x):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"cross_entropy_cuda\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")


def _tiles(rows, C):
    bc = min(_pow2(C, _MIN_BLOCK), TILE)
    r = max(1, min(TILE // bc, _pow2(rows)))
    return r, bc, (8 if r * bc >= 4096 else 4)


def _eps_parts(eps):
    import struct
    hi = struct.unpack("f", struct.pack("f", float(eps)))[0]
    return hi, float(eps) - hi


def cross_entropy_forward(x, target, weight, loss, stats, wrow, rows, C, ignore_index,
                          label_smoothing):
    """Per-row cross entropy of contiguous logits x (rows, C) against int64 class indices
    ``target`` (rows,): loss and wrow (the target's weight, 0 where ignored) are (rows,),
    stats (2, rows) the row's reference point (its maximum) and log(sum exp(x - ref)),
    all of the compute dtype (float64 for float64 x, else float32). ``weight``: None or
    contiguous (C,) of x's dtype. Raises IndexError for a target outside [0, C) that is not
    ``ignore_index``, as the CPU's: the kernel notes the first such row, read back after
    the launch (one host sync, as the check of the targets before it took)."""
    _require_float(x)
    if rows == 0:
        return
    r, bc, warps = _tiles(rows, C)
    hi, lo = _eps_parts(label_smoothing)
    first_bad = alloc.empty((1,), target.dtype, target._storage.device)
    fill(first_bad, rows)
    _ce_forward_kernel[(cdiv(rows, r),)](
        x, target, x if weight is None else weight, loss, stats, wrow, first_bad, rows, C,
        int(ignore_index), hi, lo, HAS_W=weight is not None, SMOOTH=label_smoothing > 0,
        ACC=_acc(x), R=r, BC=bc, num_warps=warps)
    i = first_bad.item()
    if i < rows:
        raise IndexError(f"Target {target[i].item()} is out of bounds.")


def cross_entropy_backward(x, target, weight, wsum, stats, grow, gx, rows, C, ignore_index,
                           label_smoothing):
    """gx (rows, C, x's dtype) = gradient of cross_entropy_forward's per-row losses, each
    scaled by grow (rows,; or 1 element, the same for every row), computed from the logits
    x and the forward's stats alone. ``wsum``: the sum of ``weight`` (a 1-element tensor of
    the compute dtype) or None without weight."""
    _require_float(x)
    if rows * C == 0:
        return
    r, bc, warps = _tiles(rows, C)
    hi, lo = _eps_parts(label_smoothing)
    _ce_backward_kernel[(cdiv(rows, r),)](
        x, target, x if weight is None else weight, stats if wsum is None else wsum, stats, grow,
        0 if grow.numel() == 1 else 1, gx, rows, C, int(ignore_index), hi, lo,
        HAS_W=weight is not None, SMOOTH=label_smoothing > 0, ACC=_acc(x), R=r, BC=bc,
        num_warps=warps)
