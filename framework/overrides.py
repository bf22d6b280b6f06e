"""``__torch_function__``: letting Tensor subclasses and tensor-like classes override
framework functions (PyTorch's ``torch.overrides``).

Nothing here costs anything until it is used. The op bindings stay the dispatcher's own
functions until the first Tensor subclass that does not disable ``__torch_function__`` is
defined (``Tensor.__init_subclass__``), a class of user code defines ``__torch_function__``
(seen by a hook on class creation, removed once it fires) or a ``TorchFunctionMode`` is
entered. Then ``_activate`` swaps a dispatching wrapper in at every op binding (the list the
profiler and the fx tracer swap too: framework/fx/_bindings.py ``op_bindings``); the
wrapper is the public callable from then on, so ``func is framework.add`` holds inside an
override. State is process-wide, not per thread (PyTorch's is per thread).
"""
import builtins
import contextlib
import functools
import types

from ._tensor import Tensor

__all__ = [
    "get_ignored_functions", "get_overridable_functions", "handle_torch_function",
    "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
    "is_tensor_like", "is_tensor_method_or_property", "resolve_name", "wrap_torch_function",
    "enable_reentrant_dispatch", "TorchFunctionMode", "get_testing_overrides",
    "redispatch_function",
]

_active = False
_subclass_off = 0   # depth of DisableTorchFunctionSubclass
_all_off = 0        # depth of DisableTorchFunction
_modes = []         # the TorchFunctionMode stack, innermost last
_bypass = False     # no dispatch can happen now: the wrappers call the op at once
_overrides = {}     # type -> whether its __torch_function__ takes part (cached per type)
_names = {}         # id(public wrapper) -> its qualified name
_skip_one = False   # redispatch_function: the next has_torch_function check answers False


def _update_bypass():
    global _bypass
    _bypass = _all_off > 0 or (_subclass_off > 0 and not _modes)


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The ``__torch_function__`` of classes that opt out of the protocol (``nn.Parameter``):
    types holding it are never dispatched to."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


class DisableTorchFunctionSubclass:
    """Within this context, ``__torch_function__`` of Tensor subclasses and tensor-like
    classes is not called (modes still are)."""

    def __enter__(self):
        global _subclass_off
        _subclass_off += 1
        _update_bypass()
        return self

    def __exit__(self, *exc):
        global _subclass_off
        _subclass_off -= 1
        _update_bypass()


class DisableTorchFunction:
    """Within this context, no ``__torch_function__`` is called: neither subclasses' nor
    modes'."""

    def __enter__(self):
        global _all_off
        _all_off += 1
        _update_bypass()
        return self

    def __exit__(self, *exc):
        global _all_off
        _all_off -= 1
        _update_bypass()


def _takes_part(t):
    """Whether arguments of type ``t`` are dispatched to (its ``__torch_function__`` is
    neither missing nor the disabled one); cached per type."""
    r = _overrides.get(t)
    if r is None:
        impl = getattr(t, "__torch_function__", None)
        impl = getattr(impl, "__func__", impl)
        # PyTorch's own tensors (``framework.from_dlpack(torch_tensor)``) carry PyTorch's
        # protocol, whose handler would call the framework function back: not ours to call
        r = _overrides[t] = (impl is not None and impl is not _disabled_torch_function_impl
                             and not _is_pytorch_tensor(t))
    return r


def _is_pytorch_tensor(t):
    return any(c.__name__ == "Tensor" and c.__module__ == "torch" for c in t.__mro__)


def _add_overloaded(out, a):
    t = type(a)
    if t is Tensor or not _takes_part(t):
        return
    for o in out:
        if type(o) is t:
            return
    # subclasses before their superclasses, else in argument order
    for i, o in enumerate(out):
        if issubclass(t, type(o)):
            out.insert(i, a)
            return
    out.append(a)


def _get_overloaded_args(relevant_args):
    """The arguments whose types override ``__torch_function__``, one per type, in the order
    they are tried."""
    out = []
    for a in relevant_args:
        _add_overloaded(out, a)
    return out


_SEQ = (list, tuple)


def _overloaded(args, kwargs):
    """The overloaded arguments of a call: its arguments, their elements when lists or
    tuples (tensor lists) and the keyword arguments."""
    out = None
    for a in (*args, *kwargs.values()) if kwargs else args:
        t = type(a)
        if t is Tensor:
            continue
        if t in _SEQ:
            for x in a:
                if type(x) is not Tensor and _takes_part(type(x)):
                    if out is None:
                        out = []
                    _add_overloaded(out, x)
        elif _takes_part(t):
            if out is None:
                out = []
            _add_overloaded(out, a)
    return out


def _error(public, overloaded, mode):
    lines = [f"  - tensor subclass {type(a)}" for a in overloaded]
    if mode is not None:
        lines.insert(0, f"  - mode object {mode}")
    return TypeError(f"Multiple dispatch failed for '{resolve_name(public) or public}'; all "
                     f"__torch_function__ handlers returned NotImplemented:\n\n"
                     + "\n".join(lines) + "\n\nFor more information, try re-running with "
                     "TORCH_LOGS=not_implemented")


def _dispatch(public, overloaded, args, kwargs, python_error=False):
    """Calls the innermost mode's ``__torch_function__`` (with that mode off), then each
    overloaded argument's type's, until one returns something other than NotImplemented."""
    overloaded = overloaded or []
    types_ = tuple(type(a) for a in overloaded)
    kwargs = kwargs or {}
    mode = None
    if _modes and not _all_off:
        mode = _modes.pop()
        _update_bypass()
        try:
            ret = mode.__torch_function__(public, types_, args, kwargs)
        finally:
            _modes.append(mode)
            _update_bypass()
        if ret is not NotImplemented:
            return ret
    if not _subclass_off and not _all_off:
        for a in overloaded:
            ret = type(a).__torch_function__(public, types_, args, kwargs)
            if ret is not NotImplemented:
                return ret
    if python_error:
        name = f"{getattr(public, '__module__', '')}.{getattr(public, '__name__', public)}"
        msg = (f"no implementation found for '{name}' on types that implement "
               f"__torch_function__: {[type(a) for a in overloaded]}")
        if mode is not None:
            msg += f" nor in mode {mode}"
        raise TypeError(msg)
    raise _error(public, overloaded, mode)


# ---- the default Tensor.__torch_function__ -----------------------------------------------

def _nowrap():
    return {getattr(Tensor.grad, "__get__", None), getattr(Tensor._base, "__get__", None)}


def _convert(ret, cls):
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, _SEQ):
        # torch.return_types (named tuples) keep their type
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


def default_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: runs ``func`` with subclass dispatch off and returns
    its Tensor results as ``cls`` instances (``as_subclass``)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _NOWRAP:
            return ret
        return _convert(ret, cls)


_NOWRAP = ()   # Tensor.grad's and Tensor._base's getters once wrapped


# ---- activation ----------------------------------------------------------------------------

def _subclass_defined(cls):
    """Called by ``Tensor.__init_subclass__``. The framework's own subclasses that do not
    define ``__torch_function__`` (sparse, DTensor, buffers) keep their pre-protocol
    behaviour: they get the disabled one, as ``nn.Parameter`` has in PyTorch."""
    if "__torch_function__" not in vars(cls) and cls.__module__.startswith("framework."):
        if not any("__torch_function__" in vars(b) for b in cls.__mro__[1:]
                   if b is not Tensor and issubclass(b, Tensor)):
            cls.__torch_function__ = _disabled_torch_function_impl
    _overrides.clear()
    # a class that defines one turns dispatch on now; a plain subclass (the default one
    # inherited) when its first instance is made (``subclass_used``)
    if _takes_part(cls) and any("__torch_function__" in vars(b) for b in cls.__mro__
                                if b is not Tensor):
        _activate()


def subclass_used(cls):
    """Called where an instance of the Tensor subclass ``cls`` is made
    (``Tensor.__new__``, ``as_subclass``)."""
    if not _active and _takes_part(cls):
        _activate()


_build_class = builtins.__build_class__


def _watch(func, name, *bases, **kwargs):
    """``builtins.__build_class__`` until activation: a tensor-like class of user code
    (``__torch_function__`` without being a Tensor) turns dispatch on when defined."""
    cls = _build_class(func, name, *bases, **kwargs)
    if (isinstance(cls, type) and "__torch_function__" in vars(cls)
            and cls.__module__.partition(".")[0] not in ("torch", "framework")):
        _overrides.clear()
        if _takes_part(cls):
            _activate()
    return cls


builtins.__build_class__ = _watch

# Tensor operators that call their method (``a + b`` is ``a.add(b)``): dispatched there,
# under the method's name as in PyTorch
_DELEGATING = {"__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__"}
_EXTRA_METHODS = ("__repr__", "__rsub__", "__rtruediv__", "__rfloordiv__", "__rmod__",
                  "__rpow__", "__rmatmul__", "__getitem__", "__setitem__", "__format__")
_PROPERTIES = ("data", "grad", "_base", "T", "mT", "H", "mH")


def _wrap(fn, name, owner_is_tensor):
    # named "wrapper": code that names an op from the stack (sparse errors) skips it
    def wrapper(*args, **kwargs):
        if _bypass:
            return fn(*args, **kwargs)
        # the common case inline (exact Tensors, scalars of a known type): no dispatch
        if not _modes and not kwargs:
            for a in args:
                t = type(a)
                if t is not Tensor and (t in _SEQ or _overrides.get(t) is not False):
                    break
            else:
                return fn(*args)
        overloaded = None if _subclass_off else _overloaded(args, kwargs)
        if overloaded or _modes:
            return _dispatch(wrapper, overloaded, args, kwargs)
        return fn(*args, **kwargs)
    functools.update_wrapper(wrapper, fn)
    wrapper._tf_original = fn
    wrapper._tf_tensor_method = owner_is_tensor
    _names[id(wrapper)] = name
    return wrapper


def _name_as(w, owner, attr):
    # named as its public binding (F.relu is ``relu``), which pickle finds it by
    w.__name__ = w.__qualname__ = attr
    w.__module__ = owner.__name__
    _names[id(w)] = f"{owner.__name__}.{attr}"


def _wrap_property(prop, name):
    def getter(self):
        if _bypass or type(self) is Tensor:
            return fget(self)
        overloaded = None if _subclass_off else _overloaded((self,), None)
        if overloaded or _modes:
            return _dispatch(public, overloaded, (self,), None)
        return fget(self)
    fget = prop.fget
    new = property(getter, prop.fset, prop.fdel, prop.__doc__)
    public = new.__get__
    _names[id(public)] = name
    return new, public


def _activate():
    """Swaps the dispatching wrappers in at every op binding (once; never undone)."""
    global _active, _NOWRAP, _patches
    if _active:
        return
    _active = True
    if builtins.__build_class__ is _watch:
        builtins.__build_class__ = _build_class
    from .fx._bindings import op_bindings
    from .profiler._record import Patches, module_functions
    _patches = patches = Patches()
    patch = patches.set
    by_id = {}
    for owner, attr in op_bindings():
        fn = vars(owner).get(attr)
        if not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType)):
            continue
        if owner is Tensor:
            if attr in Tensor._OPERATOR_METHODS or attr in _DELEGATING:
                continue
            w = _wrap(fn, f"framework.Tensor.{attr}", True)
            w.__name__, w.__qualname__ = attr, f"Tensor.{attr}"
            patch(Tensor, attr, w)
        else:
            w = by_id.get(id(fn))
            if w is None:
                w = by_id[id(fn)] = _wrap(fn, f"{owner.__name__}.{attr}", False)
                _name_as(w, owner, attr)
            elif "._" in w.__module__ and "._" not in owner.__name__:
                _name_as(w, owner, attr)   # the public namespace over the table's module
            patch(owner, attr, w)
    for attr in _EXTRA_METHODS:
        fn = vars(Tensor).get(attr)
        if isinstance(fn, types.FunctionType) and not hasattr(fn, "_tf_original"):
            patch(Tensor, attr, _wrap(fn, f"framework.Tensor.{attr}", True))
    nowrap = set()
    for attr in _PROPERTIES:
        prop = vars(Tensor).get(attr)
        if isinstance(prop, property):
            new, getter = _wrap_property(prop, f"framework.Tensor.{attr}.__get__")
            patch(Tensor, attr, new)
            if attr in ("grad", "_base"):
                nowrap.add(getter)
    _NOWRAP = nowrap
    # op functions that module classes captured as static methods (Conv2d._FN)
    for cls, attr, fn in list(module_functions()):
        w = by_id.get(id(fn))
        if w is not None:
            patch(cls, attr, staticmethod(w))
    _bindings_changed()


def _bindings_changed():
    """The tables keyed by the identity of op functions are rebuilt with what is bound now
    (fx's op names, the compiler's fusible functions): else a program compiled after dispatch
    turns on, or after it turns off, finds no fusible op."""
    import sys
    from .fx import _bindings
    _bindings._public = None
    fuse, gemm = (sys.modules.get(f"framework._inductor.{m}") for m in ("fuse", "gemm"))
    if fuse is not None:
        fuse._functions = fuse._reductions = None
    if gemm is not None:
        gemm._linear_fn = gemm._mm_fns = None


_patches = None


def _deactivate():
    """Puts the dispatcher's bindings back (for tests that activated dispatch themselves)."""
    global _active, _patches
    if _patches is not None:
        _patches.restore()
    _patches, _active = None, False
    _bindings_changed()
    _modes.clear()
    _update_bypass()
    builtins.__build_class__ = _watch


# ---- the public API ------------------------------------------------------------------------

def has_torch_function(relevant_args):
    """Whether any of ``relevant_args`` overrides ``__torch_function__`` (exact Tensors do
    not), or a mode is active."""
    global _skip_one
    if _skip_one:   # the one hop redispatch_function skips
        _skip_one = False
        return False
    if _all_off:
        return False
    return bool(_modes) or (not _subclass_off and bool(_get_overloaded_args(relevant_args)))


def has_torch_function_unary(obj):
    """``has_torch_function((obj,))``."""
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls the ``__torch_function__`` overrides (modes first, then the overloaded
    arguments, subclasses before superclasses) of ``public_api(*args, **kwargs)``; for
    Python functions of user code that want to be overridable."""
    return _dispatch(public_api, _get_overloaded_args(relevant_args), args, kwargs,
                     python_error=True)


def redispatch_function(func, types, args, kwargs=None):
    """Skip one level of ``__torch_function__`` dispatch and call the function: ``func``
    itself runs without dispatch (returning plain Tensors), the calls it makes inside are
    dispatched as usual."""
    global _skip_one
    kwargs = kwargs or {}
    original = getattr(func, "_tf_original", None)
    if original is not None or getattr(func, "__name__", None) == "__get__":
        # an op binding or property: what it calls inside is not dispatched (as in
        # PyTorch, whose ops run below the Python layer)
        with DisableTorchFunction():
            return (original or func)(*args, **kwargs)
    # a Python function that checks has_torch_function itself: its first check is skipped
    _skip_one = True
    try:
        return func(*args, **kwargs)
    finally:
        _skip_one = False


def wrap_torch_function(dispatcher):
    """Decorator: makes a Python function overridable; ``dispatcher(*args, **kwargs)``
    returns the arguments to look for overrides in."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp):
    """Whether ``inp`` is a Tensor or has ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    """Whether ``func`` is a Tensor method or property getter (passed to
    ``__torch_function__`` with ``self`` as its first argument)."""
    if getattr(func, "_tf_tensor_method", False):
        return True
    if getattr(func, "__name__", None) == "__get__":
        return True
    return isinstance(func, types.FunctionType) and vars(Tensor).get(func.__name__) is func


def resolve_name(f):
    """The qualified name of an overridable function (``"framework.add"``), or None."""
    name = _names.get(id(f))
    if name is not None:
        return name
    mod = getattr(f, "__module__", None)
    qual = getattr(f, "__qualname__", None)
    if isinstance(f, types.FunctionType) and vars(Tensor).get(f.__name__) is f:
        return f"framework.Tensor.{f.__name__}"
    return f"{mod}.{qual}" if mod and qual else None


def get_ignored_functions():
    """Public functions that cannot be overridden by ``__torch_function__``."""
    import framework as fw
    out = {f for f in (getattr(Tensor, n, None) for n in _IGNORED_METHODS) if callable(f)}
    for name in ("is_tensor", "is_storage", "set_default_dtype", "get_default_dtype",
                 "manual_seed", "seed", "initial_seed", "is_grad_enabled", "set_grad_enabled",
                 "get_default_device", "set_default_device", "get_num_threads",
                 "set_num_threads", "promote_types", "can_cast", "result_type", "compile",
                 "typename", "is_inference_mode_enabled", "is_anomaly_enabled", "save",
                 "load", "use_deterministic_algorithms", "set_printoptions"):
        f = getattr(fw, name, None)
        if callable(f):
            out.add(f)
    return out


# the Tensor members PyTorch does not dispatch through __torch_function__
_IGNORED_METHODS = (
    "__delitem__", "__dir__", "__hash__", "__init_subclass__", "__iter__", "__new__",
    "__subclasshook__", "__torch_function__", "_make_subclass", "_make_wrapper_subclass",
    "_typed_storage", "_use_count", "_view_func", "as_subclass", "new", "new_empty",
    "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros", "stride",
    "to_padded_tensor", "to_sparse_bsc", "to_sparse_bsr", "to_sparse_coo", "to_sparse_csc",
    "to_sparse_csr", "unflatten")


def get_testing_overrides():
    """A dict mapping the overridable functions to dummy functions with the same signature
    that return -1 (for testing API coverage of a type that defines
    ``__torch_function__``)."""
    import inspect
    out = {}
    for funcs in get_overridable_functions().values():
        for f in funcs:
            try:
                sig = inspect.signature(f)
            except (TypeError, ValueError):    # a builtin without one
                sig = inspect.Signature([
                    inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
            out[f] = _dummy(sig)
    return out


def _dummy(sig):
    def dummy(*args, **kwargs):
        return -1
    dummy.__signature__ = sig
    return dummy


def get_overridable_functions():
    """{namespace: [functions]} of the functions ``__torch_function__`` can override."""
    import framework as fw
    from .fx._bindings import op_bindings
    out = {}
    ignored = get_ignored_functions()
    for owner, attr in op_bindings():
        f = vars(owner).get(attr)
        if owner is fw._nn_functional_ops or f is None or f in ignored:
            continue
        lst = out.setdefault(owner, [])
        if f not in lst:
            lst.append(f)
    return out


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """Accepted for PyTorch compatibility: there is no dispatcher re-entrancy to allow."""
    yield


class TorchFunctionMode:
    """A context manager that sees every overridable call made inside it:
    ``__torch_function__(func, types, args, kwargs)`` runs instead of ``func`` (with this
    mode off, so that calling ``func`` inside runs it). Modes nest: the innermost runs
    first."""

    inner = None

    def __init__(self, inner=None):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _activate()
        _modes.append(self)
        _update_bypass()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if _modes and _modes[-1] is self:
            _modes.pop()
        elif self in _modes:
            _modes.remove(self)
        _update_bypass()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _get_current_function_mode():
    return _modes[-1] if _modes else None


def _get_current_function_mode_stack():
    return list(_modes)


def _is_torch_function_mode_enabled():
    return bool(_modes) and not _all_off


def _is_torch_function_enabled():
    return not _all_off
