"""Symbolic tracing: ``Tracer``, ``symbolic_trace`` and ``wrap`` (torch.fx._symbolic_trace)."""
import bisect
import dis
import functools
import inspect
import math

from .. import nn
from .._tensor import Tensor
from . import _bindings
from ._bindings import TracePatches, install_op_wrappers
from .graph import Graph
from .node import _side_effectful_functions, base_types
from .proxy import Attribute, ParameterProxy, Proxy, TraceError, _find_proxy

# (globals dict id, function name) -> globals dict, of the functions ``wrap`` registered
_wrapped_fns_to_patch = {}
_is_fx_tracing_flag = False


def is_fx_tracing():
    """Whether a ``Tracer.trace`` is running."""
    return _is_fx_tracing_flag


def _assert(condition, message):
    """``assert condition, message`` as a function, which a graph can call."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value, msg):
    assert value is None, msg


_side_effectful_functions.update((_assert, _assert_is_none))


def wrap(fn_or_name):
    """Makes a module-level function a leaf of symbolic tracing: called on proxies it is
    recorded as one ``call_function`` node instead of being traced through. Use as a
    decorator or as ``wrap("name")`` at module scope."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise AssertionError("Unsupported type for global function! Must be either a "
                             "callable or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    return fn_or_name


def _wrapped_leaf(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig_fn(*args, **kwargs)
        p = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        p.node.meta["is_wrapped"] = True
        return p
    return wrapped


class Tracer:
    """Runs a module's ``forward`` on ``Proxy`` inputs and records what it does as a
    ``Graph``. Modules of ``framework.nn`` (but ``Sequential``) are leaves, recorded as
    ``call_module``; functions in ``autowrap_modules`` (``math``) and
    ``autowrap_functions`` are recorded as ``call_function`` when given proxies."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        self._autowrap_function_ids = {
            id(value) for m in autowrap_modules for name, value in vars(m).items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.proxy_buffer_attributes = False
        self.submodule_paths = None
        self.tensor_attrs = {}

    # ---- what is a leaf -------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """Whether ``m`` is recorded as one ``call_module`` node rather than traced
        through: the framework's own ``nn`` modules, but ``Sequential``."""
        mod = type(m).__module__
        return (mod.startswith("framework.nn") or mod.startswith("framework.ao.nn")) \
            and not isinstance(m, nn.Sequential)

    def path_of_module(self, mod):
        """The qualified name of ``mod`` in the traced root."""
        path = self.submodule_paths.get(id(mod)) if self.submodule_paths else None
        if path is None:
            for n, p in self.root.named_modules():
                if mod is p:
                    return n
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        """A call of the submodule ``m``: a ``call_module`` node for a leaf, else its
        ``forward`` traced through."""
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A module attribute read while tracing: parameters (and buffers) become
        ``get_attr`` nodes."""
        def maybe_proxy(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        if self.param_shapes_constant and isinstance(attr_val, nn.Parameter):
                            node = self.create_node("get_attr", n, (), {})
                            parameter_proxy_cache[n] = ParameterProxy(self, node, n, attr_val)
                        else:
                            parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
            return None
        if isinstance(attr_val, nn.Parameter):
            p = maybe_proxy(self.root.named_parameters())
            if p is not None:
                return p
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            p = maybe_proxy(self.root.named_buffers())
            if p is not None:
                return p
        return attr_val

    # ---- graph building -------------------------------------------------------------
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Inserts a node into the graph being built."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """Records a node for ``target`` called on ``args``/``kwargs`` (proxies become
        their nodes) and returns a proxy of its value."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """Turns a value passed to a traced call into a node argument: proxies become
        their nodes, parameters and tensors ``get_attr`` nodes, containers are mapped."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, p in self.root.named_buffers():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                self.tensor_attrs[id(a)] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*(self.create_arg(e) for e in a))
            t = tuple(self.create_arg(e) for e in a)
            return t if type(a) is tuple else _try_type(type(a), t)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, type(self.graph._root)):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, base_types) or a is None or a is ... or _is_plain_constant(a):
            return a
        if isinstance(a, nn.Module):
            raise NotImplementedError(f"argument of type: {type(a)} (a module can only be "
                                      "called, not passed, while tracing)")
        raise NotImplementedError(f"argument of type: {type(a)}")

    def call_without_proxies(self, kind, target, fn, args, kwargs):
        """A framework op called while tracing with no proxy among its arguments
        (``framework.arange(4)``, a method of a constant tensor): ``fn(*args, **kwargs)``,
        not recorded. A subclass may record it as a ``kind`` node of ``target``."""
        return fn(*args, **kwargs)

    def to_bool(self, obj):
        """``bool(proxy)``: a traced value cannot decide control flow."""
        raise TraceError("symbolically traced variables cannot be used as inputs to "
                         "control flow")

    def iter(self, obj):
        """``iter(proxy)``: a traced value has no known length, but where the caller
        unpacks it (``a, b = proxy``) the bytecode tells how many items it takes."""
        frame = inspect.currentframe()
        caller = frame.f_back.f_back if frame.f_back is not None else None
        if caller is not None:
            insts = list(dis.get_instructions(caller.f_code))
            idx = bisect.bisect_left([i.offset for i in insts], caller.f_lasti)
            if idx < len(insts) and insts[idx].opname == "UNPACK_SEQUENCE":
                return (obj[i] for i in range(insts[idx].argval))
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function "
                         "argument. See the torch.fx docs on pytorch.org for a more detailed "
                         "explanation of what types of control flow can be traced, and "
                         "check out the Proxy docstring for help troubleshooting Proxy "
                         "iteration errors")

    def keys(self, obj):
        return Attribute(obj, "keys")()

    # ---- tracing --------------------------------------------------------------------
    def _placeholders(self, fn, skip_self, concrete_args):
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1 if skip_self else 0:]
        concrete_args = concrete_args or {}
        if isinstance(concrete_args, tuple):
            concrete_args = {p.name: v for p, v in zip(params, concrete_args)}
        args = []
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise NotImplementedError(
                    f"symbolic_trace: *args/**kwargs parameter '{p.name}' of "
                    f"{fn.__qualname__} is not supported")
            default = () if p.default is p.empty else (p.default,)
            if p.name in concrete_args:
                value = concrete_args[p.name]
                out = self.create_proxy("placeholder", f"{p.name}_1", default, {})
                if type(value) is bool or type(value) in (int, float, str):
                    self.create_proxy("call_function", _assert,
                                      (out == value, f"{p.name} has been specialized to "
                                                     f"have value {value} but got another "
                                                     "value"), {})
                elif value is None:
                    self.create_proxy("call_function", _assert_is_none,
                                      (out, f"{p.name} has been specialized to have value "
                                            "None but got another value"), {})
                args.append(value)
                continue
            args.append(self.create_proxy("placeholder", p.name, default, {},
                                          type_expr=fn.__annotations__.get(p.name)))
        return args

    def trace(self, root, concrete_args=None):
        """Traces ``root`` (a module or a function) into a ``Graph``."""
        global _is_fx_tracing_flag
        if isinstance(root, nn.Module):
            self.root = root
            fn = type(root).forward
            skip_self = True
        else:
            self.root = nn.Module()
            fn = root
            skip_self = False
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        self.submodule_paths = {}
        for name, mod in self.root.named_modules():
            self.submodule_paths.setdefault(id(mod), name)
        fn_globals = getattr(fn, "__globals__", {})
        old_flag, _is_fx_tracing_flag = _is_fx_tracing_flag, True
        old_tracer, _bindings.active_tracer = _bindings.active_tracer, self
        patches = TracePatches()
        try:
            args = self._placeholders(fn, skip_self, concrete_args)
            parameter_proxy_cache = {}
            orig_getattr = nn.Module.__getattr__
            orig_call = nn.Module.__call__
            tracer = self

            def module_getattr_wrapper(mod, attr):
                return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*a, **k):
                    return orig_call(mod, *a, **k)
                return tracer.call_module(mod, forward, args, kwargs)

            install_op_wrappers(patches, [fn_globals])
            patches.set(nn.Module, "__getattr__", module_getattr_wrapper)
            patches.set(nn.Module, "__call__", module_call_wrapper)
            for (_, name), g in _wrapped_fns_to_patch.items():
                if name in g and callable(g[name]):
                    patches.set_item(g, name, _wrapped_leaf(g[name]))
            for g in [fn_globals] + [vars(m) for m in self._autowrap_search]:
                for name, value in list(g.items()):
                    if not name.startswith("_") and id(value) in self._autowrap_function_ids:
                        patches.set_item(g, name, _wrapped_leaf(value))
            result = fn(self.root, *args) if skip_self else fn(*args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=fn.__annotations__.get("return"))
        finally:
            patches.restore()
            _is_fx_tracing_flag = old_flag
            _bindings.active_tracer = old_tracer
            self.submodule_paths = None
        return self.graph


def _try_type(cls, t):
    try:
        return cls(t)
    except Exception:
        return t


def _is_plain_constant(a):
    """dtypes, devices, memory formats, enums, types and functions pass into a node as
    they are."""
    import enum
    import types

    import framework
    return isinstance(a, (framework.dtype, framework.device, type(framework.contiguous_format),
                          enum.Enum, type, types.FunctionType, types.BuiltinFunctionType))


def symbolic_trace(root, concrete_args=None):
    """Traces ``root`` (a module or a function) and returns a ``GraphModule`` of the
    recorded graph. ``concrete_args`` fixes some inputs to constants (e.g. a flag
    deciding control flow)."""
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
