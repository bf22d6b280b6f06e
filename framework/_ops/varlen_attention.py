"""Attention over packed variable-length sequences (``nn.attention.varlen.varlen_attn``):
q (T_q, Hq, D), k (T_k, Hkv, D), v (T_k, Hkv, Dv) hold N sequences one after another;
sequence n is rows cu_seq_q[n]:cu_seq_q[n+1] of q and cu_seq_k[n]:cu_seq_k[n+1] of k and v,
and attends to nothing outside itself. The result is out (T_q, Hq, Dv) and each row's
log-sum-exp lse (Hq, T_q).

cuda: the flash attention kernels in their VARLEN mode (framework/kernels/attention.py), one
launch over (query blocks, heads, sequences). cpu: the native attention kernel once per
sequence, on (1, H, L, D) views of its rows, with the window as a bool mask.

The window (left, right) follows flash attention: query i of a sequence of Lq queries and
Lk keys sits over key i + Lk - Lq (the bottom-right corner) and sees the keys ``left``
before it to ``right`` after it, -1 for unbounded; (-1, 0) is causal. A query that sees no
key gets output 0 and lse +inf.
"""
import numpy as np

import framework

from .. import _dtype
from . import alloc
from .attention import acc_dtype, qkv_device, rowwise
from .pointwise import cpp_type_name


def check(q, k, v, cu_q, cu_k, seqused_k, block_table, window):
    """The device of valid varlen_attn arguments, or a RuntimeError naming what is wrong."""
    if block_table is not None:
        raise NotImplementedError("varlen_attn: block_table (paged KV cache) is not "
                                  "supported; pass key and value packed as (T_k, H_kv, D)")
    for name, t in (("query", q), ("key", k), ("value", v)):
        if not isinstance(t, framework.Tensor) or t.dim() != 3:
            got = f"{t.dim()}-D" if isinstance(t, framework.Tensor) else type(t).__name__
            raise RuntimeError(f"varlen_attn: expected {name} of shape (T, H, D), got {got}")
    dev = qkv_device("varlen_attn", q, k, v)
    if k.size(2) != q.size(2) or tuple(v.shape[:2]) != tuple(k.shape[:2]):
        raise RuntimeError(f"varlen_attn: shapes do not match: query {list(q.shape)}, key "
                           f"{list(k.shape)}, value {list(v.shape)}")
    if cu_k is None:
        raise RuntimeError("varlen_attn: cu_seq_k is required without block_table")
    for name, t in (("cu_seq_q", cu_q), ("cu_seq_k", cu_k), ("seqused_k", seqused_k)):
        if t is None:
            continue
        if not isinstance(t, framework.Tensor) or t.dtype is not _dtype.int32:
            got = cpp_type_name(t.dtype) if isinstance(t, framework.Tensor) else type(t).__name__
            raise RuntimeError(f"varlen_attn: {name} must have dtype int32, got {got}")
        if t.dim() != 1:
            raise RuntimeError(f"varlen_attn: {name} must be 1-D, got shape {list(t.shape)}")
        if t._storage.device is not dev:
            raise RuntimeError(f"varlen_attn: {name} on {t.device}, query on {q.device}")
    n = cu_q.size(0)
    if n < 1 or cu_k.size(0) != n:
        raise RuntimeError(f"varlen_attn: expected cu_seq_q and cu_seq_k of one shape (N+1,),"
                           f" got {list(cu_q.shape)} and {list(cu_k.shape)}")
    if seqused_k is not None and seqused_k.size(0) != n - 1:
        raise RuntimeError(f"varlen_attn: expected seqused_k of shape [{n - 1}], got "
                           f"{list(seqused_k.shape)}")
    if len(window) != 2:
        raise ValueError(f"window_size must have length 2, got {len(window)}")
    return dev


def _rows(t, a, b):
    """Rows a:b of a packed (T, H, D) tensor as a (1, H, b - a, D) view."""
    return t[a:b].permute(1, 0, 2).unsqueeze(0)


def _window_mask(Lq, Lk, window, H):
    """The bool (1, H, Lq, Lk) mask of ``window`` (bottom-right aligned), or None."""
    if tuple(window) == (-1, -1):
        return None
    left, right = window
    d = np.arange(Lk)[None, :] - (np.arange(Lq)[:, None] + Lk - Lq)
    keep = np.ones((Lq, Lk), bool)
    if left >= 0:
        keep &= d >= -left
    if right >= 0:
        keep &= d <= right
    return framework.from_numpy(keep).expand(1, H, Lq, Lk)


def _spans(cu_q, cu_k, seqused_k):
    """[(q0, q1, k0, k1)] of each sequence (cpu: the offsets are read on the host)."""
    qs, ks = cu_q.tolist(), cu_k.tolist()
    used = seqused_k.tolist() if seqused_k is not None else None
    return [(qs[i], qs[i + 1], ks[i], ks[i] + used[i] if used else ks[i + 1])
            for i in range(len(qs) - 1)]


def forward(q, k, v, cu_q, cu_k, max_q, max_k, scale, window, seqused_k=None):
    """(out, lse) of attention within each packed sequence (see the module docstring)."""
    dev = q._storage.device
    Tq, Hq, _ = q.shape
    acc = acc_dtype(q.dtype)
    out = framework.zeros((Tq, Hq, v.size(2)), dtype=q.dtype, device=q.device)
    lse = framework.full((Hq, Tq), float("inf"), dtype=acc, device=q.device)
    if dev.type != "cpu":
        from ..kernels import varlen_attention as kernels
        kernels.varlen_forward(q, k, v, cu_q, cu_k, seqused_k, int(max_q), out, lse, scale,
                               window)
        return out, lse
    sdpa = alloc.backend(dev).attention.sdpa_forward
    for q0, q1, k0, k1 in _spans(cu_q, cu_k, seqused_k):
        if q1 <= q0 or k1 <= k0:
            continue
        o = alloc.empty((1, Hq, q1 - q0, v.size(2)), q.dtype, dev)
        s = alloc.empty((1, Hq, q1 - q0), acc, dev)
        sdpa(rowwise(_rows(q, q0, q1)), rowwise(_rows(k, k0, k1)), rowwise(_rows(v, k0, k1)),
             _window_mask(q1 - q0, k1 - k0, window, Hq), o, s, scale, False, 0.0, 0, 0)
        _rows(out, q0, q1).copy_(o)
        lse[:, q0:q1].copy_(s[0])
    return out, lse


def backward(dout, q, k, v, cu_q, cu_k, max_q, max_k, out, lse, scale, window):
    """(dq, dk, dv) of ``forward`` given the gradient of its output."""
    dev = q._storage.device
    dq, dk, dv = (framework.zeros(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v))
    dout = dout.to(q.dtype)
    if dev.type != "cpu":
        from ..kernels import varlen_attention as kernels
        kernels.varlen_backward(q, k, v, cu_q, cu_k, int(max_q), int(max_k), out, lse, dout,
                                dq, dk, dv, scale, window)
        return dq, dk, dv
    sdpa = alloc.backend(dev).attention.sdpa_backward
    Hq = q.size(1)
    for q0, q1, k0, k1 in _spans(cu_q, cu_k, None):
        if q1 <= q0 or k1 <= k0:
            continue
        g = [alloc.empty(_rows(t, a, b).shape, t.dtype, dev)
             for t, a, b in ((q, q0, q1), (k, k0, k1), (v, k0, k1))]
        sdpa(rowwise(_rows(q, q0, q1)), rowwise(_rows(k, k0, k1)), rowwise(_rows(v, k0, k1)),
             _window_mask(q1 - q0, k1 - k0, window, Hq), rowwise(_rows(out, q0, q1)),
             lse[:, q0:q1].contiguous().unsqueeze(0), rowwise(_rows(dout, q0, q1)),
             *g, scale, False, 0.0, 0, 0)
        _rows(dq, q0, q1).copy_(g[0])
        _rows(dk, k0, k1).copy_(g[1])
        _rows(dv, k0, k1).copy_(g[2])
    return dq, dk, dv
