"""Backward kernels of flash attention (Triton): delta = rowsum(dO * O), then dK/dV per key
block and dQ per query block, each recomputing P = exp(s - lse) tile by tile. The
layout, masks, block-sparse (SPARSE) and packed-sequence (VARLEN) modes and the dropout
stream are those of the forward, described in framework/kernels/attention.py."""
import triton
import triton.language as tl

from .attention import (_BOOL, _NONE, _acc, _blocks, _common, _dims, _dot, _keep, _pow2,
                        _scores, _seq, _span, _sparse_args, _sparse_tiles, _st, _tile)
from .launcher import cached, cdiv
from .pointwise import _down


@cached
@triton.jit
def _delta_kernel(O, DO, DELTA, Hq, Lq, DV, soz, soh, sol, sod, sdz, sdh, sdl, sdd,
                  BM: tl.constexpr, BDV: tl.constexpr):
    zh = tl.program_id(1)
    z = zh // Hq
    h = zh % Hq
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    rows = zh.to(tl.int64) * Lq + offs_m
    in_rows = offs_m < Lq
    offs = tl.arange(0, BDV)
    msk = in_rows[:, None] & (offs[None, :] < DV)
    acc_t = DELTA.dtype.element_ty
    o = tl.load(_tile(O, z, h, soz, soh, offs_m[:, None], offs[None, :], sol, sod), mask=msk,
                other=0).to(acc_t)
    do = tl.load(_tile(DO, z, h, sdz, sdh, offs_m[:, None], offs[None, :], sdl, sdd), mask=msk,
                 other=0).to(acc_t)
    tl.store(DELTA + rows, tl.sum(o * do, 1), mask=in_rows)


@triton.jit
def _dkdv_step(k, v, dk, dv, start, Q, M, DO, LSE, DELTA, z, h, zh, sqz, sqh, sql, sqd,
               sdz, sdh, sdl, sdd, ms0, ms1, ms2, ms3, offs_n, offs_d, offs_dv, Lq, Lk, D, DV,
               sc, seed, offset, p, ks, MASK: tl.constexpr, CAUSAL: tl.constexpr,
               DROP: tl.constexpr, IEEE: tl.constexpr, BM: tl.constexpr, wl=0, wr=0,
               WIN: tl.constexpr = False):
    """One query tile's share of (dk, dv) for this key block."""
    acc_t = dk.dtype
    offs_m = start + tl.arange(0, BM)
    q_rows = zh.to(tl.int64) * Lq + offs_m
    m_in = offs_m < Lq
    q = tl.load(_tile(Q, z, h, sqz, sqh, offs_m[:, None], offs_d[None, :], sql, sqd),
                mask=m_in[:, None] & (offs_d[None, :] < D), other=0)
    do = tl.load(_tile(DO, z, h, sdz, sdh, offs_m[:, None], offs_dv[None, :], sdl, sdd),
                 mask=m_in[:, None] & (offs_dv[None, :] < DV), other=0)
    lse = tl.load(LSE + q_rows, mask=m_in, other=float("inf"))
    delta = tl.load(DELTA + q_rows, mask=m_in, other=0)
    s, valid = _scores(q, tl.trans(k), sc, M, ms0, ms1, ms2, ms3, z, h, offs_m, offs_n,
                       Lq, Lk, MASK, CAUSAL, IEEE, wl, wr, WIN)
    pr = tl.where(valid, tl.exp(s - lse[:, None]), 0)
    dp = _dot(do, tl.trans(v), IEEE).to(acc_t)
    if DROP:
        keep = _keep(seed, offset, zh, offs_m, offs_n, Lq, Lk, p)
        pd = tl.where(keep, pr * ks, 0)
        dp = tl.where(keep, dp * ks, 0)
    else:
        pd = pr
    dv += _dot(_down(tl.trans(pd), do.dtype), do, IEEE).to(acc_t)
    ds = pr * (dp - delta[:, None])
    dk += _dot(_down(tl.trans(ds), q.dtype), q, IEEE).to(acc_t)
    return dk, dv


@cached
@triton.jit
def _dkdv_kernel(Q, K, V, M, DO, LSE, DELTA, DK, DV_, scale: tl.float64, Hq, Hkv, Lq, Lk, D, DV,
                 sqz, sqh, sql, sqd, skz, skh, skl, skd, svz, svh, svl, svd,
                 sdz, sdh, sdl, sdd, s1z, s1h, s1l, s1d, s2z, s2h, s2l, s2d,
                 ms0, ms1, ms2, ms3, seed: tl.uint64, offset: tl.uint64,
                 p: tl.float32, keep_scale: tl.float64, BNUM, BIDX, FNUM, FIDX, nsb, nsh, NC,
                 CUQ, CUK, KUSED, WL, WR,
                 MASK: tl.constexpr, CAUSAL: tl.constexpr, DROP: tl.constexpr,
                 IEEE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr,
                 BDV: tl.constexpr, SPARSE: tl.constexpr = False, QBS: tl.constexpr = 1,
                 KBS: tl.constexpr = 1, VARLEN: tl.constexpr = 0,
                 WIN: tl.constexpr = False):
    pid = tl.program_id(0)
    zk = tl.program_id(1)
    z = zk // Hkv
    hk = zk % Hkv
    group = Hq // Hkv
    LR = Lq
    if VARLEN != 0:
        Lq, Lk, q0, k0 = _seq(CUQ, CUK, KUSED, VARLEN)
        Q += q0 * sql
        DO += q0 * sdl
        LSE += q0
        DELTA += q0
        K += k0 * skl
        V += k0 * svl
        DK += k0 * s1l
        DV_ += k0 * s2l
    offs_n = pid * BN + tl.arange(0, BN)
    offs_d = tl.arange(0, BD)
    offs_dv = tl.arange(0, BDV)
    n_in = offs_n < Lk
    k = tl.load(_tile(K, z, hk, skz, skh, offs_n[:, None], offs_d[None, :], skl, skd),
                mask=n_in[:, None] & (offs_d[None, :] < D), other=0)
    v = tl.load(_tile(V, z, hk, svz, svh, offs_n[:, None], offs_dv[None, :], svl, svd),
                mask=n_in[:, None] & (offs_dv[None, :] < DV), other=0)
    acc_t = LSE.dtype.element_ty
    sc = _acc(scale, acc_t)
    ks = _acc(keep_scale, acc_t)
    dk = tl.zeros([BN, BD], acc_t)
    dv = tl.zeros([BN, BDV], acc_t)
    lo = 0
    if CAUSAL:
        lo = (pid * BN) // BM * BM      # rows above the first key of the block see none
    if VARLEN != 0:
        # the step indexes lse and delta by row only: point them at head h
        lo, hi = _span(pid * BN, BN, Lk, Lq, WR, WL, BM, WIN)
        for g in range(0, group):
            h = hk * group + g
            for start in range(lo, hi, BM):
                dk, dv = _dkdv_step(k, v, dk, dv, start, Q, M, DO, LSE + h * LR,
                                    DELTA + h * LR, z, h, z * 0, sqz, sqh, sql, sqd,
                                    sdz, sdh, sdl, sdd, ms0, ms1, ms2, ms3, offs_n, offs_d,
                                    offs_dv, Lq, Lk, D, DV, sc, seed, offset, p, ks, 0, False,
                                    False, IEEE, BM, WL, WR, WIN)
    else:
        for g in range(0, group):
            h = hk * group + g
            zh = z * Hq + h
            if SPARSE:
                # only the query blocks the BlockMask lists for this key block (its transpose)
                nb = z * nsb + h * nsh + (pid * BN) // KBS
                for i in range(0, tl.load(BNUM + nb)):
                    q0 = tl.load(BIDX + nb.to(tl.int64) * NC + i) * QBS
                    for start in range(q0, tl.minimum(q0 + QBS, Lq), BM):
                        dk, dv = _dkdv_step(k, v, dk, dv, start, Q, M, DO, LSE, DELTA, z, h, zh,
                                            sqz, sqh, sql, sqd, sdz, sdh, sdl, sdd,
                                            ms0, ms1, ms2, ms3, offs_n, offs_d, offs_dv, Lq, Lk,
                                            D, DV, sc, seed, offset, p, ks, MASK, False, False,
                                            IEEE, BM)
                for i in range(0, tl.load(FNUM + nb)):
                    q0 = tl.load(FIDX + nb.to(tl.int64) * NC + i) * QBS
                    for start in range(q0, tl.minimum(q0 + QBS, Lq), BM):
                        dk, dv = _dkdv_step(k, v, dk, dv, start, Q, M, DO, LSE, DELTA, z, h, zh,
                                            sqz, sqh, sql, sqd, sdz, sdh, sdl, sdd,
                                            ms0, ms1, ms2, ms3, offs_n, offs_d, offs_dv, Lq, Lk,
                                            D, DV, sc, seed, offset, p, ks, 0, False, False,
                                            IEEE, BM)
            else:
                for start in range(lo, Lq, BM):
                    dk, dv = _dkdv_step(k, v, dk, dv, start, Q, M, DO, LSE, DELTA, z, h, zh,
                                        sqz, sqh, sql, sqd, sdz, sdh, sdl, sdd,
                                        ms0, ms1, ms2, ms3, offs_n, offs_d, offs_dv, Lq, Lk,
                                        D, DV, sc, seed, offset, p, ks, MASK, CAUSAL, DROP,
                                        IEEE, BM)
    tl.store(_tile(DK, z, hk, s1z, s1h, offs_n[:, None], offs_d[None, :], s1l, s1d),
             _down(dk * sc, DK.dtype.element_ty), mask=n_in[:, None] & (offs_d[None, :] < D))
    tl.store(_tile(DV_, z, hk, s2z, s2h, offs_n[:, None], offs_dv[None, :], s2l, s2d),
             _down(dv, DV_.dtype.element_ty), mask=n_in[:, None] & (offs_dv[None, :] < DV))


@triton.jit
def _dq_step(q, do, lse, delta, dq, start, K, V, M, z, h, hk, zh, skz, skh, skl, skd,
             svz, svh, svl, svd, ms0, ms1, ms2, ms3, offs_m, offs_d, offs_dv, Lq, Lk, D, DV,
             sc, seed, offset, p, ks, MASK: tl.constexpr, CAUSAL: tl.constexpr,
             DROP: tl.constexpr, IEEE: tl.constexpr, BN: tl.constexpr, wl=0, wr=0,
             WIN: tl.constexpr = False):
    """One key tile's share of dq for this query block."""
    acc_t = dq.dtype
    offs_n = start + tl.arange(0, BN)
    n_in = offs_n < Lk
    k = tl.load(_tile(K, z, hk, skz, skh, offs_n[:, None], offs_d[None, :], skl, skd),
                mask=n_in[:, None] & (offs_d[None, :] < D), other=0)
    vt = tl.load(_tile(V, z, hk, svz, svh, offs_n[None, :], offs_dv[:, None], svl, svd),
                 mask=n_in[None, :] & (offs_dv[:, None] < DV), other=0)
    s, valid = _scores(q, tl.trans(k), sc, M, ms0, ms1, ms2, ms3, z, h, offs_m, offs_n,
                       Lq, Lk, MASK, CAUSAL, IEEE, wl, wr, WIN)
    pr = tl.where(valid, tl.exp(s - lse[:, None]), 0)
    dp = _dot(do, vt, IEEE).to(acc_t)
    if DROP:
        keep = _keep(seed, offset, zh, offs_m, offs_n, Lq, Lk, p)
        dp = tl.where(keep, dp * ks, 0)
    ds = pr * (dp - delta[:, None])
    dq += _dot(_down(ds, k.dtype), k, IEEE).to(acc_t)
    return dq


@cached
@triton.jit
def _dq_kernel(Q, K, V, M, DO, LSE, DELTA, DQ, scale: tl.float64, Hq, Hkv, Lq, Lk, D, DV,
               sqz, sqh, sql, sqd, skz, skh, skl, skd, svz, svh, svl, svd,
               sdz, sdh, sdl, sdd, s1z, s1h, s1l, s1d, ms0, ms1, ms2, ms3, seed: tl.uint64, offset: tl.uint64,
               p: tl.float32, keep_scale: tl.float64, BNUM, BIDX, FNUM, FIDX, nsb, nsh, NC,
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
    LR = Lq
    if VARLEN != 0:
        Lq, Lk, q0, k0 = _seq(CUQ, CUK, KUSED, VARLEN)
        Q += q0 * sql
        DO += q0 * sdl
        DQ += q0 * s1l
        K += k0 * skl
        V += k0 * svl
        LSE += q0
        DELTA += q0
    offs_m = pid * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, BD)
    offs_dv = tl.arange(0, BDV)
    q_rows = zh.to(tl.int64) * LR + offs_m
    m_in = offs_m < Lq
    q = tl.load(_tile(Q, z, h, sqz, sqh, offs_m[:, None], offs_d[None, :], sql, sqd),
                mask=m_in[:, None] & (offs_d[None, :] < D), other=0)
    do = tl.load(_tile(DO, z, h, sdz, sdh, offs_m[:, None], offs_dv[None, :], sdl, sdd),
                 mask=m_in[:, None] & (offs_dv[None, :] < DV), other=0)
    acc_t = LSE.dtype.element_ty
    sc = _acc(scale, acc_t)
    ks = _acc(keep_scale, acc_t)
    lse = tl.load(LSE + q_rows, mask=m_in, other=float("inf"))
    delta = tl.load(DELTA + q_rows, mask=m_in, other=0)
    dq = tl.zeros([BM, BD], acc_t)
    if SPARSE:
        nb = z * nsb + h * nsh + (pid * BM) // QBS
        for i in range(0, tl.load(BNUM + nb)):
            lo = tl.load(BIDX + nb.to(tl.int64) * NC + i) * KBS
            for start in range(lo, tl.minimum(lo + KBS, Lk), BN):
                dq = _dq_step(q, do, lse, delta, dq, start, K, V, M, z, h, hk, zh,
                              skz, skh, skl, skd, svz, svh, svl, svd, ms0, ms1, ms2, ms3,
                              offs_m, offs_d, offs_dv, Lq, Lk, D, DV, sc, seed, offset, p, ks,
                              MASK, False, False, IEEE, BN)
        for i in range(0, tl.load(FNUM + nb)):
            lo = tl.load(FIDX + nb.to(tl.int64) * NC + i) * KBS
            for start in range(lo, tl.minimum(lo + KBS, Lk), BN):
                dq = _dq_step(q, do, lse, delta, dq, start, K, V, M, z, h, hk, zh,
                              skz, skh, skl, skd, svz, svh, svl, svd, ms0, ms1, ms2, ms3,
                              offs_m, offs_d, offs_dv, Lq, Lk, D, DV, sc, seed, offset, p, ks,
                              0, False, False, IEEE, BN)
    elif VARLEN != 0:
        lo, hi = _span(pid * BM, BM, Lq, Lk, WL, WR, BN, WIN)
        for start in range(lo, hi, BN):
            dq = _dq_step(q, do, lse, delta, dq, start, K, V, M, z, h, hk, zh,
                          skz, skh, skl, skd, svz, svh, svl, svd, ms0, ms1, ms2, ms3,
                          offs_m, offs_d, offs_dv, Lq, Lk, D, DV, sc, seed, offset, p, ks,
                          0, False, False, IEEE, BN, WL, WR, WIN)
    else:
        hi = Lk
        if CAUSAL:
            hi = tl.minimum(Lk, (pid + 1) * BM)
        for start in range(0, hi, BN):
            dq = _dq_step(q, do, lse, delta, dq, start, K, V, M, z, h, hk, zh,
                          skz, skh, skl, skd, svz, svh, svl, svd, ms0, ms1, ms2, ms3,
                          offs_m, offs_d, offs_dv, Lq, Lk, D, DV, sc, seed, offset, p, ks,
                          MASK, CAUSAL, DROP, IEEE, BN)
    tl.store(_tile(DQ, z, h, s1z, s1h, offs_m[:, None], offs_d[None, :], s1l, s1d),
             _down(dq * sc, DQ.dtype.element_ty), mask=m_in[:, None] & (offs_d[None, :] < D))


def _backward(q, k, v, mask, kind, kv_blocks, q_blocks, out, lse, dout, dq, dk, dv, scale,
              causal, dropout_p, seed, offset):
    from .._ops import alloc
    Z, Hq, Hkv, Lq, Lk, D, Dv = _dims(q, k, v)
    if Lk == 0 or Lq == 0:
        for t in (dq, dk, dv):
            if t.numel():
                t.zero_()
        return
    m, ms, flags, rng, sc = _common(q, mask, scale, causal, dropout_p, seed, offset)
    if kind is not None:
        flags["MASK"] = kind
    bm, bn, warps = _blocks(max(D, Dv), True)
    bm, bn = _sparse_tiles(bm, bn, kv_blocks)
    delta = alloc.empty(tuple(lse.shape), lse.dtype, lse._storage.device)
    _delta_kernel[(cdiv(Lq, bm), Z * Hq)](out, dout, delta, Hq, Lq, Dv, *_st(out),
                                          *_st(dout), BM=bm, BDV=_pow2(Dv))
    s = sc
    st = _st(q) + _st(k) + _st(v) + _st(dout)
    sp, spf = _sparse_args(q, q_blocks)
    _dkdv_kernel[(cdiv(Lk, bn), Z * Hkv)](q, k, v, m, dout, lse, delta, dk, dv, s, Hq,
                                          Hkv, Lq, Lk, D, Dv, *st, *_st(dk), *_st(dv), *ms,
                                          *rng, *sp, BM=bm, BN=bn,
                                          BD=_pow2(D), BDV=_pow2(Dv), num_warps=warps,
                                          **flags, **spf)
    sp, spf = _sparse_args(q, kv_blocks)
    _dq_kernel[(cdiv(Lq, bm), Z * Hq)](q, k, v, m, dout, lse, delta, dq, s, Hq, Hkv,
                                       Lq, Lk, D, Dv, *st, *_st(dq), *ms, *rng, *sp,
                                       BM=bm, BN=bn, BD=_pow2(D), BDV=_pow2(Dv),
                                       num_warps=warps, **flags, **spf)


def sdpa_backward(q, k, v, mask, out, lse, dout, dq, dk, dv, scale, causal, dropout_p, seed,
                  offset):
    """dq, dk, dv (written through their strides) of sdpa_forward given dout (of q's
    dtype)."""
    _backward(q, k, v, mask, None, None, None, out, lse, dout, dq, dk, dv, scale, causal,
              dropout_p, seed, offset)


def flex_backward(q, k, v, mask, kv_blocks, q_blocks, out, lse, dout, dq, dk, dv, scale):
    """dq, dk, dv of flex_forward; ``q_blocks`` is the transposed layout (for each key block
    the query blocks), which the dk/dv kernel walks."""
    _backward(q, k, v, mask, _BOOL if mask is not None else _NONE, kv_blocks, q_blocks, out,
              lse, dout, dq, dk, dv, scale, False, 0.0, 0, 0)
