"""Triton linalg family (the cuda backend of framework/_cpu/linalg.py): batched strided GEMM.

``matmul(out, a, a_stride, b, b_stride, beta, alpha, c, c_stride)`` computes, for every
batch index, ``out[..., M, N] = beta * C + alpha * a[..., M, K] @ b[..., K, N]``, where C is
``c`` (read in the epilogue: addmm's bias costs no copy launch) or else out itself, every
operand with arbitrary (non-negative) strides and the batch dims of a, b and c broadcast
(stride 0).

One kernel, ``_mm_kernel``: each program computes one BLOCK_M x BLOCK_N tile of the output
of one matrix of the batch. ``program_id(0)`` walks the tiles in groups of GROUP_M rows of
tiles (neighbouring programs share panels of a and b in L2), ``program_id(2)`` is the
batch index (batch dims are merged on the host where the strides allow, and the rest are
unravelled in the kernel). The K loop loads a BLOCK_M x BLOCK_K panel of a and a
BLOCK_K x BLOCK_N panel of b per step, masked along each dim that is not a multiple of its
tile (EVEN_M/N/K), so any M, N, K works (tiles are at least 16 wide for tl.dot). Strides
equal to 1 are specialised by Triton's JIT, so row-major and column-major operands both
get contiguous (vectorised) loads along their unit-stride axis.

Split-K: when the output has too few tiles to fill the GPU and K is long (dot, mv,
small-batch linear layers), ``program_id(1)`` splits K into up to 32 parts, each written
to a float32/float64/int workspace, and ``_splitk_reduce_kernel`` sums them into out with
the alpha/beta epilogue (both in linalg_splitk.py).

Products by dtype (MODE):
- float16/bfloat16: ``tl.dot`` with float32 accumulation, rounded once at the store.
- float32: ``tl.dot`` in IEEE float32 (``input_precision="ieee"``) by default, or TF32
  when ``framework.get_float32_matmul_precision()`` is "high" or "medium"
  (``framework.backends.cuda.matmul.allow_tf32 = True``), as PyTorch does.
- float64 and integers: a broadcast multiply and ``tl.sum`` over each K chunk (no tensor
  cores), accumulating in float64, in int64 for int64 and in int32 for the narrower
  integers. Integer products and sums wrap around like the CPU's: only the low bits of
  the output type survive, and those do not depend on the accumulator's width.
The epilogue computes ``beta * C + alpha * acc`` in the accumulator type; with beta == 0
C is not read (NaNs in it do not leak), and with K == 0 the product term is 0.

Row sums (``row_sums=``, ROW_SUMS): a single product can also give the sums over K of a's
rows, as dotted, rounded like the result: a linear layer's weight gradient dY^T @ X brings
its bias gradient, the column sums of dY, without a reduction launch. Only the first column
of tiles sums (its own copy of the K loop); split-K parts go to the workspace after the
product's and the split-K kernel's extra programs add them up.

On a GPU the tile shape of the tensor-core path is autotuned per (M, N, K, batch, dtype,
layout, precision) with timings from framework.cuda.Event; under the interpreter
(``framework.cuda.is_simulated()``) one small config is used, and bfloat16 operands are
dotted as float32 (exact; the interpreter's tl.dot multiplies their raw bits). Every config
compiles for sm_90a with Triton 3.9 (wgmma on the tensor-core path) without register spills,
except four TF32 ones with column-major operands, masks and beta (a few hundred bytes).

Not yet here: TMA loads, persistent and warp-specialised kernels; tensor-core float64.
"""
import struct

import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner, Heuristics

from .. import _dtype, _matmul_precision, cuda
from .._ops import alloc
from .._tensor import Tensor
from .pointwise import _down, _up, collapse
from .launcher import cached, cdiv
from .linalg_splitk import _epilogue, _round_store, _splitk_reduce
# _SMEM_LIMIT and the tuning helpers are read here by the tests and fused_linear.py
from .linalg_tuning import (  # noqa: F401
    _DOT_CONFIGS, _FMA_CONFIG, _SIM_DOT_CONFIG, _SIM_FMA_CONFIG, _SMEM_LIMIT, _SMS, _do_bench,
    _prune)

MAX_BATCH_DIMS = 8
_GRID_Z = 65535  # the CUDA grid's limit on its third dim: bigger batches launch in chunks
_INT32_MAX = 2**31 - 1
_MAX_TILE = 256  # largest tile dim of any config: masked lanes may compute offsets this far
_SPLIT_MIN_K = 2048  # split-K: products with fewer 128x128 tiles than half the SMs and at
_SPLIT_CHUNK = 1024  # least this K; every split keeps at least _SPLIT_CHUNK of K
_MAX_SPLITS = 32
_ACC_DTYPE = {"float32": tl.float32, "float64": tl.float64, "int32": tl.int32,
              "int64": tl.int64}

_TL_DTYPE = {name: getattr(tl, name) for name in (
    "float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64")}
MODE_DOT = 0  # tl.dot: float16, bfloat16, float32
MODE_FMA = 1  # multiply + sum: float64, integers

_INTEGER = ("uint8", "int8", "int16", "int32", "int64")


@triton.jit
def _batch_offsets(bi, bshape, bso, bsa, bsb, bsc, NB: tl.constexpr):
    """Element offsets (int64) of batch index bi in out, a, b and c."""
    off_o = bi * 0
    off_a = bi * 0
    off_b = bi * 0
    off_c = bi * 0
    if NB > 0:
        rem = bi
        for d in tl.static_range(NB - 1, 0, -1):
            i = rem % bshape[d]
            rem = rem // bshape[d]
            off_o += i * bso[d]
            off_a += i * bsa[d]
            off_b += i * bsb[d]
            off_c += i * bsc[d]
        off_o += rem * bso[0]
        off_a += rem * bsa[0]
        off_b += rem * bsb[0]
        off_c += rem * bsc[0]
    return off_o, off_a, off_b, off_c


@triton.jit
def _load(ptrs, rows, cols, MASK_ROWS: tl.constexpr, MASK_COLS: tl.constexpr):
    """A 2-d tile, masked (with zeros) only along the dims that need it."""
    if MASK_ROWS and MASK_COLS:
        x = tl.load(ptrs, mask=rows[:, None] & cols[None, :], other=0)
    elif MASK_ROWS:
        x = tl.load(ptrs, mask=rows[:, None], other=0)
    elif MASK_COLS:
        x = tl.load(ptrs, mask=cols[None, :], other=0)
    else:
        x = tl.load(ptrs)
    return x


@triton.jit
def _tile_ids(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program's output tile, GROUP_M tile rows at a time so that
    programs running together share operand tiles in L2."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_n
    first_m = (pid // in_group) * GROUP_M
    group_m = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (pid % in_group) % group_m, (pid % in_group) // group_m


@triton.jit
def _tile_operands(a, b, pid_m, pid_n, M, N, sam, sak, sbk, sbn, IDX64: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """The row and column offsets of tile (pid_m, pid_n), their masks, the pointers of the
    first K tile of a (M, K) and b (K, N) (element strides sam, sak / sbk, sbn), the K
    offsets, and each operand's step per K tile (int64 offsets when IDX64)."""
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if IDX64:
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
        step_a = tl.cast(sak, tl.int64) * BLOCK_K
        step_b = tl.cast(sbk, tl.int64) * BLOCK_K
    else:
        step_a = sak * BLOCK_K
        step_b = sbk * BLOCK_K
    a_ptrs = a + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    return offs_m, offs_n, offs_m < M, offs_n < N, offs_k, a_ptrs, b_ptrs, step_a, step_b


@triton.jit
def _mm_loop(a_ptrs, b_ptrs, mask_m, mask_n, offs_k, K, step_a, step_b,
             MODE: tl.constexpr, PRECISION: tl.constexpr, ACC: tl.constexpr,
             DOT_T: tl.constexpr, UPCAST: tl.constexpr, EVEN_M: tl.constexpr,
             EVEN_N: tl.constexpr, EVEN_K: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ROW_SUMS: tl.constexpr):
    """The (BLOCK_M, BLOCK_N) accumulator of a @ b over K, walking a_ptrs (BLOCK_M, BLOCK_K)
    and b_ptrs (BLOCK_K, BLOCK_N) by step_a / step_b per K tile: tl.dot (MODE_DOT) of the
    tiles rounded to DOT_T where they are wider (autocast's casts, done on load), or
    multiply-and-sum in ACC (MODE_FMA, float64 and integers); and the float32 sums over K
    of the rows of a (as dotted) when ROW_SUMS (MODE_DOT), else zeros."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    sums = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        mask_k = offs_k < K - kk * BLOCK_K
        av = _load(a_ptrs, mask_m, mask_k, not EVEN_M, not EVEN_K)
        bv = _load(b_ptrs, mask_k, mask_n, not EVEN_K, not EVEN_N)
        if MODE == 0:
            if av.dtype != DOT_T:
                av = _down(av, DOT_T)
            if bv.dtype != DOT_T:
                bv = _down(bv, DOT_T)
            if UPCAST:
                av = av.to(tl.float32)
                bv = bv.to(tl.float32)
            acc = tl.dot(av, bv, acc, input_precision=PRECISION, out_dtype=acc.dtype)
            if ROW_SUMS:
                sums += tl.sum(_up(av).to(tl.float32), axis=1)
        else:
            prod = av.to(ACC)[:, :, None] * bv.to(ACC)[None, :, :]
            acc += tl.sum(prod, axis=1).to(ACC)
        a_ptrs += step_a
        b_ptrs += step_b
    return acc, sums


@triton.jit(do_not_specialize=["nbatch", "layout"])
def _mm_kernel(out, a, b, c, sums, M, N, K, som, son, sam, sak, sbk, sbn, scm, scn,
               bshape, bso, bsa, bsb, bsc, b0, ksplit, split_stride, sums_stride, alpha, beta,
               nbatch, layout, MODE: tl.constexpr, PRECISION: tl.constexpr,
               ACC: tl.constexpr, DOT_T: tl.constexpr, ROUND_T: tl.constexpr,
               BETA_ZERO: tl.constexpr, HAS_C: tl.constexpr, ROW_SUMS: tl.constexpr,
               NB: tl.constexpr,
               IDX64: tl.constexpr, UPCAST: tl.constexpr, EVEN_M: tl.constexpr,
               EVEN_N: tl.constexpr, EVEN_K: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """One BLOCK_M x BLOCK_N tile of out[batch b0 + program_id(2)] = beta * C + alpha * a @ b,
    C being c when HAS_C, else out.

    out, a, b, c: pointers to element (0, 0) of the first matrix. M, N, K: matrix sizes.
    som, son / sam, sak / sbk, sbn / scm, scn: element strides of the matrix dims of out / a
    / b / c. bshape, bso, bsa, bsb, bsc: the (merged) batch shape and each operand's batch
    strides; NB of them are used (0: a single matrix). Split-K: program_id(1) multiplies
    the K range [program_id(1) * ksplit, +ksplit) into out + program_id(1) * split_stride
    (a float32, float64 or integer workspace; _splitk_reduce_kernel sums the parts);
    without a split, ksplit == K and there is one. alpha, beta: int64, the bits of a
    float64 for float dtypes, the values for integers. nbatch, layout: only keys of the
    autotuner. ACC: the accumulator's dtype; PRECISION: tl.dot's input precision
    (MODE_DOT). DOT_T: the product's dtype, to which the operands are rounded where they are
    wider (a float32 weight under autocast); ROUND_T: the same for C and the result (out's
    own dtype unless the product is narrower; the workspace's for split-K parts). UPCAST: dot the operands as float32 (exact for bfloat16; only under
    Triton's interpreter, whose tl.dot multiplies the raw bits of bfloat16 operands).
    EVEN_M/N/K: the size is a multiple of its tile, so loads along it need no mask (set by
    the heuristics below). ROW_SUMS (MODE_DOT, a single matrix): the programs of the first
    column of tiles also store the sums over K of a's rows, as dotted, at
    sums + program_id(1) * sums_stride (rounded as out; a linear layer's bias gradient rides
    in its weight gradient's GEMM); the other programs run the plain loop."""
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)

    bi = tl.program_id(2).to(tl.int64) + b0
    off_o, off_a, off_b, off_c = _batch_offsets(bi, bshape, bso, bsa, bsb, bsc, NB)
    split = tl.program_id(1)
    k_lo = split * ksplit  # < K: int32 like the loop below
    k_len = tl.minimum(ksplit, K - k_lo)
    a += off_a + k_lo.to(tl.int64) * sak
    b += off_b + k_lo.to(tl.int64) * sbk
    out += off_o + split.to(tl.int64) * split_stride

    offs_m, offs_n, mask_m, mask_n, offs_k, a_ptrs, b_ptrs, step_a, step_b = _tile_operands(
        a, b, pid_m, pid_n, M, N, sam, sak, sbk, sbn, IDX64, BLOCK_M, BLOCK_N, BLOCK_K)

    first_col = False   # a constexpr unless ROW_SUMS: no second loop compiled without
    if ROW_SUMS:
        first_col = pid_n == 0
    if first_col:
        acc, rows = _mm_loop(a_ptrs, b_ptrs, mask_m, mask_n, offs_k, k_len, step_a, step_b,
                             MODE, PRECISION, ACC, DOT_T, UPCAST, EVEN_M, EVEN_N, EVEN_K,
                             BLOCK_M, BLOCK_N, BLOCK_K, True)
        _round_store(sums + split * sums_stride + offs_m, rows, mask_m, ROUND_T)
    else:
        acc, rows = _mm_loop(a_ptrs, b_ptrs, mask_m, mask_n, offs_k, k_len, step_a, step_b,
                             MODE, PRECISION, ACC, DOT_T, UPCAST, EVEN_M, EVEN_N, EVEN_K,
                             BLOCK_M, BLOCK_N, BLOCK_K, False)

    mask = mask_m[:, None] & mask_n[None, :]
    o_ptrs = out + offs_m[:, None] * som + offs_n[None, :] * son
    if HAS_C:
        c_ptrs = c + off_c + offs_m[:, None] * scm + offs_n[None, :] * scn
    else:
        c_ptrs = o_ptrs
    _epilogue(acc, o_ptrs, c_ptrs, mask, K, alpha, beta, ACC, ROUND_T, BETA_ZERO)


_mm = triton.heuristics({
    "EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0,
    "EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0,
    "EVEN_K": lambda args: (args["K"] % args["BLOCK_K"] == 0
                            and args["ksplit"] % args["BLOCK_K"] == 0),
})(cached(_mm_kernel))  # tuned launches go through the cache too


# ---- configs and autotuning -------------------------------------------------------------

_KEY = ["M", "N", "K", "nbatch", "layout", "PRECISION"]
_PRUNE = {"early_config_prune": _prune}
# cache_results: timings are kept in Triton's cache dir, so a new process does not re-time
# the shapes an earlier one tuned
_tuned = triton.autotune(_DOT_CONFIGS, key=_KEY, prune_configs_by=_PRUNE,
                         do_bench=_do_bench, cache_results=True)(_mm)
# beta != 0 reads out: benchmark runs restore it after each trial
_tuned_restore = triton.autotune(_DOT_CONFIGS, key=_KEY, prune_configs_by=_PRUNE,
                                 do_bench=_do_bench, restore_value=["out"],
                                 cache_results=True)(_mm)


# ---- host side --------------------------------------------------------------------------

def _fold_rows(batch, so, sa, sb, sc, m):
    """Drops size-1 batch dims and folds trailing batch dims over which b is broadcast into
    the rows of a, out and c when each steps exactly over their rows: (B, M, K) @ (K, N) is
    one (B*M, K) @ (K, N) GEMM (as native/linalg.cpp's fold_rows)."""
    keep = [d for d in range(len(batch)) if batch[d] != 1] + [len(batch), len(batch) + 1]
    batch = [batch[d] for d in keep[:-2]]
    so, sa, sb, sc = ([s[d] for d in keep] for s in (so, sa, sb, sc))
    while batch:
        d, row = len(batch) - 1, len(batch)
        fits = m == 1 or (sa[d] == sa[row] * m and so[d] == so[row] * m
                          and sc[d] == sc[row] * m)
        if sb[d] != 0 or not fits or m * batch[d] > _INT32_MAX:
            break
        if m == 1:
            sa[row], so[row], sc[row] = sa[d], so[d], sc[d]
        m *= batch.pop()
        for s in (so, sa, sb, sc):
            del s[d]
    return batch, so, sa, sb, sc, m


def _param(value, integer):
    """alpha/beta as the kernel takes them: an int64 value, or the bits of a float64."""
    if value.__class__ is int and 0 <= value <= 1:   # the usual 0 and 1: no packing
        return value if integer else _BITS_0_1[value]
    if integer:
        v = int(value)
        return (v + 2**63) % 2**64 - 2**63
    return struct.unpack("<q", struct.pack("<d", float(value)))[0]


_BITS_0_1 = (0, struct.unpack("<q", struct.pack("<d", 1.0))[0])


def _splits(m, n, k, count):
    """(ksplit, splits): split-K when the output has too few tiles to fill the GPU and K is
    long (dot, mv, small-batch linear layers); ksplit is a multiple of every BLOCK_K."""
    tiles = cdiv(m, 128) * cdiv(n, 128) * count
    if 2 * tiles > _SMS or k < _SPLIT_MIN_K:
        return k, 1
    splits = min(_SMS // tiles, k // _SPLIT_CHUNK, _MAX_SPLITS)
    ksplit = cdiv(cdiv(k, splits), _MAX_TILE) * _MAX_TILE
    return ksplit, cdiv(k, ksplit)


def _extent(rows, cols, rs, cs):
    """One past the largest element offset a tile may compute (masked lanes included)."""
    return (rows + _MAX_TILE) * rs + (cols + _MAX_TILE) * cs + 1


def matmul(out, a, a_stride, b, b_stride, beta=0.0, alpha=1.0, c=None, c_stride=None,
           compute=None, row_sums=None):
    """out[..., M, N] = beta * C + alpha * a[..., M, K] @ b[..., K, N] for every batch index,
    C being ``c`` (read through ``c_stride``) when given, else out.

    ``a_stride``/``b_stride`` are the operands' strides already broadcast to out's batch
    shape, ``c_stride`` to out's whole shape (0 where broadcast); beta == 0 means C is not
    read. c must not overlap out unless it is out itself. ``compute`` (float16 or
    bfloat16; None: out's dtype, which a, b and c then share): the dtype the product is
    taken in, to which a, b, c and the result are rounded where they are wider, as autocast
    casts them (so a float32 weight needs no cast of its own). ``row_sums``: a contiguous
    1-d tensor of M floats that also receives the sums over K of a's rows, taken in the
    product's dtype and rounded to it (a single float16, bfloat16 or float32 product: the
    bias gradient beside a linear layer's weight gradient)."""
    so = out._stride
    if c is not None and (beta == 0 or (c.data_ptr() == out.data_ptr()
                                        and tuple(c_stride) == tuple(so))):
        c = None  # not read, or out itself: the epilogue reads out as without c
    dtypes = None
    if compute is not None:
        dtypes = (a.dtype, b.dtype, out.dtype, None if c is None else c.dtype)
        if all(d is compute or d is None for d in dtypes):
            compute = dtypes = None
    name = (compute or out.dtype).name
    precision = None  # tl.dot's default: only float32 operands have a choice
    if name == "float32":
        precision = "tf32" if _matmul_precision.allow_tf32() else "ieee"
    # a training loop multiplies the same layouts every step: the launch is planned once
    key = (out._shape, so, tuple(a_stride), tuple(b_stride),
           None if c is None else tuple(c_stride), a._shape[-1], name, precision, beta == 0,
           row_sums is not None, cuda.is_simulated(), dtypes)
    plan = _PLANS.get(key)
    if plan is None:
        plan = alloc.remember(_PLANS, key, _Plan(out._shape, so, a._shape[-1], a_stride,
                                                 b_stride, c_stride if c is not None else None,
                                                 name, precision, beta == 0, key[-3],
                                                 key[-2], dtypes))
    if plan.empty:
        return
    plan.run(out, a, b, c, alpha, beta, row_sums)


_PLANS = {}


class _Plan:
    """One product's launch worked out from its shapes and strides: the checks, the folded
    and merged batch geometry, split-K and the kernel's arguments, and, after its first
    launch, the tile config and heuristics chosen, so that later launches go straight to
    the (cached) kernel past Triton's heuristics and autotuner."""

    def __init__(self, shape, so, k, sa, sb, sc, name, precision, beta_zero, row_sums,
                 simulated, mixed):
        shape, so, sa, sb = tuple(shape), list(so), list(sa), list(sb)
        has_c = sc is not None
        sc = list(so if sc is None else sc)
        nd = len(shape) - 2
        if (nd < 0 or len(so) != nd + 2 or len(sa) != nd + 2 or len(sb) != nd + 2
                or len(sc) != nd + 2):
            raise RuntimeError(f"matmul: expected {max(nd, 0) + 2} strides per operand")
        batch, (m, n) = list(shape[:nd]), shape[nd:]
        if min(m, n, k) < 0:
            raise RuntimeError("matmul: negative matrix size")
        if name == "bool":
            raise NotImplementedError("\"matmul_cuda\" not implemented for 'Bool'")
        count = 1
        for d, size in enumerate(batch):
            if size < 0:
                raise RuntimeError("matmul: negative batch size")
            count *= size
            if size > 1 and so[d] == 0:
                raise RuntimeError("matmul: output has internal overlap")
        if min(so + sa + sb + sc) < 0:
            raise RuntimeError("matmul: negative strides are not supported")
        self.empty = count == 0 or m == 0 or n == 0
        if self.empty:
            return
        if (m > 1 and so[nd] == 0) or (n > 1 and so[nd + 1] == 0):
            raise RuntimeError("matmul: output has internal overlap")
        if max(m, n, k) > _INT32_MAX:
            raise RuntimeError("matmul: matrix dimensions must be below 2^31")

        self.shape, self.c_full_stride = shape, list(sc)  # (the split-K reduction's)
        batch, so, sa, sb, sc, m = _fold_rows(batch, so, sa, sb, sc, m)
        nb = len(batch)
        bshape, (bso, bsa, bsb, bsc) = collapse(batch, [so[:nb], sa[:nb], sb[:nb], sc[:nb]])
        count = 1
        for size in batch:
            count *= size
        ndims = len(bshape) if count > 1 else 0
        if ndims > MAX_BATCH_DIMS:
            raise RuntimeError(f"matmul: {ndims} non-mergeable batch dims, at most "
                               f"{MAX_BATCH_DIMS}")
        som, son = so[nb], so[nb + 1]
        sam, sak = sa[nb], sa[nb + 1]
        sbk, sbn = sb[nb], sb[nb + 1]
        scm, scn = sc[nb], sc[nb + 1]
        idx64 = max(_extent(m, n, som, son), _extent(m, k, sam, sak),
                    _extent(k, n, sbk, sbn), _extent(m, n, scm, scn)) > _INT32_MAX

        self.integer = integer = name in _INTEGER
        dot = name in ("float16", "bfloat16", "float32")
        if mixed and name not in ("float16", "bfloat16"):
            raise RuntimeError(f"matmul: operands of dtypes {mixed} computed in {name}")
        if row_sums and (not dot or count != 1):
            raise RuntimeError(f"matmul: row sums of a {name} product of {count} matrices")
        self.acc_name = "float32" if dot else ("float64" if not integer else
                                               "int64" if name == "int64" else "int32")
        self.k_major = None   # B's row stride when B is copied to column-major first
        if (precision == "tf32" and nb == 0 and sbn == 1 and sbk != 1
                and m >= _TF32_KMAJOR_MIN_M):
            self.k_major, sbk, sbn = sbk, 1, k
        layout = (int(sak == 1) | int(sam == 1) << 1 | int(sbn == 1) << 2
                  | int(sbk == 1) << 3 | int(son == 1) << 4)
        self.ksplit, self.splits = ksplit, splits = _splits(m, n, k, count)
        split_stride = 0
        if splits > 1:  # the parts go to a workspace, reduced into out below
            split_stride = count * m * n
            som, son = n, 1
            bso, step = [0] * len(bshape), m * n
            for d in range(len(bshape) - 1, -1, -1):
                bso[d] = step
                step *= bshape[d]
            layout |= 1 << 5
        part_beta_zero = beta_zero or splits > 1
        self.tile_c = tile_c = has_c and not part_beta_zero  # the tile kernel reads c
        if tile_c:  # a separate tuning key: the C tile's load adds to the epilogue
            layout |= 1 << 6 | int(scn == 1) << 7
        layout |= int(row_sums) << 8
        self.m, self.n, self.k, self.count = m, n, k, count
        self.geometry = (m, n, k, som, son, sam, sak, sbk, sbn, scm, scn, bshape, tuple(bso),
                         bsa, bsb, bsc)
        self.tail = (ksplit, split_stride)
        self.layout = layout
        if simulated or not dot:
            self.fn = _mm
            cfg = (_SIM_DOT_CONFIG if dot else _SIM_FMA_CONFIG) if simulated else _FMA_CONFIG
            meta = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        else:
            self.fn = _tuned if part_beta_zero or tile_c else _tuned_restore
            meta = {}
        self.dot_t = _TL_DTYPE[name]
        self.meta = dict(meta, MODE=MODE_DOT if dot else MODE_FMA, PRECISION=precision,
                         ACC=_ACC_DTYPE[self.acc_name], DOT_T=self.dot_t,
                         ROUND_T=_ACC_DTYPE[self.acc_name] if splits > 1 else self.dot_t,
                         BETA_ZERO=part_beta_zero,
                         HAS_C=tile_c, ROW_SUMS=row_sums, NB=ndims, IDX64=idx64,
                         UPCAST=simulated and name == "bfloat16")
        self.direct = None   # the kernel's whole keyword arguments, once known
        # ((b0, alpha, beta), launch) of CachedKernel.prepare, for the launches that repeat
        # one of its first direct launch but for the tensors; None: not yet; False: never
        # (an interpreted kernel)
        self.fast = None

    def run(self, out, a, b, c, alpha, beta, row_sums=None):
        integer, splits = self.integer, self.splits
        alpha, beta = _param(alpha, integer), _param(0 if beta == 0 else beta, integer)
        if self.k_major is not None:
            b = _k_major(b, self.k, self.n, self.k_major)
        m, n, count = self.m, self.n, self.count
        dest, sums, sums_stride = out, row_sums, 0
        if splits > 1:  # the parts of out, then those of the row sums
            parts = splits * count * m * n
            dest = alloc.empty((parts + (splits * m if row_sums is not None else 0),),
                               _dtype._NAMES[self.acc_name], out._storage.device)
            if row_sums is not None:
                sums = Tensor._make(dest._storage, (splits * m,), (1,), parts, dest.dtype)
                sums_stride = m
        if sums is None:
            sums = dest  # not read: the pointer of the kernel without row sums
        part_alpha = _param(1, integer) if splits > 1 else alpha
        cc = out if c is None else c
        for b0 in range(0, count, _GRID_Z):
            chunk = min(_GRID_Z, count - b0)
            kw = self.direct
            if kw is not None:
                grid = (cdiv(m, kw["BLOCK_M"]) * cdiv(n, kw["BLOCK_N"]), splits, chunk)
                fast = self.fast
                if fast and fast[0] == (b0, part_alpha, beta) and fast[1](grid, dest, a, b, cc,
                                                                          sums):
                    continue
            args = (dest, a, b, cc, sums, *self.geometry, b0, *self.tail, sums_stride,
                    part_alpha, beta, count, self.layout)
            if kw is not None:
                self.kernel[grid](*args, **kw)
                if self.fast is None:  # from the second launch: the kernel is stored
                    prepare = getattr(self.kernel, "prepare", None)
                    go = prepare(args, kw) if prepare is not None else False
                    self.fast = go and ((b0, part_alpha, beta), go)
                continue

            def grid(meta, chunk=chunk):
                return (cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"]), splits, chunk)

            self.fn[grid](*args, **self.meta)
            self.direct = self._chosen(args)
        if splits > 1:
            _splitk_reduce(out, self.shape, dest, splits, alpha, beta,
                           _ACC_DTYPE[self.acc_name], c, self.c_full_stride, self.dot_t,
                           row_sums)

    def _chosen(self, args):
        """The keyword arguments the first launch went with: the tuned config (the
        autotuner's choice for this problem) and the heuristics' values (None where the
        launcher is neither: a stand-in, which keeps launching)."""
        tuned = isinstance(self.fn, Autotuner)
        heuristics = self.fn.fn if tuned else self.fn
        if not isinstance(heuristics, Heuristics):
            return None
        kw = dict(self.meta)
        if tuned:
            kw.update(self.fn.best_config.all_kwargs())
        named = dict(zip(heuristics.arg_names, args), **kw)
        kw.update({name: rule(named) for name, rule in heuristics.values.items()})
        self.kernel = heuristics.fn
        return kw


# TF32 products read B in K-major (column-major) order: with a row-major B (N contiguous),
# Triton 3.6 fills the tensor-core tiles with 4-byte copies instead of 16-byte ones (seen in
# the PTX of the tile loads: 48 of 60 copies 4 bytes wide), so B is copied to column-major
# first when the product is big enough to pay for the copy (K*N*8 bytes against 2*M*N*K
# flops: about 10% of a TF32 product at M = 4096, if it runs at torch's speed).
_TF32_KMAJOR_MIN_M = 256


def _k_major(b, k, n, sbk):
    """The K x N matrix at b (row stride sbk, contiguous rows) copied to column-major
    storage: a new tensor whose element (kk, j) is at j * k + kk."""
    from .copy import copy
    bt = alloc.empty((n, k), b.dtype, b._storage.device)   # bt[j, kk] = b[kk, j]
    copy(bt, b, (1, sbk))
    return bt
