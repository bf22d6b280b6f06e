"""``framework.compiler``: PyTorch's ``torch.compiler`` namespace.

``framework.compile`` traces with ``framework.fx`` and fuses pointwise chains (see
``framework/_compile.py`` and ``framework/_inductor``). ``is_compiling()`` is True while it
traces; ``reset()`` clears every compiled callable's graphs; ``set_stance("force_eager")``
makes compiled callables run eagerly, the other stances compile as "default". ``disable``
and the graph-marking decorators return functions that run as they are (a tracer goes
through them: there are no graph breaks). They exist, with PyTorch's names, signatures and
argument checks, so that scripts written against ``torch.compiler`` run.
"""
import functools
import inspect
import types

from . import _compile
from .autograd.grad_mode import _DecoratorContextManager

__all__ = ["compile", "config", "assume_constant_result", "reset", "allow_in_graph",
           "substitute_in_graph", "list_backends", "disable", "set_default_backend",
           "get_default_backend", "set_stance", "cudagraph_mark_step_begin", "wrap_numpy",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "save_cache_artifacts",
           "load_cache_artifacts", "nested_compile_region"]

# PyTorch's registered backends and their tags (list_backends leaves out debug and
# experimental ones by default); framework.compile accepts all of them and runs eagerly
_BACKENDS = {"cudagraphs": (), "inductor": (), "openxla": (), "tvm": (),
             "eager": ("debug",), "aot_eager": ("debug",), "aot_eager_default_partitioner":
             ("debug",), "aot_eager_decomp_partition": ("debug",), "ts": ("experimental",)}
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
            "eager_then_compile", "aot_eager_then_compile")
_default_backend = "inductor"


def compile(*args, **kwargs):
    """``framework.compile`` (see there)."""
    return _compile.compile(*args, **kwargs)


def reset():
    """Clears the compiler's caches: every compiled callable traces again on its next call."""
    from . import _inductor
    _inductor.reset()


def is_compiling():
    """Whether the code runs inside a ``framework.compile`` trace."""
    from ._inductor import trace
    return trace.compiling


def is_dynamo_compiling():
    """Whether the code is being traced by the graph capture."""
    return is_compiling()


def is_exporting():
    """Whether the code is being traced by ``export``: never, here."""
    return False


def _check_callable(fn, what):
    if not callable(fn):
        raise AssertionError(f"{what} expects a callable")


def allow_in_graph(fn):
    """Tells the compiler to put ``fn`` in the graph as one call; returns ``fn``."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    _check_callable(fn, "allow_in_graph")
    return fn


def assume_constant_result(fn):
    """Tells the compiler that ``fn`` always returns the same value; returns ``fn``."""
    return fn


_POLYFILLS = {}   # id(original function) -> (original, its traceable replacement)


def _is_function(fn):
    return isinstance(fn, (types.FunctionType, types.BuiltinFunctionType,
                           types.MethodDescriptorType, types.WrapperDescriptorType))


def _sig_ident(sig):
    """What two signatures must share: positional names, keyword-only names, defaults."""
    var = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ps = sig.parameters.values()
    return (tuple(p.name for p in ps if p.kind not in var + (p.KEYWORD_ONLY,)),
            {p.name for p in ps if p.kind == p.KEYWORD_ONLY},
            {p.name: p.default for p in ps if p.kind not in var})


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    """Register a polyfill handler for a function (usually a C function): the compiler
    runs the polyfill where it would run ``original_fn``; the decorated function, called
    directly, calls ``original_fn``. The polyfill must have the same signature unless
    ``skip_signature_check``."""
    if not _is_function(original_fn):
        raise TypeError(f"substitute_in_graph expects a function but got "
                        f"{type(original_fn)!r}")

    def wrapper(traceable_fn):
        if not _is_function(traceable_fn):
            raise TypeError(f"@substitute_in_graph(...) expects a function but got "
                            f"{type(traceable_fn)!r}")
        if not skip_signature_check:
            try:
                original_sig = inspect.signature(original_fn)
            except ValueError:
                original_sig = None
            if original_sig is not None:
                traceable_sig = inspect.signature(traceable_fn)
                wildcard = _sig_ident(inspect.signature(lambda *args, **kwargs: None))
                a, b = _sig_ident(original_sig), _sig_ident(traceable_sig)
                if a != b and wildcard not in (a, b):
                    raise TypeError(f"Signature mismatch between {original_fn} and "
                                    f"{traceable_fn}: {original_sig} != {traceable_sig}")
        if id(original_fn) in _POLYFILLS:
            raise ValueError(f"Duplicate polyfill handlers for {original_fn}: already "
                             f"handled by {_POLYFILLS[id(original_fn)][1]}")

        @functools.wraps(traceable_fn)
        def wrapped(*args, **kwargs):
            return original_fn(*args, **kwargs)
        wrapped.__torch_dynamo_original__ = original_fn
        wrapped.__torch_dynamo_polyfill__ = traceable_fn
        wrapped.__torch_dynamo_can_constant_fold_through__ = can_constant_fold_through
        _POLYFILLS[id(original_fn)] = _POLYFILLS[id(wrapped)] = (original_fn, traceable_fn)
        return wrapped
    return wrapper


def _polyfill(fn):
    """What the compiler runs for ``fn``: its registered polyfill, else ``fn``."""
    entry = _POLYFILLS.get(id(fn))
    return entry[1] if entry is not None else fn


def disable(fn=None, recursive=True, *, reason=None):
    """Runs ``fn`` outside the compiler (as a decorator without ``fn``). Everything runs
    eagerly here, so the result calls ``fn`` as it is."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if not callable(fn):
        raise AssertionError("fn must be callable")
    from .nn.modules.module import Module
    if isinstance(fn, Module):
        return fn

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        return fn(*args, **kwargs)
    disabled._torchdynamo_disable = True
    disabled._torchdynamo_disable_recursive = recursive
    return disabled


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """Marks a region the compiler compiles once and reuses; returns ``fn`` unchanged."""
    if fn is None:
        return lambda f: f
    return fn


def wrap_numpy(fn):
    """Lets ``fn`` take NumPy arrays under the compiler; returns ``fn`` (eager already)."""
    return fn


def list_backends(exclude_tags=("debug", "experimental")):
    """The names of the backends ``framework.compile(backend=...)`` accepts, sorted."""
    exclude = set(exclude_tags or ())
    return sorted(n for n, tags in _BACKENDS.items() if not exclude.intersection(tags))


def set_default_backend(backend):
    """Sets the backend ``framework.compile`` uses when none is given."""
    global _default_backend
    _default_backend = "inductor" if backend is None else backend


def get_default_backend():
    return _default_backend


def cudagraph_mark_step_begin():
    """Marks the start of a new iteration for CUDA-graph trees: a no-op without them."""


def save_cache_artifacts():
    """The compiler's cache as bytes, or None when there is nothing cached (always here)."""
    return None


def load_cache_artifacts(serialized_artifacts):
    """Loads cache artifacts from ``save_cache_artifacts``; None: nothing was loaded."""
    return None


class _Stance:
    __slots__ = ("stance", "skip_guard_eval_unsafe", "backend")

    def __init__(self, stance="default", skip_guard_eval_unsafe=False, backend=None):
        self.stance, self.skip_guard_eval_unsafe, self.backend = (
            stance, skip_guard_eval_unsafe, backend)


_stance = _Stance()


def _set_stance(stance):
    global _stance
    prior, _stance = _stance, stance
    return prior


class set_stance(_DecoratorContextManager):
    """Sets the compiler's stance: as a call (until changed), a context manager or a
    decorator. Stances: "default", "force_eager", "eager_on_recompile",
    "fail_on_recompile", "eager_then_compile", "aot_eager_then_compile". Every one runs
    eagerly here, as ``framework.compile`` always does."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if stance not in _STANCES:
            # PyTorch says so at the next compiled call; there is none here, so now
            raise RuntimeError(f"invalid torch.compile stance '{stance}'")
        self.stance = _Stance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __call__(self, fn):
        _set_stance(self.prev)     # as a decorator it applies only while fn runs
        return super().__call__(fn)

    def __enter__(self):
        _set_stance(self.stance)

    def __exit__(self, *exc):
        _set_stance(self.prev)
        return False

    def clone(self):
        s = self.stance
        return type(self)(s.stance, skip_guard_eval_unsafe=s.skip_guard_eval_unsafe,
                          force_backend=s.backend)


from ._dynamo import config  # noqa: E402,F401  (last: framework._dynamo imports this module)
