"""The autograd graph: ``Node`` (one per recorded op call, PyTorch's ``grad_fn``), the
``AccumulateGrad`` node of each leaf, saved tensors with version checks, and removable hook
handles.

A node's ``next_functions`` are its edges ``(node, output_nr)`` towards the inputs of the
forward call ((None, 0) where an input needs no gradient). ``apply(grads)`` takes the gradients
of the forward outputs and returns one gradient (or None) per edge.

Graph objects are Python objects that the cyclic garbage collector walks while the graph is
alive, so a node keeps few of them: its edges are one flat tuple ``_next`` (child, output_nr,
child, output_nr, ...; child None where there is no edge).
"""
import contextlib
import itertools
import re
import threading
import weakref
from sys import getrefcount

from .._dtype import int64
from .._tensor import Tensor, _leaf_hooks
from . import grad_mode

_seq = itertools.count()


class RemovableHandle:
    """Returned by the ``register_*hook`` methods; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks):
        self._hooks = weakref.ref(hooks)
        self.id = next(self._ids)

    def remove(self):
        hooks = self._hooks()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Hooks(dict):
    """An id -> hook mapping that handles can refer to weakly."""
    __slots__ = ("__weakref__",)


def add_hook(hooks, fn):
    h = RemovableHandle(hooks)
    hooks[h.id] = fn
    return h


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


class Node:
    """A step of the backward pass (PyTorch's ``torch.autograd.graph.Node``)."""

    # rarely set fields are class-level defaults: a node costs three stores to create
    _hooks = None
    _prehooks = None
    _tensor_hooks = None   # output_nr -> _Hooks of the tensor (Tensor.register_hook)
    _retained = None       # output_nr -> weakref of a tensor that retains its grad
    _out_meta = None       # per output: (shape, dtype, device) to materialize zeros
    _released = False
    _trace = None
    _num_outputs = 1
    _next = ()
    _version = None        # for the history of a view: its storage's version when recorded
                           # (a tuple of them for a node with several outputs)

    def __init__(self, next_functions=(), num_outputs=1):
        self._next = flat_edges(next_functions)
        self._seq = next(_seq)
        if num_outputs != 1:
            self._num_outputs = num_outputs

    @property
    def next_functions(self):
        """The edges ``(node, output_nr)`` towards the forward inputs (``(None, 0)``: an input
        that needs no gradient, as in PyTorch)."""
        it = iter(self._next)
        return tuple(zip(it, it))

    @next_functions.setter
    def next_functions(self, edges):
        self._next = flat_edges(edges)

    @property
    def metadata(self):
        m = self.__dict__.get("_metadata")
        if m is None:
            m = self.__dict__["_metadata"] = {}
        return m

    def name(self):
        return type(self).__name__

    def apply(self, grads):
        raise NotImplementedError

    def release(self):
        """Frees what the node saved for backward."""
        self._released = True

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new
        grad_inputs."""
        if self._hooks is None:
            self._hooks = _Hooks()
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if self._prehooks is None:
            self._prehooks = _Hooks()
        return add_hook(self._prehooks, fn)

    def _tensor_hooks_for(self, nr):
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        h = self._tensor_hooks.get(nr)
        if h is None:
            h = self._tensor_hooks[nr] = _Hooks()
        return h

    def __call__(self, *grads):
        return self.apply(list(grads))

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    def __init__(self, variable):
        super().__init__((), 1)
        self.variable = variable
        self._tensor_hooks = {0: _leaf_hooks(variable, "_pre_hooks")}
        self._post_hooks = _leaf_hooks(variable, "_post_hooks")
        self._out_meta = ((variable._shape, variable.dtype, variable._storage.device),)

    def name(self):
        return "torch::autograd::AccumulateGrad"   # PyTorch's C++ name; repr is short

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"

    def release(self):
        pass   # a leaf's node saves nothing and is reused by every backward

    def apply(self, grads):
        g = grads[0]
        v = self.variable
        if g is None:
            return ()
        if g._shape != v._shape:
            g = g.sum_to_size(v._shape)
        want = v.__dict__.get("_grad_dtype", v.dtype) if v.__dict__ else v.dtype
        if g.dtype is not want and want is not None:
            g = g.to(want)
        old = v._grad
        if grad_mode._mode.enabled:    # create_graph: keep the graph of the gradient
            v._grad = g if old is None else old + g
        elif old is None:
            # the engine's gradient is taken as it is when nothing else can see it (as
            # PyTorch does): referred to only by the engine's list and this frame, not a
            # view, and alone on its storage, and laid out as PyTorch's layout contract asks
            # (.grad takes the leaf's strides: channels_last weights get channels_last
            # gradients; a sparse leaf has none: torch.mm/bmm give it a dense gradient);
            # otherwise it is copied, never aliased
            laid_out = g.__class__ is Tensor and not (v.is_sparse or v.is_sparse_csr) and (
                g._stride == v._stride or _obeys_layout(g, v))
            if (laid_out and getrefcount(g) <= _UNSHARED and g._base is None
                    and not g._requires_grad and getrefcount(g._storage) <= _HELD_ONCE):
                v._grad = g
            elif (laid_out and g._base is not None and getrefcount(g) <= _UNSHARED
                  and _sole_view(g) and not g._requires_grad):
                # a view (``grad.t()`` of a fresh result) that is the only user of its
                # base and covers all of it contiguously: taken, as its own tensor
                g._base = None
                v._grad = g
            else:
                v._grad = _clone_obeying_layout(g.detach(), v)
        elif old._requires_grad:
            v._grad = old.detach() + g
        elif old.is_sparse and not g.is_sparse:
            v._grad = g + old    # a sparse .grad meeting a dense gradient: dense, as PyTorch
        else:
            old.add_(g)
        if self._post_hooks:
            for hook in list(self._post_hooks.values()):
                hook(v)
        return ()


def _obeys_layout(g, v):
    """Whether gradient ``g`` has the layout PyTorch gives ``v.grad``: the strides of ``v``
    (size-1 dims aside) when ``v`` is dense and non-overlapping, else row-major."""
    from .._ops.overlap import non_overlapping_and_dense
    if not non_overlapping_and_dense(v._shape, v._stride):
        return g.is_contiguous()
    for n, gs, vs in zip(v._shape, g._stride, v._stride):
        if (n != 1 and gs != vs) or (n == 1 and gs == 0):
            return False
    return True


def _clone_obeying_layout(g, v):
    """A copy of ``g`` laid out as ``_obeys_layout`` asks."""
    if g.is_sparse or g.is_sparse_csr:   # Embedding(sparse=True): the gradient stays sparse
        return g.clone()
    from .._ops.overlap import non_overlapping_and_dense
    if not (v.is_sparse or v.is_sparse_csr) and non_overlapping_and_dense(v._shape, v._stride):
        return g.new_empty_strided(v._shape, v._stride).copy_(g)
    from .. import contiguous_format
    return g.clone(memory_format=contiguous_format)


def flat_edges(edges):
    """``(node, output_nr)`` edges (or None) as one flat tuple."""
    out = []
    for e in edges:
        out += (None, 0) if e is None else e
    return tuple(out)


# Reference counts that mean "not shared", measured on this interpreter (they differ
# between Python versions): a gradient held only by the engine's list and AccumulateGrad's
# frame, and a storage held only by its tensor.
def reached_leaves(tensors):
    """The leaf tensors that require grad and that the graphs of ``tensors`` reach: a
    tensor of ``tensors`` that is such a leaf itself, else the variables of the
    AccumulateGrad nodes met walking back (each node once)."""
    stack, seen = [], set()
    for t in tensors:
        if t.grad_fn is None:
            if t.requires_grad:
                yield t
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            yield var
        nxt = node._next
        for i in range(0, len(nxt), 2):
            if nxt[i] is not None:
                stack.append(nxt[i])


def _refs_in_apply(grads):
    g = grads[0]
    return getrefcount(g)


class _Holder:
    __slots__ = ("x",)


def _refs_held_once():
    h = _Holder()
    h.x = object()
    return getrefcount(h.x)


_UNSHARED = _refs_in_apply([object()])
_HELD_ONCE = _refs_held_once()


def _sole_view(g):
    """Whether view ``g`` is the only holder of its base (itself held by no one else, with a
    storage held by the base and ``g``), and spans that storage contiguously from 0."""
    base = g._base
    return (base._base is None and getrefcount(base) <= _HELD_ONCE + 1  # + this frame
            and getrefcount(g._storage) <= _HELD_ONCE + 1 and g._offset == 0
            and g.is_contiguous() and base.numel() == g.numel()
            and g.numel() * g.element_size() == g._storage.nbytes)


def grad_accumulator(t):
    """The AccumulateGrad node of a leaf that requires grad (one per leaf)."""
    ref = t.__dict__.get("_grad_acc")
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t.__dict__["_grad_acc"] = weakref.ref(node)
    return node


def edge_of(t):
    """The edge a tensor's gradient flows along: (grad_fn, output_nr), or (its
    AccumulateGrad, 0) for a leaf; None when it does not require grad."""
    if not t._requires_grad:
        return None
    fn = t._grad_fn if t._base is None else view_fn(t)
    if fn is not None:
        return fn, t._output_nr
    return grad_accumulator(t), 0


class GradientEdge(tuple):
    """An edge of the graph, ``(node, output_nr)``; ``autograd.grad`` accepts it as an
    input (the gradient flowing into it)."""

    def __new__(cls, node, output_nr):
        return tuple.__new__(cls, (node, output_nr))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])


def get_gradient_edge(tensor):
    """The edge the gradient of ``tensor`` flows along (its grad_fn, or its
    AccumulateGrad for a leaf)."""
    e = edge_of(tensor)
    if e is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    return GradientEdge(*e)


def increment_version(tensor):
    """Marks ``tensor`` as modified in place (for in-place changes autograd cannot see)."""
    for t in (tensor if isinstance(tensor, (list, tuple)) else (tensor,)):
        t._storage.version += 1


class ViewOfBase(Node):
    """The history of a view taken from its base's (PyTorch's AsStridedBackward0): the
    view's gradient lands in the view's region of a zero gradient of the base."""

    def __init__(self, base_edge, base, view):
        super().__init__((base_edge,))
        self._base_meta = (base._shape, base._stride, base.dtype, base._storage.device)
        self._geometry = (view._shape, view._stride, view._offset - base._offset)
        self._version = view._storage.version

    def name(self):
        return "AsStridedBackward0"

    def apply(self, grads):
        from .._ops import alloc, creation
        from .formulas import _scatter_back
        shape, stride, dtype, device = self._base_meta
        # the base's element numbers laid out with the base's own strides, so the view's
        # geometry picks them; overlapping views (stride 0) sum their gradients
        n = alloc.numel(shape)
        nums = creation.empty_strided(shape, stride, dtype=int64, device=device)
        nums.copy_(creation.arange(1, n + 1, device=device).reshape(shape))
        size, vstride, offset = self._geometry
        pos = nums.as_strided(size, vstride, offset)
        return [_scatter_back(grads[0], pos, n).reshape(shape)]


def view_fn(t):
    """The grad_fn of view ``t``. When its storage was modified in place since its history
    was recorded (through its base or another view of it), its values now come from the
    base's current history, and the history is taken anew from there (as PyTorch does)."""
    fn = t._grad_fn
    if fn is None:
        return None
    version = fn._version
    if version.__class__ is tuple:       # a node with several outputs: one per output
        version = version[t._output_nr]
    if version is None or version == t._storage.version:
        return fn
    if fn._num_outputs > 1:
        raise RuntimeError(
            f"Output {t._output_nr} of {fn.name()} is a view and its base or another view of "
            "its base has been modified inplace. This view is the output of a function that "
            "returns multiple views. Such functions do not allow the output views to be "
            "modified inplace. You should replace the inplace operation by an out-of-place "
            "one.")
    base = t._base
    if not base._requires_grad:
        return fn
    fn = ViewOfBase(edge_of(base), base, t)
    t._grad_fn = fn
    t._output_nr = 0
    return fn


def _describe(t):
    return f"[{t.type()} [{', '.join(str(s) for s in t._shape)}]]"


class SavedTensor:
    """A tensor saved for backward (by ``Function.save_for_backward``, or in a list
    argument) with the version it had; unpacking checks that no in-place op changed it
    since. Under ``saved_tensors_hooks`` it is kept packed instead."""

    __slots__ = ("data", "version")

    def __init__(self, t):
        hooks = _hooks.stack
        if hooks:
            self.data, self.version = Packed(t, hooks[-1]), None
        else:
            self.data, self.version = t, t._storage.version

    def unpack(self, node):
        t = self.data
        if t is None:
            raise RuntimeError(_FREED)
        if self.version is None:
            return t.unpack()
        if t._storage.version != self.version:
            modified_error(t, self.version)
        return t


# ---- saved tensor hooks ----------------------------------------------------------------

class _HookState(threading.local):
    stack = ()          # (pack_hook, unpack_hook) pairs; the innermost applies
    disabled = None     # the error message while disable_saved_tensors_hooks is on


_hooks = _HookState()


class Packed:
    """A saved tensor as its pack hook returned it, with the unpack hook to restore it."""

    __slots__ = ("value", "unpack_hook")

    def __init__(self, t, hooks):
        with grad_mode.no_grad():       # what the hook computes is not part of the graph
            self.value = hooks[0](t)
        self.unpack_hook = hooks[1]

    def unpack(self):
        t = self.unpack_hook(self.value)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {type(t).__name__}")
        return t


class saved_tensors_hooks:
    """Context manager: a tensor saved for backward inside it is stored as
    ``pack_hook(tensor)`` and given back to backward as ``unpack_hook(packed)`` (for
    offloading or compressing what the graph keeps)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks.disabled is not None:
            raise RuntimeError(_hooks.disabled)
        _hooks.stack = _hooks.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _hooks.stack = _hooks.stack[:-1]


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to host memory (pinned if ``pin_memory``) and come back to their
    device when backward needs them."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            if t.device.type == "cpu":
                return t.device, t
            host = t.detach().cpu()
            return t.device, host.pin_memory() if pin_memory else host

        def unpack(packed):
            device, t = packed
            return t.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager in which using ``saved_tensors_hooks`` raises ``error_message``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.prev = _hooks.disabled
        _hooks.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _hooks.disabled = self.prev


def modified_error(t, version, node=None, output_nr=0):
    """Raises PyTorch's error for a saved tensor changed in place since it was saved
    (``node``: the node the tensor is output ``output_nr`` of, if it is one)."""
    if node is None and t.grad_fn is not None:
        node, output_nr = t.grad_fn, t._output_nr
    # PyTorch names the op here, not its node: "Exp" for ExpBackward0
    where = (f", which is output {output_nr} of {_BACKWARD.sub('', node.name())},"
             if node is not None else "")
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {_describe(t)}{where} is at version {t._storage.version}; "
        f"expected version {version} instead. Hint: enable anomaly detection to "
        "find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


_BACKWARD = re.compile(r"Backward\d*$")


def unpack_output(storage, shape, stride, offset, dtype, version, node, output_nr):
    """An output of ``node`` saved as its fields (no reference back to the node), as a
    tensor whose grad_fn is the node again; checked against its saved version."""
    out = Tensor._make(storage, shape, stride, offset, dtype)
    out._grad_fn = node
    out._requires_grad = True
    out._output_nr = output_nr
    if storage.version != version:
        modified_error(out, version, node, output_nr)
    return out


# ---- hooks over several tensors, mutation of saved tensors -------------------------------

class _MultiHandle:
    """The handle of ``register_multi_grad_hook``: ``remove()`` removes every hook."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _current_task():
    from .engine import current_graph_task
    task = current_graph_task()
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Registers a hook over several tensors. ``mode="all"``: ``fn(grads)`` runs once per
    backward, after the gradients of all of ``tensors`` that this backward computes, with
    one gradient per tensor (None for those it does not reach). ``mode="any"``: ``fn(grad)``
    runs on the first gradient computed for any of them. Returns a handle with
    ``remove()``."""
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    tensors = list(tensors)
    lock = threading.Lock()
    if mode == "any":
        ran = weakref.WeakKeyDictionary()    # graph task -> True once fn ran

        def first(grad):
            task = _current_task()
            with lock:
                if task in ran:
                    return
                ran[task] = True
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first) for t in tensors
                                  if t.requires_grad))

    nodes = [edge_of(t)[0] if t.requires_grad else None for t in tensors]
    pending = {}      # graph task id -> [calls expected, calls seen, grads]

    def inner(i):
        def hook(grad):
            task = _current_task()
            with lock:
                state = pending.get(task.id)
                if state is None:
                    expected = sum(task.will_execute(n) for n in nodes if n is not None)
                    state = pending[task.id] = [expected, 0, [None] * len(tensors)]
                state[1] += 1
                state[2][i] = grad
                done = state[1] >= state[0]
                if done:
                    del pending[task.id]
            if done:
                fn(tuple(state[2]))
        return hook

    return _MultiHandle(tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors)))


_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
            "in which the graph was originally recorded.")   # (sic: PyTorch's text)


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block."""

    def __init__(self):
        self.active = True


_mutation = threading.local()


class allow_mutation_on_saved_tensors:
    """Context manager under which tensors saved for backward may be mutated in place:
    backward sees their values as they were when saved, and no version-counter error is
    raised. Backward through such a graph must also happen inside the block.

    Tensors saved inside it are copied when saved (PyTorch copies them when they are
    first mutated): that costs one copy of each saved tensor."""

    def __enter__(self):
        if getattr(_mutation, "ctx", None) is not None:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        ctx = self.ctx = _mutation.ctx = _AllowMutationOnSavedContext()

        def pack(t):
            return t.clone()

        def unpack(saved):
            if not ctx.active:
                raise AssertionError(_OUTSIDE)
            return saved

        self.hooks = saved_tensors_hooks(pack, unpack)
        self.hooks.__enter__()
        return ctx

    def __exit__(self, *exc):
        self.hooks.__exit__(*exc)
        self.ctx.active = False
        _mutation.ctx = None


def region_activation_memory_budget(budget):
    """Context manager that sets the activation memory budget (a ratio in [0, 1]) for the
    region of a compiled forward traced under it. Only valid inside ``framework.compile``,
    as in PyTorch; the framework's compiler saves activations as eager mode does, so there
    the budget is checked and accepted but changes nothing."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(f"torch.autograd.graph.region_activation_memory_budget: expects a "
                        f"float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"torch.autograd.graph.region_activation_memory_budget: must be in "
                         f"[0, 1], got {budget}")
    from .. import compiler
    if not compiler.is_compiling():
        raise RuntimeError("torch.autograd.graph.region_activation_memory_budget can only be "
                           "used inside a torch.compile region; it has no effect in eager "
                           "mode.")
    return contextlib.nullcontext()
