"""``MaskedTensor`` (PyTorch's prototype ``torch.masked.MaskedTensor``): a tensor whose
elements are valid only where a boolean ``mask`` of the same shape is True.

A MaskedTensor is a Tensor subclass over its own copy of ``data`` (so shape, dtype, device,
``requires_grad`` and the autograd graph are those of a plain tensor) that carries the mask
in ``_masked_mask``. Ops reach ``MaskedTensor.__torch_function__`` (framework/overrides.py)
and are computed on the data, which is a differentiable alias of the MaskedTensor, so
autograd records them as usual: pointwise ops keep the mask (binary ops need equal masks),
reductions use torch.masked's reductions (framework/_ops/masked_reductions.py) and give the
mask "any element valid", views and joins apply to data and mask alike. Ops PyTorch does not
support on MaskedTensors return NotImplemented, which raises TypeError.

This module is imported on first use of ``framework.masked.MaskedTensor`` (and friends):
defining the class turns ``__torch_function__`` dispatch on for the process.
"""
import warnings

import framework as _fw
from .._tensor import Tensor
from .. import overrides as _overrides
from .._ops import masked_reductions as _mr

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]

_DTYPES = ("float16", "float32", "float64", "bool", "int8", "int16", "int32", "int64")

_UNARY = {
    "abs", "absolute", "acos", "arccos", "acosh", "arccosh", "angle", "asin", "arcsin", "asinh",
    "arcsinh", "atan", "arctan", "atanh", "arctanh", "bitwise_not", "ceil", "clamp", "clip",
    "conj_physical", "cos", "cosh", "deg2rad", "digamma", "erf", "erfc", "erfinv", "exp", "exp2",
    "expm1", "fix", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "logit", "i0",
    "isnan", "nan_to_num", "neg", "negative", "positive", "pow", "rad2deg", "reciprocal",
    "round", "rsqrt", "sigmoid", "sign", "sgn", "signbit", "sin", "sinc", "sinh", "sqrt",
    "square", "tan", "tanh", "trunc",
}
_UNARY_INPLACE = {n + "_" for n in _UNARY - {"angle", "positive", "signbit", "isnan"}}
_BINARY = {
    "add", "atan2", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "div", "divide", "floor_divide", "fmod", "logaddexp", "logaddexp2",
    "mul", "multiply", "nextafter", "remainder", "sub", "subtract", "true_divide", "eq", "ne",
    "le", "ge", "greater", "greater_equal", "gt", "less_equal", "lt", "less", "maximum",
    "minimum", "fmax", "fmin", "not_equal",
}
_BINARY_INPLACE = {n + "_" for n in _BINARY - {"logaddexp", "logaddexp2", "fmin", "minimum",
                                                "maximum", "fmax"}}
_REDUCTIONS = {"sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "var", "std"}
# applied to data and mask alike
_PASSTHROUGH = {
    "select", "transpose", "split", "t", "__getitem__", "expand", "expand_as", "view",
    "view_as", "reshape", "reshape_as", "flatten", "narrow", "cat", "concat", "concatenate",
    "unsqueeze", "unfold", "stack",
}
# conversions: data converted, mask moved along
_CONVERSIONS = {"to", "float", "double", "half", "int", "long", "short", "bool", "char",
                "cpu", "cuda", "type_as"}
# answered by the underlying tensor as it is
_METADATA = {
    "size", "dim", "ndimension", "numel", "nelement", "stride", "storage_offset", "data_ptr",
    "element_size", "is_contiguous", "is_floating_point", "is_complex", "is_signed",
    "requires_grad_", "retain_grad", "register_hook", "get_device", "untyped_storage",
    "is_same_size", "_base.__get__",
}
_OWNERS = ("framework", "framework.Tensor", "framework.nn.functional", "framework.special")


def is_masked_tensor(obj, /):
    r"""Returns True if the input is a MaskedTensor, else False."""
    return isinstance(obj, MaskedTensor)


def _plain(t):
    """The MaskedTensor ``t`` as a plain Tensor alias, differentiable with respect to it."""
    with _overrides.DisableTorchFunctionSubclass():
        return t.view_as(t)


def _data(a):
    return _plain(a) if isinstance(a, MaskedTensor) else a


def _mask_of(a):
    if isinstance(a, MaskedTensor):
        return a._masked_mask
    if isinstance(a, Tensor):
        return _fw.ones_like(a, dtype=_fw.bool)
    return _fw.tensor(True)


def _check_dtype(data):
    if str(data.dtype).rpartition(".")[2] not in _DTYPES:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")


def _wrap(data, mask, copy=False):
    """A MaskedTensor aliasing the plain tensor ``data`` (its autograd graph kept); with
    ``copy``, over a copy of it (views and conversions of a MaskedTensor are copies, as in
    PyTorch, whose MaskedTensor constructor clones)."""
    _check_dtype(data)
    if copy:
        data, mask = data.clone(), mask.clone()
    out = data.as_subclass(MaskedTensor)
    out._masked_mask = mask
    return out


def _wrap_result(data, mask):
    if isinstance(data, (list, tuple)):
        return type(data)(_wrap_result(d, m) for d, m in zip(data, mask))
    if isinstance(data, Tensor):
        return _wrap(data, mask, copy=True)
    return data


def _validate(data, mask):
    if getattr(data, "layout", _fw.strided) != getattr(mask, "layout", _fw.strided):
        raise TypeError("data and mask must have the same layout.")
    if type(data) is not type(mask):
        raise TypeError(f"data and mask must have the same type. Got {type(data)} and "
                        f"{type(mask)}")
    if data.layout != _fw.strided:
        raise TypeError(f"data layout of {data.layout} is not supported.")
    if mask.dtype != _fw.bool:
        raise TypeError("mask must have dtype bool.")
    _check_dtype(data)
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if data.size() != mask.size():
        raise ValueError("data.size() must equal mask.size()")
    if data.device != mask.device:
        raise RuntimeError(f"MaskedTensor: data and mask must be on the same device, got "
                           f"{data.device} and {mask.device}")


def _new(data, mask, requires_grad, stacklevel):
    if isinstance(data, MaskedTensor) or not isinstance(data, Tensor):
        raise TypeError("data must be a Tensor")
    if isinstance(mask, MaskedTensor) or not isinstance(mask, Tensor):
        raise TypeError("mask must be a Tensor")
    warnings.warn("The PyTorch API of MaskedTensors is in prototype stage and will change in "
                  "the near future. Please open a Github issue for features requests and see "
                  "our documentation on the torch.masked module for further information about "
                  "the project.", UserWarning, stacklevel=stacklevel)
    if data.requires_grad:
        warnings.warn("It is not recommended to create a MaskedTensor with a tensor that "
                      "requires_grad. To avoid this, you can use data.detach().clone()",
                      UserWarning, stacklevel=stacklevel)
    _validate(data, mask)
    return _wrap(data.clone(), mask.clone()) if requires_grad is None else \
        _wrap(data.detach().clone(), mask.clone()).requires_grad_(requires_grad)


class MaskedTensor(Tensor):
    r"""MaskedTensor(data, mask, requires_grad=False)

    A tensor of ``data`` whose elements are specified only where ``mask`` (a bool tensor of
    the same shape) is True; the others are printed ``--`` and left out of reductions.
    ``data`` and ``mask`` are copied."""

    def __new__(cls, data, mask, requires_grad=False):
        return _new(data, mask, bool(requires_grad), 3)

    def __init__(self, data, mask, requires_grad=False):
        pass

    def get_data(self):
        r"""The data (every element, specified or not) as a Tensor; gradients flowing into it
        reach this MaskedTensor."""
        return _plain(self)

    def get_mask(self):
        r"""The boolean mask."""
        return self._masked_mask

    def to_tensor(self, value):
        r"""A Tensor of the data with the unspecified elements set to ``value``."""
        return _plain(self).masked_fill(~self._masked_mask, value)

    def is_sparse_coo(self):
        return False

    def is_sparse_csr(self):
        return False

    def __lt__(self, other):
        # as in PyTorch: no check that the masks match
        with _overrides.DisableTorchFunctionSubclass():
            return _wrap(_plain(self) < _data(other), self._masked_mask)

    def __repr__(self):
        fmt = "{0:8.4f}"
        data = _plain(self).detach()
        mask = self._masked_mask
        if data.dim() == 0:
            value = data.item()
            text = fmt.format(value) if isinstance(value, float) else str(value)
            if not mask.item():
                text = "--"
            return f"MaskedTensor({text}, {mask.item()})"
        body = _masked_str(data.tolist(), mask.tolist(), fmt)
        return "MaskedTensor(\n" + "\n".join("  " + s for s in body.split("\n")) + "\n)"

    __str__ = __repr__

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        owner, _, name = (_overrides.resolve_name(func) or "").rpartition(".")
        if name == "__get__":
            owner, _, prop = owner.rpartition(".")
            name = prop + ".__get__"
        with _overrides.DisableTorchFunctionSubclass():
            if owner == "framework.masked":
                return _masked_namespace(func, name, args, kwargs)
            if owner not in _OWNERS:
                return NotImplemented
            handler = _HANDLERS.get(name)
            if handler is None:
                return NotImplemented
            return handler(func, name, args, kwargs)


def _masked_str(data, mask, fmt):
    if data and not isinstance(data[0], list):
        items = [fmt.format(d) if isinstance(d, float) else str(d) for d in data]
        width = max(8 if not m else len(e) for e, m in zip(items, mask))
        return "[" + ", ".join(e if m else "--".rjust(width) for e, m in zip(items, mask)) + "]"
    rows = [_masked_str(d, m, fmt) for d, m in zip(data, mask)]
    rows = ["\n".join("  " + s for s in r.split("\n")) for r in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


# ---- op handlers (run with subclass dispatch off; MaskedTensor arguments are unwrapped) -----

def _map(args, fn):
    out = []
    for a in args:
        if isinstance(a, MaskedTensor):
            out.append(fn(a))
        elif type(a) in (list, tuple):
            out.append(type(a)(_map(a, fn)))
        else:
            out.append(a)
    return out


def _masks_match(a, b):
    if isinstance(a, MaskedTensor) and isinstance(b, MaskedTensor):
        ma, mb = a._masked_mask, b._masked_mask
        return ma.dim() == mb.dim() and bool(_fw.eq(ma, mb).all())
    return True


def _unary(func, name, args, kwargs):
    for a in args[1:]:
        if isinstance(a, Tensor):
            raise TypeError("MaskedTensor unary ops do not support additional Tensor arguments")
    self = args[0]
    if name.endswith("_"):
        func(self, *args[1:], **kwargs)
        return self
    return _wrap(func(_plain(self), *args[1:], **kwargs), self._masked_mask)


def _rtruediv(func, name, args, kwargs):
    # ``scalar / masked_tensor``: PyTorch computes it as a reciprocal and a product
    if isinstance(args[1], Tensor) or kwargs:
        return NotImplemented
    return _wrap(func(_plain(args[0]), args[1]), args[0]._masked_mask)


def _binary(func, name, args, kwargs):
    if kwargs:
        raise ValueError("len(kwargs) must equal 0")
    for a in args[2:]:
        if isinstance(a, Tensor):
            raise TypeError("MaskedTensor binary ops do not support Tensor arguments aside from "
                            "the lhs and rhs")
    a, b = args[0], args[1]
    if not _masks_match(a, b):
        raise ValueError("Input masks must match. If you need support for this, please open "
                         "an issue on Github.")
    if name.endswith("_"):
        if not isinstance(a, MaskedTensor):
            return NotImplemented
        func(a, _data(b), *args[2:])
        return a
    result = func(_data(a), _data(b), *args[2:])
    mask = a._masked_mask if isinstance(a, MaskedTensor) else b._masked_mask
    return _wrap(result, mask.expand_as(result))


def _multidim_any(mask, dim, keepdim):
    for d in sorted([dim] if isinstance(dim, int) else dim, reverse=True):
        mask = _fw.any(mask, dim=d, keepdim=keepdim)
    return mask


def _reduce_dim_args(input, dim, keepdim=False, dtype=None):
    return input, dim, keepdim, dtype


def _reduction(func, name, args, kwargs):
    self = args[0]
    if not isinstance(self, MaskedTensor):
        return NotImplemented
    data, mask = _plain(self), self._masked_mask
    if len(args) == 1 and not kwargs:
        if name == "all":
            result = data.masked_fill(~mask, True).all()
        else:
            result = getattr(_mr, name)(data, mask=mask)
        return _wrap(result, _fw.any(mask))
    _, dim, keepdim, dtype = _reduce_dim_args(*args, **kwargs)
    if name == "all":
        result = _fw.all(data.masked_fill(~mask, True), dim=dim, keepdim=keepdim)
    else:
        result = getattr(_mr, name)(data, dim=dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return _wrap(result, _multidim_any(mask, dim, keepdim))


def _softmax(func, name, args, kwargs):
    self = args[0]
    if _is_functional(func):   # F.softmax(input, dim=None, _stacklevel=3, dtype=None)
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        dtype = args[3] if len(args) > 3 else kwargs.get("dtype")
    else:                      # softmax(input, dim, dtype=None)
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        dtype = args[2] if len(args) > 2 else kwargs.get("dtype")
    if dim is None:
        dim = 0 if self.dim() in (0, 1, 3) else 1
    data = _plain(self)
    if dtype is not None:
        data = data.to(dtype)
    return _wrap(_mr.softmax(data, dim, mask=self._masked_mask), self._masked_mask)


def _is_functional(func):
    return (_overrides.resolve_name(func) or "").startswith("framework.nn.functional.")


def _passthrough(func, name, args, kwargs):
    data = func(*_map(args, _plain), **dict(zip(kwargs, _map(kwargs.values(), _plain))))
    masks = func(*_map(args, lambda a: a._masked_mask),
                 **dict(zip(kwargs, _map(kwargs.values(), lambda a: a._masked_mask))))
    return _wrap_result(data, masks)


def _where(func, name, args, kwargs):
    if len(args) != 3:
        raise ValueError(f"__torch_function__, torch.where: len(args) must be 3 but got "
                         f"{len(args)}")
    if kwargs:
        raise ValueError(f"__torch_function__, torch.where: len(kwargs) must be 0 but got "
                         f"{len(kwargs)}")
    cond, x, y = _data(args[0]), args[1], args[2]
    return _wrap(_fw.where(cond, _data(x), _data(y)),
                 _fw.where(cond, _mask_of(x), _mask_of(y)))


def _convert(func, name, args, kwargs):
    self = args[0]
    if not isinstance(self, MaskedTensor):
        return NotImplemented
    data = func(_plain(self), *_map(args[1:], _plain), **kwargs)
    return _wrap(data, self._masked_mask.to(data.device), copy=True)


def _detach(func, name, args, kwargs):
    return _wrap(_plain(args[0]).detach(), args[0]._masked_mask, copy=True)


def _clone(func, name, args, kwargs):
    return _wrap(func(_plain(args[0]), *args[1:], **kwargs), args[0]._masked_mask, copy=True)


def _contiguous(func, name, args, kwargs):
    return _wrap(_plain(args[0]).contiguous(), args[0]._masked_mask.contiguous(), copy=True)


def _ones_like(func, name, args, kwargs):
    return _wrap(func(_plain(args[0]), *args[1:], **kwargs), args[0]._masked_mask)


def _item(func, name, args, kwargs):
    if not bool(args[0]._masked_mask):
        raise ValueError("__torch_dispatch__, aten._local_scalar_dense.default: expected a mask "
                         "tensor")
    return _plain(args[0]).item()


def _backward(func, name, args, kwargs):
    return func(*_map(args, _plain), **dict(zip(kwargs, _map(kwargs.values(), _plain))))


def _grad(func, name, args, kwargs):
    self = args[0]
    grad = func(self)
    if grad is None or isinstance(grad, MaskedTensor):
        return grad
    return _wrap(grad, self._masked_mask)


def _metadata(func, name, args, kwargs):
    return func(*args, **kwargs)


def _masked_namespace(func, name, args, kwargs):
    """framework.masked.<op>(masked_tensor, ...): a plain Tensor computed on the data, the
    MaskedTensor's mask standing in for a mask not given (as in PyTorch)."""
    if name == "logaddexp":
        for i, key in ((0, "input_mask"), (1, "other_mask")):
            if len(args) > i and isinstance(args[i], MaskedTensor) and kwargs.get(key) is None:
                kwargs[key] = args[i]._masked_mask
    elif args and isinstance(args[0], MaskedTensor) and kwargs.get("mask") is None:
        kwargs["mask"] = args[0]._masked_mask
    return func(*_map(args, _plain), **kwargs)


_HANDLERS = {}
for _names, _handler in (
        (_UNARY | _UNARY_INPLACE, _unary), (_BINARY | _BINARY_INPLACE, _binary),
        ({"__rtruediv__"}, _rtruediv),
        (_REDUCTIONS, _reduction), ({"softmax"}, _softmax), (_PASSTHROUGH, _passthrough),
        ({"where"}, _where), (_CONVERSIONS, _convert), ({"detach", "data.__get__"}, _detach),
        ({"clone"}, _clone), ({"contiguous"}, _contiguous), ({"ones_like"}, _ones_like),
        ({"item"}, _item), ({"backward"}, _backward), ({"grad.__get__"}, _grad),
        (_METADATA, _metadata)):
    for _n in _names:
        _HANDLERS[_n] = _handler
del _names, _handler, _n


def masked_tensor(data, mask, requires_grad=False):
    r"""A MaskedTensor of (a copy of) ``data`` and ``mask``; a leaf that requires grad when
    ``requires_grad``."""
    return _new(data, mask, bool(requires_grad), 3)


def as_masked_tensor(data, mask):
    r"""A MaskedTensor of ``data`` and ``mask`` that stays differentiable with respect to
    ``data``."""
    return _new(data, mask, None, 3)
