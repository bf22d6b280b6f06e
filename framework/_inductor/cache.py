"""``CompiledCallable``: a compiled function or module with its guards and its cache.

Each call computes a guard key: for every tensor argument its shape, dtype, device and
requires_grad, for every int/float/bool/str/None argument its value (fixed in the traced
graph as a concrete argument), for a module the training flags of its modules and the
identity, shape, dtype, device (and requires_grad) of its parameters and buffers, the autocast
state and the grad and inference modes (the trace bakes in what ``is_grad_enabled()`` and
an intermediate's ``requires_grad`` read, as TorchDynamo guards on them). A key seen
before runs its compiled graph; a new one traces again, up to
``framework._dynamo.config.cache_size_limit`` graphs per callable, beyond which new keys
run eagerly (with a warning, as PyTorch's recompile limit). The call that traces returns
the result of the trace itself, which runs the program once on its inputs (trace.py); the
later ones run the fused graph. A function that cannot be traced (data-dependent control
flow, an unsupported construct, an argument other than a tensor or a constant) runs
eagerly from then on, with one warning; ``fullgraph=True`` raises instead. An error the
program itself raises while traced (a failed shape assert) is raised by an eager run, as
eagerly, and the callable stays compiled. A module's own hooks run eagerly around its
compiled forward. With ``cudagraphs`` (mode="reduce-overhead") a key's later calls replay
CUDA graphs of its graph (cudagraphs.py).
"""
import collections
import inspect
import warnings
import weakref

from .. import _dynamo
from .._dynamo import exc as _dynamo_exc
from .._ops import autocast
from .._tensor import Tensor
from ..autograd import grad_mode
from ..fx.proxy import TraceError
from ..nn.modules import _hooks
from ..nn.modules.module import Module
from . import cudagraphs as _cudagraphs
from . import trace as _trace

_CONSTANTS = (bool, int, float, str, type(None))
_all = weakref.WeakSet()   # every CompiledCallable, for reset()


def _plain_data(v):
    """Whether ``v`` is Python data without tensors: constants and containers of them."""
    if type(v) in _CONSTANTS:
        return True
    if isinstance(v, (list, tuple, set, frozenset)):
        return all(_plain_data(x) for x in v)
    if isinstance(v, dict):
        return all(_plain_data(k) and _plain_data(x) for k, x in v.items())
    return False


def reset():
    """Forgets every compiled callable's graphs and fallbacks (``framework.compiler.reset``)."""
    for c in list(_all):
        c.cache.clear()
        c.graphs.clear()
        c.eager = False


class CompiledCallable:
    """Calls ``model`` through traced, fused graphs cached by guard key; with a
    ``backend`` (a callable, as PyTorch's custom backends) through what
    ``backend(graph_module, example_inputs)`` returns instead."""

    def __init__(self, model, fullgraph=False, backend=None, cudagraphs=False):
        self.model, self.fullgraph, self.backend = model, fullgraph, backend
        # mode="reduce-overhead": cuda graphs per key (cudagraphs.py); key -> its
        # Runner, or the reason it runs plainly
        self.cudagraphs = cudagraphs and backend is None
        self.graphs = {}
        self.cudagraph_captures = 0
        self.cudagraph_warned = set()
        self.is_module = isinstance(model, Module)
        fn = type(model).forward if self.is_module else model
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        if sig is not None and self.is_module:
            sig = sig.replace(parameters=list(sig.parameters.values())[1:])
        self.signature = sig
        self.cache = collections.OrderedDict()
        self.eager = False        # True once tracing failed: eager for good
        self.traces = 0
        self._warned_limit = False
        _all.add(self)

    def _eager(self, *args, **kwargs):
        """The model run eagerly (a module's hooks are run by ``__call__``)."""
        return (self.model.forward if self.is_module else self.model)(*args, **kwargs)

    def _fall_back(self, reason):
        if self.fullgraph:
            if isinstance(reason, (TraceError, NotImplementedError)):
                # where PyTorch's compiler would break the graph: its exception class
                raise _dynamo_exc.Unsupported(str(reason)) from reason
            raise reason
        self.eager = True
        warnings.warn(f"framework.compile: {self._name()} runs eagerly: it could not be "
                      f"traced into a graph ({type(reason).__name__}: {reason})",
                      UserWarning, stacklevel=3)

    def _name(self):
        return type(self.model).__name__ if self.is_module else getattr(
            self.model, "__qualname__", repr(self.model))

    def _guard(self, values, names):
        """(guard key, {name: value} of the constant arguments), or (None, None) for an
        argument that is neither a tensor nor a constant."""
        key, concrete = [], {}
        for name, v in zip(names, values):
            if isinstance(v, Tensor):
                key.append((tuple(v.shape), v.dtype, v.device, v.requires_grad))
            elif type(v) in _CONSTANTS:
                key.append((type(v), v))
                concrete[name] = v
            else:
                return None, None
        state = autocast.state   # autocast changes the dtypes the graph was fused for
        key.append((tuple(state.enabled.values()), tuple(state.dtype.values()))
                   if state.active else None)
        key.append((grad_mode._mode.enabled, grad_mode._mode.inference))
        if self.is_module:
            key.append(tuple(m.training for m in self.model.modules()))
            # their identity too: the graph holds the parameters it was traced with
            key.append(tuple((id(p), tuple(p.shape), p.dtype, p.device, p.requires_grad)
                             for p in self.model.parameters()))
            key.append(tuple((id(b), tuple(b.shape), b.dtype, b.device)
                             for b in self.model.buffers()))
        return tuple(key), concrete

    def __call__(self, *args, **kwargs):
        if self.eager or self.signature is None or _force_eager():
            return self.model(*args, **kwargs)
        m = self.model
        if self.is_module and (m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                               or m._backward_pre_hooks or _any_global_hooks()):
            # the module's hooks run eagerly around the compiled forward
            return _hooks._call_with_hooks(m, self._forward, args, kwargs)
        return self._forward(*args, **kwargs)

    def _forward(self, *args, **kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            return self._eager(*args, **kwargs)   # eager raises the error
        bound.apply_defaults()
        names, values = list(bound.arguments), list(bound.arguments.values())
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in self.signature.parameters.values()):
            self._fall_back(NotImplementedError("*args/**kwargs parameters"))
            return self._eager(*args, **kwargs)
        key, concrete = self._guard(values, names)
        if key is None and all(_plain_data(v) for v in values):
            # no tensor to build a graph over (operator.indexOf([1, 2, 3], 2)): the function
            # runs as Python, as PyTorch's compiler runs it without a graph
            return self._eager(*args, **kwargs)
        if key is None:
            self._fall_back(NotImplementedError(
                "an argument that is neither a tensor nor an int/float/bool/str/None"))
            return self._eager(*args, **kwargs)
        gm = self.cache.get(key)
        if gm is not None:
            if self.cudagraphs:
                return _cudagraphs.call(self, key, gm, values)
            return gm(*values)
        limit = _dynamo.config.cache_size_limit
        if len(self.cache) >= limit:
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(f"framework.compile: {self._name()} hit "
                              f"config.recompile_limit ({limit}); new inputs run eagerly",
                              UserWarning, stacklevel=2)
            return self._eager(*args, **kwargs)
        skip = state = None
        if self.cudagraphs:
            skip = _cudagraphs.input_reason(values)
            state = None if skip else _cudagraphs.before_trace(values)
        try:
            # with a user's backend its callable gives the first result: the trace run
            # puts the random generators back
            gm, result = _trace.trace(self.model, values, concrete,
                                      rewind=self.backend is not None)
        except Exception as e:  # noqa: BLE001 - any tracing failure means eager
            if self.fullgraph or isinstance(e, TraceError):
                self._fall_back(e)
                return self._eager(*args, **kwargs)
            # maybe the program's own error (a failed shape assert): eager raises it
            # again, and the callable stays compiled for other inputs
            result = self._eager(*args, **kwargs)
            self._fall_back(e)
            return result
        self.traces += 1
        if self.backend is not None:   # a user's backend: (GraphModule, inputs) -> callable
            fn = self.cache[key] = self.backend(gm, values)
            return fn(*values)
        _trace.optimize(gm)
        self.cache[key] = gm
        if self.cudagraphs:
            skip = skip or _cudagraphs.after_trace(state, values, gm)
            if skip:
                _cudagraphs.skip(self, key, skip)
        if _dynamo.config.verbose:
            print(f"framework.compile: {self._name()} traced, graph {len(self.cache)}:"
                  f"{gm.code}")
        return result


def _any_global_hooks():
    return bool(_hooks._global_forward_hooks or _hooks._global_forward_pre_hooks
                or _hooks._global_backward_hooks or _hooks._global_backward_pre_hooks)


def _force_eager():
    from .. import compiler
    return compiler._stance.stance == "force_eager"
