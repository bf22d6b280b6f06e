"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers on assignment;
``UninitializedParameter`` and ``UninitializedBuffer``: their shapeless placeholders in the
lazy modules (framework/nn/modules/lazy.py)."""
import os
import sys
import types

from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


def _empty():
    from .._ops import creation
    return creation.empty(0)


class Parameter(Tensor):
    r"""A Tensor that is a module parameter: assigning it to a Module attribute registers it,
    so that it shows up in :meth:`Module.parameters`.

    Args:
        data (Tensor): parameter tensor (the Parameter shares its storage).
        requires_grad (bool, optional): if the parameter requires gradient. Default: ``True``
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty()
        if cls is Parameter and hasattr(data, "_as_parameter"):
            return data._as_parameter(requires_grad)     # a DTensor parameter
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter.__new__(): argument 'data' (position 1) must be Tensor, "
                            f"not {type(data).__name__}")
        # an alias of ``data`` (same storage, hence same version counter), detached from
        # the graph: a parameter is always a leaf
        p = object.__new__(cls)
        p._storage = data._storage
        p._shape = data._shape
        p._stride = data._stride
        p._offset = data._offset
        p.dtype = data.dtype
        p._requires_grad = False
        p._grad = None
        p._grad_fn = None
        p._output_nr = 0
        p._base = None
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        # as PyTorch: the copy has the values and requires_grad, not the .grad
        result = type(self)(self.data.clone(), self._requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.data, self._requires_grad, type(self)))


def _rebuild_parameter(data, requires_grad, cls=Parameter):
    return cls(data, requires_grad)


class _BufferMeta(type):
    # ``isinstance(t, Buffer)`` is true for the tensors that ``Buffer(...)`` marked
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and bool(
                getattr(instance, "__dict__", {}).get("_is_buffer", False))
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    r"""Marks a tensor as a module buffer: assigning ``Buffer(t)`` to a Module attribute
    registers ``t`` as a buffer (saved in ``state_dict`` unless ``persistent=False``).

    Args:
        data (Tensor): buffer tensor.
        persistent (bool, optional): whether the buffer is part of the module's
            ``state_dict``. Default: ``True``
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty()
        t = data.detach()
        if data.requires_grad:
            t.requires_grad_(True)
        t.__dict__["persistent"] = persistent
        t.__dict__["_is_buffer"] = True
        return t


# ---- uninitialized (lazy) parameters and buffers ------------------------------------------
# The placeholder holds an empty 1-d tensor (its device and dtype are the ones it will be
# materialized with). The slot ``_shape`` is shadowed by a property that raises, so that any
# op reading the tensor (every op does) fails with PyTorch's ValueError; the few methods
# PyTorch allows (dtype/device moves, ``size``, ``copy_``...) run on a plain alias of the
# data instead. ``materialize`` swaps the data in and changes the class in place, so that
# the object an optimizer may already hold becomes the real parameter.

_SLOT_SHAPE = Tensor.__dict__["_shape"]      # the member descriptor of the slot
_FRAMEWORK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MODULES_DIR = os.path.join(_FRAMEWORK_DIR, "nn", "modules")


def _use_error(cls, func):
    return ValueError(
        f"Attempted to use an uninitialized parameter in {func}. "
        "This error happens when you are using a `LazyModule` or "
        f"explicitly manipulating `torch.nn.parameter.{cls.__name__}` "
        "objects. When using LazyModules Call `forward` with a dummy batch "
        "to initialize the parameters before calling torch functions")


def _is_framework_frame(f):
    fn = f.f_code.co_filename
    # generated wrappers are named "<autograd wrapper of add>" and the like
    generated = fn.startswith("<") and " of " in fn
    return (generated or fn.startswith(_FRAMEWORK_DIR)) and not fn.startswith(_MODULES_DIR)


def _entry_function(f):
    """The framework function the user called (the outermost framework frame of the call
    chain from ``f`` up, not counting module code), for the error message; None when ``f``
    is not framework code."""
    entry = None
    while f is not None and _is_framework_frame(f):
        entry = f.f_code.co_name
        # a decorator's wrapper (autocast's): the function it wraps
        wrapped = f.f_locals.get("fn")
        if callable(wrapped) and hasattr(wrapped, "__name__"):
            entry = wrapped.__name__
        f = f.f_back
    return f"<function {entry}>" if entry else None


class _LazyShape:
    """Shadows ``Tensor._shape``: reading it means using the placeholder in an op."""

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        raise _use_error(type(obj), _entry_function(sys._getframe(1)) or "<function>")

    def __set__(self, obj, value):
        _SLOT_SHAPE.__set__(obj, value)


# the methods PyTorch lets through on an uninitialized tensor
_ALLOWED = ("size", "copy_", "is_complex", "is_floating_point", "half", "float", "double",
            "char", "short", "int", "long", "cuda", "cpu", "to", "get_device")
# the object machinery: never blocked
_INFRA = frozenset((
    "__new__", "__init__", "__init_subclass__", "__subclasshook__", "__class_getitem__",
    "__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__dir__", "__sizeof__",
    "__hash__", "__repr__", "__str__", "__reduce__", "__reduce_ex__", "__getstate__",
    "__setstate__", "__deepcopy__", "__copy__", "__class__", "__format__", "_make",
    "requires_grad_", "share_memory_") + _ALLOWED)


def _blocked(name):
    def method(self, *args, **kwargs):
        # called by a framework function (F.linear reading weight.dim()): name that one
        raise _use_error(type(self), _entry_function(sys._getframe(1))
                         or f"<method {name!r} of 'Tensor' objects>")
    method.__name__ = name
    return method


def _allowed(name):
    def method(self, *args, **kwargs):
        alias = self._plain()
        out = getattr(alias, name)(*args, **kwargs)
        if out is alias:
            return self
        return self._wrap_result(out) if isinstance(out, Tensor) else out
    method.__name__ = name
    return method


class UninitializedTensorMixin:
    r"""What :class:`UninitializedParameter` and :class:`UninitializedBuffer` share: no
    shape until :meth:`materialize`; only dtype and device changes are allowed before."""

    cls_to_become = None
    _allowed_methods = _ALLOWED
    _shape = _LazyShape()
    __hash__ = Tensor.__hash__

    def _wrap_result(self, out):
        # PyTorch: a Parameter's methods return plain tensors
        return out

    def _plain(self):
        return Tensor._make(self._storage, _SLOT_SHAPE.__get__(self), self._stride,
                            self._offset, self.dtype)

    @property
    def data(self):
        return self._plain()

    @data.setter
    def data(self, other):
        Tensor.data.fset(self, other._plain() if is_lazy(other) else other)

    def materialize(self, shape, device=None, dtype=None):
        r"""Replaces the placeholder by an uninitialized tensor of ``shape`` (on this one's
        device and dtype unless given) and turns it into ``cls_to_become``."""
        from .._ops import creation
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        self.data = creation.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")

    @property
    def ndim(self):
        return len(_SLOT_SHAPE.__get__(self))

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`.")

    def copy_(self, src, non_blocking=False):
        if self._requires_grad:
            from ..autograd import grad_mode
            if grad_mode.is_grad_enabled():
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
        if is_lazy(src):
            src = src._plain()
        self._plain().copy_(src, non_blocking)
        return self

    def requires_grad_(self, requires_grad=True):
        raise _use_error(type(self), "<method 'requires_grad_' of 'Tensor' objects>")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __format__(self, spec):
        return format(repr(self), spec)

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def _install_methods():
    import inspect
    for name in dir(Tensor):
        if name in _INFRA or name in UninitializedTensorMixin.__dict__:
            continue
        attr = inspect.getattr_static(Tensor, name)
        if isinstance(attr, types.FunctionType):
            setattr(UninitializedTensorMixin, name, _blocked(name))
    for name in _ALLOWED:
        if name not in UninitializedTensorMixin.__dict__:
            setattr(UninitializedTensorMixin, name, _allowed(name))


_install_methods()


def is_lazy(param):
    r"""Whether ``param`` is an :class:`UninitializedParameter` or
    :class:`UninitializedBuffer`."""
    return isinstance(param, UninitializedTensorMixin)


def _set_requires_grad(t, requires_grad):
    if requires_grad and t.dtype.category < 2:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    t._requires_grad = bool(requires_grad)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    r"""A parameter whose shape is not known yet (the weights of a lazy module before its
    first forward). Only its dtype and device may change before :meth:`materialize`, which
    turns it into a :class:`Parameter`.

    Args:
        requires_grad (bool, optional): Default: ``True``
        device, dtype: where and of what type it will be materialized.
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .._ops import creation
        data = creation.empty(0, device=device, dtype=dtype)
        p = Parameter.__new__(cls, data, requires_grad=False)
        _set_requires_grad(p, requires_grad)
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    r"""A buffer whose shape is not known yet (the running statistics of a lazy norm layer
    before its first forward); :meth:`materialize` turns it into a plain Tensor.

    Args:
        requires_grad (bool, optional): Default: ``False``
        device, dtype: where and of what type it will be materialized.
        persistent (bool, optional): part of the module's ``state_dict``. Default: ``True``
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._ops import creation
        data = creation.empty(0, device=device, dtype=dtype)
        t = object.__new__(cls)
        for slot in ("_storage", "_stride", "_offset", "dtype"):
            setattr(t, slot, getattr(data, slot))
        _SLOT_SHAPE.__set__(t, data._shape)
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._base = None
        _set_requires_grad(t, requires_grad)
        t.__dict__["persistent"] = persistent
        t.__dict__["_is_buffer"] = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    def _wrap_result(self, out):
        # PyTorch: a moved or cast uninitialized buffer is still one (``module.to`` keeps
        # the returned buffer)
        t = object.__new__(type(self))
        for slot in ("_storage", "_stride", "_offset", "dtype", "_requires_grad", "_grad",
                     "_grad_fn", "_output_nr", "_base"):
            setattr(t, slot, getattr(out, slot))
        _SLOT_SHAPE.__set__(t, out._shape)
        t.__dict__.update(self.__dict__)
        return t

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype,
                            self.__dict__.get("persistent", True))
        memo[id(self)] = result
        return result
