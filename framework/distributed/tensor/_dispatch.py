"""``DTensor.__torch_function__``: free functions (``framework.add(dt, x)``,
``F.linear(dt, w)``, ``framework.sum(dt)``) run with the sharding rules of the DTensor
methods (``_ops``), and the ones without a rule gather their DTensor inputs (Replicate),
run on the full tensors and warn once, as the methods do.

What keeps the local-shard behaviour that the framework itself relies on: Tensor methods
reached with a DTensor (``Tensor.add_(dt, g)`` from an in-place DTensor method or an
optimizer step), in-place and ``out=`` functions (they update the local shard) and
private functions (``framework._foreach_*``)."""
from ... import overrides as _overrides
from ..._tensor import Tensor
from . import _ops as O
from ._api import DTensor

_ELEMENTWISE = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
                "maximum", "minimum", "pow")
# pointwise functions: local on each shard (a Partial value is reduced first)
_POINTWISE = O._UNARY + ("gelu", "silu", "mish", "elu", "leaky_relu", "hardtanh", "relu6",
                         "softplus", "logsigmoid", "hardswish", "hardsigmoid", "selu",
                         "celu", "tanhshrink", "softsign", "log1p", "expm1", "floor",
                         "ceil", "round", "trunc", "frac", "clamp", "clip", "nan_to_num")
_LIKE = ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like")


def _elementwise(name):
    def handler(func, args, kwargs):
        a, b, *rest = args if len(args) > 1 else (args[0], kwargs.pop("other", None))
        # framework.mul(2.0, dt): a scalar first (commutative ops only)
        if not isinstance(a, Tensor) and name in ("add", "mul", "multiply", "maximum",
                                                  "minimum"):
            a, b = b, a
        if not isinstance(a, DTensor):
            O._mixed(f"aten.{name}")
        method = {"subtract": "sub", "multiply": "mul", "divide": "div"}.get(name, name)
        return O._elementwise(method, a, b, *rest, **kwargs)
    return handler


def _pointwise(func, args, kwargs):
    x, rest = args[0], args[1:]
    if not isinstance(x, DTensor) or any(isinstance(a, DTensor) for a in rest) or \
            any(isinstance(v, DTensor) for v in kwargs.values()):
        return _fallback(func, args, kwargs)
    if any(p.is_partial() for p in x.placements):
        x = O._replicate_all(x)
    with _overrides.DisableTorchFunctionSubclass():
        local = func(x.to_local(), *rest, **kwargs)
    return O._wrap_like(local, x, x.placements, O.local_global(x, local))


def _like(func, args, kwargs):
    x = args[0]
    with _overrides.DisableTorchFunctionSubclass():
        local = func(x.to_local(), *args[1:], **kwargs)
    return O._wrap_like(local, x, x.placements, x.shape)


def _matmul(func, args, kwargs):
    a, b = args
    if isinstance(a, DTensor) and isinstance(b, DTensor) and b.ndim == 1 and a.ndim >= 2:
        return _fallback(func, args, kwargs)     # no rule for matrix @ vector
    return O._matmul(a, b)


def _linear(func, args, kwargs):
    x, w, *rest = args
    bias = rest[0] if rest else kwargs.get("bias")
    if not (isinstance(x, DTensor) and isinstance(w, DTensor)):
        O._mixed("aten.linear")
    if w.ndim != 2 or x.ndim < 1:
        return _fallback(func, args, kwargs)
    out = O._matmul(x, O._transpose(w, 0, 1))
    if bias is not None:
        out = O._elementwise("add", out, bias)
    return out


def _reduce(name):
    def handler(func, args, kwargs):
        if len(args) > 1 and not isinstance(args[1], (int, tuple, list, type(None))):
            return _fallback(func, args, kwargs)
        return O._reduce(name, *args, **kwargs)
    return handler


def _transpose(func, args, kwargs):
    return O._transpose(*args, **kwargs)


def _t(func, args, kwargs):
    x = args[0]
    return O._transpose(x, 0, 1) if x.ndim == 2 else x


def _fallback(func, args, kwargs):
    """The op on the full tensors (its DTensor inputs gathered), as a Replicate DTensor."""
    name = func.__name__
    tensors = list(_tensors((*args, *kwargs.values())))
    mesh = next(a.device_mesh for a in tensors if isinstance(a, DTensor))
    if name not in O._warned:
        O._warned.add(name)
        import warnings
        warnings.warn(f"DTensor: {name} has no sharding rule here; its DTensor inputs are "
                      "gathered to Replicate and it runs on the full tensors", UserWarning,
                      stacklevel=4)
    if not all(isinstance(a, DTensor) for a in tensors):
        O._mixed(f"aten.{name}")
    full_args = O._full(args)
    full_kwargs = {k: O._full(v) for k, v in kwargs.items()}
    with _overrides.DisableTorchFunctionSubclass():
        out = func(*full_args, **full_kwargs)
    return O._wrap_out(out, mesh)


HANDLERS = {n: _elementwise(n) for n in _ELEMENTWISE}
HANDLERS.update({n: _pointwise for n in _POINTWISE})
HANDLERS.update({n: _like for n in _LIKE})
HANDLERS.update(matmul=_matmul, mm=_matmul, linear=_linear, sum=_reduce("sum"),
                mean=_reduce("mean"), transpose=_transpose, swapaxes=_transpose, t=_t)


def _local(func, args, kwargs):
    with _overrides.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


def _tensors(values):
    """The tensors among ``values`` and their lists and tuples."""
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _has_dtensor(values):
    return any(isinstance(t, DTensor) for t in _tensors(values))


def torch_function(cls, func, types, args=(), kwargs=None):
    """PyTorch's ``__torch_function__`` protocol for DTensors (see the module docstring)."""
    kwargs = dict(kwargs or {})
    name = getattr(func, "__name__", "")
    if getattr(func, "_tf_tensor_method", True) or name.startswith("_") or \
            name.endswith("_") or kwargs.get("out") is not None or \
            not _has_dtensor((*args, *kwargs.values())):
        return _local(func, args, kwargs)
    handler = HANDLERS.get(name)
    if handler is None:
        return _fallback(func, args, kwargs)
    return handler(func, tuple(args), kwargs)


def install():
    """Gives DTensor its ``__torch_function__``, after the class exists: defining it in the
    class body would turn dispatch on at import (``enable_protocol`` does, at the first
    DTensor made)."""
    DTensor.__torch_function__ = classmethod(torch_function)
    _overrides._overrides.clear()


def enable_protocol():
    """Turns dispatch on (once) so that free functions reach ``DTensor.__torch_function__``;
    programs without DTensors keep the dispatcher's bindings."""
    _overrides._subclass_defined(DTensor)


install()
