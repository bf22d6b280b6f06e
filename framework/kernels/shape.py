"""Triton shape family (the cuda backend of framework/_cpu/shape.py; see native/shape.cpp):
repeat_interleave with a tensor of counts. Every other shape op is strided copies.

One program scans the counts into run starts (starts[i] = counts[0] + ... +
counts[i - 1], int64, with the number of negative counts after them); the write kernels
then find the run of each output position by a binary search over the starts, so the work
is spread evenly over the output whatever the counts are."""
import triton
import triton.language as tl

from .. import _dtype
from .._ops import alloc
from .._tensor import Tensor
from .index_common import _block, _pow2
from .pointwise import type_name
from .launcher import cached, cdiv, next_pow2

_SCAN_BLOCK = 1024


@cached
@triton.jit
def _starts_kernel(counts, n, stride, starts, SB: tl.constexpr):
    """One program: starts[i] for i <= n, and starts[n + 1] = number of negative counts."""
    carry = tl.full([], 0, tl.int64)
    neg = tl.full([], 0, tl.int64)
    for b0 in range(0, n, SB):
        j = b0 + tl.arange(0, SB).to(tl.int64)
        m = j < n
        c = tl.load(counts + j * stride, mask=m, other=0).to(tl.int64)
        tl.store(starts + j, carry + tl.cumsum(c, axis=0) - c, mask=m)
        carry += tl.sum(c, axis=0)
        neg += tl.sum((c < 0).to(tl.int64), axis=0)
    tl.store(starts + n, carry)
    tl.store(starts + n + 1, neg)


@triton.jit
def _run_of(starts, n, t, steps):
    """For each output position t (< total), the run i with starts[i] <= t < starts[i+1]:
    the last i < n with starts[i] <= t (runs of length 0 are skipped)."""
    lo = tl.zeros_like(t)
    hi = tl.zeros_like(t) + n
    for _ in range(steps):
        live = hi - lo > 1
        mid = lo + (hi - lo) // 2
        s = tl.load(starts + mid, mask=live, other=0)
        go = s <= t
        lo = tl.where(live & go, mid, lo)
        hi = tl.where(live & ~go, mid, hi)
    return lo


def _check(counts):
    if counts.dtype not in (_dtype.int32, _dtype.int64):
        raise NotImplementedError(f"\"repeat_interleave_cuda\" not implemented for "
                                  f"'{type_name(counts.dtype.name)}'")


def _starts(counts):
    """(starts: n + 2 int64 values, n, total); raises if a count is negative."""
    _check(counts)
    n = counts._shape[0]
    starts = alloc.empty((n + 2,), _dtype.int64, counts._storage.device)
    _starts_kernel[(1,)](counts, n, counts._stride[0], starts, SB=_SCAN_BLOCK)
    total, neg = Tensor._make(starts._storage, (2,), (1,), starts._offset + n,
                              starts.dtype).tolist()
    if neg:
        raise RuntimeError("repeats can not be negative")
    return starts, n, total


def _steps(n):
    return max(1, n).bit_length()


def repeat_interleave_total(counts):
    """The sum of a 1-d int32/int64 tensor of counts (raises if one is negative)."""
    return _starts(counts)[2]


@cached
@triton.jit
def _index_kernel(out, starts, n, total, steps, BLOCK: tl.constexpr):
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = t < total
    i = _run_of(starts, n, t, steps)
    tl.store(out + t, i.to(out.dtype.element_ty), mask=mask)


def repeat_interleave_index(out, counts):
    """out = [0] * counts[0] + [1] * counts[1] + ..., in the counts' dtype."""
    starts, n, total = _starts(counts)
    if total == 0:
        return
    _index_kernel[(cdiv(total, _block(total)),)](out, starts, n, total, _steps(n),
                                                     BLOCK=_block(total))


@cached
@triton.jit
def _copy_kernel(out, src, starts, n, total, rows, inner, so, sn, si, steps, BR: tl.constexpr,
                 BK: tl.constexpr):
    """A tile of BR output rows (outer, total flattened) by BK inner elements."""
    pid = tl.program_id(0)
    n_kt = tl.cdiv(inner, BK)
    r = (pid // n_kt).to(tl.int64) * BR + tl.arange(0, BR).to(tl.int64)
    k = (pid % n_kt).to(tl.int64) * BK + tl.arange(0, BK).to(tl.int64)
    rmask = r < rows
    o = r // total
    t = r % total
    i = _run_of(starts, n, t, steps)
    m = rmask[:, None] & (k < inner)[None, :]
    v = tl.load(src + ((o * so + i * sn)[:, None] + k[None, :] * si), mask=m)
    tl.store(out + (r[:, None] * inner + k[None, :]), v, mask=m)


def repeat_interleave_copy(out, src, counts):
    """``out`` (outer, total, inner), contiguous: slice i of ``src`` (outer, n, inner),
    any strides, written counts[i] times in a row."""
    outer, n, inner = src._shape
    so, sn, si = src._stride
    starts, nc, total = _starts(counts)
    rows = outer * total
    if rows == 0 or inner == 0:
        return
    bk = min(_block(), next_pow2(inner))
    br = _pow2(rows, max(1, _block() // bk))
    grid = (cdiv(rows, br) * cdiv(inner, bk),)
    _copy_kernel[grid](out, src, starts, nc, total, rows, inner, so, sn, si, _steps(nc),
                       BR=br, BK=bk)
