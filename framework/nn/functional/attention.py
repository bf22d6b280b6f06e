"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

``scaled_dot_product_attention`` brings its arguments to the 4-D layout of the fused
flash-attention op ``_fused_sdpa`` (framework/_ops/attention.py), whose derivative is its
backward kernel. ``multi_head_attention_forward`` projects, then calls it when no attention
weights are asked for (otherwise it is a composite that forms the weights).
"""
import math
import warnings

import framework
from framework import random as _random
from framework.backends import cuda as _sdp_switches
from framework._ops import attention as _attention_ops
from framework._ops import fused_linear as _fused_linear_ops
from framework._ops.pointwise import broadcast_shapes as _broadcast, cpp_type_name, type_name

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


# softmax, linear and dropout live in sibling files of this package; they are looked up
# on the package at call time (its namespace is complete by then).
def _softmax(x, dim):
    return framework.nn.functional.softmax(x, dim=dim)


def _linear(x, weight, bias):
    return framework.nn.functional.linear(x, weight, bias)


def _in_proj(x, weight, bias):
    """``linear(x, weight, bias)`` with the bias added in the GEMM's epilogue (the same
    result, without a pass that copies the bias into the output first)."""
    if bias is None:
        return _linear(x, weight, bias)
    return _fused_linear_ops.linear_act(x, weight, bias)


def _dropout(x, p):
    return framework.nn.functional.dropout(x, p=p, training=True)


def _check_sdpa_inputs(query, key, value, attn_mask, is_causal):
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead.")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{cpp_type_name(query.dtype)} key.dtype: {cpp_type_name(key.dtype)} and "
            f"value.dtype: {cpp_type_name(value.dtype)} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {type_name(query.dtype)}")
    if not (query.device == key.device == value.device):
        raise RuntimeError(
            "Expected query, key, and value to have the same device type, but got "
            f"query.device: {query.device.type} key.device: {key.device.type} and "
            f"value.device: {value.device.type} instead.")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should "
                               "not be set when is_causal=True")
        if attn_mask.dtype not in (framework.bool, framework.float32, query.dtype):
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but "
                f"got attn_mask.dtype: {cpp_type_name(attn_mask.dtype)} and  query.dtype: "
                f"{cpp_type_name(query.dtype)} instead.")


def _batch_numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _repeat_heads(t, times):
    return t if times == 1 else t.repeat_interleave(times, dim=-3)


def _batched(t, shape, Z):
    """``t`` broadcast to ``shape`` and its batch dims flattened into ``Z``: the 4-D
    operands of the fused op. Usual 4-D inputs are already that (no view ops to record,
    and none to run backwards)."""
    if len(shape) == 4 and t._shape == shape:
        return t
    return t.expand(shape).reshape((Z,) + shape[-3:])


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    r"""softmax(query @ key^T * scale + mask) @ value.

    query ``(N, ..., Hq, L, E)``, key ``(N, ..., H, S, E)``, value ``(N, ..., H, S, Ev)``;
    returns ``(N, ..., Hq, L, Ev)``. ``attn_mask`` broadcasts to ``(N, ..., Hq, L, S)``: a
    bool mask marks with True the positions that take part, a float mask is added to the
    scores. ``is_causal`` masks with a top-left aligned lower triangle. ``scale`` defaults
    to ``1/sqrt(E)``. ``enable_gqa`` lets each key/value head serve ``Hq / H`` query heads.
    Rows where every position is masked out give zeros (as PyTorch's CPU kernels do).
    Dropout with ``dropout_p`` is always applied when ``dropout_p > 0`` (this function
    knows no training flag). Computed by the fused flash-attention op (``_fused_sdpa``):
    float16/bfloat16 inputs accumulate in float32, and the L x S scores are never stored.
    """
    if attn_mask is not None and not isinstance(attn_mask, framework.Tensor):
        # a CausalBias computes the call itself (PyTorch does it by __torch_function__)
        from framework.nn.attention.bias import CausalBias
        if isinstance(attn_mask, CausalBias):
            return CausalBias._dispatch(query, key, value, attn_mask, dropout_p, is_causal,
                                        scale, enable_gqa)
    _check_sdpa_inputs(query, key, value, attn_mask, is_causal)
    if not _sdp_switches.any_sdp_enabled():
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. "
                           "This is likely due to turning off both the math kernel and the "
                           "fused kernels.")
    if enable_gqa and query.dim() < 3:
        key.size(-3)   # raises PyTorch's IndexError for 2-D inputs
    L, E = query.size(-2), query.size(-1)
    S, Ev = key.size(-2), value.size(-1)
    if enable_gqa:
        hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
        if hq % hk != 0 or hq % hv != 0:
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")
        if hk != hv:
            key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hv)
            hk = hq
        outer = _broadcast(query.shape[:-3], key.shape[:-3], value.shape[:-3])
        batch = outer + (hq,)
    else:
        batch = _broadcast(query.shape[:-2], key.shape[:-2], value.shape[:-2])
        outer = batch[:-1]
        hq = hk = batch[-1] if batch else 1
    if key.size(-1) != E:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{_batch_numel(batch)}, {E}] but got: [{_batch_numel(batch)}, {key.size(-1)}].")
    if value.size(-2) != S:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{_batch_numel(batch)}, {S}] but got: [{_batch_numel(batch)}, {value.size(-2)}].")
    if dropout_p > 1.0 or dropout_p < 0.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{dropout_p}")
    scale_factor = 1.0 / math.sqrt(E) if scale is None else float(scale)
    Z = _batch_numel(outer)
    q = _batched(query, outer + (hq, L, E), Z)
    k = _batched(key, outer + (hk, S, E), Z)
    v = _batched(value, outer + (hk, S, Ev), Z)
    if attn_mask is not None:
        scores = outer + (hq, L, S)
        target = _broadcast(scores, attn_mask.shape)
        if target != scores:
            raise RuntimeError(f"output with shape {list(scores)} doesn't match the broadcast "
                               f"shape {list(target)}")
        if attn_mask.dtype != framework.bool:
            attn_mask = attn_mask.to(_attention_ops.acc_dtype(query.dtype))
        attn_mask = attn_mask.expand(scores).reshape(Z, hq, L, S)
    seed = offset = 0
    if dropout_p > 0.0:
        n = Z * hq * L * S
        seed, offset = _random.resolve(None, query._storage.device)._take(n)
    # the kernels read strided inputs (the heads split off a fused projection) in place; one
    # whose last dimension is not contiguous is copied here, so that the op saves the copy
    # for its backward, which would otherwise copy it a second time
    q, k, v = (t if _attention_ops.rows_ok(t) else t.contiguous() for t in (q, k, v))
    out, _ = framework._fused_sdpa([q, k, v], attn_mask, float(dropout_p), bool(is_causal),
                                   scale_factor, seed, offset)
    return out if len(outer) == 1 else out.reshape(batch + (L, Ev))


# -- multi-head attention --------------------------------------------------------------------

def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True when the inputs are batched (3-D query); PyTorch's checks and texts."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                f"but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or "
                f"1-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                    f"3-D but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as a float mask of ``target_type`` (-inf where True); float masks pass."""
    if mask is None:
        return None
    if mask.dtype != framework.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if mask.dtype == framework.bool:
        mask = framework.zeros_like(mask, dtype=target_type).masked_fill(mask, _NEG_INF)
    return mask


def _none_or_dtype(t):
    return None if t is None else t.dtype


def _in_projection_packed(q, k, v, w, b):
    """q, k, v projected by the (3E, E) packed weight, one GEMM when q is k is v."""
    E = q.size(-1)
    if q is k and k is v:
        proj = _in_proj(q, w, b)
        return proj.chunk(3, dim=-1)
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    if k is v:
        kv = _in_proj(k, framework.cat([w_k, w_v]),
                      None if b is None else framework.cat([b_k, b_v]))
        return (_in_proj(q, w_q, b_q),) + tuple(kv.split(E, dim=-1))
    return _in_proj(q, w_q, b_q), _in_proj(k, w_k, b_k), _in_proj(v, w_v, b_v)


def _check_proj_shapes(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, want in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)),
                          ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")


def _check_2d_3d_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                               f"should be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        want = (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                               f"should be {want}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _static_kv(static, name, bsz, num_heads, head_dim):
    if static.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got "
                             f"{static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.size(2)}")
    return static


def _pad_last(mask):
    return None if mask is None else framework.nn.functional.pad(mask, (0, 1))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    r"""The forward pass of ``nn.MultiheadAttention`` with explicit weights.

    query ``(L, N, E)`` or unbatched ``(L, E)``; key/value ``(S, N, Ek/Ev)`` or ``(S, Ek/Ev)``.
    Returns ``(attn_output, attn_weights)``: the output ``(L, N, E)`` and, when
    ``need_weights``, the attention weights ``(N, L, S)`` averaged over heads (or
    ``(N, num_heads, L, S)`` with ``average_attn_weights=False``), else None.
    ``key_padding_mask`` ``(N, S)`` and ``attn_mask`` ``(L, S)`` or ``(N*num_heads, L, S)``
    are bool (True = masked out) or float (added to the scores).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # SDPA builds the causal mask itself from the hint.
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False   # the merged mask is no longer causal

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not "
                                 f"match value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape "
                             f"{value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        _check_proj_shapes(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight,
                           b_q, b_k, b_v)
        q = _in_proj(query, q_proj_weight, b_q)
        k = _in_proj(key, k_proj_weight, b_k)
        v = _in_proj(value, v_proj_weight, b_v)

    if attn_mask is not None:
        attn_mask = _check_2d_3d_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads)

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = framework.cat([k, bias_k.repeat(1, bsz, 1)])
        v = framework.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # (len, N, E) -> (N * heads, len, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = _static_kv(static_k, "static_k", bsz, num_heads, head_dim)
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = _static_kv(static_v, "static_v", bsz, num_heads, head_dim)

    if add_zero_attn:
        zeros = framework.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k = framework.cat([k, zeros], dim=1)
        v = framework.cat([v, zeros.to(v.dtype)], dim=1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.size(1)

    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = framework.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = framework.bmm(q_scaled, k.transpose(-2, -1))
        weights = _softmax(weights, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        out = framework.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
