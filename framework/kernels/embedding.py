"""Embedding kernels (Triton): the cuda side of native/embedding.cpp, with the same
launchers and semantics. ``weight`` is a contiguous (num_weights, D) table of any floating
dtype, ``indices`` a contiguous (n,) int32 or int64 tensor.

Forward: a program copies a [BN, BD] tile of output rows (BN indices, BD columns). Every
index is bounds-checked on the device; a bad one is never read through. Each block of BN
indices writes whether it met one into its own flag (so the flags need no fill), and the
launcher reads the flags back and raises PyTorch's IndexError ("index out of range in
self") at the call, as the CPU does.

Backward (embedding_dense_backward): a sorted segment reduction, deterministic (no
atomics, the same sums in the same order on every run):
  1. the indices are sorted stably, giving the sorted values s and the permutation perm
     (original positions, ascending within equal values): up to _RANK_MAX indices by one
     program that counts, for each index, those that go before it (its rank), else by the
     sort family's sort;
  2. offsets[w] = lower_bound(s, w) for w in [0, num_weights], by a binary search per
     lane; row w's gradient comes from the positions perm[offsets[w]:offsets[w + 1]], and
     their number is its count for scale_grad_by_freq. One more slot,
     offsets[num_weights + 1], says whether an index lies outside [0, num_weights)
     (s[0] < 0 or s[n - 1] >= num_weights): the launcher reads it back and raises;
  3. a program per (weight row, BD columns) sums its segment's grad_output rows, BN at a
     time, in float32 (float64 for float64), scales by 1 / count if asked, and writes the
     row once in the output dtype: rows never indexed and the padding row get zeros, so
     the output needs no separate fill, and 16-bit gradients need no float32 buffer.
A row's program walks its whole segment, so a very frequent index serializes its sum in
one program (the padding row's program reads nothing); rows are independent, so the rest
run in parallel.
"""
import triton
import triton.language as tl

from .. import _dtype
from .._ops import alloc
from .sort import sort_rows
from .index_common import _pow2
from .launcher import cached, cdiv

_TILE = 4096      # elements of a [BN, BD] tile on a GPU
_RANK_MAX = 256   # indices sorted by _rank_kernel (one launch) rather than the sort family


_simulated = []


def _tile():
    """Elements per tile: 16 times more under Triton's interpreter, whose cost is per
    program and per op, hardly per element."""
    if not _simulated:
        from .. import cuda
        _simulated.append(cuda.is_simulated())
    return _TILE * 16 if _simulated[0] else _TILE


def _blocks(n, D):
    """(BN, BD): a power-of-two tile of at most _tile() elements, BD up to D."""
    bd = _pow2(D, min(1024, _tile()))
    bn = _pow2(n, max(1, _tile() // bd))
    return bn, bd


# ---- forward --------------------------------------------------------------------------

@cached
@triton.jit
def _forward_kernel(weight, idx, out, flags, n, D, num_weights,
                    BN: tl.constexpr, BD: tl.constexpr):
    """out[i, d] = weight[idx[i], d] for BN positions i and BD columns d; the first column
    block writes flags[block of i] = whether one of its indices is outside
    [0, num_weights)."""
    i = tl.program_id(0).to(tl.int64) * BN + tl.arange(0, BN).to(tl.int64)
    d = tl.program_id(1).to(tl.int64) * BD + tl.arange(0, BD).to(tl.int64)
    im = i < n
    dm = d < D
    v = tl.load(idx + i, mask=im, other=0).to(tl.int64)
    bad = im & ((v < 0) | (v >= num_weights))
    nbad = tl.sum(bad.to(tl.int32), axis=0)
    tl.store(flags + tl.program_id(0), (nbad > 0).to(tl.int8), mask=tl.program_id(1) == 0)
    ok = im & (v >= 0) & (v < num_weights)
    mask = ok[:, None] & dm[None, :]
    row = tl.load(weight + v[:, None] * D + d[None, :], mask=mask)
    tl.store(out + i[:, None] * D + d[None, :], row, mask=im[:, None] & dm[None, :])


def embedding_forward(weight, indices, out, n, D, num_weights):
    """out (n, D) = rows of weight (num_weights, D) at indices (n,); raises IndexError
    ("index out of range in self") for an index outside [0, num_weights), before returning
    (the output is then unspecified)."""
    if n == 0:
        return
    bn, bd = _blocks(n, D)
    grid = (cdiv(n, bn), max(1, cdiv(D, bd)))
    flags = alloc.empty((grid[0],), _dtype.int8, out._storage.device)
    _forward_kernel[grid](weight, indices, out, flags, n, D, num_weights, BN=bn, BD=bd)
    if flags._host_array().any():
        raise IndexError("index out of range in self")


# ---- backward -------------------------------------------------------------------------

@cached
@triton.jit
def _rank_kernel(idx, s, perm, n, BN: tl.constexpr, BJ: tl.constexpr):
    """A stable sort of idx (n <= BN) in one program: index i goes to position
    #{j : idx[j] < idx[i], or idx[j] == idx[i] and j < i}; s = sorted values, perm = the
    positions they came from."""
    i = tl.arange(0, BN).to(tl.int64)
    im = i < n
    vi = tl.load(idx + i, mask=im, other=0).to(tl.int64)
    rank = tl.zeros([BN], tl.int32)
    for j0 in range(0, n, BJ):
        j = j0 + tl.arange(0, BJ).to(tl.int64)
        vj = tl.load(idx + j, mask=j < n, other=0).to(tl.int64)
        before = (vj[None, :] < vi[:, None]) | ((vj[None, :] == vi[:, None]) &
                                                (j[None, :] < i[:, None]))
        rank += tl.sum((before & (j < n)[None, :]).to(tl.int32), axis=1)
    tl.store(s + rank, vi, mask=im)
    tl.store(perm + rank, i, mask=im)


@cached
@triton.jit
def _offsets_kernel(s, offsets, n, num_weights, iters, BLOCK: tl.constexpr):
    """offsets[w] = the first position of sorted s (n,) holding a value >= w, for BLOCK
    lanes w of [0, num_weights]; offsets[num_weights + 1] = 1 if a value of s lies outside
    [0, num_weights), else 0."""
    w = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    wm = w <= num_weights
    lo = tl.zeros([BLOCK], tl.int64)
    hi = tl.zeros([BLOCK], tl.int64) + n
    for _ in range(iters):
        active = lo < hi
        mid = (lo + hi) // 2
        v = tl.load(s + mid, mask=wm & active, other=0).to(tl.int64)
        right = active & (v < w)
        lo = tl.where(right, mid + 1, lo)
        hi = tl.where(active & ~right, mid, hi)
    tl.store(offsets + w, lo, mask=wm)
    first = tl.load(s, mask=n > 0, other=0).to(tl.int64)
    last = tl.load(s + n - 1, mask=n > 0, other=0).to(tl.int64)
    bad = ((first < 0) | (last >= num_weights)).to(tl.int64)
    tl.store(offsets + num_weights + 1, bad, mask=tl.program_id(0) == 0)


@cached
@triton.jit
def _segment_sum_kernel(grad, perm, offsets, gw, D, padding_idx,
                        SCALE: tl.constexpr, ACC: tl.constexpr,
                        BN: tl.constexpr, BD: tl.constexpr):
    """gw[w, d] = sum of grad[perm[p], d] over p in [offsets[w], offsets[w + 1]) for one
    row w and BD columns d, in ACC, divided by the count with SCALE, 0 for padding_idx."""
    w = tl.program_id(0).to(tl.int64)
    d = tl.program_id(1).to(tl.int64) * BD + tl.arange(0, BD).to(tl.int64)
    dm = d < D
    start = tl.load(offsets + w)
    end = tl.load(offsets + w + 1)
    end = tl.where(w == padding_idx, start, end)
    acc = tl.zeros([BN, BD], ACC)
    for p0 in range(start, end, BN):
        p = p0 + tl.arange(0, BN).to(tl.int64)
        pm = p < end
        src = tl.load(perm + p, mask=pm, other=0)
        acc += tl.load(grad + src[:, None] * D + d[None, :], mask=pm[:, None] & dm[None, :],
                       other=0).to(ACC)
    total = tl.sum(acc, axis=0)
    if SCALE:
        total = total / tl.maximum(end - start, 1).to(ACC)
    tl.store(gw + w * D + d, total.to(gw.dtype.element_ty), mask=dm)


def embedding_backward(grad, indices, grad_weight, n, D, num_weights, padding_idx,
                       scale_grad_by_freq):
    """grad_weight (num_weights, D) = the sum of the rows of grad (n, D) at each index
    (divided by the index's count in indices with scale_grad_by_freq; row padding_idx,
    if in [0, num_weights), zero). grad and grad_weight share one floating dtype; the sums
    are in float32 (float64 for float64), in a fixed order. Raises IndexError for an index
    outside [0, num_weights)."""
    if num_weights == 0:
        if n:
            raise IndexError("index out of range in self")
        return
    dev = grad_weight._storage.device
    s = alloc.empty((max(n, 1),), _dtype.int64, dev)
    perm = alloc.empty((max(n, 1),), _dtype.int64, dev)
    if 0 < n <= _RANK_MAX:
        bn = _pow2(n, _RANK_MAX)
        _rank_kernel[(1,)](indices, s, perm, n, BN=bn, BJ=min(bn, 32))
    elif n:
        sort_rows((), n, False, indices, ((), 1), s, ((), 1), perm, ((), 1))
    offsets = alloc.empty((num_weights + 2,), _dtype.int64, dev)
    blk = _pow2(num_weights + 1, 1024)
    _offsets_kernel[(cdiv(num_weights + 1, blk),)](
        s, offsets, n, num_weights, max(1, n.bit_length()), BLOCK=blk)
    if offsets[num_weights + 1].item():
        raise IndexError("index out of range in self")
    if D == 0:
        return
    bd = _pow2(D, 1024)
    # a short tile of rows: most segments hold one or a few indices
    bn = _pow2(n, max(1, min(16, _tile() // bd)))
    acc = tl.float64 if grad.dtype is _dtype.float64 else tl.float32
    _segment_sum_kernel[(num_weights, cdiv(D, bd))](
        grad, perm, offsets, grad_weight, D, padding_idx, SCALE=bool(scale_grad_by_freq),
        ACC=acc, BN=bn, BD=bd)
