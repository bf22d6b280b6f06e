"""The backward engine: runs the graph recorded in the forward pass, from the roots to the
leaves, iteratively (no recursion: a chain of 100,000 ops is fine).

Dependencies are counted first (how many edges from nodes that will run lead to each
node); a node runs once all of them have delivered their gradient, which is summed per
output (fan-in). Among ready nodes the most recently created runs first (PyTorch's order).
Tensor hooks, ``retain_grad`` and node pre-hooks see a node's incoming gradients before it
runs; node hooks see what it produced. Unless ``retain_graph``, each node frees what it
saved right after running. With ``create_graph`` the derivative formulas run with grad
mode on, so the gradients carry a graph of their own.

The loop itself (ordering, dependency counts, summing gradients) is native
(``native/engine.cpp``): in Python it cost about 3.5 us a node. What a node does stays here.
"""
import itertools
import threading

from . import anomaly_mode, grad_mode
from .._ops import autocast as _autocast
from .. import _C
from .graph import AccumulateGrad

# framework.profiler sets this while it records: ``hook(node, grads, run)`` runs the node
# inside a profiler range. None otherwise: a backward pays one local test per node.
profile_hook = None


def _zeros(meta):
    from .._ops import creation
    shape, dtype, device = meta
    return creation.zeros(shape, dtype=dtype, device=device)


def _needed(roots, targets):
    """The nodes that lie on a path from a root to a target node (post-order, iterative)."""
    needed = {}
    for root in roots:
        if root in needed:
            continue
        stack = [(root, iter(root._next[::2]))]
        while stack:
            node, it = stack[-1]
            advanced = False
            for child in it:
                if child is None:
                    continue
                if child not in needed:
                    stack.append((child, iter(child._next[::2])))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            needed[node] = node in targets or any(
                c is not None and needed.get(c, False) for c in node._next[::2])
    return needed


def _accumulate(buf, i, g):
    old = buf[i]
    buf[i] = g if old is None else old + g


def _call_hooks(node, grads):
    th = node._tensor_hooks
    if th:
        for nr, hooks in th.items():
            if hooks and grads[nr] is not None:
                for hook in list(hooks.values()):
                    r = hook(grads[nr])
                    if r is not None:
                        grads[nr] = r
    if node._retained:
        for nr, ref in node._retained.items():
            t = ref()
            g = grads[nr]
            if t is not None and g is not None:
                if t._grad is None:
                    t._grad = g if grad_mode.is_grad_enabled() else g.detach().clone()
                else:
                    t._grad = t._grad + g
    if node._prehooks:
        for hook in list(node._prehooks.values()):
            r = hook(tuple(grads))
            if r is not None:
                grads[:] = list(r)
    return grads


def run_backward(roots, root_grads, keep_graph, create_graph, captures=None,
                 accumulate=True):
    """Backpropagates ``root_grads`` from ``roots`` (a list of (node, output_nr)).

    ``captures``: list of (node, output_nr) whose incoming gradient is returned instead of
    (or besides) being passed on; with ``accumulate`` False, leaves' AccumulateGrad nodes
    do not run (autograd.grad). Returns the captured gradients (None where none arrived)."""
    root_nodes = []
    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs
            root_nodes.append(node)
        _accumulate(buf, nr, g)
    capture_at = {}
    if captures:
        for i, (node, nr) in enumerate(captures):
            capture_at.setdefault(node, []).append((nr, i))
    needed = None
    if not accumulate:
        needed = _needed(root_nodes, capture_at)
    results = [None] * (len(captures) if captures else 0)

    prev = grad_mode._mode.enabled
    grad_mode._mode.enabled = create_graph
    # the backward ops run in the dtypes the forward chose: autocast is off (as the ops
    # inside an autocast op run)
    no_autocast = _autocast.disabled()
    no_autocast.__enter__()
    running = _running.stack
    running.append(accumulate)
    _running.tasks.append(GraphTask(root_nodes, needed))
    try:
        _C.engine_run(root_nodes, buffers, keep_graph, needed, capture_at or None, results,
                      accumulate, anomaly_mode._enabled or profile_hook is not None)
    finally:
        running.pop()
        _running.tasks.pop()
        grad_mode._mode.enabled = prev
        no_autocast.__exit__(None, None, None)
    return results


class _Running(threading.local):
    def __init__(self):
        self.stack = []     # this thread's running backwards: whether each accumulates
        self.tasks = []     # and their GraphTasks


_running = _Running()


class GraphTask:
    """One running backward pass (for hooks that ask which nodes it will run)."""

    _ids = itertools.count()

    def __init__(self, roots, needed):
        self.id = next(self._ids)
        self.roots = roots
        self.needed = needed      # autograd.grad: node -> whether it leads to an input
        self._reached = None

    def will_execute(self, node):
        """Whether this backward runs ``node`` (PyTorch's _will_engine_execute_node)."""
        if self.needed is not None:
            return bool(self.needed.get(node, False))
        if self._reached is None:
            self._reached = set(_needed(self.roots, ()))
        return node in self._reached


def current_graph_task():
    """The innermost backward running on this thread, or None."""
    tasks = _running.tasks
    return tasks[-1] if tasks else None


def _is_checkpoint_valid():
    """False inside a backward that only returns gradients (``autograd.grad``): a
    reentrant checkpoint's inner backward could not deliver them (PyTorch's check)."""
    stack = _running.stack
    return stack[-1] if stack else True


def _apply(node, grads):
    hook = profile_hook
    if hook is not None:
        return hook(node, grads, _run_node)
    return _run_node(node, grads)


def _apply_filled(node, grads):
    """A node with several outputs, some of whose gradients are None: those as zeros."""
    grads = [g if g is not None or m is None else _zeros(m)
             for g, m in zip(grads, node._out_meta or [None] * len(grads))]
    return _apply(node, grads)


def _run_node(node, grads):
    if anomaly_mode._enabled:
        outs = anomaly_mode.checked_apply(node, grads)
    else:
        outs = node.apply(grads)
    if node._hooks:
        for hook in list(node._hooks.values()):
            r = hook(tuple(outs), tuple(grads))
            if r is not None:
                outs = list(r)
    return outs


_C.engine_setup(_call_hooks, _apply, _apply_filled, AccumulateGrad)
