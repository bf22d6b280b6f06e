"""Scan and counting kernels of the sort family (Triton): cumsum, cumprod, logcumsumexp,
cummax, cummin, bincount, histc and searchsorted, the cuda side of native/sort_scan.cpp.
framework/kernels/sort.py imports the launchers (the family's module); the dtype checks and
helpers they share with it are in sort_keys.py.

Scans (cumsum, cumprod, logcumsumexp, cummax, cummin) run over contiguous (outer, n,
inner) data: one program per (outer row, block of inner columns) walks n in tiles with
tl.associative_scan along the tile's rows and a carried prefix. 16-bit floats accumulate
in float32, float32 in float32 (the CPU uses float64 for all floats: results can differ in
the last bits), float64 in float64, integers and bool in int64 (wrapping like the CPU's
uint64). cummax/cummin scan (value, index) pairs with the CPU's rule: a NaN, or a value
>= (<=) the running one, takes over. (Triton's interpreter runs tl.cumsum/tl.cumprod with
NumPy but any other associative_scan combine element by element in Python, so
logcumsumexp, cummax, cummin and mode are slow there on long inputs; on a GPU all are
ordinary scans.)

bincount and histc count with atomics (float weights make bincount's float sums
order-dependent in the last bits); int_range and float_range return Python values read back
from a two-element device result.
"""
import struct

import triton
import triton.language as tl

from .. import _determinism, _dtype
from .._ops import alloc
from .pointwise import MAX_DIMS, _down, _offset, collapse
from .pointwise_math import _log1p
from .sort_keys import BLOCK, _device, _empty, _outer, _pow2, _require
from .launcher import cached, cdiv

SCAN_TILE = 1024    # elements per scan tile

SCAN_KINDS = {"cumsum": 0, "cumprod": 1, "logcumsumexp": 2}


def _f64_bits(v):
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]


# ---- scans ----------------------------------------------------------------------------------

@triton.jit
def _logaddexp_combine(a, b):
    """log(exp(a) + exp(b)) as the CPU computes it (NaN wins; equal infinities stay)."""
    lo = tl.minimum(a, b)
    hi = tl.maximum(a, b)
    r = hi + _log1p(tl.exp(lo - hi))
    r = tl.where((lo == hi) & (tl.abs(lo) == float("inf")), a, r)
    return tl.where((a != a) | (b != b), float("nan"), r)


@triton.jit
def _scan_tile(v, KIND: tl.constexpr):
    if KIND == 0:
        s = tl.cumsum(v, 0)
    elif KIND == 1:
        s = tl.cumprod(v, 0)
    else:
        s = tl.associative_scan(v, 0, _logaddexp_combine)
    return s


@triton.jit
def _scan_apply(carry, s, KIND: tl.constexpr):
    if KIND == 0:
        r = carry + s
    elif KIND == 1:
        r = carry * s
    else:
        r = _logaddexp_combine(carry, s)
    return r


@triton.jit
def _last_row(s, rows, last):
    """Row ``last`` of the tile s ([BN, BI]) as a [BI] vector."""
    return tl.sum(tl.where((rows == last)[:, None], s, tl.zeros_like(s)), axis=0)


@cached
@triton.jit
def _scan_kernel(x, y, n, inner, KIND: tl.constexpr, ACC: tl.constexpr, BN: tl.constexpr,
                 BI: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BI + tl.arange(0, BI).to(tl.int64)
    cmask = cols < inner
    base = r * n * inner
    rows = tl.arange(0, BN).to(tl.int64)
    if KIND == 0:
        ident = 0
    elif KIND == 1:
        ident = 1
    else:
        ident = float("-inf")
    carry = tl.zeros([BI], dtype=ACC) + ident
    for i0 in range(0, n, BN):
        ri = i0 + rows
        m2 = (ri < n)[:, None] & cmask[None, :]
        off = base + ri[:, None] * inner + cols[None, :]
        v = tl.load(x + off, mask=m2, other=0).to(ACC)
        v = tl.where(m2, v, tl.zeros_like(v) + ident)
        s = _scan_apply(carry[None, :], _scan_tile(v, KIND), KIND)
        tl.store(y + off, _down(s, y.dtype.element_ty), mask=m2)
        carry = _last_row(s, rows, tl.minimum(n - i0, BN) - 1)


def _scan_blocks(n, inner):
    bi = min(_pow2(inner), 64)
    bn = max(SCAN_TILE // bi, 16)
    bn = min(bn, _pow2(n, 16))
    return bn, bi


def _acc(t):
    name = t.dtype.name
    if name in ("float16", "bfloat16", "float32"):
        return tl.float32
    if name == "float64":
        return tl.float64
    return tl.int64


def scan(kind, x, y, outer, n, inner):
    """y = scan of contiguous x viewed as (outer, n, inner) along n; same dtype."""
    k = SCAN_KINDS[kind]
    if k == 2:
        _require(x, "logcumsumexp_out", "f")
    else:
        _require(x, kind, "if")
    if outer * n * inner == 0:
        return
    bn, bi = _scan_blocks(n, inner)
    _scan_kernel[(outer, cdiv(inner, bi))](x, y, n, inner, KIND=k, ACC=_acc(x), BN=bn,
                                           BI=bi)


@triton.jit
def _cummax_combine(v1, i1, v2, i2):
    take = (v2 != v2) | ((v1 == v1) & (v2 >= v1))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def _cummin_combine(v1, i1, v2, i2):
    take = (v2 != v2) | ((v1 == v1) & (v2 <= v1))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@cached
@triton.jit
def _cum_ext_kernel(x, val, ind, n, inner, IS_MAX: tl.constexpr, ACC: tl.constexpr,
                    BN: tl.constexpr, BI: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BI + tl.arange(0, BI).to(tl.int64)
    cmask = cols < inner
    base = r * n * inner
    rows = tl.arange(0, BN).to(tl.int64)
    cv = tl.load(x + base + cols, mask=cmask, other=0).to(ACC)  # row 0 starts the scan
    ci = tl.zeros([BI], dtype=tl.int64)
    for i0 in range(0, n, BN):
        ri = i0 + rows
        m2 = (ri < n)[:, None] & cmask[None, :]
        off = base + ri[:, None] * inner + cols[None, :]
        v = tl.load(x + off, mask=m2, other=0).to(ACC)
        idx = tl.zeros([BN, BI], dtype=tl.int64) + ri[:, None]
        if IS_MAX:
            sv, si = tl.associative_scan((v, idx), 0, _cummax_combine)
            sv, si = _cummax_combine(cv[None, :], ci[None, :], sv, si)
        else:
            sv, si = tl.associative_scan((v, idx), 0, _cummin_combine)
            sv, si = _cummin_combine(cv[None, :], ci[None, :], sv, si)
        tl.store(val + off, _down(sv, val.dtype.element_ty), mask=m2)
        tl.store(ind + off, si, mask=m2)
        last = tl.minimum(n - i0, BN) - 1
        cv = _last_row(sv, rows, last)
        ci = _last_row(si, rows, last)


def cum_ext(is_max, x, values, indices, outer, n, inner):
    _require(x, "cummax" if is_max else "cummin", "bif")
    if outer * n * inner == 0:
        return
    bn, bi = _scan_blocks(n, inner)
    _cum_ext_kernel[(outer, cdiv(inner, bi))](x, values, indices, n, inner,
                                              IS_MAX=bool(is_max),
                                              ACC=_acc(x), BN=bn, BI=bi)


# ---- counting -------------------------------------------------------------------------------

@cached
@triton.jit
def _int_range_kernel(x, n, s, out, BLOCK: tl.constexpr):
    lo = tl.zeros([BLOCK], dtype=tl.int64) + 0x7FFFFFFFFFFFFFFF
    hi = tl.zeros([BLOCK], dtype=tl.int64) - 0x7FFFFFFFFFFFFFFF - 1
    for c in range(0, n, BLOCK):
        p = c + tl.arange(0, BLOCK).to(tl.int64)
        mask = p < n
        v = tl.load(x + p * s, mask=mask, other=0).to(tl.int64)
        lo = tl.where(mask, tl.minimum(lo, v), lo)
        hi = tl.where(mask, tl.maximum(hi, v), hi)
    tl.store(out, tl.min(lo, axis=0))
    tl.store(out + 1, tl.max(hi, axis=0))


def int_range(x):
    """(min, max) of a 1-d integer tensor ((0, 0) when empty)."""
    _require(x, "bincount", "i")
    n = x._shape[0]
    if n == 0:
        return (0, 0)
    out = _empty((2,), _dtype.int64, _device(x))
    _int_range_kernel[(1,)](x, n, x._stride[0], out, BLOCK=min(BLOCK, _pow2(n, 16)))
    lo, hi = out.tolist()
    return (int(lo), int(hi))


@cached
@triton.jit
def _bincount_kernel(x, n, s, w, ws, out, MODE: tl.constexpr, BLOCK: tl.constexpr):
    """MODE 0: counts (int64); 1: float32 weights; 2: float64 sums of weights."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = p < n
    b = tl.load(x + p * s, mask=mask, other=0).to(tl.int64)
    if MODE == 0:
        add = tl.zeros([BLOCK], dtype=tl.int64) + 1
    elif MODE == 1:
        add = tl.load(w + p * ws, mask=mask, other=0).to(tl.float32)
    else:
        add = tl.load(w + p * ws, mask=mask, other=0)
        if add.dtype == tl.float16 or add.dtype == tl.bfloat16:
            add = add.to(tl.float32)
        add = add.to(tl.float64)
    tl.atomic_add(out + b, add, mask=mask)


def bincount(x, weights, out):
    _require(x, "bincount", "i")
    if weights is not None:     # float atomics: the sums' order varies from run to run
        _determinism.alert_not_deterministic("_bincount_cuda")
    n = x._shape[0]
    if n == 0:
        return
    oname = out.dtype.name
    mode = 0 if oname == "int64" else 1 if oname == "float32" else 2
    if mode:
        _require(weights, "bincount", "if")
    w = weights if weights is not None else x
    ws = w._stride[0] if weights is not None else 0
    _bincount_kernel[(cdiv(n, BLOCK),)](x, n, x._stride[0], w, ws, out, MODE=mode,
                                        BLOCK=BLOCK)


def _flat_layout(x):
    shape, (st,) = collapse(tuple(x._shape), [tuple(x._stride)])
    if len(shape) > MAX_DIMS:
        raise RuntimeError(f"sort kernel: {len(shape)} non-mergeable dims, at most {MAX_DIMS}")
    return shape, st


@cached
@triton.jit
def _float_range_kernel(x, n, shape, st, out, NDIM: tl.constexpr, BLOCK: tl.constexpr):
    lo = tl.zeros([BLOCK], dtype=tl.float64) + float("inf")
    hi = tl.zeros([BLOCK], dtype=tl.float64) - float("inf")
    nan = tl.zeros([BLOCK], dtype=tl.int32)
    for c in range(0, n, BLOCK):
        p = c + tl.arange(0, BLOCK).to(tl.int64)
        mask = p < n
        v = tl.load(x + _offset(p, shape, st, NDIM, False), mask=mask, other=0)
        if v.dtype != tl.float64:
            v = v.to(tl.float32)
        v = v.to(tl.float64)
        nan |= (mask & (v != v)).to(tl.int32)
        ok = mask & (v == v)
        lo = tl.where(ok, tl.minimum(lo, v), lo)
        hi = tl.where(ok, tl.maximum(hi, v), hi)
    lo_s = tl.min(lo, axis=0)
    hi_s = tl.max(hi, axis=0)
    any_nan = tl.max(nan, axis=0) > 0
    tl.store(out, tl.where(any_nan, float("nan"), lo_s))
    tl.store(out + 1, tl.where(any_nan, float("nan"), hi_s))


def float_range(x):
    """(min, max) of a float tensor as Python floats (NaN, NaN when it has a NaN)."""
    _require(x, "histc", "f")
    n = alloc.numel(x._shape)
    if n == 0:
        return (0.0, 0.0)
    shape, st = _flat_layout(x)
    out = _empty((2,), _dtype.float64, _device(x))
    _float_range_kernel[(1,)](x, n, shape, st, out, NDIM=len(shape),
                              BLOCK=min(BLOCK, _pow2(n, 16)))
    lo, hi = out.tolist()
    return (float(lo), float(hi))


@cached
@triton.jit
def _histc_kernel(x, n, shape, st, hist, bins, lo_bits, hi_bits, NDIM: tl.constexpr,
                  BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = p < n
    v = tl.load(x + _offset(p, shape, st, NDIM, False), mask=mask, other=0)
    if v.dtype != tl.float64:
        v = v.to(tl.float32)
    lo = lo_bits.to(tl.int64).to(tl.float64, bitcast=True).to(v.dtype)
    hi = hi_bits.to(tl.int64).to(tl.float64, bitcast=True).to(v.dtype)
    inside = mask & (v >= lo) & (v <= hi)
    num = (v - lo) * (tl.zeros_like(v) + bins)
    den = hi - lo
    if v.dtype == tl.float32:
        q = tl.div_rn(num, den)
    else:
        q = num / den
    q = tl.where(inside, q, 0)
    b = q.to(tl.int64)
    b = tl.minimum(tl.maximum(b, 0), bins - 1)
    tl.atomic_add(hist + b, tl.zeros([BLOCK], dtype=tl.int64) + 1, mask=inside)


def histc(x, out, bins, lo, hi):
    """out (contiguous, ``bins`` elements, x's dtype) = histogram of x over [lo, hi]."""
    _require(x, "histogram", "f")
    from .copy import copy, fill
    dev = _device(x)
    hist = _empty((bins,), _dtype.int64, dev)
    fill(hist, 0)
    n = alloc.numel(x._shape)
    if n:
        shape, st = _flat_layout(x)
        _histc_kernel[(cdiv(n, BLOCK),)](x, n, shape, st, hist, bins, _f64_bits(lo),
                                         _f64_bits(hi), NDIM=len(shape), BLOCK=BLOCK)
    copy(out, hist, (1,))


@cached
@triton.jit
def _searchsorted_kernel(b, oshape, bo, bs, srt, so, ss, v, vo, vs, out, oo, os, nb, nv, iters,
                         RIGHT: tl.constexpr, HAS_SORTER: tl.constexpr, NDIM: tl.constexpr,
                         BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = j < nv
    brow = _offset(r, oshape, bo, NDIM, False)
    srow = _offset(r, oshape, so, NDIM, False)
    val = tl.load(v + _offset(r, oshape, vo, NDIM, False) + j * vs, mask=mask, other=0)
    if val.dtype == tl.float16 or val.dtype == tl.bfloat16:
        val = val.to(tl.float32)
    lo = tl.zeros([BLOCK], dtype=tl.int64)
    hi = tl.zeros([BLOCK], dtype=tl.int64) + nb
    for _ in range(iters):
        active = mask & (lo < hi)
        mid = lo + ((hi - lo) >> 1)
        if HAS_SORTER:
            at = tl.load(srt + srow + mid * ss, mask=active, other=0)
        else:
            at = mid
        mv = tl.load(b + brow + at * bs, mask=active, other=0)
        if mv.dtype == tl.float16 or mv.dtype == tl.bfloat16:
            mv = mv.to(tl.float32)
        if RIGHT:
            go_right = ~(mv > val)
        else:
            go_right = ~(mv >= val)
        lo = tl.where(active & go_right, mid + 1, lo)
        hi = tl.where(active & (~go_right), mid, hi)
    tl.store(out + _offset(r, oshape, oo, NDIM, False) + j * os,
             lo.to(out.dtype.element_ty), mask=mask)


def searchsorted(outer, nb, nv, right, b, bl, sorter, sl, v, vl, out, ol):
    _require(b, "searchsorted_out", "if")
    rows = alloc.numel(outer)
    if rows == 0 or nv == 0:
        return
    oshape, (bo, so, vo, oo) = _outer(outer, [bl[0], sl[0], vl[0], ol[0]])
    _searchsorted_kernel[(rows, cdiv(nv, BLOCK))](
        b, oshape, bo, bl[1], sorter if sorter is not None else b, so, sl[1], v, vo, vl[1],
        out, oo, ol[1], nb, nv, max(nb, 1).bit_length() + 1, RIGHT=bool(right),
        HAS_SORTER=sorter is not None, NDIM=len(oshape), BLOCK=BLOCK)
