"""The ops of jagged nested tensors, and the table ``NestedTensor.__torch_function__`` reads.

Most ops act on ``values`` alone (pointwise ops, ops over the trailing dims); ops across the
ragged dim go through a padded dense tensor (one gather each way), and attention runs per
sequence, so no position attends to another sequence or to padding.
"""
import numpy as np

from .._tensor import Tensor, _wrap_dim
from .tensor import NestedTensor


# ---- gathers between values and a padded dense tensor ---------------------------------------
def _index(nt, key, make):
    """An int64 index tensor on ``nt``'s device, made by ``make()`` once per offsets."""
    import framework
    c = nt._cache()
    key = (key, str(nt._values.device))
    t = c.get(key)
    if t is None:
        t = c[key] = framework.tensor(np.asarray(make(), dtype=np.int64),
                                      device=nt._values.device)
    return t


def to_padded(nt, padding, length=None):
    """The dense (B, ..., L, ...) tensor of ``nt``, padding with ``padding`` (differentiable
    with respect to the values)."""
    import framework
    r = nt._ragged_idx
    starts, lens = nt._starts_lens()
    L = max(lens, default=0) if length is None else int(length)
    v = nt._values.movedim(r - 1, 0)
    n = v.shape[0]
    ext = framework.cat([v, v.new_full((1,) + tuple(v.shape[1:]), padding)])
    idx = _index(nt, ("pad", L, n), lambda: [s + k if k < m else n
                                              for s, m in zip(starts, lens) for k in range(L)])
    out = ext.index_select(0, idx).reshape((len(lens), L) + tuple(v.shape[1:]))
    return out.movedim(1, r)


def from_padded(padded, nt, ragged_idx=None):
    """The nested tensor with ``nt``'s components cut back out of ``padded`` (ragged dim at
    ``ragged_idx``, by default ``nt``'s)."""
    import framework
    r = nt._ragged_idx if ragged_idx is None else ragged_idx
    starts, lens = nt._starts_lens()
    p = padded.movedim(r, 1)
    B, L = p.shape[0], p.shape[1]
    flat = p.reshape((B * L,) + tuple(p.shape[2:]))
    idx = _index(nt, ("unpad", L), lambda: [i * L + k for i, m in enumerate(lens)
                                            for k in range(m)])
    values = flat.index_select(0, idx).movedim(0, r - 1)
    if nt._lengths is None:
        return NestedTensor.make(values, nt._offsets, None, r, *nt._seqlens)
    offsets = framework.tensor(np.concatenate([[0], np.cumsum(lens)]).astype(np.int64),
                               device=values.device)
    return NestedTensor.make(values, offsets, None, r)


def _row_batch(nt):
    """The batch index of each position along the ragged dim of ``values``."""
    def make():
        starts, lens = nt._starts_lens()
        rows = np.zeros(nt._values.shape[nt._ragged_idx - 1], dtype=np.int64)
        for i, (s, m) in enumerate(zip(starts, lens)):
            rows[s:s + m] = i
        return rows
    return _index(nt, ("rows", nt._values.shape[nt._ragged_idx - 1]), make)


# ---- argument helpers ------------------------------------------------------------------------
def _op_name(func):
    return getattr(func, "__name__", str(func)).strip("_")


def _arg(args, kwargs, pos, name, default=None):
    if len(args) > pos:
        return args[pos]
    return kwargs.get(name, default)


def _with_arg(args, kwargs, pos, name, value):
    """(args, kwargs) with the argument at ``pos`` / ``name`` replaced by ``value``."""
    if len(args) > pos:
        args = args[:pos] + (value,) + args[pos + 1:]
    else:
        kwargs = dict(kwargs, **{name: value})
    return args, kwargs


def _dims(dim, ndim):
    seq = dim if isinstance(dim, (list, tuple)) else (dim,)
    return sorted({_wrap_dim(d, ndim) for d in seq})


# ---- pointwise -------------------------------------------------------------------------------
def unary(func, args, kwargs):
    """Ops applied to each element (and ops over the last, dense dim): on the values."""
    nt = args[0]
    out = func(nt._values, *args[1:], **kwargs)
    return nt if out is nt._values else nt._like(out)


def _binary_error(func, a, b):
    name = _op_name(func)
    if name.startswith("r") and name[1:] in _BINARY:
        name = name[1:]
    return RuntimeError(f"cannot call binary pointwise function {name}.Tensor with inputs of "
                        f"shapes {a.shape} and {b.shape}")


def _operand(x, nt, func):
    """``x`` as an operand that lines up with ``nt``'s values."""
    if isinstance(x, NestedTensor):
        if x._offsets is not nt._offsets or x._ragged_idx != nt._ragged_idx \
                or x._lengths is not nt._lengths:
            raise _binary_error(func, nt, x)
        return x._values
    if not isinstance(x, Tensor) or x.dim() == 0:
        return x
    n, r = nt.dim(), nt._ragged_idx
    if x.dim() > n:
        raise _binary_error(func, nt, x)
    if x.dim() < n:     # lines up with the trailing dims, as the values do
        k = n - x.dim()
        if k <= r and x.shape[r - k] != 1:
            raise _binary_error(func, nt, x)
        return x
    if x.shape[r] != 1 or x.shape[0] not in (1, nt.shape[0]):
        raise _binary_error(func, nt, x)
    if x.shape[0] == 1:
        return x.squeeze(0)
    # one row per batch entry: repeat it along the ragged dim of the values
    return x.index_select(0, _row_batch(nt)).squeeze(r).movedim(0, r - 1)


def binary(func, args, kwargs):
    """Element-wise ops of a nested tensor with another of the same offsets, a scalar, or a
    dense tensor broadcasting over the trailing dims (or of shape (B, 1, ...))."""
    a, b = args[0], args[1]
    nt = a if isinstance(a, NestedTensor) else b
    out = func(_operand(a, nt, func), _operand(b, nt, func), *args[2:], **kwargs)
    return nt if out is nt._values else nt._like(out)


# ---- over the trailing dims ------------------------------------------------------------------
def _check_last_dense(nt, op):
    if nt._ragged_idx == nt.dim() - 1:
        raise RuntimeError(f"{op}(): not supported for NestedTensor on the ragged dim "
                           f"(shape {nt.shape})")


def linear(func, args, kwargs):
    """``linear``/``matmul`` of a nested tensor with a dense weight: on the values."""
    nt, w = args[0], args[1]
    if not isinstance(nt, NestedTensor) or isinstance(w, NestedTensor) or w.dim() > 2:
        raise NotImplementedError(f"{_op_name(func)}(): only a NestedTensor times a dense "
                                  "matrix is supported for the jagged layout")
    _check_last_dense(nt, _op_name(func))
    return unary(func, args, kwargs)


def norm(func, args, kwargs):
    """``layer_norm``/``rms_norm`` over trailing dense dims: on the values."""
    nt = args[0]
    shape = _arg(args, kwargs, 1, "normalized_shape")
    k = 1 if isinstance(shape, int) else len(shape)
    if k > nt.dim() - 1 - nt._ragged_idx:
        raise RuntimeError(f"{_op_name(func)}(): normalizing over the ragged or batch dim is "
                           f"not supported for NestedTensor (shape {nt.shape}, "
                           f"normalized_shape {list(shape)})")
    return unary(func, args, kwargs)


def softmax(func, args, kwargs):
    """``softmax``/``log_softmax`` over a dense dim, or ``softmax`` over the ragged dim."""
    nt = args[0]
    name = "log_softmax" if "log" in _op_name(func) else "softmax"
    d = _wrap_dim(_arg(args, kwargs, 1, "dim"), nt.dim())
    if d == 0:
        raise RuntimeError(f"{name}(): not supported when reducing across the batch dimension "
                           "for NestedTensor")
    if d != nt._ragged_idx:
        a, kw = _with_arg(args, kwargs, 1, "dim", d - 1)
        return nt._like(func(nt._values, *a[1:], **kw))
    if name == "log_softmax":
        raise RuntimeError("log_softmax(): not supported when reducing along the ragged "
                           "dimension for NestedTensor")
    a, kw = _with_arg(args, kwargs, 1, "dim", d)
    return from_padded(func(to_padded(nt, float("-inf")), *a[1:], **kw), nt)


def reduce(func, args, kwargs):
    """``sum``/``mean``/``amax``/``amin`` over dense dims (a nested tensor), or over the
    ragged dim (a dense tensor)."""
    nt = args[0]
    name = _op_name(func)
    dim = _arg(args, kwargs, 1, "dim")
    keepdim = _arg(args, kwargs, 2, "keepdim", False)
    dtype = {"dtype": kwargs["dtype"]} if kwargs.get("dtype") is not None else {}
    if dim is None:
        vals = nt._values if nt._lengths is None else _flat_cat(nt.unbind())
        return func(vals, **dtype)
    r = nt._ragged_idx
    dims = _dims(dim, nt.dim())
    if 0 in dims and r not in dims:
        raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged "
                           "dimension is not supported for nested tensors")
    if r not in dims:
        out = func(nt._values, [d - 1 for d in dims], keepdim, **dtype)
        ragged = r if keepdim else r - sum(d < r for d in dims)
        return nt._like(out, ragged_idx=ragged)
    pad = {"amax": float("-inf"), "amin": float("inf")}.get(name, 0.0)
    padded = to_padded(nt, pad)
    if name != "mean":
        return func(padded, dims, keepdim, **dtype)
    out = padded.sum(dims, keepdim, **dtype)
    lens = nt._starts_lens()[1]
    other = 1
    for d in dims:
        if d not in (0, r):
            other *= padded.shape[d]
    if 0 in dims:
        return out / (sum(lens) * other)
    import framework
    count = framework.tensor([m * other for m in lens], dtype=out.dtype, device=out.device)
    return out / count.reshape((-1,) + (1,) * (out.dim() - 1))


def _flat_cat(ts):
    import framework
    return framework.cat([t.reshape(-1) for t in ts])


# ---- shape -----------------------------------------------------------------------------------
def transpose(func, args, kwargs):
    nt = args[0]
    n = nt.dim()
    d0 = _wrap_dim(_arg(args, kwargs, 1, "dim0"), n)
    d1 = _wrap_dim(_arg(args, kwargs, 2, "dim1"), n)
    if 0 in (d0, d1):
        raise ValueError("Transpose is not supported on the batch dimension for jagged NT")
    r = nt._ragged_idx
    r = d1 if r == d0 else d0 if r == d1 else r
    return nt._like(nt._values.transpose(d0 - 1, d1 - 1), ragged_idx=r)


def view(func, args, kwargs):
    """``view``/``reshape`` of the dense dims; the batch and ragged dims stay in place."""
    nt = args[0]
    shape = args[1:] if len(args) > 1 else (kwargs.get("shape") or kwargs.get("size"),)
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    name = "view" if _op_name(func) == "view" else "reshape"
    r = nt._ragged_idx
    j = nt._shape[r]
    ok = (len(shape) > r and shape[0] in (nt._shape[0], -1) and
          (shape[r] is j or shape[r] == -1) and
          all(isinstance(s, int) for i, s in enumerate(shape) if i not in (0, r)) and
          (shape[r] is j or -1 not in [s for i, s in enumerate(shape) if i not in (0, r)]))
    if not ok:
        raise RuntimeError(f"{name}(): cannot view shape {tuple(nt._shape)} as "
                           f"{list(shape)}".replace("framework.", ""))
    vshape = list(shape[1:])
    vshape[r - 1] = nt._values.shape[r - 1]
    vals = nt._values.view(vshape) if name == "view" else nt._values.reshape(vshape)
    return nt._like(vals)


def unsqueeze(func, args, kwargs):
    nt = args[0]
    d = _wrap_dim(_arg(args, kwargs, 1, "dim"), nt.dim() + 1)
    if d == 0:
        raise RuntimeError("unsqueeze(): not supported for NestedTensor on dim=0")
    r = nt._ragged_idx
    return nt._like(nt._values.unsqueeze(d - 1), ragged_idx=r + 1 if d <= r else r)


def split(func, args, kwargs):
    """``split``/``chunk`` along a dense dim: nested tensors with the same offsets."""
    nt = args[0]
    name = "chunk" if _op_name(func) == "chunk" else "split"
    d = _wrap_dim(_arg(args, kwargs, 2, "dim", 0), nt.dim())
    if d == nt._ragged_idx:
        raise RuntimeError(f"{name}(): not supported for NestedTensor on ragged dim")
    if d == 0:
        raise RuntimeError(f"{name}(): not supported for NestedTensor on the batch dim")
    a, kw = _with_arg(args, kwargs, 2, "dim", d - 1)
    return tuple(nt._like(p) for p in func(nt._values, *a[1:], **kw))


def cat(func, args, kwargs):
    """``cat`` of nested tensors with the same offsets along a dense dim."""
    ts = list(args[0])
    nt = ts[0]
    d = _wrap_dim(_arg(args, kwargs, 1, "dim", 0), nt.dim())
    if d in (0, nt._ragged_idx) or not all(isinstance(t, NestedTensor) for t in ts):
        raise RuntimeError("cat(): only nested tensors with the same offsets along a dense "
                           f"dim are supported (dim={d}, shape {nt.shape})")
    a, kw = _with_arg(args, kwargs, 1, "dim", d - 1)
    return nt._like(func([_operand(t, nt, func) for t in ts], *a[1:], **kw))


def unbind(func, args, kwargs):
    return args[0].unbind(*args[1:], **kwargs)


# ---- attention -------------------------------------------------------------------------------
def _cu_seqlens(nt):
    """``nt``'s offsets as int32 on its device (varlen attention's cu_seq), made once."""
    import framework
    c = nt._cache()
    key = ("cu_seqlens", str(nt._values.device))
    t = c.get(key)
    if t is None:
        t = c[key] = nt._offsets.to(device=nt._values.device, dtype=framework.int32)
    return t


def sdpa(func, args, kwargs):
    """``scaled_dot_product_attention`` of (B, H, j, D) nested tensors: each sequence attends
    only to itself (keys and values may have other lengths than the queries; ``is_causal``
    is top-left aligned in each sequence). The values go to varlen attention as they are;
    with dropout, or is_causal across different query and key lengths, the padded batch
    goes through the dense op with a mask instead."""
    import framework
    q, k, v = args[0], args[1], args[2]
    attn_mask = _arg(args, kwargs, 3, "attn_mask")
    if attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention(): attn_mask is not supported for "
                           "NestedTensor inputs")
    if not all(isinstance(t, NestedTensor) for t in (q, k, v)):
        raise RuntimeError("scaled_dot_product_attention(): query, key and value must all be "
                           "NestedTensors with the jagged layout")
    if any(t.dim() != 4 or t._ragged_idx != 2 for t in (q, k, v)) or q._lengths is not None \
            or k._offsets is not v._offsets:
        raise RuntimeError("scaled_dot_product_attention(): expected contiguous (B, H, j, D) "
                           "jagged NestedTensors (key and value with the same offsets), got "
                           f"query {q.shape}, key {k.shape}, value {v.shape}")
    kw = {n: x for n, x in zip(("dropout_p", "is_causal", "scale", "enable_gqa"), args[4:])}
    kw.update((n, x) for n, x in kwargs.items() if n != "attn_mask")
    causal = kw.pop("is_causal", False)
    hq, hk = q.shape[1], k.shape[1]
    if not kw.get("dropout_p") and k._lengths is None and (not causal or q._offsets is k._offsets) \
            and (hq == hk or (kw.get("enable_gqa") and hq % hk == 0)):
        # the offsets are varlen attention's cu_seqlens: no padding at all (its causal is
        # bottom-right aligned, the same as top-left where q and k share their lengths)
        from ..nn.attention.varlen import varlen_attn
        out = varlen_attn(q._values.transpose(0, 1), k._values.transpose(0, 1),
                          v._values.transpose(0, 1), _cu_seqlens(q), _cu_seqlens(k),
                          q._max_seqlen, k._max_seqlen, scale=kw.get("scale"),
                          window_size=(-1, 0) if causal else (-1, -1),
                          enable_gqa=bool(kw.get("enable_gqa")))
        return q._like(out.transpose(0, 1))
    # one call on the padded batch; the mask keeps each query to its own sequence's keys
    # (and, with is_causal, to those at or before it); padded query rows are cut away
    qp, kp, vp = to_padded(q, 0.0), to_padded(k, 0.0), to_padded(v, 0.0)
    Lq, Lk = qp.shape[2], kp.shape[2]
    klens = _index(k, ("lens",), lambda: k._starts_lens()[1]).reshape(-1, 1, 1, 1)
    kpos = framework.arange(Lk, device=qp.device)
    mask = kpos < klens
    if causal:
        mask = mask & (kpos <= framework.arange(Lq, device=qp.device).reshape(-1, 1))
    out = func(qp, kp, vp, mask, **kw)
    return from_padded(out, q)


def to_padded_tensor(func, args, kwargs):
    from . import to_padded_tensor as fn
    return fn(*args, **kwargs)


# ---- the table -------------------------------------------------------------------------------
_UNARY = ("relu", "relu6", "gelu", "silu", "mish", "sigmoid", "tanh", "exp", "expm1", "neg",
          "abs", "sqrt", "rsqrt", "log", "log1p", "sin", "cos", "square", "erf", "sign",
          "reciprocal", "floor", "ceil", "round", "trunc", "isnan", "isinf", "isfinite",
          "logical_not", "leaky_relu", "elu", "selu", "celu", "hardswish", "hardsigmoid",
          "softplus", "dropout", "nan_to_num", "clamp", "clip", "sigmoid_", "relu_",
          "__neg__", "__abs__", "__invert__", "positive", "float_power", "contiguous",
          "clamp_min", "clamp_max")
_BINARY = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "atan2",
           "remainder", "fmod", "logical_and", "logical_or", "masked_fill", "add_", "mul_",
           "sub_", "div_",
           "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
           "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__eq__", "__ne__",
           "__lt__", "__le__", "__gt__", "__ge__")
_OTHER = {"linear": linear, "matmul": linear, "__matmul__": linear, "layer_norm": norm,
          "rms_norm": norm, "softmax": softmax, "log_softmax": softmax, "sum": reduce,
          "mean": reduce, "amax": reduce, "amin": reduce, "cat": cat, "concat": cat,
          "transpose": transpose, "view": view, "reshape": view,
          "split": split, "chunk": split, "unbind": unbind, "unsqueeze": unsqueeze,
          "scaled_dot_product_attention": sdpa, "to_padded_tensor": to_padded_tensor}

HANDLERS = {}    # public callable (framework.add, Tensor.add, F.linear, ...) -> handler
BY_NAME = {}     # its __name__ -> handler, for callables wrapped elsewhere


def _method(name, handler):
    def method(self, *args, **kwargs):
        return handler(getattr(Tensor, name), (self,) + args, kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def _fill_table():
    """The table from ``framework``, ``framework.nn.functional`` and ``Tensor``, as they are
    bound now (the protocol swaps its dispatching wrappers in when it turns on)."""
    import framework
    import framework.nn.functional as F
    HANDLERS.clear()
    for name, handler in BY_NAME.items():
        for ns in (framework, F, Tensor):
            fn = getattr(ns, name, None)
            if fn is not None:
                try:
                    HANDLERS[fn] = handler
                except TypeError:   # an unhashable callable: found by name instead
                    pass


def install():
    """Fills the table and gives NestedTensor the Tensor methods it handles.
    ``__torch_function__`` is set here, after the class exists, so that defining the class
    does not turn the protocol on for every op at import; the first nested tensor made
    turns it on (``enable_protocol``)."""
    BY_NAME.update({n: unary for n in _UNARY})
    BY_NAME.update({n: binary for n in _BINARY})
    BY_NAME.update(_OTHER)
    for name, handler in BY_NAME.items():
        if hasattr(Tensor, name) and name not in NestedTensor.__dict__:
            setattr(NestedTensor, name, _method(name, handler))
    NestedTensor.__hash__ = Tensor.__hash__    # defining __eq__ above would unset it
    NestedTensor.__torch_function__ = classmethod(torch_function)
    _fill_table()


def enable_protocol():
    """Lets free functions (``F.linear(nt, w)``) reach ``NestedTensor.__torch_function__``:
    when a nested tensor is made while dispatch is off (programs without nested tensors
    keep the dispatcher's bindings, which cost nothing)."""
    from ..overrides import _subclass_defined
    _subclass_defined(NestedTensor)    # turns dispatch on, as for a subclass defined now
    _fill_table()                      # keyed by the dispatching wrappers now bound


def torch_function(cls, func, types, args=(), kwargs=None):
    """PyTorch's ``__torch_function__`` protocol: ``func`` (a public callable such as
    ``framework.add``, ``Tensor.add`` or ``F.linear``) called with a nested tensor among
    ``args``. Functions without a handler run as for a dense tensor, where the nested
    tensor's missing strides raise PyTorch's NotImplementedError."""
    kwargs = kwargs or {}
    try:
        handler = HANDLERS.get(func)
    except TypeError:
        handler = None
    if handler is None:
        handler = BY_NAME.get(getattr(func, "__name__", None))
    if handler is not None:
        return handler(func, tuple(args), kwargs)
    from ..overrides import DisableTorchFunctionSubclass
    with DisableTorchFunctionSubclass():
        try:
            return func(*args, **kwargs)
        except (TypeError, AttributeError) as e:    # dense shape logic met the symbolic j
            name = str(getattr(func, "__name__", func)).removesuffix("_method")
            raise NotImplementedError(f"NestedTensor {name}: not supported for the jagged "
                                      "layout") from e
