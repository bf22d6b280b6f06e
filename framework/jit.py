"""``framework.jit``: PyTorch's TorchScript entry points, which run eagerly here.

There is no TorchScript compiler. ``script`` and ``trace`` return what they are given (a
function or an ``nn.Module``, itself) so that a script written for ``torch.jit`` runs
unchanged, at eager speed; they say so once, with a UserWarning (``trace`` also gives
the object ``code`` and ``graph`` attributes from an FX trace, for scripts that print
them). The decorators
(``ignore``, ``unused``, ``export``, ``interface``, ...) return what they decorate, the
queries (``is_scripting``, ``is_tracing``) answer False, ``fork`` runs its function at once
and ``wait`` returns the result. ``save``/``load`` raise NotImplementedError: a TorchScript
archive holds compiled code; save a ``state_dict`` with ``framework.save`` instead.
"""
import contextlib
import typing
import warnings

from .nn.modules.module import Module

__all__ = [
    "script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting",
    "is_tracing", "Final", "annotate", "fork", "wait", "save", "load", "ScriptModule",
    "ScriptFunction", "RecursiveScriptModule", "TracedModule", "TopLevelTracedModule",
    "Future", "Attribute", "interface", "isinstance", "freeze", "optimize_for_inference",
    "script_if_tracing", "fuser", "set_fusion_strategy", "enable_onednn_fusion",
    "onednn_fusion_enabled", "strict_fusion", "Error", "CompilationUnit",
]

Final = typing.Final
_builtin_isinstance = isinstance
_warned = False


def _warn_once(what):
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"framework.jit.{what}: TorchScript is not supported; the code runs "
                      "eagerly as ordinary Python (same results, eager speed)", UserWarning,
                      stacklevel=3)


class ScriptModule(Module):
    """PyTorch's scripted-module class, for ``isinstance`` checks: ``script`` and ``trace``
    return the module itself here, so no object is one."""


class RecursiveScriptModule(ScriptModule):
    pass


class TracedModule(ScriptModule):
    pass


class TopLevelTracedModule(TracedModule):
    pass


class ScriptFunction:
    """PyTorch's scripted-function class, for ``isinstance`` checks (``script`` returns the
    function itself here)."""


class CompilationUnit:
    def __init__(self, lang=None, _frames_up=0):
        raise NotImplementedError("framework.jit.CompilationUnit: TorchScript source cannot "
                                  "be compiled here (there is no TorchScript compiler)")


class Error(RuntimeError):
    """``torch.jit.Error``: raised by TorchScript code (here: never, but catchable)."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns ``obj`` (a function, a module, a class) unchanged: it runs eagerly."""
    if _builtin_isinstance(obj, ScriptModule):
        return obj
    _warn_once("script")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Returns ``func`` (a function or a module) unchanged: it runs eagerly, and the
    example inputs are not run through it."""
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    _warn_once("trace")
    _attach_code(func)
    return func


def _attach_code(obj):
    # scripts print ``traced.code`` / ``traced.graph``: give them an FX trace's code and
    # graph (or a note and an empty graph when the code is not FX-traceable)
    if hasattr(obj, "code") or hasattr(obj, "graph"):
        return
    from .fx import Graph, symbolic_trace
    try:
        gm = symbolic_trace(obj)
        code, graph = gm.code, gm.graph
    except Exception:  # noqa: BLE001  (any tracing failure: the module still runs eagerly)
        code, graph = "# runs eagerly: not traceable by framework.fx\n", Graph()
    try:
        obj.code, obj.graph = code, graph
    except (AttributeError, TypeError):   # builtins and bound methods take no attributes
        pass


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False,
                 _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """Returns the module unchanged (see ``trace``)."""
    if not _builtin_isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not _builtin_isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    _warn_once("trace_module")
    return mod


def script_if_tracing(fn):
    """Returns ``fn``: there is no tracing."""
    return fn


def _decorator_or_call(fn, marker):
    if callable(fn):
        try:
            setattr(fn, "_torchscript_modifier", marker)
        except (AttributeError, TypeError):
            pass
        return fn
    return None


def ignore(drop=False, **kwargs):
    """Marks a function for the TorchScript compiler to leave as Python: returns it. As
    ``@ignore`` or ``@ignore(drop=True)``."""
    if callable(drop):
        return _decorator_or_call(drop, "ignore")
    if not _builtin_isinstance(drop, bool):
        raise RuntimeError("Argument to @torch.jit.ignore must be a bool or a function but "
                           f"got {drop}")

    def decorator(fn):
        return _decorator_or_call(fn, "unused" if drop else "ignore")
    return decorator


def unused(fn):
    """Marks a function or method for the compiler to skip: returns it."""
    if _builtin_isinstance(fn, property):
        return fn
    return _decorator_or_call(fn, "unused")


def export(fn):
    """Marks a method to compile alongside ``forward``: returns it."""
    return _decorator_or_call(fn, "export")


def interface(obj):
    """Declares a TorchScript interface: returns the class."""
    if not _builtin_isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    return obj


def is_scripting():
    """False: code never runs under TorchScript here."""
    return False


def is_tracing():
    """False: code is never being traced here."""
    return False


def annotate(the_type, the_value):
    """Gives ``the_value`` a type for the compiler; returns ``the_value``."""
    return the_value


class Attribute(typing.NamedTuple):
    """``torch.jit.Attribute(value, type)``: in eager code, the value itself is used."""
    value: typing.Any
    type: typing.Any


def _attribute_new(cls, value, type=None):
    return value


Attribute.__new__ = _attribute_new


def isinstance(obj, target_type):
    """``torch.jit.isinstance``: ``isinstance`` that understands ``List[int]``,
    ``Dict[str, Tensor]``, ``Optional[...]``, ``Tuple[...]``."""
    return _check(obj, target_type)


def _check(obj, t):
    if t is typing.Any:
        return True
    origin = typing.get_origin(t)
    args = typing.get_args(t)
    if origin is None:
        if t is None or t is type(None):
            return obj is None
        return _builtin_isinstance(obj, t)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return any(_check(obj, a) for a in args)
    if origin in (list, typing.List):
        return _builtin_isinstance(obj, list) and all(_check(x, args[0]) for x in obj) \
            if args else _builtin_isinstance(obj, list)
    if origin in (dict, typing.Dict):
        if not _builtin_isinstance(obj, dict):
            return False
        return not args or all(_check(k, args[0]) and _check(v, args[1])
                               for k, v in obj.items())
    if origin in (tuple, typing.Tuple):
        if not _builtin_isinstance(obj, tuple):
            return False
        if not args:
            return True
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_check(x, args[0]) for x in obj)
        return len(obj) == len(args) and all(_check(x, a) for x, a in zip(obj, args))
    return _builtin_isinstance(obj, origin)


class Future:
    """``torch.jit.Future`` as ``fork`` returns it: the result is already there."""

    def __init__(self, value=None, exception=None):
        self._value = value
        self._exception = exception

    def wait(self):
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        return self.wait()

    def done(self):
        return True

    def then(self, callback):
        try:
            return Future(callback(self))
        except Exception as e:     # noqa: BLE001  (delivered by wait, as PyTorch does)
            return Future(exception=e)

    def add_done_callback(self, callback):
        callback(self)


def fork(func, *args, **kwargs):
    """Runs ``func(*args, **kwargs)`` now (synchronously) and returns a ``Future`` whose
    ``wait()`` gives the result (or raises the function's exception)."""
    try:
        return Future(func(*args, **kwargs))
    except Exception as e:     # noqa: BLE001
        return Future(exception=e)


def wait(future):
    """The result of a ``fork``."""
    return future.wait()


def save(m, f, _extra_files=None):
    raise NotImplementedError(
        "framework.jit.save: TorchScript is not supported, so there is no scripted module "
        "to save; save the weights with framework.save(model.state_dict(), f) and load them "
        "with model.load_state_dict(framework.load(f))")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise NotImplementedError(
        "framework.jit.load: TorchScript archives cannot be loaded (there is no TorchScript "
        "runtime); rebuild the model in Python and load a state_dict saved with "
        "framework.save via framework.load")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Returns the module (in eval mode, as PyTorch requires)."""
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Returns the module in eval mode."""
    return mod.eval() if mod.training else mod


@contextlib.contextmanager
def fuser(name):
    """Selects a TorchScript fuser: a no-op context manager here."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002
    yield


_fusion_strategy = [("STATIC", 2), ("DYNAMIC", 10)]


def set_fusion_strategy(strategy):
    """Accepted and recorded; returns the previous strategy."""
    global _fusion_strategy
    prev, _fusion_strategy = _fusion_strategy, list(strategy)
    return prev


_onednn = False


def enable_onednn_fusion(enabled):
    global _onednn
    _onednn = bool(enabled)


def onednn_fusion_enabled():
    return _onednn


@contextlib.contextmanager
def strict_fusion():
    yield


def _overload(func):
    return func


def _overload_method(func):
    return func
