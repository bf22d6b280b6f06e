"""framework.nn.attention.varlen: attention over packed variable-length sequences (PyTorch's
``torch.nn.attention.varlen``), as training on packed documents uses it: no padding, and no
sequence attends to another. The computation lives in framework/_ops/varlen_attention.py."""
import math
from typing import NamedTuple

from ...autograd.function import Function
from ..._ops import varlen_attention as _varlen

__all__ = ["varlen_attn", "AuxRequest"]


class AuxRequest(NamedTuple):
    """Request which auxiliary outputs to compute from varlen_attn.

    Each field is a boolean indicating whether that auxiliary output should be computed."""
    lse: bool = False


class _VarlenAttn(Function):
    @staticmethod
    def forward(ctx, query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, scale, window,
                seqused_k):
        out, lse = _varlen.forward(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k,
                                   scale, window, seqused_k)
        ctx.save_for_backward(query, key, value, cu_seq_q, cu_seq_k, out, lse)
        ctx.args = (max_q, max_k, scale, window, seqused_k is not None)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, grad_out, grad_lse):
        max_q, max_k, scale, window, used = ctx.args
        if used:
            raise RuntimeError("varlen_attn: seqused_k is inference-only (not supported in "
                               "backward)")
        q, k, v, cu_q, cu_k, out, lse = ctx.saved_tensors
        dq, dk, dv = _varlen.backward(grad_out, q, k, v, cu_q, cu_k, max_q, max_k, out, lse,
                                      scale, window)
        return dq, dk, dv, None, None, None, None, None, None, None


def varlen_attn(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, *, return_aux=None,
                scale=None, window_size=(-1, -1), enable_gqa=False, seqused_k=None,
                block_table=None, num_splits=None):
    r"""Compute variable-length attention using Flash Attention.

    query (T_q, H_q, D), key and value (T_k, H_kv, D) hold the sequences packed along dim 0;
    cu_seq_q and cu_seq_k (int32, (N+1,)) their cumulative offsets, max_q and max_k the
    longest lengths. ``window_size`` = (left, right): (-1, -1) full attention, (-1, 0)
    causal, (W, 0) causal with a sliding window of W (aligned to the bottom-right corner
    where the query and key lengths differ). Returns the output (T_q, H_q, D), and the
    log-sum-exp (H_q, T_q) with it when ``return_aux.lse`` is True. ``num_splits`` does not
    change the result here (one split)."""
    num_heads_q = query.size(1)
    num_heads_k = key.size(2) if block_table is not None else key.size(1)
    if not enable_gqa and num_heads_q != num_heads_k:
        raise ValueError(
            f"Expect query and key/value to have the same number of heads "
            f"but got Hq={num_heads_q} and Hkv={num_heads_k}. "
            f"Try setting enable_gqa=True for GQA.")
    if enable_gqa and num_heads_q % num_heads_k != 0:
        raise ValueError(
            f"Expect number of query heads to be a multiple of kv heads for GQA "
            f"but got Hq={num_heads_q} and Hkv={num_heads_k}.")
    window = tuple(int(w) for w in window_size)
    _varlen.check(query, key, value, cu_seq_q, cu_seq_k, seqused_k, block_table, window)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    out, lse = _VarlenAttn.apply(query, key, value, cu_seq_q, cu_seq_k, int(max_q),
                                 int(max_k), float(scale), window, seqused_k)
    if return_aux is not None and return_aux.lse:
        return out, lse
    return out
