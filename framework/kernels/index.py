"""Triton index family (the cuda backend of framework/_cpu/index.py; see native/index.cpp):
advanced indexing through precomputed element offsets, gather/scatter along a dim,
nonzero / masked_select (stream compaction), masked_fill, tril/triu and their indices.

This file holds the offsets, gather along a dim, compaction, masked_fill and tril/triu;
index_loop and scatter, whose writes may collide, are in index_scatter.py and imported
from there; the bad-index reporting and helpers both use are in index_common.py. Index
values are always bounds-checked on the device and a bad one raises the CPU backend's
error (see index_common.py).

Compaction (nonzero, masked_select) is three launches: a count per block of BLOCK
elements, one program's exclusive scan of the block counts, and a write pass in which each
block places its elements at its start plus their rank within the block (tl.cumsum), so
the output is in row-major order.
"""
import triton
import triton.language as tl

from .. import _dtype, _float8_ops
from .._ops import alloc
from .._tensor import Tensor
from .index_common import (  # noqa: F401  (STYLE_*: the error styles ops pass)
    STYLE_DATA, STYLE_DIM, STYLE_PREFIX, STYLE_RUNTIME, STYLE_SELF, STYLE_TAKE, _block,
    _check_index_dtype,
    _contig, _error_slot, _first_error, _idx64, _pow2, _read_int, _record_error, _scalar,
    bad_index,
)
from .index_scatter import (  # noqa: F401  (the family's launchers and modes, defined there)
    ACCUMULATE, GATHER, PUT, REDUCE, index_loop, scatter,
)
from .pointwise import _down, _index, _offset, _params_bits, _up, collapse
from .launcher import cached, cdiv

_SCAN_BLOCK = 1024


# ---- host helpers ---------------------------------------------------------------------

def _scalar_arg(value, dtype):
    """A Python number as the kernel argument for a tensor of ``dtype``: the bits of a
    float64 for float dtypes (converted on the device), else the converted integer (float
    truncates, bool is != 0), as the CPU's scalar_as."""
    if dtype.is_floating_point:
        return _params_bits(value)[0]
    if dtype is _dtype.bool:
        return int(value != 0)
    try:
        v = int(value)
    except (OverflowError, ValueError):     # inf, nan: what the CPU's cast gives on x86
        v = -2**63
    return (v + 2**63) % 2**64 - 2**63


# ---- offsets --------------------------------------------------------------------------

@cached
@triton.jit
def _index_offsets_kernel(out, idx, n, shape, si, size, src_stride, k, K, err,
                          ACC: tl.constexpr, NEG: tl.constexpr, NDIM: tl.constexpr,
                          IDX64: tl.constexpr, BLOCK: tl.constexpr):
    """out[i] (+)= wrap(idx[i]) * src_stride for BLOCK positions i of the index space."""
    i, mask = _index(n, BLOCK, IDX64)
    v = tl.load(idx + _offset(i, shape, si, NDIM, False), mask=mask, other=0).to(tl.int64)
    if NEG:
        v = tl.where(v < 0, v + size, v)
    bad = mask & ((v < 0) | (v >= size))
    _record_error(err, bad, i.to(tl.int64) * K + k)
    o = v * src_stride
    if ACC:
        o += tl.load(out + i, mask=mask, other=0)
    tl.store(out + i, o, mask=mask)


def index_offsets(out, shape, indices, sizes, src_strides, dims, allow_negative=True,
                  style=STYLE_DIM, prefix=""):
    """out[p] = sum_k wrap(indices[k][p]) * src_strides[k] (int64 indices broadcast to
    ``shape``); raises IndexError for an index out of [-size, size)."""
    n = alloc.numel(shape)
    if n == 0:
        return
    K = len(indices)
    err = _error_slot(out._storage.device)
    plans = []
    for k, (t, st) in enumerate(indices):
        cshape, (_, si) = collapse(tuple(shape), [_contig(shape), tuple(st)])
        plans.append((cshape, si))
        _index_offsets_kernel[(cdiv(n, _block(n)),)](
            out, t, n, cshape, si, sizes[k], src_strides[k], k, K, err, ACC=k > 0,
            NEG=bool(allow_negative), NDIM=len(cshape), IDX64=_idx64(n, cshape, [si]),
            BLOCK=_block(n))
    key = _first_error(err)
    if key is not None:
        p, k = divmod(key, K)
        raw = _read_int(indices[k][0], plans[k][0], plans[k][1], p)
        bad_index(style, prefix, raw, dims[k], sizes[k])


@cached
@triton.jit
def _linear_offsets_kernel(out, n, shape, st, NDIM: tl.constexpr, IDX64: tl.constexpr,
                           BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    tl.store(out + i, _offset(i, shape, st, NDIM, False), mask=mask)


def linear_offsets(out, shape, strides):
    """out[p] = element offset of row-major position p of (shape, strides)."""
    n = alloc.numel(shape)
    if n == 0:
        return
    cshape, (_, st) = collapse(tuple(shape), [_contig(shape), tuple(strides)])
    _linear_offsets_kernel[(cdiv(n, _block(n)),)](
        out, n, cshape, st, NDIM=len(cshape), IDX64=_idx64(n, cshape, [st]), BLOCK=_block(n))


@cached
@triton.jit
def _take_offsets_kernel(out, idx, n, ishape, si, total, xshape, sx, err,
                         INDIM: tl.constexpr, XNDIM: tl.constexpr, IDX64: tl.constexpr,
                         BLOCK: tl.constexpr):
    """out[i] = offset in x of its row-major element number idx[i] (negatives wrap)."""
    i, mask = _index(n, BLOCK, IDX64)
    v = tl.load(idx + _offset(i, ishape, si, INDIM, False), mask=mask, other=0).to(tl.int64)
    v = tl.where(v < 0, v + total, v)
    bad = mask & ((v < 0) | (v >= total))
    _record_error(err, bad, i)
    tl.store(out + i, _offset(v, xshape, sx, XNDIM, False), mask=mask & ~bad)


def take_offsets(out, index, x):
    """out[p] = offset in x of its row-major element number index[p] (IndexError if out of
    range)."""
    n = index.numel()
    if n == 0:
        return
    total = x.numel()
    ishape, (_, si) = collapse(index._shape, [_contig(index._shape), index._stride])
    xshape, (sx,) = collapse(x._shape, [x._stride])
    err = _error_slot(out._storage.device)
    _take_offsets_kernel[(cdiv(n, _block(n)),)](out, index, n, ishape, si, total, xshape,
                                                   sx, err, INDIM=len(ishape),
                                                   XNDIM=len(xshape),
                                                   IDX64=_idx64(n, ishape, [si]),
                                                   BLOCK=_block(n))
    key = _first_error(err)
    if key is not None:
        bad_index(STYLE_TAKE, "", _read_int(index, ishape, si, key), 0, total)


# ---- gather along a dim; divide_count (scatter_reduce's mean) -------------------------

@cached
@triton.jit
def _gather_kernel(out, src, idx, n, shape, so, ss, si, sd, size, err, NDIM: tl.constexpr,
                   IDX64: tl.constexpr, BLOCK: tl.constexpr):
    """out[e] = src[srcbase(e) + idx[e] * sd] for BLOCK positions e of the index shape."""
    i, mask = _index(n, BLOCK, IDX64)
    v = tl.load(idx + _offset(i, shape, si, NDIM, False), mask=mask, other=0).to(tl.int64)
    bad = mask & ((v < 0) | (v >= size))
    _record_error(err, bad, i)
    ok = mask & ~bad
    val = tl.load(src + (_offset(i, shape, ss, NDIM, False) + v * sd), mask=ok)
    tl.store(out + _offset(i, shape, so, NDIM, False), val, mask=ok)


def gather(out, out_strides, src, src_strides, index, index_strides, shape, dim, dim_stride,
           dim_size):
    """out[e] = src[e with index[e] at ``dim``] over index's shape (src_strides has 0 at
    dim; dim_stride is src's real stride there)."""
    _check_index_dtype("gather", index)
    n = alloc.numel(shape)
    if n == 0:
        return
    cshape, (so, ss, si) = collapse(tuple(shape), [tuple(out_strides), tuple(src_strides),
                                                   tuple(index_strides)])
    err = _error_slot(out._storage.device)
    _gather_kernel[(cdiv(n, _block(n)),)](out, src, index, n, cshape, so, ss, si,
                                             dim_stride, dim_size, err, NDIM=len(cshape),
                                             IDX64=_idx64(n, cshape, [so, ss, si]),
                                             BLOCK=_block(n))
    key = _first_error(err)
    if key is not None:
        bad_index(STYLE_RUNTIME, "", _read_int(index, cshape, si, key), dim, dim_size)


@cached
@triton.jit
def _divide_count_kernel(x, cnt, n, shape, sx, sc, NDIM: tl.constexpr, IDX64: tl.constexpr,
                         BLOCK: tl.constexpr):
    """x /= max(count, 1); integers divide with floor."""
    i, mask = _index(n, BLOCK, IDX64)
    xp = x + _offset(i, shape, sx, NDIM, False)
    c = tl.load(cnt + _offset(i, shape, sc, NDIM, False), mask=mask, other=1)
    c = tl.maximum(c, 1)
    a = tl.load(xp, mask=mask, other=0)
    if a.dtype.is_floating():
        a = _up(a)
        r = a / c.to(a.dtype)
    else:
        a = a.to(tl.int64)
        m = (a % c + c) % c   # floor modulo whatever the sign convention of %
        r = (a - m) // c
    tl.store(xp, _down(r, x.dtype.element_ty), mask=mask)


def divide_count(x, count, count_strides):
    """x /= max(count, 1) elementwise (scatter_reduce mean); integers divide with floor."""
    if x.dtype is _dtype.bool:
        raise NotImplementedError("\"scatter_gather_tensor_cuda_reduce_mean\" not implemented "
                                  "for 'Bool'")
    n = x.numel()
    if n == 0:
        return
    shape, (sx, sc) = collapse(x._shape, [x._stride, tuple(count_strides)])
    _divide_count_kernel[(cdiv(n, _block(n)),)](x, count, n, shape, sx, sc,
                                                   NDIM=len(shape),
                                                   IDX64=_idx64(n, shape, [sx, sc]),
                                                   BLOCK=_block(n))


# ---- compaction: nonzero, mask_count, masked_select -----------------------------------

@cached
@triton.jit
def _count_kernel(x, n, shape, sx, counts, NDIM: tl.constexpr, IDX64: tl.constexpr,
                  BLOCK: tl.constexpr):
    """counts[pid] = number of nonzero elements of x in this program's block."""
    i, mask = _index(n, BLOCK, IDX64)
    v = tl.load(x + _offset(i, shape, sx, NDIM, False), mask=mask, other=0)
    tl.store(counts + tl.program_id(0), tl.sum(((v != 0) & mask).to(tl.int32), axis=0))


@cached
@triton.jit
def _scan_kernel(counts, starts, nb, SB: tl.constexpr):
    """One program: starts[b] = counts[0] + ... + counts[b - 1] for b <= nb (int64)."""
    carry = tl.full([], 0, tl.int64)
    for b0 in range(0, nb, SB):
        j = b0 + tl.arange(0, SB)
        m = j < nb
        c = tl.load(counts + j, mask=m, other=0).to(tl.int64)
        tl.store(starts + j, carry + tl.cumsum(c, axis=0) - c, mask=m)
        carry += tl.sum(c, axis=0)
    tl.store(starts + nb, carry)


@cached
@triton.jit
def _compact_kernel(x, n, shape, sx, starts, out, val, sv, SELECT: tl.constexpr,
                    NDIM: tl.constexpr, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    """The nonzero elements of x in this block, in order, from starts[pid] on: their
    coordinates (out is n x NDIM int64) or, with SELECT, val's element there."""
    i, mask = _index(n, BLOCK, IDX64)
    v = tl.load(x + _offset(i, shape, sx, NDIM, False), mask=mask, other=0)
    f = ((v != 0) & mask).to(tl.int32)
    pos = tl.load(starts + tl.program_id(0)) + (tl.cumsum(f, axis=0) - f).to(tl.int64)
    keep = f != 0
    if SELECT:
        w = tl.load(val + _offset(i, shape, sv, NDIM, False), mask=keep)
        tl.store(out + pos, w, mask=keep)
    else:
        rem = i
        for d in tl.static_range(NDIM - 1, -1, -1):
            tl.store(out + (pos * NDIM + d), rem % shape[d], mask=keep)
            rem = rem // shape[d]


def _block_starts(x, shape, sx, n):
    """The exclusive scan of per-block nonzero counts of x: nb + 1 int64 values."""
    device = x._storage.device
    nb = cdiv(n, _block(n))
    counts = alloc.empty((nb,), _dtype.int32, device)
    starts = alloc.empty((nb + 1,), _dtype.int64, device)
    _count_kernel[(nb,)](x, n, shape, sx, counts, NDIM=len(shape),
                         IDX64=_idx64(n, shape, [sx]), BLOCK=_block(n))
    _scan_kernel[(1,)](counts, starts, nb, SB=_SCAN_BLOCK)
    return starts, nb


def _total(starts, nb):
    return Tensor._make(starts._storage, (), (), starts._offset + nb, starts.dtype).item()


def _count(x, shape, strides):
    n = alloc.numel(shape)
    if n == 0:
        return 0
    cshape, (st,) = collapse(tuple(shape), [tuple(strides)])
    starts, nb = _block_starts(x, cshape, st, n)
    return _total(starts, nb)


def _refuse_float8(op, x):
    """NotImplementedError for a float8 operand (its kernels compare values)."""
    if x.dtype.is_float8:
        raise _float8_ops.refuse(op, x.dtype, "cuda")


def nonzero_count(x):
    """The number of nonzero elements of x."""
    _refuse_float8("nonzero", x)
    return _count(x, x._shape, x._stride)


def nonzero(x, out):
    """Writes the coordinates of x's nonzero elements, row-major, into out (n x ndim int64)
    and returns n."""
    _refuse_float8("nonzero", x)
    n = x.numel()
    if n == 0:
        return 0
    shape, strides = (x._shape, x._stride) if x.dim() else ((1,), (1,))
    starts, nb = _block_starts(x, shape, strides, n)
    if x.dim():
        _compact_kernel[(nb,)](x, n, shape, strides, starts, out, x, strides, SELECT=False,
                               NDIM=len(shape), IDX64=_idx64(n, shape, [strides]),
                               BLOCK=_block(n))
    return _total(starts, nb)


def mask_count(mask, mask_strides, shape):
    """The number of True elements of a bool mask."""
    return _count(mask, shape, mask_strides)


def masked_select(out, x, x_strides, mask, mask_strides, shape):
    """out (1-d, contiguous, mask_count elements) = x where mask, row-major over shape."""
    n = alloc.numel(shape)
    if n == 0:
        return
    cshape, (sm, sx) = collapse(tuple(shape), [tuple(mask_strides), tuple(x_strides)])
    starts, nb = _block_starts(mask, cshape, sm, n)
    _compact_kernel[(nb,)](mask, n, cshape, sm, starts, out, x, sx, SELECT=True,
                           NDIM=len(cshape), IDX64=_idx64(n, cshape, [sm, sx]),
                           BLOCK=_block(n))


# ---- masked_fill, tril/triu -----------------------------------------------------------

@cached
@triton.jit(do_not_specialize=["value"])
def _masked_fill_kernel(x, mask_ptr, n, shape, sx, sm, value, IS_FLOAT: tl.constexpr,
                        NDIM: tl.constexpr, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    m = tl.load(mask_ptr + _offset(i, shape, sm, NDIM, False), mask=mask, other=0) != 0
    v = tl.zeros([BLOCK], tl.int32) + _scalar(value, IS_FLOAT)
    tl.store(x + _offset(i, shape, sx, NDIM, False), _down(v, x.dtype.element_ty),
             mask=mask & m)


def masked_fill(x, mask, mask_strides, value):
    """x[e] = value where mask[e] (mask_strides broadcast to x's shape)."""
    n = x.numel()
    if n == 0:
        return
    shape, (sx, sm) = collapse(x._shape, [x._stride, tuple(mask_strides)])
    _masked_fill_kernel[(cdiv(n, _block(n)),)](
        x, mask, n, shape, sx, sm, _scalar_arg(value, x.dtype),
        IS_FLOAT=x.dtype.is_floating_point, NDIM=len(shape),
        IDX64=_idx64(n, shape, [sx, sm]), BLOCK=_block(n))


@cached
@triton.jit
def _tri_kernel(out, src, n, shape, so, ss, k, R, C, UPPER: tl.constexpr, NDIM: tl.constexpr,
                IDX64: tl.constexpr, BLOCK: tl.constexpr):
    """out = src where col - row <= k (>= k for triu), else 0; the last two dims of shape
    are the matrix."""
    i, mask = _index(n, BLOCK, IDX64)
    col = i % C
    row = (i // C) % R
    if UPPER:
        keep = col - row >= k
    else:
        keep = col - row <= k
    v = tl.load(src + _offset(i, shape, ss, NDIM, False), mask=mask & keep, other=0)
    tl.store(out + _offset(i, shape, so, NDIM, False), v, mask=mask)


def tri(out, src, diagonal, upper):
    """out = tril(src, diagonal) (triu with ``upper``) over the last two dims."""
    _refuse_float8("triu" if upper else "tril", src)
    n = out.numel()
    if n == 0:
        return
    R, C = out._shape[-2:]
    batch, (bo, bs) = collapse(out._shape[:-2], [out._stride[:-2], src._stride[:-2]])
    shape = tuple(batch) + (R, C)
    so = tuple(bo) + tuple(out._stride[-2:])
    ss = tuple(bs) + tuple(src._stride[-2:])
    _tri_kernel[(cdiv(n, _block(n)),)](out, src, n, shape, so, ss, int(diagonal), R, C,
                                          UPPER=bool(upper), NDIM=len(shape),
                                          IDX64=_idx64(n, shape, [so, ss]), BLOCK=_block(n))


def _clamped_sum(m, a, c):
    """sum_{j < m} clamp(j + a, 0, c) (exact integers)."""
    j0 = min(max(-a, 0), m)
    j1 = min(max(c - a, 0), m)
    return (j1 - j0) * a + (j0 + j1 - 1) * (j1 - j0) // 2 + (m - j1) * c


def tri_indices_count(row, col, offset, upper):
    """The number of elements of the lower (upper) triangle of a row x col matrix."""
    if upper:
        return row * col - _clamped_sum(row, offset, col)
    return _clamped_sum(row, offset + 1, col)


@triton.jit
def _clamped_sum_dev(m, a, c):
    j0 = tl.minimum(tl.maximum(-a, 0), m)
    j1 = tl.minimum(tl.maximum(c - a, 0), m)
    return (j1 - j0) * a + ((j0 + j1 - 1) * (j1 - j0)) // 2 + (m - j1) * c


@cached
@triton.jit(do_not_specialize=["cols", "offset"])
def _tri_indices_kernel(out, rows, cols, offset, n, UPPER: tl.constexpr, BR: tl.constexpr,
                        BC: tl.constexpr):
    """A tile of BR rows by BC columns: each kept (i, j) goes to its row-major rank."""
    pid = tl.program_id(0)
    n_ct = tl.cdiv(cols, BC)
    i = (pid // n_ct).to(tl.int64) * BR + tl.arange(0, BR).to(tl.int64)
    j = (pid % n_ct).to(tl.int64) * BC + tl.arange(0, BC).to(tl.int64)
    off = offset.to(tl.int64)
    c = cols.to(tl.int64)
    if UPPER:
        lo = tl.minimum(tl.maximum(i + off, 0), c)
        hi = tl.zeros_like(i) + c
        start = i * c - _clamped_sum_dev(i, off, c)
    else:
        lo = tl.zeros_like(i)
        hi = tl.minimum(tl.maximum(i + off + 1, 0), c)
        start = _clamped_sum_dev(i, off + 1, c)
    keep = (i < rows)[:, None] & (j[None, :] >= lo[:, None]) & (j[None, :] < hi[:, None])
    pos = start[:, None] + j[None, :] - lo[:, None]
    tl.store(out + pos, tl.zeros_like(pos) + i[:, None], mask=keep)
    tl.store(out + (n + pos), tl.zeros_like(pos) + j[None, :], mask=keep)


def tri_indices(out, row, col, offset, upper):
    """Writes the (2, n) int64 coordinates of the triangle, row-major, into out."""
    n = tri_indices_count(row, col, offset, upper)
    if n == 0:
        return
    bc = _pow2(col, _block())
    br = _pow2(row, max(1, _block() // bc))
    grid = (cdiv(row, br) * cdiv(col, bc),)
    _tri_indices_kernel[grid](out, row, col, offset, n, UPPER=bool(upper), BR=br, BC=bc)
