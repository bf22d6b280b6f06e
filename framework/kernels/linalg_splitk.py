"""The GEMM's epilogue and its split-K reduction (framework/kernels/linalg.py's ``matmul``).

``_epilogue`` stores ``beta * C + alpha * acc`` of a tile, rounded as autocast's casts
round; the tile kernel calls it, and so does ``_splitk_reduce_kernel``, which sums the
float32/float64/int parts that split-K programs wrote to a workspace (and the parts of a
linear layer's row sums after them) into out.
"""
import triton
import triton.language as tl

from .launcher import cached, cdiv
from .pointwise import BLOCK, _down, _index, _offset, _up, collapse


@triton.jit
def _epilogue(acc, o_ptrs, c_ptrs, mask, K, alpha, beta, ACC: tl.constexpr,
              ROUND_T: tl.constexpr, BETA_ZERO: tl.constexpr):
    """Stores beta * C + alpha * acc at o_ptrs, computed in the accumulator's type (int64
    for integers), C read at c_ptrs (o_ptrs itself without a separate C); C is not read when
    BETA_ZERO, and the product term is 0 when K == 0. C and the result are rounded to
    ROUND_T where they are wider (as the casts of autocast round them)."""
    if ACC == tl.float32 or ACC == tl.float64:
        al = tl.cast(alpha, tl.int64).to(tl.float64, bitcast=True).to(ACC)
        r = tl.where(K > 0, acc * al, 0.0)
        if not BETA_ZERO:
            be = tl.cast(beta, tl.int64).to(tl.float64, bitcast=True).to(ACC)
            cv = tl.load(c_ptrs, mask=mask, other=0)
            if cv.dtype != ROUND_T:
                cv = _down(cv, ROUND_T)
            r = be * _up(cv).to(ACC) + r
        _round_store(o_ptrs, r, mask, ROUND_T)
    else:
        r = tl.where(K > 0, acc.to(tl.int64) * tl.cast(alpha, tl.int64), 0)
        if not BETA_ZERO:
            r = tl.cast(beta, tl.int64) * tl.load(c_ptrs, mask=mask, other=0).to(tl.int64) + r
        tl.store(o_ptrs, _down(r, o_ptrs.dtype.element_ty), mask=mask)


@triton.jit
def _round_store(ptrs, r, mask, ROUND_T: tl.constexpr):
    """Stores float values r at ptrs, rounded to ROUND_T first where the target is wider
    (the product's dtype, as the casts of autocast round it)."""
    if ptrs.dtype.element_ty != ROUND_T:
        r = _up(_down(r, ROUND_T))
    tl.store(ptrs, _down(r, ptrs.dtype.element_ty), mask=mask)


@cached
@triton.jit
def _splitk_reduce_kernel(out, c, ws, n, splits, shape, so, sc, alpha, beta, sums, sums_n,
                          ACC: tl.constexpr, DOT_T: tl.constexpr, BETA_ZERO: tl.constexpr,
                          HAS_C: tl.constexpr, ROW_SUMS: tl.constexpr,
                          NDIM: tl.constexpr, CONTIG: tl.constexpr, C_CONTIG: tl.constexpr,
                          IDX64: tl.constexpr, BLOCK: tl.constexpr):
    """out = beta * C + alpha * (the sum of the ``splits`` parts of the workspace), C being
    c (strides sc) when HAS_C, else out, for BLOCK of the n elements of out (row-major over
    its (shape, so)); part s of element i is ws[s * n + i]. ROW_SUMS: the programs past
    out's also sum the parts of the tile kernel's row sums, part s of row j at
    ws[splits * n + s * sums_n + j], into the contiguous ``sums``."""
    # without ROW_SUMS this stays False, but Triton still compiles the branch below: its
    # types must hold for every ACC (float64 parts summed into a float32 did not compile)
    sum_rows = False
    if ROW_SUMS:
        sum_rows = tl.program_id(0) >= tl.cdiv(n, BLOCK)
    if sum_rows:
        j = (tl.program_id(0) - tl.cdiv(n, BLOCK)) * BLOCK + tl.arange(0, BLOCK)
        part = ws + splits.to(tl.int64) * n + j
        total = tl.zeros([BLOCK], dtype=ACC)   # float32 wherever there are row sums (dots)
        for _ in range(0, splits):
            total += tl.load(part, mask=j < sums_n, other=0)
            part += sums_n
        _round_store(sums + j, total, j < sums_n, DOT_T)
    else:
        i, mask = _index(n, BLOCK, IDX64)
        ws_ptrs = ws + i
        acc = tl.zeros([BLOCK], dtype=ACC)
        for _ in range(0, splits):
            acc += tl.load(ws_ptrs, mask=mask, other=0)
            ws_ptrs += n
        o_ptrs = out + _offset(i, shape, so, NDIM, CONTIG)
        if HAS_C:
            c_ptrs = c + _offset(i, shape, sc, NDIM, C_CONTIG)
        else:
            c_ptrs = o_ptrs
        _epilogue(acc, o_ptrs, c_ptrs, mask, 1, alpha, beta, ACC, DOT_T, BETA_ZERO)


def _splitk_reduce(out, shape, ws, splits, alpha, beta, acc, c, c_stride, dot_t,
                   sums=None):
    """out = beta * C + alpha * the sum of the split-K parts in ws (row-major over out's
    shape, one part after another); C is c (strides c_stride over shape), or out if None.
    ``sums``: the row sums too, their parts after out's in ws."""
    sums_n = 0 if sums is None else sums._shape[0]
    n = (ws._shape[0] - splits * sums_n) // splits
    has_c = c is not None and beta != 0
    if has_c:  # dims merge only where they merge in both
        oshape, (so, sc) = collapse(shape, [out._stride, c_stride])
    else:
        oshape, (so,) = collapse(shape, [out._stride])
        sc = so
    extent = max(sum((size - 1) * st for size, st in zip(oshape, s)) for s in (so, sc)) + 1
    idx64 = max(n * splits, extent) + BLOCK >= 2**31
    contig = len(oshape) == 1 and so[0] == 1
    _splitk_reduce_kernel[(cdiv(n, BLOCK) + cdiv(sums_n, BLOCK),)](
        out, c if has_c else out, ws, n, splits, oshape, so, sc, alpha, beta,
        out if sums is None else sums, sums_n,
        ACC=acc, DOT_T=dot_t, BETA_ZERO=beta == 0, HAS_C=has_c,
        ROW_SUMS=sums is not None, NDIM=len(oshape),
        CONTIG=contig, C_CONTIG=has_c and len(oshape) == 1 and sc[0] == 1, IDX64=idx64,
        BLOCK=BLOCK)
