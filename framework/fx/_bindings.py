"""The framework's public op bindings, and the wrappers a ``Tracer`` swaps in for them.

There is no ``__torch_function__``: while ``Tracer.trace`` runs, every public op binding
(the ``framework`` namespaces, ``nn.functional``, ``Tensor`` methods and operators) is
replaced by a wrapper that records a node when a ``Proxy`` is among its arguments and
otherwise calls the original. The swap reuses the profiler's list of op bindings
(``framework.profiler._record.targets``) and its ``Patches``, so nothing of it costs
anything outside tracing."""
import functools
import types

from ..profiler._record import Patches, targets
from .proxy import _find_proxy

# Tensor operators, and the method PyTorch's FX records for one called on a tensor with a
# proxy argument (``tensor * proxy`` is ``call_method mul``); the others keep their name
_TENSOR_OPERATORS = {f"__{n}__" for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow",
    "rmatmul", "rand", "ror", "rxor", "rlshift", "rrshift", "eq", "ne", "lt", "le", "gt",
    "ge", "neg", "pos", "invert", "abs", "getitem", "setitem")}
_METHOD_NAMES = {"__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul",
                 "__rmul__": "mul", "__truediv__": "div", "__matmul__": "matmul",
                 "__pow__": "pow", "__mod__": "remainder", "__eq__": "eq", "__ne__": "ne",
                 "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge"}
# namespaces whose public functions are ops besides those the dispatcher installed
_NAMESPACES = ("", "nn.functional", "linalg", "special", "fft")

_bindings = None
# the Tracer whose ``Tracer.trace`` runs: the wrappers hand it the op calls that have no
# proxy argument (``Tracer.call_without_proxies``)
active_tracer = None


def op_bindings():
    """(owner, attribute) of every public op binding: the profiler's targets, every public
    function of the framework namespaces (plain Python ones such as ``framework.flatten``
    included), every public ``Tensor`` method and the ``Tensor`` operators."""
    global _bindings
    if _bindings is not None:
        return _bindings
    import framework as fw
    seen, out = set(), []

    def add(owner, attr):
        if (id(owner), attr) not in seen:
            seen.add((id(owner), attr))
            out.append((owner, attr))

    for owner, attr, _ in targets():
        add(owner, attr)
    for ns in _NAMESPACES:
        m = fw
        for part in filter(None, ns.split(".")):
            m = getattr(m, part, None)
        if m is None:
            continue
        for attr, fn in list(vars(m).items()):
            if not attr.startswith("_") and isinstance(
                    fn, (types.FunctionType, types.BuiltinFunctionType)):
                add(m, attr)
    for attr, fn in list(vars(fw.Tensor).items()):
        if isinstance(fn, types.FunctionType) and (
                not attr.startswith("_") or attr in _TENSOR_OPERATORS):
            add(fw.Tensor, attr)
    _bindings = out
    return out


class _TracedOp:
    """A framework function while tracing: records a node when given a proxy, else calls
    the function. Compares and hashes as the function, so ``target == framework.relu``
    holds in code that runs while patched (a ``Transformer``'s overrides)."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.__fx_original__ = fn

    def __call__(self, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            if active_tracer is None:
                return self.__fx_original__(*args, **kwargs)
            return active_tracer.call_without_proxies(
                "call_function", self.__fx_original__, self.__fx_original__, args, kwargs)
        return proxy.tracer.create_proxy("call_function", self.__fx_original__, args, kwargs)

    def __eq__(self, other):
        return getattr(other, "__fx_original__", other) is self.__fx_original__

    def __hash__(self):
        return hash(self.__fx_original__)

    def __repr__(self):
        return repr(self.__fx_original__)


@functools.lru_cache(maxsize=None)
def _function_wrapper(fn):
    return _TracedOp(fn)


@functools.lru_cache(maxsize=None)
def _method_wrapper(fn, name):
    method = _METHOD_NAMES.get(name, name)

    @functools.wraps(fn)
    def traced(self, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            if active_tracer is None:
                return fn(self, *args, **kwargs)
            return active_tracer.call_without_proxies("call_method", method, fn,
                                                      (self,) + args, kwargs)
        # ``tensor.add(proxy)``, ``tensor * proxy``: a method of the tensor (a constant)
        return proxy.tracer.create_proxy("call_method", method, (self,) + args, kwargs)
    traced.__fx_original__ = fn
    return traced


def install_op_wrappers(patches, fn_globals=()):
    """Swaps the tracing wrappers in for every op binding (and for op functions imported
    by name into the dicts ``fn_globals``, e.g. ``from framework import relu``).
    ``patches.restore()`` puts the original objects back."""
    import framework as fw
    by_id = {}
    for owner, attr in op_bindings():
        fn = vars(owner).get(attr)
        if not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType)):
            continue
        if owner is fw.Tensor:
            w = _method_wrapper(fn, attr)
        else:
            w = by_id[id(fn)] = _function_wrapper(fn)
            # a name imported before __torch_function__ wrapped the op (overrides.py)
            by_id.setdefault(id(getattr(fn, "_tf_original", fn)), w)
        patches.set(owner, attr, w)
    for g in fn_globals:
        for name, value in list(g.items()):
            w = by_id.get(id(value))
            if w is not None and not name.startswith("__"):
                patches.set_item(g, name, w)


class TracePatches(Patches):
    """The profiler's ``Patches``, also for items of dicts (a module's globals)."""

    def set_item(self, d, key, value):
        self.saved.append((_DictOwner(d), key, d.get(key, self._MISSING)))
        d[key] = value


class _DictOwner:
    """Lets ``Patches.restore`` (setattr/delattr) put back an item of a dict."""

    def __init__(self, d):
        object.__setattr__(self, "d", d)

    def __setattr__(self, key, value):
        self.d[key] = value

    def __delattr__(self, key):
        self.d.pop(key, None)


_public = None


def public_name(fn):
    """(qualified name, name) under which user code reaches the op ``fn``
    (``("framework.nn.functional.relu", "relu")``), or None for other callables."""
    global _public
    if _public is None:
        table = {}
        for owner, attr in op_bindings():
            mod = getattr(owner, "__name__", "")
            if not isinstance(owner, types.ModuleType) or "._" in mod:
                continue
            f = vars(owner).get(attr)
            if f is None:
                continue
            f = getattr(f, "__fx_original__", f)
            entry = (f"{mod}.{attr}", attr)
            # the namespace the function was written in wins over re-exports
            if id(f) not in table or mod == getattr(f, "__module__", None):
                table[id(f)] = entry
            # a __torch_function__ wrapper (framework/overrides.py): its op has the same name
            orig = getattr(f, "_tf_original", None)
            if orig is not None:
                table.setdefault(id(orig), entry)
        _public = table
    return _public.get(id(fn))
