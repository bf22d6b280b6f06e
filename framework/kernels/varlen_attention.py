"""Launchers of the flash attention kernels (framework/kernels/attention.py) in their VARLEN
mode: packed variable-length sequences, as nn.attention.varlen.varlen_attn takes them
(framework/_ops/varlen_attention.py). q (T_q, Hq, D), k (T_k, Hkv, D), v (T_k, Hkv, Dv) are
read as (1, H, T, D) through their strides; a program of the grid (query or key blocks,
heads, sequences) reads its sequence's start and end from cu_seq_q / cu_seq_k, moves its
pointers to that start and masks rows and columns past the end, so no program reads another
sequence. lse is (Hq, T_q). The window (left, right) is flash attention's, aligned to the
bottom-right corner of each sequence; -1 is unbounded.
"""
from .attention import _NONE, _blocks, _fwd_kernel, _pow2
from .attention_backward import _delta_kernel, _dkdv_kernel, _dq_kernel
from .launcher import cdiv

_INF = 1 << 30     # a window side of -1: unbounded


def _packed_st(t):
    """The 4 strides (z, h, l, d) of a packed (T, H, D) tensor read as (1, H, T, D)."""
    st = t.stride()
    return 0, st[1], st[0], st[2]


def _varlen_args(q, cu_q, cu_k, seqused_k, window):
    wl, wr = (_INF if w < 0 else int(w) for w in window)
    used = 1 if seqused_k is None else 2
    flags = dict(MASK=_NONE, CAUSAL=False, DROP=False,
                 IEEE=q.dtype.name in ("float32", "float64"), VARLEN=used,
                 WIN=tuple(window) != (-1, -1))
    return (q, q, q, q, 0, 0, 0, cu_q, cu_k, cu_k if seqused_k is None else seqused_k,
            wl, wr), flags


def varlen_forward(q, k, v, cu_q, cu_k, seqused_k, max_q, out, lse, scale, window):
    """Attention within each packed sequence: q (T_q, Hq, D), k (T_k, Hkv, D), v (T_k, Hkv,
    Dv), sequence n = rows cu_q[n]:cu_q[n+1] of q and cu_k[n]:cu_k[n+1] of k, v (int32
    offsets; only the first seqused_k[n] keys where given); out (T_q, Hq, Dv) and lse (Hq,
    T_q). ``window`` = (left, right), -1 unbounded, aligned to the bottom-right corner."""
    Tq, Hq, D = q.shape
    Tk, Hkv, _ = k.shape
    Dv = v.shape[2]
    N = cu_q.shape[0] - 1
    if out.numel() == 0 or N == 0 or max_q == 0:
        return
    sp, flags = _varlen_args(q, cu_q, cu_k, seqused_k, window)
    bm, bn, warps = _blocks(max(D, Dv), False)
    _fwd_kernel[(cdiv(max_q, bm), Hq, N)](
        q, k, v, q, out, lse, float(scale), Hq, Hkv, Tq, Tk, D, Dv, *_packed_st(q),
        *_packed_st(k), *_packed_st(v), *_packed_st(out), 0, 0, 0, 0, 0, 0, 0.0, 0.0, *sp,
        BM=bm, BN=bn, BD=_pow2(D), BDV=_pow2(Dv), num_warps=warps, **flags)


def varlen_backward(q, k, v, cu_q, cu_k, max_q, max_k, out, lse, dout, dq, dk, dv, scale,
                    window):
    """dq, dk, dv (packed as q, k, v; rows outside every sequence are left as they are) of
    varlen_forward given dout."""
    from .._ops import alloc
    Tq, Hq, D = q.shape
    Tk, Hkv, _ = k.shape
    Dv = v.shape[2]
    N = cu_q.shape[0] - 1
    if N == 0 or Tq == 0 or Tk == 0:
        return
    sp, flags = _varlen_args(q, cu_q, cu_k, None, window)
    bm, bn, warps = _blocks(max(D, Dv), True)
    delta = alloc.empty(tuple(lse.shape), lse.dtype, lse._storage.device)
    _delta_kernel[(cdiv(Tq, bm), Hq)](out, dout, delta, Hq, Tq, Dv, *_packed_st(out),
                                      *_packed_st(dout), BM=bm, BDV=_pow2(Dv))
    st = _packed_st(q) + _packed_st(k) + _packed_st(v) + _packed_st(dout)
    rest = (0, 0, 0, 0, 0, 0, 0.0, 0.0) + sp
    meta = dict(BM=bm, BN=bn, BD=_pow2(D), BDV=_pow2(Dv), num_warps=warps, **flags)
    _dkdv_kernel[(cdiv(max_k, bn), Hkv, N)](q, k, v, q, dout, lse, delta, dk, dv,
                                            float(scale), Hq, Hkv, Tq, Tk, D, Dv, *st,
                                            *_packed_st(dk), *_packed_st(dv), *rest, **meta)
    _dq_kernel[(cdiv(max_q, bm), Hq, N)](q, k, v, q, dout, lse, delta, dq, float(scale), Hq,
                                         Hkv, Tq, Tk, D, Dv, *st, *_packed_st(dq), *rest,
                                         **meta)
