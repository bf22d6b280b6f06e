"""Sort family kernels (Triton): the cuda backend of framework/_cpu/sort.py (native/sort.cpp,
native/sort_scan.cpp), with the same launcher names, arguments and semantics.

This file holds sort, topk, kthvalue, median, nanmedian, mode and unique (native/sort.cpp).
The scans, bincount, histc and searchsorted (native/sort_scan.cpp) are in sort_scan.py and
imported from there; the dtype checks, keys and in-register pair sort that both files use
are in sort_keys.py (native/sort_keys.h).

Sorting. Every element becomes an int64 key whose signed order is PyTorch's order (``_key``:
integers as themselves, floats through their bits with -0.0 made +0.0 and NaN the largest
key; descending order sorts ~key), paired with its position in the row. Pairs are ordered
by (key, position), so every pair is distinct and any correct sort of them is a stable sort
of the row. A row of up to SORT_BLOCK elements is sorted in one program by a bitonic
network on the pairs in registers (``_sort_pairs``: Triton's own tl.sort network, on a
hypercube-shaped tensor, comparing pairs). Longer rows are cut into SORT_BLOCK chunks,
sorted the same way into int64 (key, position) buffers, then merged in passes that double
the run width: each element finds its place in the partner run by a binary search
(``_merge_kernel``: output position = own rank + rank in the other run), so a pass is one
fully parallel launch. Results are then gathered from the input (values are copies of input
elements, so -0.0 and NaN payloads survive).

topk, kthvalue, median, nanmedian and mode read the stably sorted (key, position) pairs:
the CPU selects (key, index) pairs with ties broken by the smaller index, which is the
stable sorted order. topk always returns its k elements sorted (valid for sorted=False).

unique: rows are sorted (flat: one sort; rows of m elements: m stable sorts, last column
first), then a group flag per sorted position (NaNs never equal), a one-program pass
numbers the groups (cumsum with a carry) and writes first/inverse/group starts, and the
group count is read back (the CPU returns it).
"""
import triton
import triton.language as tl

from .. import _dtype
from .._ops import alloc
from .pointwise import _offset
from .sort_keys import (BLOCK, _device, _empty, _is_float, _key, _outer, _pow2, _require,
                        _sort_pairs)
from .launcher import cached, cdiv
from .sort_scan import (  # noqa: F401  (the family's launchers, defined in sort_scan.py)
    bincount, cum_ext, float_range, histc, int_range, scan, searchsorted,
)

SORT_BLOCK = 1024   # longest row sorted in one program (power of two); longer rows merge
SORT_TILE = 2048    # elements per sort program: short rows are sorted several at a time
_MIN_SORT = 16


# ---- sort kernels ---------------------------------------------------------------------------

@cached
@triton.jit
def _block_sort_kernel(x, x_off, oshape, xo, xs, perm, v, vo, vs, ind, io, is_, K, I, rows, n,
                       nout, NDIM: tl.constexpr, IS_FLOAT: tl.constexpr, DESC: tl.constexpr,
                       HAS_PERM: tl.constexpr, DIRECT: tl.constexpr, R: tl.constexpr,
                       LOG: tl.constexpr, BLOCK: tl.constexpr):
    """Sorts chunk program_id(1) of R rows from program_id(0) * R. DIRECT (a row is one
    chunk): writes the first nout sorted values / indices; else the sorted (key, position)
    pairs to K, I (contiguous rows of n). HAS_PERM: element p of the row is x[perm[p] * xs]
    (one row)."""
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    lane = tl.arange(0, BLOCK).to(tl.int64)
    pos1 = tl.program_id(1).to(tl.int64) * BLOCK + lane
    pos = tl.zeros([R, BLOCK], dtype=tl.int64) + pos1[None, :]
    mask = (r < rows)[:, None] & (pos < n)
    xrow = (_offset(r, oshape, xo, NDIM, False) + x_off)[:, None]
    if HAS_PERM:
        src = tl.load(perm + r[:, None] * n + pos, mask=mask, other=0)
    else:
        src = pos
    key = _key(tl.load(x + xrow + src * xs, mask=mask), IS_FLOAT, DESC)
    key = tl.where(mask, key, 0x7FFFFFFFFFFFFFFF)
    key, idx = _sort_pairs(key, pos, R, LOG)
    if DIRECT:
        keep = (r < rows)[:, None] & (lane < nout)[None, :]
        val = tl.load(x + xrow + idx * xs, mask=keep)
        tl.store(v + _offset(r, oshape, vo, NDIM, False)[:, None] + lane[None, :] * vs, val,
                 mask=keep)
        tl.store(ind + _offset(r, oshape, io, NDIM, False)[:, None] + lane[None, :] * is_, idx,
                 mask=keep)
    else:
        tl.store(K + r[:, None] * n + pos, key, mask=mask)
        tl.store(I + r[:, None] * n + pos, idx, mask=mask)


@cached
@triton.jit
def _merge_kernel(K0, I0, K1, I1, n, w, iters, BLOCK: tl.constexpr):
    """One merge pass over the sorted runs of width w of row program_id(0): element p of a
    run goes to (start of the run pair) + (its rank in its run) + (number of pairs of the
    partner run that are smaller), found by binary search."""
    r = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = p < n
    base = r * n
    k = tl.load(K0 + base + p, mask=mask, other=0)
    i = tl.load(I0 + base + p, mask=mask, other=0)
    run = p // w
    pair0 = (run // 2) * (2 * w)
    in_a = (run % 2) == 0
    o_lo = tl.where(in_a, pair0 + w, pair0)
    o_hi = tl.minimum(tl.where(in_a, pair0 + 2 * w, pair0 + w), n)
    o_hi = tl.maximum(o_hi, o_lo)
    lo = o_lo
    hi = o_hi
    for _ in range(iters):
        active = lo < hi
        mid = (lo + hi) // 2
        mk = tl.load(K0 + base + mid, mask=mask & active, other=0)
        mi = tl.load(I0 + base + mid, mask=mask & active, other=0)
        less = (mk < k) | ((mk == k) & (mi < i))
        lo = tl.where(active & less, mid + 1, lo)
        hi = tl.where(active & (~less), mid, hi)
    own = tl.where(in_a, pair0, pair0 + w)
    dst = pair0 + (p - own) + (lo - o_lo)
    tl.store(K1 + base + dst, k, mask=mask)
    tl.store(I1 + base + dst, i, mask=mask)


@cached
@triton.jit
def _emit_kernel(I, x, oshape, xo, xs, v, vo, vs, ind, io, is_, n, nout, NDIM: tl.constexpr,
                 BLOCK: tl.constexpr):
    """values / indices of the first nout sorted positions of row program_id(0)."""
    r = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = p < nout
    j = tl.load(I + r * n + p, mask=mask, other=0)
    val = tl.load(x + _offset(r, oshape, xo, NDIM, False) + j * xs, mask=mask)
    tl.store(v + _offset(r, oshape, vo, NDIM, False) + p * vs, val, mask=mask)
    tl.store(ind + _offset(r, oshape, io, NDIM, False) + p * is_, j, mask=mask)


def _sort_launch(x, xl, outer, n, desc, x_off=0, perm=None, direct=None):
    """Sorts the rows of x stably. With ``direct`` = (v, vl, ind, il, nout) and a row that
    fits one program, writes the outputs and returns None; otherwise returns the sorted
    (keys, positions) as contiguous int64 (rows, n) buffers."""
    rows = alloc.numel(outer)
    dev = _device(x)
    layouts = [xl[0]]
    if direct is not None:
        layouts += [direct[1][0], direct[3][0]]
    oshape, ostr = _outer(outer, layouts)
    xo = ostr[0]
    is_float = _is_float(x)
    if n <= SORT_BLOCK:
        blk = _pow2(n, _MIN_SORT)
    else:
        blk = SORT_BLOCK
    log = blk.bit_length() - 1
    chunks = cdiv(n, blk)
    rb = max(1, min(_pow2(rows), SORT_TILE // blk))  # rows per program
    grid = (cdiv(rows, rb), chunks)
    warps = 8 if rb * blk >= 1024 else 4  # int64 (key, index) pairs are register-heavy
    if direct is not None and chunks == 1:
        v, vl, ind, il, nout = direct
        _block_sort_kernel[grid](
            x, x_off, oshape, xo, xl[1], x, v, ostr[1], vl[1], ind, ostr[2], il[1], x, x, rows,
            n, nout, NDIM=len(oshape), IS_FLOAT=is_float, DESC=desc, HAS_PERM=False,
            DIRECT=True, R=rb, LOG=log, BLOCK=blk, num_warps=warps)
        return None
    K = _empty((rows, n), _dtype.int64, dev)
    I = _empty((rows, n), _dtype.int64, dev)
    _block_sort_kernel[grid](
        x, x_off, oshape, xo, xl[1], perm if perm is not None else K, x, xo, 0, K, xo, 0, K, I,
        rows, n, n, NDIM=len(oshape), IS_FLOAT=is_float, DESC=desc, HAS_PERM=perm is not None,
        DIRECT=False, R=rb, LOG=log, BLOCK=blk, num_warps=warps)
    w = blk
    if w < n:
        K2 = _empty((rows, n), _dtype.int64, dev)
        I2 = _empty((rows, n), _dtype.int64, dev)
        while w < n:
            _merge_kernel[(rows, cdiv(n, BLOCK))](K, I, K2, I2, n, w, w.bit_length() + 1,
                                                        BLOCK=BLOCK)
            K, K2, I, I2 = K2, K, I2, I
            w *= 2
    return K, I


def _emit(I, x, xl, outer, n, nout, v, vl, ind, il):
    oshape, (xo, vo, io) = _outer(outer, [xl[0], vl[0], il[0]])
    _emit_kernel[(alloc.numel(outer), cdiv(nout, BLOCK))](
        I, x, oshape, xo, xl[1], v, vo, vl[1], ind, io, il[1], n, nout, NDIM=len(oshape),
        BLOCK=BLOCK)


def sort_rows(outer, n, descending, x, xl, values, vl, indices, il):
    _require(x, "sort", "bif")
    if n == 0 or alloc.numel(outer) == 0:
        return
    res = _sort_launch(x, xl, outer, n, bool(descending),
                       direct=(values, vl, indices, il, n))
    if res is not None:
        _emit(res[1], x, xl, outer, n, n, values, vl, indices, il)


def topk_rows(outer, n, k, largest, is_sorted, x, xl, values, vl, indices, il):
    """The k largest (smallest) per row, always in sorted order."""
    _require(x, "topk", "if")
    if k == 0 or n == 0 or alloc.numel(outer) == 0:
        return
    res = _sort_launch(x, xl, outer, n, bool(largest), direct=(values, vl, indices, il, k))
    if res is not None:
        _emit(res[1], x, xl, outer, n, k, values, vl, indices, il)


@cached
@triton.jit
def _kth_kernel(K, I, x, oshape, xo, xs, v, vo, ind, io, rows, n, k, NDIM: tl.constexpr,
                MODE: tl.constexpr, IS_FLOAT: tl.constexpr, R: tl.constexpr,
                BLOCK: tl.constexpr):
    """Selects from the ascending sorted pairs of R rows: mode 0 position k; 1 the median
    (the first NaN if any); 2 the median of the non-NaN values (index 0 when all are NaN)."""
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    rm = r < rows
    base = r * n
    if MODE == 0:
        j = tl.load(I + base + k, mask=rm, other=0)
    else:
        nans = tl.zeros([R, BLOCK], dtype=tl.int64)
        if IS_FLOAT:
            for c in range(0, n, BLOCK):
                p = c + tl.arange(0, BLOCK).to(tl.int64)
                m2 = rm[:, None] & (p < n)[None, :]
                kk = tl.load(K + base[:, None] + p[None, :], mask=m2, other=0)
                nans += (kk == 0x7FFFFFFFFFFFFFFF).to(tl.int64)
        nan_count = tl.sum(nans, axis=1)
        m = n - nan_count
        if MODE == 1:
            pos = tl.where(nan_count > 0, m, (n - 1) // 2)
        else:
            pos = tl.where(m > 0, (m - 1) // 2, 0)
        j = tl.load(I + base + pos, mask=rm, other=0)
        if MODE == 2:
            j = tl.where(m > 0, j, 0)
    val = tl.load(x + _offset(r, oshape, xo, NDIM, False) + j * xs, mask=rm)
    tl.store(v + _offset(r, oshape, vo, NDIM, False), val, mask=rm)
    tl.store(ind + _offset(r, oshape, io, NDIM, False), j, mask=rm)


def _sorted_rows(outer, n, x, xl, vl, il):
    """What the per-row selection kernels (kth, mode) take: the rows sorted (keys K,
    positions I), the outer geometry of x, values and indices, the grid and the tile (rows
    per program, columns per step); None when there is nothing to select."""
    rows = alloc.numel(outer)
    if rows == 0 or n == 0:
        return None
    K, I = _sort_launch(x, xl, outer, n, False)
    oshape, (xo, vo, io) = _outer(outer, [xl[0], vl[0], il[0]])
    blk = min(BLOCK, _pow2(n, 16))
    rb = max(1, min(_pow2(rows), SORT_TILE // blk))
    return K, I, oshape, xo, vo, io, rows, (cdiv(rows, rb),), rb, blk


def kth_rows(outer, n, k, mode, x, xl, values, vl, indices, il):
    """mode 0: k-th smallest (0-based); 1: median; 2: nanmedian."""
    _require(x, "kthvalue" if mode == 0 else "median", "if")
    s = _sorted_rows(outer, n, x, xl, vl, il)
    if s is None:
        return
    K, I, oshape, xo, vo, io, rows, grid, rb, blk = s
    _kth_kernel[grid](
        K, I, x, oshape, xo, xl[1], values, vo, indices, io, rows, n, k, NDIM=len(oshape),
        MODE=mode, IS_FLOAT=_is_float(x), R=rb, BLOCK=blk)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@cached
@triton.jit
def _mode_kernel(K, I, x, oshape, xo, xs, v, vo, ind, io, rows, n, NDIM: tl.constexpr,
                 IS_FLOAT: tl.constexpr, R: tl.constexpr, BLOCK: tl.constexpr):
    """For R sorted rows: the longest run of equal keys (the first, i.e. the smallest
    value, on ties) and the position of its last element (the largest index). NaNs are
    never equal to each other (each is a run of one), as in PyTorch."""
    r = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    rm = r < rows
    base = (r * n)[:, None]
    start_carry = tl.zeros([R], dtype=tl.int64)
    best_len = tl.zeros([R], dtype=tl.int64)
    best_pos = tl.zeros([R], dtype=tl.int64)
    for c in range(0, n, BLOCK):
        p1 = c + tl.arange(0, BLOCK).to(tl.int64)
        p = tl.zeros([R, BLOCK], dtype=tl.int64) + p1[None, :]
        mask = rm[:, None] & (p < n)
        k = tl.load(K + base + p, mask=mask, other=0)
        kp = tl.load(K + base + p - 1, mask=mask & (p > 0), other=0)
        kn = tl.load(K + base + p + 1, mask=mask & ((p + 1) < n), other=0)
        if IS_FLOAT:
            alone = k == 0x7FFFFFFFFFFFFFFF      # NaN's key
        else:
            alone = k != k
        is_start = (p == 0) | (k != kp) | alone
        starts = tl.associative_scan(tl.where(is_start, p, -1), 1, _max_combine)
        starts = tl.maximum(starts, start_carry[:, None])
        start_carry = tl.max(tl.where(mask, starts, -1), axis=1)
        is_end = mask & (((p + 1) == n) | (k != kn) | alone)
        lens = tl.where(is_end, p - starts + 1, 0)
        top = tl.max(lens, axis=1)
        at = tl.min(tl.where(is_end & (lens == top[:, None]), p, n), axis=1)
        better = top > best_len
        best_pos = tl.where(better, at, best_pos)
        best_len = tl.where(better, top, best_len)
    j = tl.load(I + r * n + best_pos, mask=rm, other=0)
    val = tl.load(x + _offset(r, oshape, xo, NDIM, False) + j * xs, mask=rm)
    tl.store(v + _offset(r, oshape, vo, NDIM, False), val, mask=rm)
    tl.store(ind + _offset(r, oshape, io, NDIM, False), j, mask=rm)


def mode_rows(outer, n, x, xl, values, vl, indices, il):
    _require(x, "mode", "bif")
    s = _sorted_rows(outer, n, x, xl, vl, il)
    if s is None:
        return
    K, I, oshape, xo, vo, io, rows, grid, rb, blk = s
    _mode_kernel[grid](K, I, x, oshape, xo, xl[1], values, vo, indices, io, rows, n,
                       NDIM=len(oshape), IS_FLOAT=_is_float(x), R=rb, BLOCK=blk)


# ---- unique ---------------------------------------------------------------------------------

@cached
@triton.jit
def _iota_kernel(out, n, BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    tl.store(out + p, p, mask=p < n)


@cached
@triton.jit
def _take_kernel(dst, src, idx, n, BLOCK: tl.constexpr):
    """dst[p] = src[idx[p]] (int64 buffers)."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = p < n
    j = tl.load(idx + p, mask=mask, other=0)
    tl.store(dst + p, tl.load(src + j, mask=mask), mask=mask)


@cached
@triton.jit
def _flags_kernel(x, perm, flags, n, m, BP: tl.constexpr, BM: tl.constexpr):
    """flags[p] = 1 where row perm[p] of x (n, m) differs from row perm[p - 1] (NaN differs
    from everything), and at p == 0."""
    p = tl.program_id(0).to(tl.int64) * BP + tl.arange(0, BP).to(tl.int64)
    mask = p < n
    a = tl.load(perm + p, mask=mask, other=0)
    b = tl.load(perm + p - 1, mask=mask & (p > 0), other=0)
    diff = tl.zeros([BP], dtype=tl.int32)
    for c0 in range(0, m, BM):
        c = c0 + tl.arange(0, BM).to(tl.int64)
        m2 = mask[:, None] & (c < m)[None, :]
        va = tl.load(x + a[:, None] * m + c[None, :], mask=m2)
        vb = tl.load(x + b[:, None] * m + c[None, :], mask=m2)
        if va.dtype == tl.float16 or va.dtype == tl.bfloat16:
            va = va.to(tl.float32)
            vb = vb.to(tl.float32)
        diff += tl.sum((m2 & (va != vb)).to(tl.int32), axis=1)
    f = ((diff > 0) | (p == 0)).to(tl.int32)
    tl.store(flags + p, f, mask=mask)


@cached
@triton.jit
def _groups_kernel(perm, flags, inverse, first, starts, u_out, n, HAS_INV: tl.constexpr,
                   BLOCK: tl.constexpr):
    """One program: numbers the groups in sorted order; first[g] = perm[start of g],
    starts[g] = start of g, inverse[perm[p]] = group of p; u_out[0] = group count."""
    carry = tl.sum(tl.zeros([BLOCK], dtype=tl.int64), axis=0)  # an int64 scalar
    for c in range(0, n, BLOCK):
        p = c + tl.arange(0, BLOCK).to(tl.int64)
        mask = p < n
        f = tl.load(flags + p, mask=mask, other=0).to(tl.int64)
        g = carry + tl.cumsum(f, 0) - 1
        pp = tl.load(perm + p, mask=mask, other=0)
        is_first = mask & (f > 0)
        tl.store(first + g, pp, mask=is_first)
        tl.store(starts + g, p, mask=is_first)
        if HAS_INV:
            tl.store(inverse + pp, g, mask=mask)
        carry += tl.sum(f, axis=0)
    tl.store(u_out, carry)


@cached
@triton.jit
def _counts_kernel(starts, counts, u, n, BLOCK: tl.constexpr):
    g = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = g < u
    s = tl.load(starts + g, mask=mask, other=0)
    e = tl.load(starts + g + 1, mask=mask & (g + 1 < u), other=n)
    e = tl.where(g + 1 < u, e, n)
    tl.store(counts + g, e - s, mask=mask)


def _groups(x, n, m, perm, inverse, counts, first):
    """Groups the rows of x (n, m) taken in perm order; returns the group count."""
    dev = _device(x)
    flags = _empty((n,), _dtype.int32, dev)
    bm = min(_pow2(m), 32)
    bp = max(BLOCK // bm, 16)
    _flags_kernel[(cdiv(n, bp),)](x, perm, flags, n, m, BP=bp, BM=bm)
    starts = _empty((n,), _dtype.int64, dev)
    u_out = _empty((1,), _dtype.int64, dev)
    _groups_kernel[(1,)](perm, flags, inverse if inverse is not None else perm, first, starts,
                         u_out, n, HAS_INV=inverse is not None, BLOCK=min(BLOCK, _pow2(n, 16)))
    u = int(u_out.item())
    if u:
        _counts_kernel[(cdiv(u, BLOCK),)](starts, counts, u, n, BLOCK=BLOCK)
    return u


def unique_rows(x, n, m, do_sort, perm, inverse, counts, first):
    """Groups equal rows of contiguous x viewed as (n, m); returns the number of groups.
    ``inverse`` may be None when it is not wanted."""
    if n == 0:
        return 0
    _iota_kernel[(cdiv(n, BLOCK),)](perm, n, BLOCK=BLOCK)
    if do_sort:
        # stable sorts by each column, last column first: lexicographic row order
        for j in range(m - 1, -1, -1):
            _, I = _sort_launch(x, ((), m), (), n, False, x_off=j, perm=perm)
            _take_kernel[(cdiv(n, BLOCK),)](I, perm, I, n, BLOCK=BLOCK)
            _copy_i64(perm, I, n)
    return _groups(x, n, m, perm, inverse, counts, first)


@cached
@triton.jit
def _copy_kernel(dst, src, n, BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = p < n
    tl.store(dst + p, tl.load(src + p, mask=mask), mask=mask)


def _copy_i64(dst, src, n):
    _copy_kernel[(cdiv(n, BLOCK),)](dst, src, n, BLOCK=BLOCK)


def unique_flat(x, n, values, inverse, counts):
    """Sorted unique values of contiguous x (n elements) into values; returns how many.
    ``inverse`` may be None when it is not wanted."""
    if n == 0:
        return 0
    _, I = _sort_launch(x, ((), 1), (), n, False)
    first = _empty((n,), _dtype.int64, _device(x))
    u = _groups(x, n, 1, I, inverse, counts, first)
    gather_rows(values, x, first, u, x.dtype.itemsize)
    return u


@cached
@triton.jit
def _gather_rows_kernel(dst, src, rows, total, m, BLOCK: tl.constexpr):
    e = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = e < total
    g = e // m
    c = e % m
    r = tl.load(rows + g, mask=mask, other=0)
    tl.store(dst + e, tl.load(src + r * m + c, mask=mask), mask=mask)


def gather_rows(dst, src, rows, count, row_bytes):
    """dst[g, :] = src[rows[g], :] for contiguous rows of ``row_bytes`` bytes (dst and src
    have the same dtype)."""
    m = row_bytes // dst.dtype.itemsize
    total = count * m
    if total:
        _gather_rows_kernel[(cdiv(total, BLOCK),)](dst, src, rows, total, m, BLOCK=BLOCK)
