"""Fused scaled dot-product attention, the attention rows of the op table:
_fused_sdpa (flash attention forward: the output and each query row's log-sum-exp) and
_fused_sdpa_backward (dq, dk, dv from the saved log-sum-exp, recomputing the probabilities
tile by tile). nn.functional.scaled_dot_product_attention brings its arguments to the
4-D layout these take: q (Z, Hq, Lq, D), k (Z, Hkv, Lk, D), v (Z, Hkv, Lk, Dv), the mask
None or a (possibly broadcast) view of shape (Z, Hq, Lq, Lk), bool or of the compute dtype
(float32, float64 for float64 inputs). The kernels read q, k, v (and the saved output and its
gradient) through their strides, so the heads of a fused qkv projection (split, view,
transpose) go in as they are: only an input whose last dimension is not contiguous, or whose
rows overlap, is copied (``rowwise``). Their results are contiguous.

The kernels (native/attention.cpp, framework/kernels/attention.py) never hold the Lq x Lk
scores. Dropout masks come from a (seed, offset) pair of the device's Philox stream and are
regenerated in the backward; ``dropout_mask`` returns one for tests.
"""
import framework

from .. import _dtype
from . import alloc, memory_format
from .pointwise import convert, cpp_type_name


def rows_ok(x):
    """Whether the kernels take the 4-D ``x`` in place: its last dimension contiguous (stride
    1) and its rows apart by at least a row (the leading dimension of the CPU's GEMMs);
    either is of no account where that dimension has one element."""
    L, D = x._shape[-2], x._shape[-1]
    sl, sd = x._stride[-2], x._stride[-1]
    return (sd == 1 or D <= 1) and (sl >= D or L <= 1)


def rowwise(x, dtype=None):
    """``x`` (of ``dtype``, x's own by default) as the kernels take it: itself where it is,
    a contiguous copy otherwise."""
    if (dtype is None or x.dtype is dtype) and rows_ok(x):
        return x
    return convert(x, dtype or x.dtype, x._storage.device)


def _like(x, shape, dev):
    """A new tensor of ``shape`` (x's but the last dim) in x's dim order, as PyTorch's
    flash attention allocates its output: for the usual q = (Z, L, H, D).transpose(1, 2),
    the caller's out.transpose(1, 2).contiguous() is then free (the gradients, of their
    inputs' shapes, are empty_like them: their reshapes back to the projection are free)."""
    t = alloc.empty(shape, x.dtype, dev)
    if not t.numel():
        return t
    st = memory_format.dense_order(shape, x._shape, x._stride)
    if st != t._stride:
        t._stride = st
    return t


def acc_dtype(dtype):
    """The compute dtype of attention over inputs of ``dtype``."""
    return _dtype.float64 if dtype is _dtype.float64 else _dtype.float32


def qkv_device(op, q, k, v):
    """The device of query, key and value, which must share one floating dtype and one
    device (a RuntimeError naming ``op`` otherwise)."""
    if not (q.dtype is k.dtype is v.dtype) or not q.dtype.is_floating_point:
        raise RuntimeError(
            f"{op}: expected query, key and value of one floating dtype, got "
            f"{cpp_type_name(q.dtype)}, {cpp_type_name(k.dtype)}, {cpp_type_name(v.dtype)}")
    dev = q._storage.device
    if not (dev is k._storage.device is v._storage.device):
        raise RuntimeError(f"{op}: expected query, key and value on one device, got "
                           f"{q.device}, {k.device}, {v.device}")
    return dev


def _check(qkv, attn_mask):
    if len(qkv) != 3:
        raise RuntimeError(f"_fused_sdpa: expected [query, key, value], got {len(qkv)} tensors")
    q, k, v = qkv
    for name, t in (("query", q), ("key", k), ("value", v)):
        if t.dim() != 4:
            raise RuntimeError(f"_fused_sdpa: expected 4-D {name}, got {t.dim()}-D")
    dev = qkv_device("_fused_sdpa", q, k, v)
    Z, Hq, Lq, D = q.shape
    if (k.size(0), k.size(3)) != (Z, D) or tuple(v.shape[:3]) != tuple(k.shape[:3]) \
            or Hq % k.size(1):
        raise RuntimeError(f"_fused_sdpa: shapes do not match: query {list(q.shape)}, key "
                           f"{list(k.shape)}, value {list(v.shape)}")
    if attn_mask is not None:
        want = (Z, Hq, Lq, k.size(2))
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(f"_fused_sdpa: expected a mask of shape {list(want)}, got "
                               f"{list(attn_mask.shape)}")
        if attn_mask.dtype is not _dtype.bool and attn_mask.dtype is not acc_dtype(q.dtype):
            raise RuntimeError(f"_fused_sdpa: expected a bool or "
                               f"{cpp_type_name(acc_dtype(q.dtype))} mask, got "
                               f"{cpp_type_name(attn_mask.dtype)}")
        if attn_mask._storage.device is not dev:
            raise RuntimeError(f"_fused_sdpa: mask on {attn_mask.device}, inputs on {q.device}")
    return q, k, v, dev


def fused_sdpa(qkv, attn_mask=None, dropout_p=0.0, is_causal=False, scale=1.0, seed=0,
               offset=0):
    """(out, lse): softmax(q k^T * scale + mask) v and each row's log-sum-exp (+inf for a
    row with every key masked out, whose output is 0)."""
    q, k, v, dev = _check(qkv, attn_mask)
    Z, Hq, Lq, _ = q.shape
    out = _like(q, (Z, Hq, Lq, v.size(3)), dev)
    q, k, v = rowwise(q), rowwise(k), rowwise(v)
    lse = alloc.empty((Z, Hq, Lq), acc_dtype(q.dtype), dev)
    if out.numel():
        alloc.backend(dev).attention.sdpa_forward(q, k, v, attn_mask, out, lse, scale,
                                                  is_causal, dropout_p, seed, offset)
    return out, lse


def fused_sdpa_backward(grad_out, qkv, attn_mask, output, lse, dropout_p, is_causal, scale,
                        seed, offset):
    """[dq, dk, dv] of _fused_sdpa given the gradient of its output ``output``. Not
    differentiable itself (as PyTorch's fused attention backward kernels)."""
    q, k, v, dev = _check(qkv, attn_mask)
    # laid out as q, k and v: from one projection's split, the split's backward joins the
    # three gradients with no copy
    dq, dk, dv = memory_format.empty_like_pieces((q, k, v), q.dtype, dev)
    q, k, v, out = rowwise(q), rowwise(k), rowwise(v), rowwise(output)
    dout = rowwise(grad_out, q.dtype)
    if q.numel() == 0 or k.numel() == 0 or v.numel() == 0:
        for t in (dq, dk, dv):
            if t.numel():
                alloc.backend(dev).copy.fill(t, 0)
        return dq, dk, dv
    alloc.backend(dev).attention.sdpa_backward(q, k, v, attn_mask, out, lse, dout, dq, dk, dv,
                                               scale, is_causal, dropout_p, seed, offset)
    return dq, dk, dv


def dropout_mask(shape, dropout_p, seed, offset, device):
    """The keep mask (bool, ``shape`` = (Z, Hq, Lq, Lk)) the kernels use for (seed, offset)."""
    dev = framework.device(device) if not isinstance(device, framework.device) else device
    dev = alloc.empty((0,), _dtype.bool, dev)._storage.device
    keep = alloc.empty(tuple(shape), _dtype.bool, dev)
    if keep.numel():
        alloc.backend(dev).attention.sdpa_dropout_mask(keep, dropout_p, seed, offset)
    return keep


def mask_grad(grad, qkv, attn_mask, out, lse, dropout_p, is_causal, scale, seed, offset):
    """Gradient of an additive mask: dS = P * (dP - rowsum(dO * O)), over the whole Lq x Lk
    matrix (only when the mask itself requires a gradient)."""
    q, k, v = qkv
    group = q.size(1) // k.size(1)
    if group > 1:
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    acc = lse.dtype
    s = framework.matmul(q.to(acc), k.to(acc).transpose(-2, -1)) * scale + attn_mask
    if is_causal:
        s = s.masked_fill(framework.ones(s.shape[-2:], dtype=_dtype.bool,
                                         device=q.device).tril().logical_not(), float("-inf"))
    p = (s - lse.unsqueeze(-1)).exp()
    g = grad.to(acc)
    dp = framework.matmul(g, v.to(acc).transpose(-2, -1))
    if dropout_p > 0:
        keep = dropout_mask(p.shape, dropout_p, seed, offset, q.device)
        dp = dp * keep / (1 - dropout_p)
    delta = (g * out.to(acc)).sum(-1, keepdim=True)
    return p * (dp - delta)
