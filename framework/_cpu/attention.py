"""CPU launchers: scaled dot-product attention (native/attention.cpp), the same launchers
as framework/kernels/attention.py. The native kernels compute in float32 or float64:
16-bit inputs are converted to float32 first and the results converted back. The inputs
(q, k, v, out, dout) go by pointer and their 4 strides, with a contiguous last dimension
(framework/_ops/attention.py sees to it); the native kernels write contiguous results, copied
into out, dq, dk, dv where those are laid out otherwise."""
from .. import _C, _dtype
from . import copy as _copy

_HALF = ("float16", "bfloat16")


def _mask_args(mask):
    if mask is None:
        return 0, 0, []
    kind = 1 if mask.dtype is _dtype.bool else 2
    return mask.data_ptr(), kind, list(mask.stride())


def _st(t):
    return list(t._stride)


def _dims(q, k, v):
    Z, Hq, Lq, D = q.shape
    return [Z, Hq, k.shape[1], Lq, k.shape[2], D, v.shape[3]]


def _f32(t):
    """t itself for float32/64, else a float32 copy."""
    if t.dtype.name not in _HALF:
        return t
    from .._ops import alloc
    res = alloc.empty(t._shape, _dtype.float32, t._storage.device)
    _copy.copy(res, t, t._stride)
    return res


def _result(t):
    """Where the native kernel writes ``t``: t itself when it is contiguous float32/64, else a
    contiguous float32/64 buffer that _back copies into t."""
    if t.dtype.name not in _HALF and t.is_contiguous():
        return t
    from .._ops import alloc
    dt = _dtype.float32 if t.dtype.name in _HALF else t.dtype
    return alloc.empty(t._shape, dt, t._storage.device)


def _back(dst, src):
    if src is not dst:
        _copy.copy(dst, src, src._stride)


def sdpa_forward(q, k, v, mask, out, lse, scale, causal, dropout_p, seed, offset):
    """out (Z, Hq, Lq, Dv) and lse (Z, Hq, Lq) of softmax(q k^T * scale + mask) v."""
    if out.numel() == 0:
        return
    res = _result(out)
    q, k, v = _f32(q), _f32(k), _f32(v)
    mp, kind, ms = _mask_args(mask)
    _C.sdpa_forward(q.dtype.code, q.data_ptr(), _st(q), k.data_ptr(), _st(k), v.data_ptr(),
                    _st(v), mp, kind, ms, res.data_ptr(), lse.data_ptr(), _dims(q, k, v),
                    float(scale), bool(causal), float(dropout_p), int(seed), int(offset))
    _back(out, res)


def sdpa_backward(q, k, v, mask, out, lse, dout, dq, dk, dv, scale, causal, dropout_p, seed,
                  offset):
    """dq, dk, dv (contiguous) of sdpa_forward given dout (of q's dtype; q, k, v, out and
    dout with a contiguous last dimension)."""
    q, k, v, out, dout = _f32(q), _f32(k), _f32(v), _f32(out), _f32(dout)
    rq, rk, rv = _result(dq), _result(dk), _result(dv)
    mp, kind, ms = _mask_args(mask)
    _C.sdpa_backward(q.dtype.code, q.data_ptr(), _st(q), k.data_ptr(), _st(k), v.data_ptr(),
                     _st(v), mp, kind, ms, out.data_ptr(), _st(out), lse.data_ptr(),
                     dout.data_ptr(), _st(dout), rq.data_ptr(), rk.data_ptr(), rv.data_ptr(),
                     _dims(q, k, v), float(scale), bool(causal), float(dropout_p), int(seed),
                     int(offset))
    _back(dq, rq)
    _back(dk, rk)
    _back(dv, rv)


def sdpa_dropout_mask(keep, dropout_p, seed, offset):
    """keep (contiguous bool, element i = (zh * Lq + r) * Lk + c): the dropout keep mask."""
    _C.sdpa_dropout_mask(keep.data_ptr(), keep.numel(), float(dropout_p), int(seed),
                         int(offset))


def _positions(mask, kv_blocks, shape):
    """The bool (Z, Hq, Lq, Lk) view of which positions take part under a BlockMask, as the
    cuda kernels decide: listed blocks only, all of a full block, ``mask`` in a partial
    one. The CPU kernels take it as an ordinary mask (materialised, not block-skipped)."""
    import numpy as np
    import framework
    num, idx, fnum, fidx, qbs, kbs = kv_blocks
    Z, Hq, Lq, Lk = shape

    def dense(n, i):
        n, i = n.numpy(), i.numpy()
        C = i.shape[-1]
        cols = np.where(np.arange(C) < n[..., None], i, C)
        out = np.zeros(i.shape[:-1] + (C + 1,), np.uint8)
        np.put_along_axis(out, cols.astype(np.int64), 1, -1)
        return out[..., :C]

    code = dense(num, idx) + 2 * dense(fnum, fidx)
    code = code[:, :, np.arange(Lq) // int(qbs)][..., np.arange(Lk) // int(kbs)]
    keep = (code == 2) | ((code == 1) if mask is None else ((code == 1) & mask.numpy()))
    return framework.from_numpy(np.ascontiguousarray(keep)).expand(Z, Hq, Lq, Lk)


def flex_forward(q, k, v, mask, kv_blocks, out, lse, scale):
    """sdpa_forward restricted to a BlockMask (see framework/kernels/attention.py)."""
    pos = _positions(mask, kv_blocks, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]))
    sdpa_forward(q, k, v, pos, out, lse, scale, False, 0.0, 0, 0)


def flex_backward(q, k, v, mask, kv_blocks, q_blocks, out, lse, dout, dq, dk, dv, scale):
    """dq, dk, dv of flex_forward (``q_blocks``, the transposed layout, is not needed)."""
    pos = _positions(mask, kv_blocks, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]))
    sdpa_backward(q, k, v, pos, out, lse, dout, dq, dk, dv, scale, False, 0.0, 0, 0)
