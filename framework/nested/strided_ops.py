"""The ops of strided nested tensors: each runs the dense op on every component.

``StridedNestedTensor.__torch_function__`` finds the handler by the called function's name
(``framework.add``, ``Tensor.add``, ``Tensor.__add__`` and ``F.softmax`` all reach it); a
function without one runs as for a dense tensor, where the missing strides raise PyTorch's
NotImplementedError.
"""
from .._tensor import Tensor, _wrap_dim
from .ops import _UNARY, _BINARY, _arg, _with_arg


def _name(func):
    name = str(getattr(func, "__name__", func)).removesuffix("_method")
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    return name


def _nested(x):
    from .strided_tensor import StridedNestedTensor
    return isinstance(x, StridedNestedTensor)


def _result(nt, outs, inplace):
    return nt if inplace else nt._like(outs)


def unary(func, args, kwargs):
    """Element-wise ops (and ``dropout``): on each component."""
    nt = args[0]
    outs = [func(c, *args[1:], **kwargs) for c in nt._components]
    return _result(nt, outs, _name(func).endswith("_"))


def binary(func, args, kwargs):
    """Element-wise ops of two nested tensors with the same sizes, or of a nested tensor and
    a scalar (a 0-dim tensor counts as one)."""
    a, b = args[0], args[1]
    name = _name(func)
    nt = a if _nested(a) else b
    if _nested(a) and _nested(b):
        if len(a._components) != len(b._components) or any(
                x.shape != y.shape for x, y in zip(a._components, b._components)):
            base = name[1:] if name[:1] in "ri" and name[1:] in _BINARY else name
            raise RuntimeError(f"{base.rstrip('_')} does not support broadcasting when given "
                               "a NestedTensor")
        pairs = zip(a._components, b._components)
    else:
        other = b if nt is a else a
        if isinstance(other, Tensor) and other.dim() > 0:
            first, second = ("nested", "non-nested") if nt is a else ("non-nested", "nested")
            raise RuntimeError(f"Expected both self and other to be nested, but got a {first} "
                               f"self and {second} other")
        pairs = [((c, other) if nt is a else (other, c)) for c in nt._components]
    outs = [func(x, y, *args[2:], **kwargs) for x, y in pairs]
    return _result(nt, outs, nt is a and name.endswith("_") or name.startswith("i"))


def matmul(func, args, kwargs):
    """``matmul``/``bmm`` of two nested tensors with the same batch size, component by
    component."""
    import framework
    a, b = args[0], args[1]
    name = _name(func)
    if not (_nested(a) and _nested(b)):
        first, second = ("nested", "non-nested") if _nested(a) else ("non-nested", "nested")
        raise RuntimeError(f"Expected both to be nested, but got a {first} self and {second} "
                           "other")
    if len(a._components) != len(b._components):
        raise RuntimeError(f"{name}(): expected the same batch size, but got "
                           f"{len(a._components)} and {len(b._components)}")
    outs = []
    for i, (x, y) in enumerate(zip(a._components, b._components)):
        if name == "bmm":
            if x.dim() != 2 or y.dim() != 2:
                raise RuntimeError("batch1 must be a 3D tensor")
            if x.shape[1] != y.shape[0]:
                raise RuntimeError(f"{i}-th nested matrices in batch cannot be multiplied "
                                   f"({x.shape[0]}x{x.shape[1]} and {y.shape[0]}x{y.shape[1]})")
        outs.append(framework.matmul(x, y))
    return a._like(outs)


def _same_last(nt, op):
    last = {c.shape[-1] for c in nt._components}
    if len(last) > 1:
        raise RuntimeError(f"{op}(): expected all tensors in nested tensor to have the same "
                           f"trailing dimension, instead last dimension equals: "
                           f"{[c.shape[-1] for c in nt._components]}")


def linear(func, args, kwargs):
    """``linear(nt, weight, bias)`` with dense weight and bias: on each component."""
    nt, w = args[0], args[1]
    if not _nested(nt) or _nested(w):
        raise RuntimeError("linear(): only a nested input with a dense weight is supported")
    _same_last(nt, "linear")
    return nt._like([func(c, *args[1:], **kwargs) for c in nt._components])


def softmax(func, args, kwargs):
    """``softmax``/``log_softmax`` over any dim but the batch dim: on each component."""
    nt = args[0]
    name = "log_softmax" if "log" in _name(func) else "softmax"
    d = _wrap_dim(_arg(args, kwargs, 1, "dim"), nt.dim())
    if d == 0:
        raise RuntimeError(f"Cannot apply {name} across nested dimension 0")
    a, kw = _with_arg(args, kwargs, 1, "dim", d - 1)
    return nt._like([func(c, *a[1:], **kw) for c in nt._components])


def norm(func, args, kwargs):
    """``layer_norm``/``rms_norm`` over trailing dims all components share."""
    nt = args[0]
    name = _name(func)
    if name == "layer_norm" and (_arg(args, kwargs, 2, "weight") is None
                                 or _arg(args, kwargs, 3, "bias") is None):
        raise ValueError("NestedTensor layer_norm requires weight and bias")
    _same_last(nt, name)
    return nt._like([func(c, *args[1:], **kwargs) for c in nt._components])


def view(func, args, kwargs):
    """``view``/``reshape``: each component to the sizes after the batch dim (which stays);
    a -1 keeps the component's size of the dim at that position, as in PyTorch."""
    nt = args[0]
    name = "view" if _name(func) == "view" else "reshape"
    shape = args[1:] if len(args) > 1 else (kwargs.get("shape") or kwargs.get("size"),)
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    if not shape or shape[0] != len(nt._components):
        raise RuntimeError(f"{name}: For now nested {name} cannot change or infer the "
                           "implicit batch dimension")
    outs = []
    for c in nt._components:
        sizes = [c.shape[i] if n == -1 and i < c.dim() else n for i, n in enumerate(shape[1:])]
        n = 1
        for k in sizes:
            n *= k
        if -1 in sizes or n != c.numel():
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                               f"{c.numel()}")
        outs.append(getattr(c, name)(sizes))
    return nt._like(outs)


def transpose(func, args, kwargs):
    nt = args[0]
    n = nt.dim()
    d0 = _wrap_dim(_arg(args, kwargs, 1, "dim0"), n)
    d1 = _wrap_dim(_arg(args, kwargs, 2, "dim1"), n)
    if 0 in (d0, d1):
        raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
    return nt._like([c.transpose(d0 - 1, d1 - 1) for c in nt._components])


def unsqueeze(func, args, kwargs):
    nt = args[0]
    d = _wrap_dim(_arg(args, kwargs, 1, "dim"), nt.dim() + 1)
    if d == 0:
        raise RuntimeError("unsqueeze(): not supported for NestedTensor on dim=0")
    return nt._like([c.unsqueeze(d - 1) for c in nt._components])


def same_op(func, args, kwargs):
    """Ops whose nested form is the method of the same name (``clone``, ``detach``, ...)."""
    return getattr(args[0], _name(func))(*args[1:], **kwargs)


def to_padded_tensor(func, args, kwargs):
    from .strided_tensor import to_padded
    return to_padded(*args, **kwargs)


_OTHER = {"matmul": matmul, "bmm": matmul, "linear": linear, "softmax": softmax,
          "log_softmax": softmax, "layer_norm": norm, "rms_norm": norm,
          "transpose": transpose, "unsqueeze": unsqueeze, "view": view, "reshape": view,
          "to_padded_tensor": to_padded_tensor,
          "unbind": same_op, "clone": same_op, "detach": same_op, "contiguous": same_op}
_EXTRA_UNARY = ("dropout", "abs_", "neg_", "relu_", "sigmoid_", "tanh_", "exp_", "clamp_",
                "fill_", "zero_", "gelu", "silu", "zeros_like", "ones_like", "empty_like",
                "full_like", "rand_like", "randn_like")
_EXTRA_BINARY = ("iadd", "isub", "imul", "itruediv", "mul_", "add_", "sub_", "div_")

BY_NAME = {}


def _method(name, handler):
    def method(self, *args, **kwargs):
        return handler(getattr(Tensor, name), (self,) + args, kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def install(cls):
    """Fills the table and gives the class the Tensor methods it handles; sets
    ``__torch_function__`` after the class exists, so that importing it does not turn the
    protocol on (the first nested tensor made does)."""
    for n in _UNARY + _EXTRA_UNARY:
        BY_NAME[_name(n)] = unary
    for n in _BINARY + _EXTRA_BINARY:
        BY_NAME[_name(n)] = binary
    BY_NAME.update(_OTHER)
    for n in list(_UNARY) + list(_BINARY) + ["matmul", "__matmul__", "bmm", "softmax",
                                             "log_softmax", "transpose", "unsqueeze",
                                             "view", "reshape",
                                             "__iadd__", "__isub__", "__imul__",
                                             "__itruediv__"] + list(_EXTRA_UNARY[1:]):
        handler = BY_NAME.get(_name(n) if n.startswith("__") else n)
        if handler is not None and hasattr(Tensor, n) and n not in cls.__dict__:
            setattr(cls, n, _method(n, handler))
    cls.__torch_function__ = classmethod(torch_function)


def torch_function(cls, func, types, args=(), kwargs=None):
    """PyTorch's ``__torch_function__`` protocol for strided nested tensors."""
    kwargs = kwargs or {}
    handler = BY_NAME.get(_name(func))
    if handler is not None:
        return handler(func, tuple(args), kwargs)
    from ..overrides import DisableTorchFunctionSubclass
    with DisableTorchFunctionSubclass():
        try:
            return func(*args, **kwargs)
        except (TypeError, AttributeError) as e:
            raise NotImplementedError(f"NestedTensor {_name(func)}: not supported for the "
                                      "strided layout") from e
