"""Triton reduction family (the cuda backend of framework/_cpu/reduction.py): sum, nansum,
mean, prod, count_nonzero, all/any, amax/amin, argmax/argmin (with values), aminmax, var
(and std, with the mean), logsumexp and vector norms over any set of dims of a strided
input, with the kernel names, arguments and semantics of native/reduction.cpp.

``geom`` describes two loop nests over the input (framework/_ops/reduction.py): the kept
dims (one output each: shape, input strides, out0 strides, out1 strides) and the reduced
dims (shape, input strides), all in elements. Both nests are merged like the pointwise
kernels' operands (``collapse``: contiguous dims fuse, size-1 dims drop); the flattened
reduced index keeps the logical order, which is what argmax/argmin count in.

One generic kernel, ``_reduce_kernel``: program (i, j) owns BLOCK_M kept outputs and
walks the reduced range of split j (all of it without a split) in BLOCK_N chunks,
loading a [BLOCK_M, BLOCK_N] tile per step (reduced offsets unravelled from the flat
reduced index) and folding it elementwise into a tile of lane states; the lanes are
combined once at the end. An op is three constexpr choices: MAP (what an element
contributes: x, x with NaN as 0, x != 0, |x|, x^2, |x|^p, (x - c)^2, exp(x - c)), COMB
(how contributions combine: sum, prod, max, min, all, any, argmax, argmin, aminmax) and
FINAL (what is stored: the state, state / N, sqrt, state^(1/p), variance, log(state) + c,
or the logsumexp centre). Tiles are chosen by layout: a reduced dim contiguous in memory
gets wide BLOCK_N (coalesced rows), a kept dim contiguous in memory gets wide BLOCK_M
(columns). With few kept blocks and a long reduction (a full reduction, say) the reduced
range is split over a second grid axis: partial states go to a temporary (split, output)
buffer that a second launch of the same kernel combines (sums of partial sums, max of
partial maxima, argmax over (value, index) pairs: ties go to the earlier split, whose
indices are lower). var and logsumexp take two passes, as on the CPU: the per-output
mean (or max) into a temporary "centre" buffer, then the centred sum.

dtypes (as the CPU): sums, means, products and norms of 16-bit floats accumulate in
float32, float32 in float32, float64 in float64, integers and bool in int64; max/min and
arg ops compare in the input type (16-bit floats in float32, exactly); var accumulates in
float32 (float64 for float64) and divides in float64. NaN propagates through max/min
(and |x| in the inf norms); argmax/argmin give the first NaN, else the first occurrence of
the best value. Offsets are int64 when an index or offset may reach 2**31.
Known differences: sums add in a different order than the CPU's pairwise sums (last-bit
differences); exp/log in logsumexp and |x|^p in the p-norms use Triton's math.
"""
import functools

import triton
import triton.language as tl

from .. import _dtype
from .._ops import alloc
from .pointwise import _down, _params_bits, collapse, type_name
from .launcher import cached, cdiv, next_pow2

MAX_DIMS = 8           # kept or reduced dims left after merging
_TARGET = 1024         # programs worth launching: split the reduced range below this many
_MIN_WORK = 16384      # elements a split program reduces at least
_BIG = tl.constexpr(2**63 - 1)  # "no index yet" in the argmax/argmin lanes
_INT32_LIMIT = 2**31

# MAP: an element's contribution (c: the output's centre, p: the norm's p)
M_ID, M_NAN0, M_NZ, M_ABS, M_SQ, M_POW, M_CSQ, M_CEXP = range(8)
# COMB: how contributions combine
C_SUM, C_PROD, C_MAX, C_MIN, C_ALL, C_ANY, C_ARGMAX, C_ARGMIN, C_MINMAX = range(9)
# FINAL: what is stored (F_NONE also for partial states; F_BF16/F_F16: the state rounded to
# that dtype, then stored in the output's wider one)
F_NONE, F_MEAN, F_SQRT, F_POW, F_VAR, F_LSE, F_CENTER, F_BF16, F_F16 = range(9)


# ---- the kernel -----------------------------------------------------------------------

@triton.jit
def _fold_best(acc, IS_MAX: tl.constexpr, IS_FLOAT: tl.constexpr):
    """Max (min) of each row of lane states; NaN if a lane holds one."""
    if IS_MAX:
        s = tl.max(acc, 1)
    else:
        s = tl.min(acc, 1)
    if IS_FLOAT:
        isn = acc != acc
        has = tl.max(isn.to(tl.int32), 1) > 0
        s = tl.where(has, tl.sum(tl.where(isn, acc, 0), 1), s)
    return s


@cached
@triton.jit
def _reduce_kernel(x, xi, out0, out1, center, onum, chunk, rnum, ostep, p0, p1, ntot,
                   kshape, kstride, o0stride, o1stride, rshape, rstride,
                   MAP: tl.constexpr, COMB: tl.constexpr, FINAL: tl.constexpr,
                   ACC: tl.constexpr, LO: tl.constexpr, HI: tl.constexpr,
                   IS_FLOAT: tl.constexpr, NK: tl.constexpr, NR: tl.constexpr,
                   K_CONTIG: tl.constexpr, R_CONTIG: tl.constexpr, IDX64: tl.constexpr,
                   HAS_OUT0: tl.constexpr, HAS_OUT1: tl.constexpr, HAS_C: tl.constexpr,
                   IDX_IN: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   LOG_N: tl.constexpr):
    """Program (i, j): outputs i*BLOCK_M .. +BLOCK_M (linear kept index m) over reduced
    elements [j*chunk, min(rnum, (j+1)*chunk)). x: input; xi: int64 indices of a partial
    argmax/argmin (IDX_IN); center: per-output centre (HAS_C, type ACC, at m); out0/out1
    at the kept offsets (o0stride/o1stride) plus j*ostep."""
    pid_s = tl.program_id(1)
    if IDX64:
        pid_s = pid_s.to(tl.int64)
        m = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
        rb = pid_s * chunk
    else:
        m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rb = pid_s * chunk
    re = tl.minimum(rb + chunk, rnum)
    mmask = m < onum
    # offsets of the kept index in the input and the outputs, unravelled once (inline:
    # the interpreter pays ~1 ms for each call of a @jit helper)
    rem = m
    koff = m * 0   # (not tl.zeros_like: a @jit helper too)
    o0 = m * 0
    o1 = m * 0
    for d in tl.static_range(NK - 1, 0, -1):
        k = rem % kshape[d]
        koff += k * kstride[d]
        o0 += k * o0stride[d]
        o1 += k * o1stride[d]
        rem = rem // kshape[d]
    if K_CONTIG:
        koff = m
    else:
        koff += rem * kstride[0]
    o0 += rem * o0stride[0] + pid_s * ostep
    o1 += rem * o1stride[0] + pid_s * ostep
    # float parameters from their float64 bits; ntot: the number of reduced elements
    p0 = p0.to(tl.int64).to(tl.float64, bitcast=True)
    p1 = p1.to(tl.int64).to(tl.float64, bitcast=True)
    ntot = ntot.to(tl.int64).to(tl.float64, bitcast=True)
    if HAS_C:
        c = tl.load(center + m, mask=mmask, other=0)
        cc = c[:, None]
    else:
        c = tl.zeros([BLOCK_M], ACC)
        cc = c[:, None]

    if COMB == 0:
        acc = tl.zeros([BLOCK_M, BLOCK_N], ACC)
    elif COMB == 1:
        acc = tl.full([BLOCK_M, BLOCK_N], 1, ACC)
    elif COMB == 2 or COMB == 6:
        acc = tl.full([BLOCK_M, BLOCK_N], LO, ACC)
    elif COMB == 3 or COMB == 7:
        acc = tl.full([BLOCK_M, BLOCK_N], HI, ACC)
    elif COMB == 4:
        acc = tl.full([BLOCK_M, BLOCK_N], 1, tl.int32)
    elif COMB == 5:
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.int32)
    else:  # min and max
        acc = tl.full([BLOCK_M, BLOCK_N], HI, ACC)
    acc2 = tl.full([BLOCK_M, BLOCK_N], LO, ACC)          # aminmax: the max
    bidx = tl.full([BLOCK_M, BLOCK_N], _BIG, tl.int64)   # argmax/argmin: lane's index

    # (the loop body calls no @jit helpers: the interpreter pays ~1 ms for each call)
    for r0 in range(rb, re, BLOCK_N):
        r = r0 + tl.arange(0, BLOCK_N)
        mask = mmask[:, None] & (r < re)[None, :]
        if R_CONTIG:
            roff = r
        else:  # unravel the flat reduced index (row-major over rshape)
            # (rrem, not rem: a name carried through the loop keeps one type on a GPU)
            rrem = r
            roff = r * 0
            for d in tl.static_range(NR - 1, 0, -1):
                roff += (rrem % rshape[d]) * rstride[d]
                rrem = rrem // rshape[d]
            roff += rrem * rstride[0]
        off = koff[:, None] + roff[None, :]
        v = tl.load(x + off, mask=mask, other=0)
        if v.dtype.is_fp16() or v.dtype.is_bf16():  # 16-bit floats compute in float32
            v = v.to(tl.float32)
        # t: what the element contributes (MAP), in type ACC (all/any look at v itself)
        if COMB != 4 and COMB != 5:
            if MAP == 2:
                t = (v != 0).to(ACC)
            elif MAP == 5:  # |x|^p in float64 (0^p: exp2(-inf) = 0 for p > 0, inf for p < 0)
                t = tl.exp2(p0 * tl.log2(tl.abs(v.to(tl.float64)))).to(ACC)
            else:
                t = v.to(ACC)
                if MAP == 1:
                    t = tl.where(t != t, 0, t)
                elif MAP == 3:
                    t = tl.abs(t)
                elif MAP == 4:
                    t = t * t
                elif MAP == 6:
                    t = (t - cc) * (t - cc)
                elif MAP == 7:
                    t = tl.exp(t - cc)
        if COMB == 0:
            acc += tl.where(mask, t, 0)
        elif COMB == 1:
            acc *= tl.where(mask, t, 1)
        elif COMB == 2:
            acc = tl.where(mask & ((t > acc) | (t != t)), t, acc)
        elif COMB == 3:
            acc = tl.where(mask & ((t < acc) | (t != t)), t, acc)
        elif COMB == 4:
            acc = tl.minimum(acc, tl.where(mask, (v != 0).to(tl.int32), 1))
        elif COMB == 5:
            acc = tl.maximum(acc, tl.where(mask, (v != 0).to(tl.int32), 0))
        elif COMB == 6 or COMB == 7:
            if IDX_IN:
                idx = tl.load(xi + off, mask=mask, other=0)
            else:
                idx = r.to(tl.int64)[None, :]
            if COMB == 6:
                better = t > acc
            else:
                better = t < acc
            take = mask & ((bidx == _BIG) | better | ((t != t) & (acc == acc)))
            acc = tl.where(take, t, acc)
            bidx = tl.where(take, idx, bidx)
        else:
            acc = tl.where(mask & ((t < acc) | (t != t)), t, acc)
            acc2 = tl.where(mask & ((t > acc2) | (t != t)), t, acc2)

    # lanes -> one state per output
    if COMB == 0:
        s = tl.sum(acc, 1)
    elif COMB == 1:  # a tree of halves (the interpreter runs tl.reduce(_mul) per element)
        s = acc
        for i in tl.static_range(LOG_N):
            a, b = tl.split(tl.reshape(s, [BLOCK_M, BLOCK_N >> (i + 1), 2]))
            s = a * b
        s = tl.reshape(s, [BLOCK_M])
    elif COMB == 2:
        s = _fold_best(acc, True, IS_FLOAT)
    elif COMB == 3:
        s = _fold_best(acc, False, IS_FLOAT)
    elif COMB == 4:
        s = tl.min(acc, 1)
    elif COMB == 5:
        s = tl.max(acc, 1)
    elif COMB == 6 or COMB == 7:
        if COMB == 6:
            s = _fold_best(acc, True, IS_FLOAT)
        else:
            s = _fold_best(acc, False, IS_FLOAT)
        if IS_FLOAT:
            isn = acc != acc
            has = tl.max(isn.to(tl.int32), 1) > 0
            cand = tl.where(has[:, None], isn, acc == s[:, None])
        else:
            cand = acc == s[:, None]
        ix = tl.min(tl.where(cand & (bidx != _BIG), bidx, _BIG), 1)
    else:
        s = _fold_best(acc, False, IS_FLOAT)
        s2 = _fold_best(acc2, True, IS_FLOAT)

    # final values
    if FINAL == 1:
        s = s / ntot
    elif FINAL == 2:
        s = tl.sqrt(s.to(tl.float64))
    elif FINAL == 3:
        s = tl.exp2(tl.log2(s.to(tl.float64)) / p0)
    elif FINAL == 4:
        dof = tl.maximum(ntot - p0, 0.0)
        s = s.to(tl.float64) / dof
        s = tl.where(p1 != 0, tl.sqrt(s), s)
    elif FINAL == 5:
        s = tl.log(s) + c
    elif FINAL == 6:
        s = tl.where(tl.abs(s) == float("inf"), 0, s)
    elif FINAL == 7:
        s = _down(s, tl.bfloat16)
    elif FINAL == 8:
        s = _down(s, tl.float16)

    if HAS_OUT0:
        tl.store(out0 + o0, _down(s, out0.dtype.element_ty), mask=mmask)
    if HAS_OUT1:
        if COMB == 6 or COMB == 7:
            tl.store(out1 + o1, ix, mask=mmask)
        elif COMB == 8:
            tl.store(out1 + o1, _down(s2, out1.dtype.element_ty), mask=mmask)
        else:  # var's mean
            tl.store(out1 + o1, _down(c, out1.dtype.element_ty), mask=mmask)


# ---- host side ------------------------------------------------------------------------

_FLOATS = ("float16", "bfloat16", "float32", "float64")
# the type max/min and the arg ops compare in (bool as int8)
_UP = {"bool": tl.int8, "uint8": tl.uint8, "int8": tl.int8, "int16": tl.int16,
       "int32": tl.int32, "int64": tl.int64, "float16": tl.float32, "bfloat16": tl.float32,
       "float32": tl.float32, "float64": tl.float64}
_FW = {tl.int8: _dtype.int8, tl.uint8: _dtype.uint8, tl.int16: _dtype.int16,
       tl.int32: _dtype.int32, tl.int64: _dtype.int64, tl.float32: _dtype.float32,
       tl.float64: _dtype.float64}
_RANGE = {tl.int8: (-2**7, 2**7 - 1), tl.uint8: (0, 2**8 - 1), tl.int16: (-2**15, 2**15 - 1),
          tl.int32: (-2**31, 2**31 - 1), tl.int64: (-2**63, 2**63 - 1),
          tl.float32: (float("-inf"), float("inf")), tl.float64: (float("-inf"), float("inf"))}


def _row_major(shape):
    st, n = [], 1
    for s in reversed(shape):
        st.append(n)
        n *= s
    return tuple(reversed(st))


@functools.lru_cache(maxsize=4096)
def _extent(shape, stride):
    return 1 + sum((n - 1) * abs(s) for n, s in zip(shape, stride))


class _Geom:
    """Both loop nests after merging: kept (shape; input, out0, out1 and row-major strides)
    and reduced (shape; input strides)."""

    def __init__(self, ks, ki, k0, k1, rs, ri):
        self.onum, self.rnum = alloc.numel(ks), alloc.numel(rs)
        self.kshape, (self.kst, self.s0, self.s1, self.lin) = collapse(
            tuple(ks), [tuple(ki), tuple(k0), tuple(k1), _row_major(ks)])
        self.rshape, (self.rst,) = collapse(tuple(rs), [tuple(ri)])
        if len(self.kshape) > MAX_DIMS or len(self.rshape) > MAX_DIMS:
            raise RuntimeError(f"reduction kernel: more than {MAX_DIMS} non-mergeable dims")


@functools.lru_cache(maxsize=4096)  # a program reduces the same few layouts again and again
def _tiles(kshape, kst, rshape, rst, onum, rnum, itemsize):
    """(BLOCK_M, BLOCK_N, num_warps): wide BLOCK_N when the reduced dim is contiguous in
    memory (rows), wide BLOCK_M when the kept one is (columns)."""
    tile = min(8192, max(2048, 16384 // itemsize))
    np2 = next_pow2
    if rst[-1] == 1 and rshape[-1] > 1:
        bn = min(np2(rnum), 2048)
    elif kst[-1] == 1 and kshape[-1] > 1:
        bn = min(np2(rnum), max(64, tile // np2(onum)))
    else:
        bn = min(np2(rnum), max(128, tile // np2(onum)))
    bn = max(bn, 1)
    bm = max(1, min(np2(onum), tile // bn))
    return bm, bn, 8 if bm * bn >= 4096 else 4


def _go(x, outs, g, MAP, COMB, FINAL, acc, center=None, p=(0.0, 0.0), split=True,
        xi=None, kst=None, rshape=None, rst=None, ntot=None):
    """Launches the kernel over geometry g; outs: [(tensor, strides over g.kshape)] (or
    None) for out0 and out1. With a split: partial states into a temporary, then a second
    launch combines them."""
    kst = g.kst if kst is None else kst
    rshape = g.rshape if rshape is None else rshape
    rst = g.rst if rst is None else rst
    onum = g.onum
    rnum = alloc.numel(rshape)
    ntot = g.rnum if ntot is None else ntot
    bm, bn, warps = _tiles(g.kshape, kst, rshape, rst, onum, rnum, x.dtype.itemsize)
    kblocks = cdiv(onum, bm)
    nsplit, chunk = 1, max(rnum, 1)
    if split and kblocks < _TARGET:
        n = min(cdiv(_TARGET, kblocks), rnum * bm // _MIN_WORK, cdiv(rnum, bn))
        if n > 1:
            chunk = cdiv(cdiv(rnum, n), bn) * bn
            nsplit = cdiv(rnum, chunk)
    if nsplit > 1 and COMB == C_MINMAX:  # split: min and max one after the other
        _go(x, [outs[0], None], g, MAP, C_MIN, FINAL, acc, split=True)
        _go(x, [outs[1], None], g, MAP, C_MAX, FINAL, acc, split=True)
        return
    is_arg = COMB in (C_ARGMAX, C_ARGMIN)
    dev = x._storage.device
    if nsplit > 1:
        part0 = alloc.empty((nsplit * onum,), _FW[acc], dev)
        part1 = alloc.empty((nsplit * onum,), _dtype.int64, dev) if is_arg else None
        pouts = [(part0, g.lin), (part1, g.lin) if is_arg else None]
        _launch(x, xi, pouts, center, g, kst, rshape, rst, MAP, COMB, F_NONE, acc, p,
                bm, bn, warps, chunk, nsplit, onum, ntot)
        _go(part0, outs, g, M_ID, COMB, FINAL, acc, center, p, False, part1, g.lin,
            (nsplit,), (onum,), ntot)
        return
    _launch(x, xi, outs, center, g, kst, rshape, rst, MAP, COMB, FINAL, acc, p,
            bm, bn, warps, chunk, 1, 0, ntot)


def _launch(x, xi, outs, center, g, kst, rshape, rst, MAP, COMB, FINAL, acc, p,
            bm, bn, warps, chunk, nsplit, ostep, ntot):
    onum, rnum = g.onum, alloc.numel(rshape)
    o0, o1 = outs
    lo, hi = _RANGE[acc]
    kblocks = cdiv(onum, bm)
    lim = max(_extent(g.kshape, kst) + _extent(rshape, rst), kblocks * bm + 1,
              rnum + chunk + bn, nsplit * onum + bm)
    for o in (o0, o1):
        if o is not None:
            lim = max(lim, _extent(g.kshape, o[1]) + nsplit * ostep)
    idx64 = lim >= _INT32_LIMIT
    dummy = x
    _reduce_kernel[(kblocks, nsplit)](
        x, dummy if xi is None else xi, dummy if o0 is None else o0[0],
        dummy if o1 is None else o1[0], dummy if center is None else center,
        onum, chunk, rnum, ostep, *_params_bits(*p, ntot),
        g.kshape, kst, g.s0 if o0 is None else o0[1], g.s1 if o1 is None else o1[1],
        rshape, rst, MAP=MAP, COMB=COMB, FINAL=FINAL, ACC=acc, LO=lo, HI=hi,
        IS_FLOAT=acc in (tl.float32, tl.float64), NK=len(g.kshape), NR=len(rshape),
        K_CONTIG=len(g.kshape) == 1 and kst[0] == 1, R_CONTIG=len(rshape) == 1 and rst[0] == 1,
        IDX64=idx64, HAS_OUT0=o0 is not None, HAS_OUT1=o1 is not None,
        HAS_C=center is not None, IDX_IN=xi is not None, BLOCK_M=bm, BLOCK_N=bn,
        LOG_N=bn.bit_length() - 1,
        num_warps=warps)


# kernel name -> dtypes it takes (None: all)
_KERNELS = {"sum": None, "sum_rounded": ("float16", "bfloat16"), "nansum": _FLOATS,
            "mean": _FLOATS, "prod": None, "count_nonzero": None, "all": None, "any": None, "amax": None, "amin": None,
            "argmax": None, "argmin": None, "aminmax": None, "var": _FLOATS,
            "logsumexp": _FLOATS, "norm": _FLOATS}


_GEOMS = {}  # geom -> _Geom (the ops memoize geom by layout; the merged loops follow it)


def reduce(kernel, x, out0, out1, geom, p0=0.0, p1=0.0):
    """Runs reduction ``kernel`` of ``x`` into ``out0`` (and ``out1``: indices, mean or max).
    ``sum_rounded``: the sum of a 16-bit float ``x`` rounded to x's dtype, as ``sum`` gives
    it, stored into a wider ``out0`` (one launch where a sum and a cast took two).

    ``geom`` = (kept shape, input strides of the kept dims, out0 strides, out1 strides,
    reduced shape, input strides of the reduced dims), all in elements."""
    if kernel not in _KERNELS:
        raise RuntimeError(f"internal: unknown reduction {kernel}")
    name = x.dtype.name
    allowed = _KERNELS[kernel]
    if (allowed is not None and name not in allowed) or x.dtype.is_float8:
        raise NotImplementedError(f"\"{kernel}_cuda\" not implemented for '{type_name(name)}'")
    g = _GEOMS.get(geom)
    if g is None:
        g = alloc.remember(_GEOMS, geom, _Geom(*geom))
    if g.onum == 0:
        return
    o0 = None if out0 is None else (out0, g.s0)
    o1 = None if out1 is None else (out1, g.s1)
    up = _UP[name]
    wide = up if name in _FLOATS else tl.int64    # sums and products
    if kernel == "sum_rounded":
        _go(x, [o0, None], g, M_ID, C_SUM, F_BF16 if name == "bfloat16" else F_F16, up)
    elif kernel in ("sum", "nansum", "mean", "count_nonzero"):
        m = {"sum": M_ID, "nansum": M_NAN0, "mean": M_ID, "count_nonzero": M_NZ}[kernel]
        _go(x, [o0, None], g, m, C_SUM, F_MEAN if kernel == "mean" else F_NONE,
            tl.int64 if kernel == "count_nonzero" else wide)
    elif kernel == "prod":
        _go(x, [o0, None], g, M_ID, C_PROD, F_NONE, wide)
    elif kernel in ("all", "any"):
        _go(x, [o0, None], g, M_ID, C_ALL if kernel == "all" else C_ANY, F_NONE, tl.int32)
    elif kernel in ("amax", "amin"):
        _go(x, [o0, None], g, M_ID, C_MAX if kernel == "amax" else C_MIN, F_NONE, up)
    elif kernel in ("argmax", "argmin"):
        _go(x, [o0, o1], g, M_ID, C_ARGMAX if kernel == "argmax" else C_ARGMIN, F_NONE, up)
    elif kernel == "aminmax":
        _go(x, [o0, o1], g, M_ID, C_MINMAX, F_NONE, up)
    elif kernel == "var":
        acc = tl.float64 if name == "float64" else tl.float32
        mean = alloc.empty((g.onum,), _FW[acc], x._storage.device)
        _go(x, [(mean, g.lin), None], g, M_ID, C_SUM, F_MEAN, acc)
        _go(x, [o0, o1], g, M_CSQ, C_SUM, F_VAR, acc, center=mean, p=(p0, p1))
    elif kernel == "logsumexp":
        top = alloc.empty((g.onum,), _FW[up], x._storage.device)
        _go(x, [(top, g.lin), None], g, M_ID, C_MAX, F_CENTER, up)
        _go(x, [o0, None], g, M_CEXP, C_SUM, F_LSE, up, center=top)
    else:  # norm
        p = float(p0)
        if p in (float("inf"), float("-inf")):
            _go(x, [o0, None], g, M_ABS, C_MAX if p > 0 else C_MIN, F_NONE, up)
        elif p == 2:
            _go(x, [o0, None], g, M_SQ, C_SUM, F_SQRT, up)
        elif p == 1:
            _go(x, [o0, None], g, M_ABS, C_SUM, F_NONE, up)
        elif p == 0:
            _go(x, [o0, None], g, M_NZ, C_SUM, F_NONE, up)
        else:
            _go(x, [o0, None], g, M_POW, C_SUM, F_POW, up, p=(p, 0.0))
