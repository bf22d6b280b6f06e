"""CUDA graphs for ``framework.compile(mode="reduce-overhead")`` (and "max-autotune", or
``options={"triton.cudagraphs": True}``), as PyTorch's inductor does.

For a guard key whose inputs are cuda tensors, the first call traces (and runs) the
program; the second captures the compiled graph's forward, and its backward when its
outputs require grad, as CUDA graphs (``framework.cuda.make_graphed_callables`` on the
graph); every later call copies its tensor arguments into the graph's static input
buffers and replays. A new input shape is a new guard key, so it is captured again; a
module whose parameters or buffers moved to new memory (``p.data = ...``, ``.to()``) is
captured again, and one whose parameters were replaced is traced again (the guard holds
their identity).

As in PyTorch, the outputs are the graph's static output memory, which the next replay of
the same graph overwrites: reading an output (or a view of it) after that raises PyTorch's
"accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run";
clone an output to keep it. Here every call is a new step (PyTorch's CUDA-graph trees also
let a call made while an earlier output's backward is pending keep that output; here the
earlier output is overwritten, and its backward raises rather than use the new call's saved
values). ``framework.compiler.cudagraph_mark_step_begin()`` is accepted and has nothing
more to mark. Gradients the backward graph returns are copied into ``.grad``, never
aliased.

A key runs the plain compiled graph instead, with one warning per reason ("skipping
cudagraphs due to ..."), when an input is on the cpu, the graph holds a cpu op, the
program mutates one of its inputs or draws random numbers (dropout in training: replay
would repeat the numbers of capture), or capture fails.
"""
import warnings

from .. import random as _random
from .._storage import Storage
from .._tensor import Tensor
from ..cuda import random as _cuda_random
from ..nn.modules.module import Module
from ..utils import _pytree

counters = {"captures": 0, "replays": 0, "skips": 0}

_OVERWRITTEN = ("Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
                "subsequent run. To prevent overwriting, clone the tensor outside of "
                "torch.compile() or call torch.compiler.cudagraph_mark_step_begin() before "
                "each model invocation.")
_BACKWARD_OVERWRITTEN = ("Error: backward through a tensor output of CUDAGraphs whose graph "
                         "has been replayed by a subsequent run, which overwrote the values "
                         "the backward needs. Call backward before running the compiled "
                         "model again.")


def enabled(mode, options):
    """Whether ``compile``'s ``mode``/``options`` ask for CUDA graphs."""
    if mode in ("reduce-overhead", "max-autotune"):
        return True
    return bool(options and options.get("triton.cudagraphs", False))


def _tensors(values):
    return [v for v in values if isinstance(v, Tensor)]


def input_reason(values):
    """Why these arguments cannot run as a CUDA graph (a cpu input), or None."""
    tensors = _tensors(values)
    for v in tensors:
        if v.device.type != "cuda":
            return "cpu device (input)"
    if not tensors:
        return "no cuda inputs"
    return None


def before_trace(values):
    """What ``after_trace`` compares: the inputs' versions and the generators' states."""
    return ([v._storage.version for v in _tensors(values)], _random.get_rng_state(),
            _cuda_random.get_rng_state_all())


def after_trace(state, values, gm):
    """Why the traced program cannot run as a CUDA graph, or None: it mutated an input,
    drew random numbers, or holds an op on the cpu."""
    versions, cpu_rng, cuda_rng = state
    n = sum(a != v._storage.version for a, v in zip(versions, _tensors(values)))
    if n:
        return f"mutated inputs ({n} instances)"
    if not (_same(cpu_rng, _random.get_rng_state())
            and all(_same(a, b) for a, b in zip(cuda_rng, _cuda_random.get_rng_state_all()))):
        return "random ops in the graph (replay would repeat the numbers of capture)"
    for node in gm.graph.nodes:
        device = node.meta.get("device")
        if device is not None and device.type == "cpu":
            return f"cpu device ({node.name})"
    return None


def _same(a, b):
    return a.tolist() == b.tolist()


def addresses(model):
    """The memory of a module's parameters and buffers, which a captured graph reads."""
    if not isinstance(model, Module):
        return ()
    return tuple(t.data_ptr() for t in model.parameters()) + tuple(
        t.data_ptr() for t in model.buffers())


class _Graphed(Module):
    """The traced graph as a module of its tensor arguments (constants are fixed), so that
    ``make_graphed_callables`` sees its parameters."""

    def __init__(self, gm, values):
        super().__init__()
        self.gm = gm
        self.slots = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        self.values = [None if isinstance(v, Tensor) else v for v in values]

    def forward(self, *tensors):
        values = list(self.values)
        for i, t in zip(self.slots, tensors):
            values[i] = t
        return self.gm(*values)


class _Output(Storage):
    """The memory of an output handed to the caller: the graph's static output memory,
    readable until the graph is replayed again."""
    __slots__ = ("_ptr", "stale")

    def __init__(self, static):
        self.stale = False
        super().__init__(static.ptr, static.nbytes, static.device, static.buf)

    @property
    def ptr(self):
        if self.stale:
            raise RuntimeError(_OVERWRITTEN)
        return self._ptr

    @ptr.setter
    def ptr(self, value):
        self._ptr = value


class Runner:
    """One guard key's captured graphs: ``run(values)`` copies the tensor arguments into
    the static inputs and replays."""

    def __init__(self, gm, values, where):
        from ..cuda import make_graphed_callables
        module = _Graphed(gm, values)
        # static inputs of their own: the caller's tensors must not be overwritten later
        static = tuple(t.detach().clone().requires_grad_(t.requires_grad)
                       for t in _tensors(values))
        # the warm-up run must not count in the buffers a forward updates (batch norm's
        # running statistics): they are put back after capture
        buffers = [(b, b.clone()) for b in module.buffers()]
        try:
            self.fn = make_graphed_callables(module, static, num_warmup_iters=1).forward
        finally:
            for b, saved in buffers:
                b.copy_(saved)
        self.addresses = where
        self.generation = 0
        self.handed_out = []   # the _Output storages of the last call's outputs

    def run(self, values):
        counters["replays"] += 1
        self.generation += 1
        # (the last call's outputs may be this call's inputs: stale only once copied in)
        out = self.fn(*_tensors(values))
        for storage in self.handed_out:
            storage.stale = True
        self.handed_out = []
        for t in _pytree.tree_leaves(out):
            if isinstance(t, Tensor):
                t._storage = _Output(t._storage)
                self.handed_out.append(t._storage)
                if t.requires_grad:
                    t.register_hook(self._check_backward(self.generation))
        return out

    def _check_backward(self, generation):
        def check(grad):
            if self.generation != generation:
                raise RuntimeError(_BACKWARD_OVERWRITTEN)
        return check


def call(compiled, key, gm, values):
    """The result of ``compiled``'s graph for ``key`` on ``values``: replayed from its CUDA
    graph (captured on the first call that gets here), or run plainly when skipped."""
    entry = compiled.graphs.get(key)
    if isinstance(entry, str):
        return gm(*values)
    where = addresses(compiled.model)
    if entry is None or entry.addresses != where:
        compiled.graphs[key] = None   # a failed capture leaves no stale graph behind
        try:
            entry = Runner(gm, values, where)
        except Exception as e:  # noqa: BLE001 - what cannot be captured runs plainly
            skip(compiled, key, f"capture failed ({type(e).__name__}: {e})")
            return gm(*values)
        compiled.graphs[key] = entry
        compiled.cudagraph_captures += 1
        counters["captures"] += 1
    return entry.run(values)


def skip(compiled, key, reason):
    """Runs ``key`` plainly from now on; warns once per reason, as PyTorch logs it."""
    compiled.graphs[key] = reason
    counters["skips"] += 1
    if reason not in compiled.cudagraph_warned:
        compiled.cudagraph_warned.add(reason)
        warnings.warn(f"skipping cudagraphs due to {reason}", UserWarning, stacklevel=4)
