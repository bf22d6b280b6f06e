"""``autograd.Function``: user-defined ops with a hand-written backward.

``MyOp.apply(*args)`` runs ``forward(ctx, *args)`` without recording; when grad mode is on
and a tensor argument requires grad, one node (``ctx`` itself, a ``BackwardCFunction``
named ``MyOpBackward``) is added whose ``apply`` calls ``MyOp.backward(ctx, *grads)``.
"""
import functools

from .._tensor import Tensor
from . import forward_ad, grad_mode
from .graph import Node, SavedTensor, edge_of


class BackwardCFunction(Node):
    """The node of one ``Function.apply`` call; it is also the ``ctx`` of forward and
    backward."""

    def __init__(self, cls):
        super().__init__()
        self._cls = cls
        self._saved = None
        self.needs_input_grad = ()
        self._non_diff = set()
        self.materialize_grads = True
        self._dirty = ()
        self._arg_is_tensor = ()
        self._saved_fwd = None
        self._in_jvp = False

    def name(self):
        return self._cls.__name__ + "Backward"

    # -- ctx API ---------------------------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Saves tensors for backward (unpacked with a check that no in-place op changed
        them)."""
        self._saved = tuple(SavedTensor(t) if isinstance(t, Tensor) else t for t in tensors)

    def save_for_forward(self, *tensors):
        """Saves tensors for the ``jvp`` staticmethod (read there as ``ctx.saved_tensors``)."""
        self._saved_fwd = tensors

    @property
    def saved_tensors(self):
        if self._in_jvp:
            return tuple(self._saved_fwd or ())
        if self._released:
            from .graph import _FREED
            raise RuntimeError(_FREED)
        if self._saved is None:
            return ()
        return tuple(s.unpack(self) if isinstance(s, SavedTensor) else s for s in self._saved)

    def mark_non_differentiable(self, *tensors):
        self._non_diff.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    # -- node ------------------------------------------------------------------------------
    def apply(self, grads):
        if self._released:
            from .graph import _FREED
            raise RuntimeError(_FREED)
        if self.materialize_grads:
            from .._ops import creation
            grads = [g if g is not None else creation.zeros(m[0], dtype=m[1], device=m[2])
                     for g, m in zip(grads, self._out_meta)]
        out = self._cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._arg_is_tensor)
        if len(out) != n:
            if len(out) > n and all(g is None for g in out[n:]):
                out = out[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n}, got {len(out)})")
        res = []
        for g, is_t, e, meta in zip(out, self._arg_is_tensor, self._all_edges, self._in_meta):
            if not is_t:
                if g is not None and not isinstance(g, Tensor):
                    raise TypeError(f"function {self.name()} returned a gradient different "
                                    "than None for a non-Tensor input")
                continue
            if (g is not None and e is not None and g._shape != meta[0]
                    and not (g.numel() == 0 and 0 in meta[0])):
                try:
                    g = g.sum_to_size(meta[0])
                except RuntimeError:
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index "
                        f"{len(res)} - got {list(g.shape)} but expected shape compatible "
                        f"with {list(meta[0])}") from None
            res.append(g if e is not None else None)
        return res

    def release(self):
        self._released = True
        self._saved = None


class Function:
    """Base class of custom autograd ops: subclass with static ``forward(ctx, ...)`` and
    ``backward(ctx, *grad_outputs)``, and call ``MyOp.apply(...)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        is_t = tuple(isinstance(a, Tensor) for a in args)
        if not all(is_t):
            from ..compiler import is_compiling
            from ..library._custom_op import _traced_arg
            proxy = _traced_arg(args, kwargs) if is_compiling() else None
            if proxy is not None:  # framework.compile: one opaque node, so the compiled
                # graph calls forward and records this backward, as eager does (fx traces
                # through forward, as torch.fx does)
                return proxy.tracer.create_proxy("call_function", cls.apply, args, kwargs)
        ctx = BackwardCFunction(cls)
        ctx._arg_is_tensor = is_t
        ctx.needs_input_grad = tuple(t and a._requires_grad for t, a in zip(is_t, args))
        recording = grad_mode._mode.enabled and any(ctx.needs_input_grad)
        separate = cls.setup_context is not Function.setup_context
        prev = grad_mode._mode.enabled
        grad_mode._mode.enabled = False
        try:
            if separate:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            grad_mode._mode.enabled = prev
        if not recording:
            return out
        # per argument (None for non-tensors); the node's edges are the tensor arguments'
        ctx._all_edges = [edge_of(a) if t else None for a, t in zip(args, is_t)]
        ctx._in_meta = [(a._shape, a.dtype) if t else None for a, t in zip(args, is_t)]
        ctx.next_functions = tuple(e for e, t in zip(ctx._all_edges, is_t) if t)
        outs = out if isinstance(out, tuple) else (out,)
        fixed = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                if any(o is a for a in args) and not any(o is d for d in ctx._dirty):
                    o = Tensor._make(o._storage, o._shape, o._stride, o._offset, o.dtype)
                if id(outs[i]) not in ctx._non_diff and o.dtype.category >= 2:
                    o._grad_fn = ctx
                    o._requires_grad = True
                    o._output_nr = i
            fixed.append(o)
        ctx._num_outputs = len(outs)
        ctx._out_meta = tuple((o._shape, o.dtype, o._storage.device) if isinstance(o, Tensor)
                              else ((), None, None) for o in fixed)
        from . import anomaly_mode
        if anomaly_mode._enabled:
            anomaly_mode.record_trace(ctx)
        if forward_ad._level is not None and cls.jvp is not Function.jvp:
            fixed = forward_ad.function_jvp(ctx, args, fixed)
        return tuple(fixed) if isinstance(out, tuple) else fixed[0]


def once_differentiable(fn):
    """Marks a backward as not differentiable itself: it runs without recording, and a
    double backward through it raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            out = fn(ctx, *args)
        if not grad_mode.is_grad_enabled():
            return out
        edges = tuple(edge_of(a) for a in args if isinstance(a, Tensor) and a._requires_grad)
        if not edges:
            return out
        outs = out if isinstance(out, tuple) else (out,)
        node = _DelayedError(edges, _ONCE)
        for o in outs:
            if isinstance(o, Tensor) and o.dtype.category >= 2:
                o._grad_fn = node
                o._requires_grad = True
        return out
    return wrapper


def delayed_error(t, message):
    """``t``'s values, with a backward that raises ``message``: for a derivative formula
    that is right to first order but has no derivative of its own at these inputs."""
    if not (grad_mode.is_grad_enabled() and t._requires_grad):
        return t
    out = t.detach()
    out._grad_fn = _DelayedError((edge_of(t),), message)
    out._requires_grad = True
    return out


_ONCE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Node):
    def __init__(self, edges, message):
        super().__init__(edges)
        self._message = message

    def apply(self, grads):
        raise RuntimeError(self._message)
