"""Attention kernels (Triton): flash attention forward and backward, the cuda side of
native/attention.cpp with the same launchers and semantics.

Layout: q (Z, Hq, Lq, D), k (Z, Hkv, Lk, D), v (Z, Hkv, Lk, Dv), out/dout (Z, Hq, Lq, Dv),
of one floating dtype; query head h reads key/value head h // (Hq // Hkv). The inputs q, k,
v, out, dout are read and out, dq, dk, dv written through their 4 strides (z, h, l, d), so
the heads of a fused qkv projection need no copy, nor do results laid out as (Z, L, H, D)
(framework/_ops/attention.py allocates them in their input's dim order); lse is contiguous.
lse (Z, Hq, Lq) holds each row's log-sum-exp of the scaled, masked scores in the compute
dtype (float32, float64 for float64 inputs); +inf for a row whose keys are all masked out,
whose output is 0 (as PyTorch) and whose probabilities exp(s - lse) are 0 in the backward.
The mask is read per tile through 4 strides over (Z, Hq, Lq, Lk) (0 where it broadcasts):
bool (True = attend) or additive. Causal keeps key j for query i when j <= i (top-left).

Forward: a program takes BM query rows of one head and walks the key blocks with an online
softmax (running max and sum; the output accumulator rescaled when the max moves), so the
Lq x Lk scores never exist in memory. Backward (framework/kernels/attention_backward.py):
delta = rowsum(dO * O) first; then one kernel per key block (dK, dV, looping over the query
blocks of every query head sharing that key head) and one per query block (dQ, looping over
key blocks), each recomputing P = exp(s - lse) tile by tile.

Block-sparse (flex_attention with a BlockMask; SPARSE, a constexpr, so the dense path's
code is unchanged): the forward and dq programs walk only the key blocks the BlockMask lists
for their query block (num/idx, then full_num/full_idx), the dk/dv program only the query
blocks of the transposed layout for its key block; the bool mask applies in the partial
blocks, none in the full ones. Tiles divide the BlockMask's blocks (powers of two), and a
tile finds its block as offset // block size.

Packed variable-length sequences (varlen_attn; VARLEN, a constexpr, 2 with seqused_k): the
inputs are (1, H, T, D) views of packed (T, H, D) tensors, program_id(2) is the sequence;
each program reads its start and length from cu_seq_q / cu_seq_k (_seq), moves its pointers
(lse and delta too, of row stride T_q) to the start, and walks only the tiles of its own
sequence under the window (_span). The window (WIN) is flash attention's: query i sees key
j when -left <= j - (i + Lk - Lq) <= right (bottom-right aligned). Launchers live in
framework/kernels/varlen_attention.py.

Dropout keeps score (zh, i, j) when uint_to_uniform_float of the first Philox word of
counter offset + (zh * Lq + i) * Lk + j is >= p (the stream native/attention.cpp uses),
regenerated in the backward; kept probabilities are scaled by 1 / (1 - p).
"""
import os

import triton
import triton.language as tl

from .pointwise import _down
from .launcher import cached, cdiv, next_pow2

_NONE, _BOOL, _ADD = 0, 1, 2
# The interpreter's tl.dot cannot multiply bfloat16 (NumPy has no such type): upcast there.
_UPCAST_BF16 = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")


def _pow2(n):
    return next_pow2(n, 16)


def _interpreting():
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _blocks(d, backward):
    """(BM, BN, num_warps): small tiles under the interpreter (same code, fast tests)."""
    if _interpreting():
        return 16, 16, 4
    if backward:
        return (64, 64, 4) if d <= 64 else (64, 32, 8)
    return (128, 64, 4) if d <= 64 else (128, 32, 8)


@triton.jit
def _dot(a, b, IEEE: tl.constexpr):
    if _UPCAST_BF16 and a.dtype == tl.bfloat16:
        a = a.to(tl.float32)
        b = b.to(tl.float32)
    if IEEE:
        r = tl.dot(a, b, input_precision="ieee")
    else:
        r = tl.dot(a, b)
    return r


@triton.jit
def _acc(x, acc_t: tl.constexpr):
    """A scalar argument as acc_t (the interpreter passes plain Python floats)."""
    return (x * tl.full([], 1, acc_t)).to(acc_t)


@triton.jit
def _scores(q, kt, scale, m_ptr, ms0, ms1, ms2, ms3, z, h, offs_m, offs_n, Lq, Lk,
            MASK: tl.constexpr, CAUSAL: tl.constexpr, IEEE: tl.constexpr, wl=0, wr=0,
            WIN: tl.constexpr = False):
    """Scaled, masked scores of a (BM, BN) tile (fp32/fp64) and where they are valid."""
    s = _dot(q, kt, IEEE).to(scale.dtype) * scale
    valid = (offs_m[:, None] < Lq) & (offs_n[None, :] < Lk)
    if MASK != 0:
        mp = m_ptr + z.to(tl.int64) * ms0 + h.to(tl.int64) * ms1 + \
            offs_m[:, None].to(tl.int64) * ms2 + offs_n[None, :].to(tl.int64) * ms3
        if MASK == 1:
            mv = tl.load(mp, mask=valid, other=0)
            valid = valid & (mv != 0)
        else:
            s = s + tl.load(mp, mask=valid, other=0).to(s.dtype)
    if CAUSAL:
        valid = valid & (offs_n[None, :] <= offs_m[:, None])
    if WIN:
        # flash attention's window, aligned to the bottom-right corner: query i sits over
        # key i + Lk - Lq and sees keys wl before it to wr after it
        d = offs_n[None, :] - (offs_m[:, None] + (Lk - Lq))
        valid = valid & (d <= wr) & (d >= -wl)
    s = tl.where(valid, s, float("-inf"))
    return s, valid


@triton.jit
def _tile(P, z, h, sz, sh, rows, cols, sl, sd):
    """Pointers to the (rows, cols) tile of head (z, h) of a 4-D input of strides sz..sd."""
    return P + z.to(tl.int64) * sz + h.to(tl.int64) * sh + \
        rows.to(tl.int64) * sl + cols.to(tl.int64) * sd


@triton.jit
def _seq(CUQ, CUK, KUSED, VARLEN: tl.constexpr):
    """(Lq, Lk, q0, k0) of packed sequence program_id(2): its rows start at cu_seq_q[n],
    cu_seq_k[n] (int64 offsets); with seqused_k (VARLEN 2) only its first keys count."""
    n = tl.program_id(2)
    q0 = tl.load(CUQ + n)
    k0 = tl.load(CUK + n)
    Lq = tl.load(CUQ + n + 1) - q0
    Lk = tl.load(CUK + n + 1) - k0
    if VARLEN == 2:
        Lk = tl.load(KUSED + n)
    return Lq, Lk, q0.to(tl.int64), k0.to(tl.int64)


@triton.jit
def _span(m0, BM: tl.constexpr, Lm, Ln, before, after, BN: tl.constexpr, WIN: tl.constexpr):
    """[lo, hi) of the columns (in tiles of BN, lo a multiple) that rows m0 .. m0 + BM - 1
    of an Lm x Ln sequence may see under the window: row i sees column j when
    -before <= j - (i + Ln - Lm) <= after; none for rows past the end."""
    lo = Ln * 0
    hi = Ln
    if WIN:
        hi = tl.minimum(Ln, m0 + BM + (Ln - Lm) + after)
        lo = tl.maximum(lo, m0 + (Ln - Lm) - before) // BN * BN
    hi = tl.where(m0 < Lm, hi, 0)
    return lo, hi


@triton.jit
def _keep(seed, offset, zh, offs_m, offs_n, Lq, Lk, p):
    ctr = offset + ((zh.to(tl.int64) * Lq + offs_m[:, None].to(tl.int64)) * Lk +
                    offs_n[None, :].to(tl.int64)).to(tl.uint64)
    w0, _, _, _ = tl.randint4x(seed, ctr)
    return tl.random.uint_to_uniform_float(w0) >= p


@triton.jit
def _fwd_step(q, acc, m_i, l_i, start, K, V, M, z, h, hk, zh, skz, skh, skl, skd,
              svz, svh, svl, svd, ms0, ms1, ms2, ms3, offs_m, offs_d, offs_dv, Lq, Lk, D, DV,
              sc, seed, offset, p, ks, MASK: tl.constexpr, CAUSAL: tl.constexpr,
              DROP: tl.constexpr, IEEE: tl.constexpr, BN: tl.constexpr, wl=0, wr=0,
              WIN: tl.constexpr = False):
    """One key tile of the online softmax: the updated (acc, m_i, l_i)."""
    offs_n = start + tl.arange(0, BN)
    kt = tl.load(_tile(K, z, hk, skz, skh, offs_n[None, :], offs_d[:, None], skl, skd),
                 mask=(offs_n[None, :] < Lk) & (offs_d[:, None] < D), other=0)
    s, valid = _scores(q, kt, sc, M, ms0, ms1, ms2, ms3, z, h, offs_m, offs_n,
                       Lq, Lk, MASK, CAUSAL, IEEE, wl, wr, WIN)
    m_new = tl.maximum(m_i, tl.max(s, 1))
    ref = tl.where(m_new == float("-inf"), 0, m_new)   # exp(-inf - 0) = 0, not NaN
    alpha = tl.exp(m_i - ref)
    pr = tl.where(valid, tl.exp(s - ref[:, None]), 0)
    l_i = l_i * alpha + tl.sum(pr, 1)
    if DROP:
        keep = _keep(seed, offset, zh, offs_m, offs_n, Lq, Lk, p)
        pr = tl.where(keep, pr * ks, 0)
    v = tl.load(_tile(V, z, hk, svz, svh, offs_n[:, None], offs_dv[None, :], svl, svd),
                mask=(offs_n[:, None] < Lk) & (offs_dv[None, :] < DV), other=0)
    acc = acc * alpha[:, None] + _dot(_down(pr, v.dtype), v, IEEE).to(acc.dtype)
    return acc, m_new, l_i


@cached
@triton.jit
def _fwd_kernel(Q, K, V, M, O, LSE, scale: tl.float64, Hq, Hkv, Lq, Lk, D, DV,
                sqz, sqh, sql, sqd, skz, skh, skl, skd, svz, svh, svl, svd,
                soz, soh, sol, sod, ms0, ms1, ms2, ms3,
                seed: tl.uint64, offset: tl.uint64, p: tl.float32,
                keep_scale: tl.float64, BNUM, BIDX, FNUM, FIDX, nsb, nsh, NC,
                CUQ, CUK, KUSED, WL, WR,
                MASK: tl.constexpr, CAUSAL: tl.constexpr, DROP: tl.constexpr,
                IEEE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr,
                BDV: tl.constexpr, SPARSE: tl.constexpr = False, QBS: tl.constexpr = 1,
                KBS: tl.constexpr = 1, VARLEN: tl.constexpr = 0,
                WIN: tl.constexpr = False):
    pid = tl.program_id(0)
    zh = tl.program_id(1)
    z = zh // Hq
    h = zh % Hq
    hk = h // (Hq // Hkv)
    LR = Lq     # lse's row stride: Lq, or T_q of the packed sequences
    if VARLEN != 0:
        Lq, Lk, q0, k0 = _seq(CUQ, CUK, KUSED, VARLEN)
        Q += q0 * sql
        O += q0 * sol
        K += k0 * skl
        V += k0 * svl
        LSE += q0
    offs_m = pid * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, BD)
    offs_dv = tl.arange(0, BDV)
    q_rows = zh.to(tl.int64) * LR + offs_m
    q = tl.load(_tile(Q, z, h, sqz, sqh, offs_m[:, None], offs_d[None, :], sql, sqd),
                mask=(offs_m[:, None] < Lq) & (offs_d[None, :] < D), other=0)
    acc_t = LSE.dtype.element_ty
    sc = _acc(scale, acc_t)
    ks = _acc(keep_scale, acc_t)
    m_i = tl.full([BM], float("-inf"), acc_t)
    l_i = tl.zeros([BM], acc_t)
    acc = tl.zeros([BM, BDV], acc_t)
    if SPARSE:
        # only the key blocks the BlockMask lists for this query block: the mask is applied
        # in its partial blocks, not in its full ones
        nb = z * nsb + h * nsh + (pid * BM) // QBS
        for i in range(0, tl.load(BNUM + nb)):
            lo = tl.load(BIDX + nb.to(tl.int64) * NC + i) * KBS
            for start in range(lo, tl.minimum(lo + KBS, Lk), BN):
                acc, m_i, l_i = _fwd_step(q, acc, m_i, l_i, start, K, V, M, z, h, hk, zh,
                                          skz, skh, skl, skd, svz, svh, svl, svd,
                                          ms0, ms1, ms2, ms3, offs_m, offs_d, offs_dv, Lq, Lk,
                                          D, DV, sc, seed, offset, p, ks, MASK, False, False,
                                          IEEE, BN)
        for i in range(0, tl.load(FNUM + nb)):
            lo = tl.load(FIDX + nb.to(tl.int64) * NC + i) * KBS
            for start in range(lo, tl.minimum(lo + KBS, Lk), BN):
                acc, m_i, l_i = _fwd_step(q, acc, m_i, l_i, start, K, V, M, z, h, hk, zh,
                                          skz, skh, skl, skd, svz, svh, svl, svd,
                                          ms0, ms1, ms2, ms3, offs_m, offs_d, offs_dv, Lq, Lk,
                                          D, DV, sc, seed, offset, p, ks, 0, False, False,
                                          IEEE, BN)
    elif VARLEN != 0:
        lo, hi = _span(pid * BM, BM, Lq, Lk, WL, WR, BN, WIN)
        for start in range(lo, hi, BN):
            acc, m_i, l_i = _fwd_step(q, acc, m_i, l_i, start, K, V, M, z, h, hk, zh,
                                      skz, skh, skl, skd, svz, svh, svl, svd,
                                      ms0, ms1, ms2, ms3, offs_m, offs_d, offs_dv, Lq, Lk,
                                      D, DV, sc, seed, offset, p, ks, 0, False, False,
                                      IEEE, BN, WL, WR, WIN)
    else:
        hi = Lk
        if CAUSAL:
            hi = tl.minimum(Lk, (pid + 1) * BM)
        for start in range(0, hi, BN):
            acc, m_i, l_i = _fwd_step(q, acc, m_i, l_i, start, K, V, M, z, h, hk, zh,
                                      skz, skh, skl, skd, svz, svh, svl, svd,
                                      ms0, ms1, ms2, ms3, offs_m, offs_d, offs_dv, Lq, Lk,
                                      D, DV, sc, seed, offset, p, ks, MASK, CAUSAL, DROP,
                                      IEEE, BN)
    out = tl.where(l_i[:, None] > 0, acc / tl.where(l_i > 0, l_i, 1)[:, None], 0)
    tl.store(_tile(O, z, h, soz, soh, offs_m[:, None], offs_dv[None, :], sol, sod),
             _down(out, O.dtype.element_ty), mask=(offs_m[:, None] < Lq) & (offs_dv[None, :] < DV))
    lse = tl.where(l_i > 0, m_i + tl.log(tl.where(l_i > 0, l_i, 1)), float("inf"))
    tl.store(LSE + q_rows, lse, mask=offs_m < Lq)


@cached
@triton.jit
def _dropout_mask_kernel(KEEP, n, seed: tl.uint64, offset: tl.uint64, p: tl.float32,
                         BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    w0, _, _, _ = tl.randint4x(seed, offset + idx.to(tl.uint64))
    tl.store(KEEP + idx, tl.random.uint_to_uniform_float(w0) >= p, mask=idx < n)


def _mask_args(q, mask):
    if mask is None:
        return q, _NONE, (0, 0, 0, 0)
    kind = _BOOL if mask.dtype.name == "bool" else _ADD
    return mask, kind, tuple(mask.stride())


def _st(t):
    return tuple(t.stride())


def _dims(q, k, v):
    Z, Hq, Lq, D = q.shape
    return Z, Hq, k.shape[1], Lq, k.shape[2], D, v.shape[3]


def _common(q, mask, scale, causal, dropout_p, seed, offset):
    m, kind, ms = _mask_args(q, mask)
    ieee = q.dtype.name in ("float32", "float64")
    sc = float(scale)
    return m, ms, dict(MASK=kind, CAUSAL=bool(causal), DROP=dropout_p > 0, IEEE=ieee), \
        (int(seed), int(offset), float(dropout_p),
         1.0 / (1.0 - dropout_p) if dropout_p < 1 else 0.0), sc


def _sparse_args(q, blocks):
    """Kernel arguments of a block layout ``blocks`` = (num, idx, full_num, full_idx, Q block,
    KV block), int32 num (Bm, Hm, R) and idx (Bm, Hm, R, C), contiguous, full_* of the
    same shapes (Bm, Hm of 1 broadcast); a dummy set when None (the dense path). The
    packed-sequence arguments (cu_seq_q, cu_seq_k, seqused_k, window) follow, dummies here."""
    if blocks is None:
        return (q, q, q, q, 0, 0, 0, q, q, q, 0, 0), dict(SPARSE=False, QBS=1, KBS=1)
    num, idx, fnum, fidx, qbs, kbs = blocks
    Bm, Hm, R, C = idx.shape
    nsb = Hm * R if Bm > 1 else 0
    nsh = R if Hm > 1 else 0
    return (num, idx, fnum, fidx, nsb, nsh, C, q, q, q, 0, 0), \
        dict(SPARSE=True, QBS=int(qbs), KBS=int(kbs))


def _sparse_tiles(bm, bn, blocks):
    """Tiles that divide the BlockMask's blocks (both powers of two)."""
    if blocks is None:
        return bm, bn
    return min(bm, int(blocks[4])), min(bn, int(blocks[5]))


def _forward(q, k, v, mask, kind, blocks, out, lse, scale, causal, dropout_p, seed, offset):
    Z, Hq, Hkv, Lq, Lk, D, Dv = _dims(q, k, v)
    if out.numel() == 0:
        return
    m, ms, flags, rng, sc = _common(q, mask, scale, causal, dropout_p, seed, offset)
    if kind is not None:
        flags["MASK"] = kind
    sp, spf = _sparse_args(q, blocks)
    bm, bn, warps = _blocks(max(D, Dv), False)
    bm, bn = _sparse_tiles(bm, bn, blocks)
    grid = (cdiv(Lq, bm), Z * Hq)
    _fwd_kernel[grid](q, k, v, m, out, lse, sc, Hq, Hkv, Lq, Lk, D, Dv, *_st(q), *_st(k),
                      *_st(v), *_st(out), *ms, *rng, *sp,
                      BM=bm, BN=bn, BD=_pow2(D), BDV=_pow2(Dv), num_warps=warps, **flags,
                      **spf)


def sdpa_forward(q, k, v, mask, out, lse, scale, causal, dropout_p, seed, offset):
    """out (Z, Hq, Lq, Dv) and lse (Z, Hq, Lq) of softmax(q k^T * scale + mask) v."""
    _forward(q, k, v, mask, None, None, out, lse, scale, causal, dropout_p, seed, offset)


def flex_forward(q, k, v, mask, kv_blocks, out, lse, scale):
    """sdpa_forward restricted to a BlockMask: each query block walks only the key blocks
    ``kv_blocks`` = (num, idx, full_num, full_idx, Q_BLOCK_SIZE, KV_BLOCK_SIZE) lists;
    ``mask`` (bool, a view of shape (Z, Hq, Lq, Lk), or None: keep all) applies in the
    partial blocks, not in the full ones."""
    _forward(q, k, v, mask, _BOOL if mask is not None else _NONE, kv_blocks, out, lse,
             scale, False, 0.0, 0, 0)


def sdpa_dropout_mask(keep, dropout_p, seed, offset):
    """keep (contiguous bool, element i = (zh * Lq + r) * Lk + c): the dropout keep mask."""
    n = keep.numel()
    if n:
        _dropout_mask_kernel[(cdiv(n, 1024),)](keep, n, int(seed), int(offset),
                                               float(dropout_p), BLOCK=1024)


# the backward kernels and launchers use the helpers above
from .attention_backward import flex_backward, sdpa_backward  # noqa: E402,F401
