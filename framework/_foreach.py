"""PyTorch's multi-tensor functions ``torch._foreach_*``: one op applied to every tensor of
a list (research code calls them directly for EMA weights, hand-written optimizers and
gradient clipping). Each is the loop over the single-tensor op, so dtypes, broadcasting and
errors are that op's. Out-of-place forms return a tuple of new tensors; in-place forms
(``_foreach_add_``) update the tensors and return the list they were given.
"""
import numbers
import sys

from ._tensor import Tensor

_module = sys.modules[__name__]


def _tensor_list(op, tensors, arg="self"):
    if not isinstance(tensors, (list, tuple)) or not all(
            isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{op}(): argument '{arg}' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _same_length(tensors, other):
    if len(other) != len(tensors):
        raise RuntimeError("Tensor lists must have the same number of tensors, got "
                           f"{len(tensors)} and {len(other)}")


def _per_tensor(op, tensors, other, alpha=None):
    """``other`` (a number, a tensor, a list of numbers or of tensors) as one argument per
    tensor of ``tensors``."""
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, Tensor) for o in other):
            _same_length(tensors, other)
            return list(other)
        if not all(isinstance(o, numbers.Number) for o in other):
            raise TypeError(f"{op}(): the second argument must be a number, a Tensor, or a "
                            "tuple of numbers or of Tensors")
        if len(other) != len(tensors):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        scalars = True
    elif isinstance(other, (numbers.Number, Tensor)):
        scalars = not isinstance(other, Tensor)
        other = [other] * len(tensors)
    else:
        raise TypeError(f"{op}(): the second argument must be a number, a Tensor, or a "
                        f"tuple of numbers or of Tensors, not {type(other).__name__}")
    if alpha is not None and scalars:
        raise TypeError(f"{op}(): alpha is only accepted with a Tensor or a tuple of Tensors")
    return list(other)


def _binary(name, has_alpha=False):
    method = getattr(Tensor, name)
    inplace = getattr(Tensor, name + "_", None)

    def args(op, self, other, alpha):
        if alpha is not None and not has_alpha:
            raise TypeError(f"{op}() got an unexpected keyword argument 'alpha'")
        others = _per_tensor(op, _tensor_list(op, self), other, alpha)
        return others, ({} if alpha is None else {"alpha": alpha})

    def out_of_place(self, other, *, alpha=None):
        op = f"_foreach_{name}"
        if name == "pow" and isinstance(self, numbers.Number):  # _foreach_pow(2.0, exps)
            from . import pow as _pow
            return tuple(_pow(self, e) for e in _tensor_list(op, other, "exponent"))
        others, kw = args(op, self, other, alpha)
        return tuple(method(t, o, **kw) for t, o in zip(self, others))

    def in_place(self, other, *, alpha=None):
        others, kw = args(f"_foreach_{name}_", self, other, alpha)
        for t, o in zip(self, others):
            if inplace is not None:
                inplace(t, o, **kw)
            else:   # maximum/minimum have no in-place Tensor method
                t.copy_(method(t, o))
        return self
    return out_of_place, in_place


def _unary(name):
    method, inplace = getattr(Tensor, name), getattr(Tensor, name + "_")

    def out_of_place(self):
        return tuple(method(t) for t in _tensor_list(f"_foreach_{name}", self))

    def in_place(self):
        for t in _tensor_list(f"_foreach_{name}_", self):
            inplace(t)
        return self
    return out_of_place, in_place


def _pointwise3(name):
    """addcmul/addcdiv: ``self + value * tensor1 (*|/) tensor2``, ``value`` a number, a
    list of numbers or a 1-D tensor of them."""
    method, inplace = getattr(Tensor, name), getattr(Tensor, name + "_")

    def values(op, self, tensor1, tensor2, value):
        _tensor_list(op, self)
        for other in (tensor1, tensor2):
            _same_length(self, _tensor_list(op, other, "tensor1"))
        if isinstance(value, Tensor):
            value = value.tolist()
        if isinstance(value, (list, tuple)):
            if len(value) != len(self):
                raise RuntimeError(
                    "Tensor list must have same number of elements as scalar list.")
            return value
        return [value] * len(self)

    def out_of_place(self, tensor1, tensor2, value=1):
        vals = values(f"_foreach_{name}", self, tensor1, tensor2, value)
        return tuple(method(t, a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, vals))

    def in_place(self, tensor1, tensor2, value=1):
        vals = values(f"_foreach_{name}_", self, tensor1, tensor2, value)
        for t, a, b, v in zip(self, tensor1, tensor2, vals):
            inplace(t, a, b, value=v)
        return self
    return out_of_place, in_place


def _lerp_weights(op, self, tensors1, weight):
    _tensor_list(op, self)
    _same_length(self, _tensor_list(op, tensors1, "tensors1"))
    return _per_tensor(op, self, weight)


def _foreach_lerp(self, tensors1, weight):
    ws = _lerp_weights("_foreach_lerp", self, tensors1, weight)
    return tuple(t.lerp(e, w) for t, e, w in zip(self, tensors1, ws))


def _foreach_lerp_(self, tensors1, weight):
    ws = _lerp_weights("_foreach_lerp_", self, tensors1, weight)
    for t, e, w in zip(self, tensors1, ws):
        t.lerp_(e, w)
    return self


def _foreach_norm(self, ord=2, dtype=None):
    """The vector norm of each tensor (``linalg.vector_norm``)."""
    from .linalg import vector_norm
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensor_list("_foreach_norm", self))


def _foreach_zero_(self):
    for t in _tensor_list("_foreach_zero_", self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    _tensor_list("_foreach_copy_", self)
    _same_length(self, _tensor_list("_foreach_copy_", src, "src"))
    for t, s in zip(self, src):
        t.copy_(s, non_blocking=non_blocking)
    return self


for _name, _alpha in (("add", True), ("sub", True), ("mul", False), ("div", False),
                      ("maximum", False), ("minimum", False), ("clamp_min", False),
                      ("clamp_max", False), ("pow", False)):
    _f, _f_ = _binary(_name, _alpha)
    _f.__name__, _f_.__name__ = f"_foreach_{_name}", f"_foreach_{_name}_"
    setattr(_module, _f.__name__, _f)
    setattr(_module, _f_.__name__, _f_)

for _name in ("abs", "neg", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2", "log10",
              "sign", "reciprocal", "sigmoid", "tanh", "sin", "cos", "erf", "lgamma", "ceil",
              "floor", "round", "trunc", "frac"):
    _f, _f_ = _unary(_name)
    _f.__name__, _f_.__name__ = f"_foreach_{_name}", f"_foreach_{_name}_"
    setattr(_module, _f.__name__, _f)
    setattr(_module, _f_.__name__, _f_)

for _name in ("addcmul", "addcdiv"):
    _f, _f_ = _pointwise3(_name)
    _f.__name__, _f_.__name__ = f"_foreach_{_name}", f"_foreach_{_name}_"
    setattr(_module, _f.__name__, _f)
    setattr(_module, _f_.__name__, _f_)

__all__ = sorted(n for n in dir(_module) if n.startswith("_foreach_"))
