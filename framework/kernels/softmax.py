"""Softmax family kernels (Triton): the cuda side of native/softmax.cpp, with the same
launcher and semantics.

Input and output are contiguous (outer, n, inner) tensors of one floating dtype; the op
works along n. 16-bit floats and float32 compute in float32, float64 in float64.

Online softmax: one pass over a row gathers its maximum m and the sum s of exp(x - m),
tile by tile; each tile's maximum moves m forward and rescales the sum so far by
exp(m_old - m_new). While m is still -inf the reference point is 0, so that an all -inf
prefix contributes 0 and not NaN. A second pass writes exp(x - m) / s or (x - m) - log(s).
A row that fits in one tile is loaded once and kept in registers.

Rows (inner == 1): a program takes R rows of up to BN columns at a time ([R, BN] tiles),
so many short rows share a program and a long row is walked in BN-wide tiles. Other dims
(inner > 1): a program takes BI adjacent columns of one outer slab and walks n in BN-row
tiles ([BN, BI]), reading contiguous memory along the columns.

Backward, from the output y and its gradient g, in the same tiles: softmax's
gx = y * (g - sum(g * y)), log_softmax's gx = g - exp(y) * sum(g); a row that fits in one
tile is read once, a longer one twice (sum, then write).
"""
import triton
import triton.language as tl

from .pointwise import _down
from .launcher import cached, cdiv, next_pow2

TILE = 4096        # elements per program tile
_MIN_BLOCK = 16


_pow2 = next_pow2


def _require_float(x, log):
    if not x.dtype.is_floating_point:
        op = "log_softmax" if log else "softmax"
        raise NotImplementedError(f"\"{op}_cuda\" not implemented for '{x.dtype.scalar_name}'")


@triton.jit
def _ref(m):
    """The point exp() is taken against: the running maximum, or 0 while it is -inf."""
    return tl.where(m == float("-inf"), 0.0, m)


@triton.jit
def _finish(v, m, s, LOG: tl.constexpr):
    if LOG:
        out = (v - m) - tl.log(s)
    else:
        out = tl.exp(v - m) / s
    return out


@cached
@triton.jit
def _rows_kernel(x, y, rows, n, LOG: tl.constexpr, ACC: tl.constexpr, R: tl.constexpr,
                 BN: tl.constexpr, ONE: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    rmask = r < rows
    cols = tl.arange(0, BN).to(tl.int64)
    base = r * n
    if ONE:
        # the whole row is one tile: load it once
        mask = rmask[:, None] & (cols < n)[None, :]
        off = base[:, None] + cols[None, :]
        v = tl.load(x + off, mask=mask, other=float("-inf")).to(ACC)
        m = tl.max(v, axis=1)
        s = tl.sum(tl.exp(v - _ref(m)[:, None]), axis=1)
        out = _finish(v, m[:, None], s[:, None], LOG)
        tl.store(y + off, _down(out, y.dtype.element_ty), mask=mask)
    else:
        m = tl.full([R], float("-inf"), ACC)
        s = tl.zeros([R], ACC)
        for c0 in range(0, n, BN):
            c = c0 + cols
            mask = rmask[:, None] & (c < n)[None, :]
            v = tl.load(x + base[:, None] + c[None, :], mask=mask, other=float("-inf")).to(ACC)
            nm = tl.maximum(m, tl.max(v, axis=1))
            ref = _ref(nm)
            s = s * tl.exp(m - ref) + tl.sum(tl.exp(v - ref[:, None]), axis=1)
            m = nm
        for c0 in range(0, n, BN):
            c = c0 + cols
            mask = rmask[:, None] & (c < n)[None, :]
            off = base[:, None] + c[None, :]
            v = tl.load(x + off, mask=mask, other=0).to(ACC)
            out = _finish(v, m[:, None], s[:, None], LOG)
            tl.store(y + off, _down(out, y.dtype.element_ty), mask=mask)


@cached
@triton.jit
def _cols_kernel(x, y, n, inner, LOG: tl.constexpr, ACC: tl.constexpr, BN: tl.constexpr,
                 BI: tl.constexpr, ONE: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BI + tl.arange(0, BI).to(tl.int64)
    cmask = cols < inner
    base = o * n * inner
    rows = tl.arange(0, BN).to(tl.int64)
    if ONE:
        mask = (rows < n)[:, None] & cmask[None, :]
        off = base + rows[:, None] * inner + cols[None, :]
        v = tl.load(x + off, mask=mask, other=float("-inf")).to(ACC)
        m = tl.max(v, axis=0)
        s = tl.sum(tl.exp(v - _ref(m)[None, :]), axis=0)
        out = _finish(v, m[None, :], s[None, :], LOG)
        tl.store(y + off, _down(out, y.dtype.element_ty), mask=mask)
    else:
        m = tl.full([BI], float("-inf"), ACC)
        s = tl.zeros([BI], ACC)
        for i0 in range(0, n, BN):
            ri = i0 + rows
            mask = (ri < n)[:, None] & cmask[None, :]
            off = base + ri[:, None] * inner + cols[None, :]
            v = tl.load(x + off, mask=mask, other=float("-inf")).to(ACC)
            nm = tl.maximum(m, tl.max(v, axis=0))
            ref = _ref(nm)
            s = s * tl.exp(m - ref) + tl.sum(tl.exp(v - ref[None, :]), axis=0)
            m = nm
        for i0 in range(0, n, BN):
            ri = i0 + rows
            mask = (ri < n)[:, None] & cmask[None, :]
            off = base + ri[:, None] * inner + cols[None, :]
            v = tl.load(x + off, mask=mask, other=0).to(ACC)
            out = _finish(v, m[None, :], s[None, :], LOG)
            tl.store(y + off, _down(out, y.dtype.element_ty), mask=mask)


def softmax(log, x, y, outer, n, inner):
    """y = softmax (``log``: log_softmax) of contiguous x viewed as (outer, n, inner) along
    n; x and y have the same floating dtype."""
    _require_float(x, log)
    if outer * n * inner == 0:
        return
    acc = tl.float64 if x.dtype.name == "float64" else tl.float32
    if inner == 1:
        bn = min(_pow2(n, _MIN_BLOCK), TILE)
        r = max(1, min(TILE // bn, _pow2(outer)))
        _rows_kernel[(cdiv(outer, r),)](x, y, outer, n, LOG=bool(log), ACC=acc, R=r,
                                        BN=bn, ONE=n <= bn,
                                        num_warps=8 if r * bn > 2048 else 4)
    else:
        bi = min(_pow2(inner, _MIN_BLOCK), 64)
        bn = min(_pow2(n, _MIN_BLOCK), max(TILE // bi, _MIN_BLOCK))
        _cols_kernel[(outer, cdiv(inner, bi))](x, y, n, inner, LOG=bool(log), ACC=acc,
                                               BN=bn, BI=bi, ONE=n <= bn)


@triton.jit
def _bwd_term(g, y, LOG: tl.constexpr):
    if LOG:
        t = g
    else:
        t = g * y
    return t


@triton.jit
def _bwd_out(g, y, s, LOG: tl.constexpr):
    if LOG:
        out = g - tl.exp(y) * s
    else:
        out = y * (g - s)
    return out


@cached
@triton.jit
def _bwd_rows_kernel(g, y, gx, rows, n, LOG: tl.constexpr, ACC: tl.constexpr, R: tl.constexpr,
                     BN: tl.constexpr, ONE: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    rmask = r < rows
    cols = tl.arange(0, BN).to(tl.int64)
    base = r * n
    if ONE:
        mask = rmask[:, None] & (cols < n)[None, :]
        off = base[:, None] + cols[None, :]
        gv = tl.load(g + off, mask=mask, other=0).to(ACC)
        yv = tl.load(y + off, mask=mask, other=0).to(ACC)
        s = tl.sum(_bwd_term(gv, yv, LOG), axis=1)
        tl.store(gx + off, _down(_bwd_out(gv, yv, s[:, None], LOG), gx.dtype.element_ty),
                 mask=mask)
    else:
        s = tl.zeros([R], ACC)
        for c0 in range(0, n, BN):
            c = c0 + cols
            mask = rmask[:, None] & (c < n)[None, :]
            off = base[:, None] + c[None, :]
            gv = tl.load(g + off, mask=mask, other=0).to(ACC)
            yv = tl.load(y + off, mask=mask, other=0).to(ACC)
            s += tl.sum(_bwd_term(gv, yv, LOG), axis=1)
        for c0 in range(0, n, BN):
            c = c0 + cols
            mask = rmask[:, None] & (c < n)[None, :]
            off = base[:, None] + c[None, :]
            gv = tl.load(g + off, mask=mask, other=0).to(ACC)
            yv = tl.load(y + off, mask=mask, other=0).to(ACC)
            tl.store(gx + off, _down(_bwd_out(gv, yv, s[:, None], LOG), gx.dtype.element_ty),
                     mask=mask)


@cached
@triton.jit
def _bwd_cols_kernel(g, y, gx, n, inner, LOG: tl.constexpr, ACC: tl.constexpr,
                     BN: tl.constexpr, BI: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BI + tl.arange(0, BI).to(tl.int64)
    cmask = cols < inner
    base = o * n * inner
    rows = tl.arange(0, BN).to(tl.int64)
    s = tl.zeros([BI], ACC)
    for i0 in range(0, n, BN):
        ri = i0 + rows
        mask = (ri < n)[:, None] & cmask[None, :]
        off = base + ri[:, None] * inner + cols[None, :]
        gv = tl.load(g + off, mask=mask, other=0).to(ACC)
        yv = tl.load(y + off, mask=mask, other=0).to(ACC)
        s += tl.sum(_bwd_term(gv, yv, LOG), axis=0)
    for i0 in range(0, n, BN):
        ri = i0 + rows
        mask = (ri < n)[:, None] & cmask[None, :]
        off = base + ri[:, None] * inner + cols[None, :]
        gv = tl.load(g + off, mask=mask, other=0).to(ACC)
        yv = tl.load(y + off, mask=mask, other=0).to(ACC)
        tl.store(gx + off, _down(_bwd_out(gv, yv, s[None, :], LOG), gx.dtype.element_ty),
                 mask=mask)


def softmax_backward(log, g, y, gx, outer, n, inner):
    """gx = gradient of softmax (``log``: log_softmax) along n of contiguous (outer, n,
    inner) tensors, from its output y and the output's gradient g (one floating dtype)."""
    _require_float(y, log)
    if outer * n * inner == 0:
        return
    acc = tl.float64 if y.dtype.name == "float64" else tl.float32
    if inner == 1:
        bn = min(_pow2(n, _MIN_BLOCK), TILE)
        r = max(1, min(TILE // bn, _pow2(outer)))
        _bwd_rows_kernel[(cdiv(outer, r),)](g, y, gx, outer, n, LOG=bool(log), ACC=acc,
                                            R=r, BN=bn, ONE=n <= bn,
                                            num_warps=8 if r * bn > 2048 else 4)
    else:
        bi = min(_pow2(inner, _MIN_BLOCK), 64)
        bn = min(_pow2(n, _MIN_BLOCK), max(TILE // bi, _MIN_BLOCK))
        _bwd_cols_kernel[(outer, cdiv(inner, bi))](g, y, gx, n, inner, LOG=bool(log),
                                                   ACC=acc, BN=bn, BI=bi)
