"""Triton conv_gemm family (the cuda backend of framework/_cpu/conv_gemm.py): 1-d and 2-d
convolutions, and their input and weight gradients, as implicit GEMMs that never write
the im2col columns to memory.

Every problem is made 2-d (a 1-d one gets a height of 1). With x (N, C, H, W), weight
(O, C/G, KH, KW) in G groups (CG = C/G input and OG = O/G output channels per group),
stride S, padding P (left/top; the right side is implied by the output size OH x OW) and
dilation D, the input element read by output position (oh, ow) through kernel offset
(kh, kw) is x[n, c, oh*S0 - P0 + kh*D0, ow*S1 - P1 + kw*D1] (zero outside x).

- ``forward``: out[n, g*OG + o, oh, ow] as a GEMM per group, rows (n, oh, ow)
  (N*OH*OW), columns o (OG), depth k = (c, kh, kw) (CG*KH*KW). A program computes a
  BLOCK_M x BLOCK_N tile; each depth step gathers its BLOCK_M x BLOCK_K operand from x
  (masked to zero in the padding and past every edge) and loads the matching BLOCK_K x
  BLOCK_N slice of the weight. The bias is added to the float32 accumulators before the
  single rounding to the output dtype.
- ``weight_grad``: dw[g*OG + o, c, kh, kw] = sum over (n, oh, ow) of grad[n, g*OG + o, oh,
  ow] * x gathered as above: rows o, columns k, depth (n, oh, ow). When the tiles are too
  few to fill the GPU and the depth is long, program_id(2) splits the depth; each part
  goes to its own slice of a float32 (float64) workspace and ``_sum_parts_kernel`` adds the
  parts in a fixed order, so the result is deterministic (no atomics).
- ``input_grad``: dx[n, g*CG + c, ih, iw] = sum over (o, kh, kw) of grad[n, g*OG + o, oh,
  ow] * w[g*OG + o, c, kh, kw] for the output position that read x[ih, iw] through
  (kh, kw): oh = (ih + P0 - kh*D0) / S0 when that division is exact and 0 <= oh < OH (the
  transposed convolution as a gather). Rows (n, ih, iw), columns c, depth (o, kh, kw).
  Every output element is written once by one program: no atomics, deterministic.

Program_id(0) walks the column tiles fastest, so the programs that read the same rows run
side by side; the group is program_id(1) (launched in chunks of 65535 groups). Gathered
tiles are built with the output (or input) positions along their last dim, the one
Triton's default layout spreads over a warp's threads: for stride 1 neighbouring
positions read neighbouring elements of an NCHW tensor, so the loads coalesce; tl.trans
hands them to tl.dot in the orientation it needs.

Products: ``tl.dot`` on float32 accumulators for float16/bfloat16/float32 (float32 in
IEEE precision, or TF32 when framework.backends.cudnn.allow_tf32 allows it: True by
default, as PyTorch's, apart from the GEMM's float32 matmul precision), and on
float64 accumulators for float64 (tl.dot takes float64 operands; no tensor cores). Under
Triton's interpreter bfloat16 operands are widened to float32 first (exact; its tl.dot
would multiply their raw bits). Offsets are int64 when a tensor's extent or a row index
may reach 2**31 (IDX64). Tiles come from ``_tiles`` (powers of two, at least 16 for
tl.dot); the interpreter uses one small tile so tests cross tile edges with tiny shapes.

Not yet here: autotuning, a stride-phase split of the input gradient (with stride 2 three
quarters of its depth steps multiply masked zeros), a direct kernel for depthwise
convolutions (OG = CG = 1 leaves most of a tl.dot tile empty), channels-last inputs.
"""
import triton
import triton.language as tl

from .. import _dtype
from .._ops import alloc
from .pointwise import _down, _up
from .launcher import cached, cdiv, next_pow2

_GRID_Y = 65535  # the CUDA grid's limit on its second dim: more groups launch in chunks
_INT32_MAX = 2**31 - 1
_SMS = 132  # H100 SXM multiprocessors: how many tiles fill the GPU (a tuning hint only)
_SPLIT_MIN = 4096  # weight gradient: split the depth (N*OH*OW) when it is at least this
_SPLIT_CHUNK = 1024  # long, each part at least this long, into at most _MAX_SPLITS parts
_MAX_SPLITS = 32
_SUM_BLOCK = 1024


# ---- device helpers ---------------------------------------------------------------------

@triton.jit
def _split3(i, B, C):
    """(i // (B*C), i // C % B, i % C): a flat index over (A, B, C) as its three indices."""
    t = i // C
    return t // B, t % B, i % C


@triton.jit
def _gather_t(x, n, oh, ow, pos_ok, c, kh, kw, k_ok, H, W, S0, S1, P0, P1, D0, D1, XS0, XS1,
              XS2, XS3):
    """The [depth, positions] tile of the implicit im2col matrix: entry (k, m), with
    k = (c, kh, kw) and m = (n, oh, ow), is x[n, c, oh*S0 - P0 + kh*D0, ow*S1 - P1 + kw*D1],
    zero in the padding and in masked entries. Positions run along the tile's last (fastest)
    dim: neighbouring output positions read neighbouring input elements, so the gather
    coalesces; callers transpose the tile for tl.dot where they need it the other way."""
    ih = kh[:, None] * D0 + (oh * S0 - P0)[None, :]
    iw = kw[:, None] * D1 + (ow * S1 - P1)[None, :]
    ok = k_ok[:, None] & pos_ok[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
    ptrs = x + (c * XS1)[:, None] + (n * XS0)[None, :] + ih * XS2 + iw * XS3
    return tl.load(ptrs, mask=ok, other=0)


@triton.jit
def _mma(a, b, acc, PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """acc + a @ b on the accumulators (bfloat16 widened first under the interpreter)."""
    if UPCAST:
        a = _up(a)
        b = _up(b)
    # out_dtype: Triton 3.6 takes float32 otherwise, which a float64 accumulator fails
    return tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=acc.dtype)


@triton.jit
def _tile(pid, NUM_N, IDX64: tl.constexpr):
    """(row tile, column tile) of program pid; column tiles run fastest, so the programs
    that read the same rows run side by side. int64 when IDX64."""
    pm = pid // NUM_N
    pn = pid % NUM_N
    if IDX64:
        pm = pm.to(tl.int64)
        pn = pn.to(tl.int64)
    return pm, pn


@triton.jit
def _ranges(BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            IDX64: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    if IDX64:
        rm = rm.to(tl.int64)
        rn = rn.to(tl.int64)
        rk = rk.to(tl.int64)
    return rm, rn, rk


@triton.jit
def _group(g0, IDX64: tl.constexpr):
    g = tl.program_id(1) + g0
    if IDX64:
        g = g.to(tl.int64)
    return g


# ---- kernels ------------------------------------------------------------------------------

@cached
@triton.jit
def _forward_kernel(x, w, bias, out, M, OG, KG, CG, H, W, OH, OW, KH, KW, S0, S1, P0, P1, D0,
                    D1, XS0, XS1, XS2, XS3, WS0, WS1, WS2, WS3, OS0, OS1, OS2, OS3, g0,
                    HAS_BIAS: tl.constexpr, ACC: tl.constexpr, PRECISION: tl.constexpr,
                    UPCAST: tl.constexpr, IDX64: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One BLOCK_M x BLOCK_N tile of out[n, g*OG + o, oh, ow] = bias + sum over (c, kh, kw)
    of x[n, g*CG + c, ...] * w[g*OG + o, c, kh, kw], group g = g0 + program_id(1).

    x, w, out: element (0, 0, 0, 0) of each, with strides XS*, WS*, OS* (any); bias: (O,)
    contiguous, read when HAS_BIAS. M = N*OH*OW rows, OG columns, depth KG = CG*KH*KW."""
    g = _group(g0, IDX64)
    pm, pn = _tile(tl.program_id(0), tl.cdiv(OG, BLOCK_N), IDX64)
    rm, rn, rk = _ranges(BLOCK_M, BLOCK_N, BLOCK_K, IDX64)
    rm += pm * BLOCK_M
    rn += pn * BLOCK_N
    m_ok = rm < M
    n_ok = rn < OG
    n, oh, ow = _split3(rm, OH, OW)
    oc = g * OG + rn
    x += g * CG * XS1
    w_rows = w + oc * WS0
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k0 in range(0, KG, BLOCK_K):
        k = k0 + rk
        k_ok = k < KG
        c, kh, kw = _split3(k, KH, KW)
        a = _gather_t(x, n, oh, ow, m_ok, c, kh, kw, k_ok, H, W, S0, S1, P0, P1, D0, D1, XS0,
                      XS1, XS2, XS3)
        # the weight's depth (c, kh, kw) is its contiguous dim: load it along the fast axis
        b = tl.load(w_rows[:, None] + (c * WS1 + kh * WS2 + kw * WS3)[None, :],
                    mask=n_ok[:, None] & k_ok[None, :], other=0)
        acc = _mma(tl.trans(a), tl.trans(b), acc, PRECISION, UPCAST)
    if HAS_BIAS:
        acc += _up(tl.load(bias + oc, mask=n_ok, other=0)).to(ACC)[None, :]
    ptrs = out + (n * OS0 + oh * OS2 + ow * OS3)[:, None] + (oc * OS1)[None, :]
    tl.store(ptrs, _down(acc, out.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


@cached
@triton.jit
def _weight_grad_kernel(gy, x, dw, M, OG, KG, CG, H, W, OH, OW, KH, KW, S0, S1, P0, P1, D0,
                        D1, GS0, GS1, GS2, GS3, XS0, XS1, XS2, XS3, g0, ksplit, split_stride,
                        ACC: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr,
                        IDX64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    """One BLOCK_M x BLOCK_N tile of dw[g*OG + o, k] (k = (c, kh, kw)) = the sum over the
    positions (n, oh, ow) in [program_id(2) * ksplit, +ksplit) of gy[n, g*OG + o, oh, ow]
    * x[n, g*CG + c, oh*S0 - P0 + kh*D0, ow*S1 - P1 + kw*D1].

    gy (N, O, OH, OW) and x: any strides (GS*, XS*); dw: (O, KG) contiguous, part s at
    dw + s * split_stride (a workspace when the depth M = N*OH*OW is split)."""
    g = _group(g0, IDX64)
    pm, pn = _tile(tl.program_id(0), tl.cdiv(KG, BLOCK_N), IDX64)
    ro, rk, rl = _ranges(BLOCK_M, BLOCK_N, BLOCK_K, IDX64)
    ro += pm * BLOCK_M
    rk += pn * BLOCK_N
    split = tl.program_id(2)
    if IDX64:
        split = split.to(tl.int64)
    m_lo = split * ksplit
    m_hi = tl.minimum(M, m_lo + ksplit)
    o_ok = ro < OG
    k_ok = rk < KG
    c, kh, kw = _split3(rk, KH, KW)
    oc = g * OG + ro
    gy_rows = gy + oc * GS1
    x += g * CG * XS1
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for m0 in range(m_lo, m_hi, BLOCK_K):
        m = m0 + rl
        m_ok = m < m_hi
        n, oh, ow = _split3(m, OH, OW)
        a = tl.load(gy_rows[:, None] + (n * GS0 + oh * GS2 + ow * GS3)[None, :],
                    mask=o_ok[:, None] & m_ok[None, :], other=0)
        b = _gather_t(x, n, oh, ow, m_ok, c, kh, kw, k_ok, H, W, S0, S1, P0, P1, D0, D1, XS0,
                      XS1, XS2, XS3)
        acc = _mma(a, tl.trans(b), acc, PRECISION, UPCAST)
    ptrs = dw + split * split_stride + (oc * KG)[:, None] + rk[None, :]
    tl.store(ptrs, _down(acc, dw.dtype.element_ty), mask=o_ok[:, None] & k_ok[None, :])


@cached
@triton.jit
def _input_grad_kernel(gy, w, dx, M, CG, KG, OG, H, W, OH, OW, KH, KW, S0, S1, P0, P1, D0,
                       D1, GS0, GS1, GS2, GS3, WS0, WS1, WS2, WS3, XS0, XS1, XS2, XS3, g0,
                       ACC: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr,
                       IDX64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    """One BLOCK_M x BLOCK_N tile of dx[n, g*CG + c, ih, iw] = the sum over the depth
    (o, kh, kw) (KG = OG*KH*KW) of gy[n, g*OG + o, oh, ow] * w[g*OG + o, c, kh, kw], where
    (oh, ow) is the output position that read (ih, iw) through (kh, kw), if any.

    Rows (n, ih, iw): M = N*H*W; columns c: CG. gy, w, dx: any strides (GS*, WS*, XS*)."""
    g = _group(g0, IDX64)
    pm, pn = _tile(tl.program_id(0), tl.cdiv(CG, BLOCK_N), IDX64)
    rm, rc, rk = _ranges(BLOCK_M, BLOCK_N, BLOCK_K, IDX64)
    rm += pm * BLOCK_M
    rc += pn * BLOCK_N
    m_ok = rm < M
    c_ok = rc < CG
    n, ih, iw = _split3(rm, H, W)
    gy += g * OG * GS1
    w += g * OG * WS0
    gy_cols = gy + n * GS0
    w_cols = w + rc * WS1
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k0 in range(0, KG, BLOCK_K):
        k = k0 + rk
        k_ok = k < KG
        o, kh, kw = _split3(k, KH, KW)
        # [depth, positions], positions fastest (coalesced for stride 1, as in _gather_t)
        th = (ih + P0)[None, :] - (kh * D0)[:, None]
        tw = (iw + P1)[None, :] - (kw * D1)[:, None]
        ok = k_ok[:, None] & m_ok[None, :] & (th >= 0) & (tw >= 0)
        # divide only non-negative numbers: integer division rounds toward zero on a GPU
        th = tl.where(ok, th, 0)
        tw = tl.where(ok, tw, 0)
        oh = th // S0
        ow = tw // S1
        ok = ok & (oh * S0 == th) & (ow * S1 == tw) & (oh < OH) & (ow < OW)
        a = tl.load(gy_cols[None, :] + (o * GS1)[:, None] + oh * GS2 + ow * GS3, mask=ok,
                    other=0)
        b = tl.load(w_cols[None, :] + (o * WS0 + kh * WS2 + kw * WS3)[:, None],
                    mask=k_ok[:, None] & c_ok[None, :], other=0)
        acc = _mma(tl.trans(a), b, acc, PRECISION, UPCAST)
    ptrs = dx + (n * XS0 + ih * XS2 + iw * XS3)[:, None] + ((g * CG + rc) * XS1)[None, :]
    tl.store(ptrs, _down(acc, dx.dtype.element_ty), mask=m_ok[:, None] & c_ok[None, :])


@cached
@triton.jit
def _sum_parts_kernel(out, ws, total, splits, IDX64: tl.constexpr, BLOCK: tl.constexpr):
    """out[i] = the sum of ws[s * total + i] over the parts s = 0, 1, ..., in that order."""
    i = tl.program_id(0)
    if IDX64:
        i = i.to(tl.int64)
    i = i * BLOCK + tl.arange(0, BLOCK)
    mask = i < total
    acc = tl.load(ws + i, mask=mask, other=0)
    for s in range(1, splits):
        acc += tl.load(ws + s * total + i, mask=mask, other=0)
    tl.store(out + i, _down(acc, out.dtype.element_ty), mask=mask)


# ---- host side --------------------------------------------------------------------------

def _tiles(rows, cols, depth, itemsize, simulated):
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) for a GEMM of rows x cols over
    ``depth``: the columns (channels per group) set BLOCK_N (16 to 128); 16-bit operands
    take twice the depth per step of float32 (the same bytes per stage); float64 (no TF32
    or half-precision tensor cores) uses smaller tiles. Three stages of the largest tiles
    take 96 KiB of shared memory. The interpreter gets one small tile, so that tests with
    tiny shapes cross tile edges in every dim."""
    if simulated:
        return 32, 16, 16, 4, 1
    bn = min(128, max(16, next_pow2(cols)))
    bm = 128 if rows > 64 else 64
    if itemsize == 8:
        return 64, min(bn, 64), 16, 4, 2
    bk = 64 if itemsize == 2 else 32
    bk = min(bk, max(16, next_pow2(depth)))
    warps = 8 if bm * bn >= 128 * 128 else 4
    return bm, bn, bk, warps, 3


def _lead(values, fill):
    """``values`` (one per spatial dim, 1 or 2 of them) preceded by ``fill`` up to 2."""
    return [fill] * (2 - len(values)) + list(values)


def _dims(t):
    """(N, C, H, W) and the four strides of an (N, C, *spatial) tensor made 2-d."""
    return (list(t._shape[:2]) + _lead(t._shape[2:], 1),
            list(t._stride[:2]) + _lead(t._stride[2:], 0))


def _extent(t):
    """One past the largest element offset of t."""
    return 1 + sum((s - 1) * st for s, st in zip(t._shape, t._stride) if s > 0)


def _setup(tensors, rows, dtype):
    """(accumulator dtype, tl.dot precision, upcast, idx64, simulated) for a launch."""
    from .. import _matmul_precision, cuda
    simulated = cuda.is_simulated()
    name = dtype.name
    if name not in ("float16", "bfloat16", "float32", "float64"):
        raise NotImplementedError(f"conv_gemm: no implicit-GEMM kernel for {name}")
    acc = tl.float64 if name == "float64" else tl.float32
    precision = None  # tl.dot's default: only float32 (and float64) have a choice
    if name == "float32":
        precision = "tf32" if _matmul_precision.allow_conv_tf32() else "ieee"
    elif name == "float64":
        precision = "ieee"
    # row indices run up to a tile past the end: keep a margin for them
    idx64 = max([_extent(t) for t in tensors] + [rows]) + 4096 > _INT32_MAX
    return acc, precision, simulated and name == "bfloat16", idx64, simulated


def _geometry(stride, padding, dilation):
    return _lead(stride, 1), _lead(padding, 0), _lead(dilation, 1)


def _launch(kernel, rows, cols, groups, tiles, args, meta, splits=1):
    bm, bn, bk, warps, stages = tiles
    for g0 in range(0, groups, _GRID_Y):
        grid = (cdiv(rows, bm) * cdiv(cols, bn), min(_GRID_Y, groups - g0),
                splits)
        kernel[grid](*args, g0, *meta[0], **meta[1], BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                     num_warps=warps, num_stages=stages)


def forward(x, weight, bias, out, stride, padding, dilation, groups):
    """out (N, O, *grid) = the convolution of x (N, C, *spatial) with weight
    (O, C/groups, *kernel), plus bias (O,) when it is not None; 1 or 2 spatial dims.
    ``padding`` is the left padding per dim (the output size implies the right one)."""
    (n, c, h, w), xs = _dims(x)
    (o, cg, kh, kw), ws = _dims(weight)
    (_, _, oh, ow), os_ = _dims(out)
    og, kg, rows = o // groups, cg * kh * kw, n * oh * ow
    if out.numel() == 0:
        return
    s, p, d = _geometry(stride, padding, dilation)
    tensors = (x, weight, out) if bias is None else (x, weight, out, bias)
    acc, precision, upcast, idx64, sim = _setup(tensors, rows, x.dtype)
    tiles = _tiles(rows, og, kg, x.dtype.itemsize, sim)
    args = (x, weight, bias if bias is not None else out, out, rows, og, kg, cg, h, w, oh, ow,
            kh, kw, *s, *p, *d, *xs, *ws, *os_)
    meta = dict(HAS_BIAS=bias is not None, ACC=acc, PRECISION=precision, UPCAST=upcast,
                IDX64=idx64)
    _launch(_forward_kernel, rows, og, groups, tiles, args, ((), meta))


def _splits(tiles_count, depth, bk):
    """(ksplit, splits) of the weight gradient's depth: split when the output has too few
    tiles to fill the GPU twice and the depth is long; ksplit is a multiple of BLOCK_K."""
    if 2 * tiles_count > _SMS or depth < _SPLIT_MIN:
        return max(depth, 1), 1
    splits = max(1, min(_SMS // tiles_count, depth // _SPLIT_CHUNK, _MAX_SPLITS))
    ksplit = cdiv(cdiv(depth, splits), bk) * bk
    return ksplit, cdiv(depth, ksplit)


def weight_grad(grad, x, out, stride, padding, dilation, groups):
    """out (O, C/groups, *kernel), contiguous = the gradient of the convolution's weight:
    the sum over batch and output positions of grad (N, O, *grid) times the input
    elements x (N, C, *spatial) each weight element multiplied."""
    (n, c, h, w), xs = _dims(x)
    (_, o, oh, ow), gs = _dims(grad)
    (_, cg, kh, kw), _ = _dims(out)
    og, kg, depth = o // groups, cg * kh * kw, n * oh * ow
    if out.numel() == 0:
        return
    s, p, d = _geometry(stride, padding, dilation)
    acc, precision, upcast, idx64, sim = _setup((x, grad, out), depth, x.dtype)
    tiles = _tiles(og, kg, depth, x.dtype.itemsize, sim)
    count = cdiv(og, tiles[0]) * cdiv(kg, tiles[1]) * groups
    ksplit, splits = _splits(count, depth, tiles[2])
    dest, split_stride = out, 0
    if splits > 1:
        acc_dtype = _dtype.float64 if acc == tl.float64 else _dtype.float32
        dest = alloc.empty((splits * out.numel(),), acc_dtype, out._storage.device)
        split_stride = out.numel()
    idx64 = idx64 or splits * out.numel() + 4096 > _INT32_MAX
    args = (grad, x, dest, depth, og, kg, cg, h, w, oh, ow, kh, kw, *s, *p, *d, *gs, *xs)
    meta = dict(ACC=acc, PRECISION=precision, UPCAST=upcast, IDX64=idx64)
    _launch(_weight_grad_kernel, og, kg, groups, tiles, args, ((ksplit, split_stride), meta),
            splits)
    if splits > 1:
        total = out.numel()
        _sum_parts_kernel[(cdiv(total, _SUM_BLOCK),)](
            out, dest, total, splits, IDX64=idx64, BLOCK=_SUM_BLOCK)


def input_grad(grad, weight, out, stride, padding, dilation, groups):
    """out (N, C, *spatial) = the gradient of the convolution's input: each input element
    gets the sum of grad (N, O, *grid) times weight (O, C/groups, *kernel) over the output
    positions and kernel offsets that read it."""
    (n, c, h, w), xs = _dims(out)
    (_, o, oh, ow), gs = _dims(grad)
    (_, cg, kh, kw), ws = _dims(weight)
    og, kg, rows = o // groups, (o // groups) * kh * kw, n * h * w
    if out.numel() == 0:
        return
    s, p, d = _geometry(stride, padding, dilation)
    acc, precision, upcast, idx64, sim = _setup((grad, weight, out), rows, out.dtype)
    tiles = _tiles(rows, cg, kg, out.dtype.itemsize, sim)
    args = (grad, weight, out, rows, cg, kg, og, h, w, oh, ow, kh, kw, *s, *p, *d, *gs, *ws,
            *xs)
    meta = dict(ACC=acc, PRECISION=precision, UPCAST=upcast, IDX64=idx64)
    _launch(_input_grad_kernel, rows, cg, groups, tiles, args, ((), meta))
