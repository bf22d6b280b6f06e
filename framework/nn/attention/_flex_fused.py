"""The fused path of ``flex_attention``: calls without a ``score_mod`` and with a
``BlockMask`` run the flash-attention kernels (framework/kernels/attention.py) block-sparse,
each query block walking only the key blocks the BlockMask lists (and each key block, in
the backward, only the query blocks of its transpose). ``mask_mod`` is evaluated once into
a bool mask of the shape its result broadcasts to (``(1, 1, L, S)`` for a mask that does
not read ``b`` or ``h``), read only inside the BlockMask's partial blocks; the
``B * H * L * S`` scores and probabilities are never materialised on cuda (the CPU kernels
take the materialised position mask instead).
"""
import framework
from framework.autograd import Function

from ..._ops import alloc, memory_format
from ..._ops.attention import _like, acc_dtype, rowwise


def _usable_block(n):
    return isinstance(n, int) and n >= 16 and n & (n - 1) == 0 and n < (1 << 30)


def _layout(num, idx, full_num, full_idx, qbs, kbs):
    """(num, idx, full_num, full_idx, qbs, kbs) as the launchers take them: int32,
    contiguous, the full pair of the same shapes (empty where there is none)."""
    num = num.to(framework.int32).contiguous()
    idx = idx.to(framework.int32).contiguous()
    if full_num is None:
        full_num, full_idx = framework.zeros_like(num), idx
    full_num = full_num.to(framework.int32).contiguous()
    full_idx = full_idx.to(framework.int32).contiguous()
    if tuple(full_num.shape) != tuple(num.shape) or tuple(full_idx.shape) != tuple(idx.shape):
        return None
    return num, idx, full_num, full_idx, qbs, kbs


def _block_layouts(block_mask):
    """(kv layout, q layout) of ``block_mask`` or None when the kernels cannot take it; cached
    on the BlockMask, which is usually reused for many calls."""
    bm = block_mask
    tensors = [getattr(bm, a) for a in bm._TENSOR_ATTRS]
    key = tuple((id(t), t._storage.version) if t is not None else None for t in tensors)
    cached = bm.__dict__.get("_fused_cache")
    if cached is not None and cached[0] == key:
        return cached[1]
    from .flex_attention import _transpose_ordered
    qbs, kbs = bm.BLOCK_SIZE
    res = None
    if _usable_block(qbs) and _usable_block(kbs):
        kv = _layout(bm.kv_num_blocks, bm.kv_indices, bm.full_kv_num_blocks,
                     bm.full_kv_indices, qbs, kbs)
        q_num, q_idx, fq_num, fq_idx = (bm.q_num_blocks, bm.q_indices, bm.full_q_num_blocks,
                                        bm.full_q_indices)
        if q_num is None:
            q_num, q_idx = _transpose_ordered(bm.kv_num_blocks, bm.kv_indices)
            if bm.full_kv_num_blocks is not None:
                fq_num, fq_idx = _transpose_ordered(bm.full_kv_num_blocks, bm.full_kv_indices)
        if (fq_num is None) != (bm.full_kv_num_blocks is None):
            kv = None
        q = _layout(q_num, q_idx, fq_num, fq_idx, qbs, kbs)
        if kv is not None and q is not None:
            res = (kv, q)
    bm._fused_cache = (key, res)
    return res


def fusable(query, key, value, score_mod, block_mask, want_lse, want_max):
    """Whether flex_attention can take the fused path for these arguments."""
    if score_mod is not None or block_mask is None or want_max:
        return False
    if not (query.dtype is key.dtype is value.dtype):
        return False
    if key.size(0) != query.size(0) or 0 in query.shape or 0 in key.shape:
        return False
    if want_lse and framework.is_grad_enabled() and any(
            t.requires_grad for t in (query, key, value)):
        return False    # the lse's own gradient is left to the eager path
    return _block_layouts(block_mask) is not None


def _partial_mask(block_mask, grids, shape):
    """The bool mask_mod mask, evaluated once over index grids and broadcast (a view) to
    ``shape``; None for noop_mask (every position of a listed block takes part)."""
    from .flex_attention import noop_mask
    if block_mask.mask_mod is noop_mask:
        return None
    m = block_mask.mask_mod(*grids)
    if m.dtype is not framework.bool:
        m = m.to(framework.bool)
    return m.expand(*shape)


class _FusedFlex(Function):
    @staticmethod
    def forward(ctx, q, k, v, mask, layouts, scale):
        dev = q._storage.device
        Z, Hq, L, _ = q.shape
        out = _like(q, (Z, Hq, L, v.size(3)), dev)
        q, k, v = rowwise(q), rowwise(k), rowwise(v)
        lse = alloc.empty((Z, Hq, L), acc_dtype(q.dtype), dev)
        alloc.backend(dev).attention.flex_forward(q, k, v, mask, layouts[0], out, lse, scale)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.mask, ctx.layouts, ctx.scale = mask, layouts, scale
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, grad_out, grad_lse):
        q, k, v, out, lse = ctx.saved_tensors
        dev = q._storage.device
        dq, dk, dv = memory_format.empty_like_pieces((q, k, v), q.dtype, dev)
        dout = rowwise(grad_out, q.dtype)
        alloc.backend(dev).attention.flex_backward(q, k, v, ctx.mask, ctx.layouts[0],
                                                   ctx.layouts[1], out, lse, dout, dq, dk,
                                                   dv, ctx.scale)
        return dq, dk, dv, None, None, None


def fused_flex_attention(query, key, value, block_mask, scale, want_lse):
    """(out, lse or None) of flex_attention through the block-sparse kernels; lse is
    -inf on rows where every position is masked (their output is 0)."""
    from .flex_attention import _index_grids
    B, Hq, L, _ = query.shape
    S = key.size(2)
    grids = _index_grids(B, Hq, L, S, query.device)
    mask = _partial_mask(block_mask, grids, (B, Hq, L, S))
    out, lse = _FusedFlex.apply(query, key, value, mask, _block_layouts(block_mask),
                                float(scale))
    if not want_lse:
        return out, None
    # the kernels mark an empty row with +inf (probabilities exp(s - lse) = 0 there)
    return out, lse.masked_fill(lse == float("inf"), float("-inf"))
