"""From a function or module and example inputs to the callable that runs it compiled:
trace it with example values (``ValueTracer``: the first call's inputs run through the
program op by op as the graph is recorded, which also gives the first call's result),
partition the graph into fusible groups (pointwise chains, rows reduced over their last
dim with the ops around the reductions, matmuls with their pointwise epilogues: gemm.py)
and replace each by one call of its generated kernel.

Since the guard (cache.py) pins the exact shapes, dtypes and devices of the inputs, the
trace specialises on them, as TorchDynamo does: a traced tensor's ``shape``, ``size()``,
``dim()``, ``len``, ``numel()``, ``dtype``, ``device`` and ``requires_grad`` are the
example value's, so size arithmetic, shape asserts and shape-dependent branches run as
plain Python and are baked into the graph. A tensor's data stays symbolic: ``bool``,
``item()``, ``tolist()`` and the shape of a data-dependent result (``nonzero``, boolean
masks) raise ``TraceError`` and the caller falls back to eager.

Under autograd a fused group runs as an ``autograd.Function`` whose backward recomputes
the group's ops eagerly, in the autocast state the group was traced in (a backward pass
runs with autocast off), and takes their vector-Jacobian product, so gradients are eager's.
"""
import warnings

from .. import autograd
from .. import random as _random
from .._ops import autocast
from .._tensor import Tensor
from ..autograd import grad_mode
from ..cuda import random as _cuda_random
from ..fx import _value_trace
from ..fx._value_trace import has_tensor as _has_tensor
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_aggregate, map_arg
from ..fx.passes.shape_prop import _extract_tensor_metadata
from ..fx.proxy import TraceError
from ..nn.modules.module import Module
from . import codegen, gemm
from .fuse import partition, rewrite, tensor_meta

counters = {"traces": 0, "kernels": 0}
compiling = False   # True while ``trace`` runs: framework.compiler.is_compiling()

# tensor methods that read the data into Python
_DATA_READS = {"item", "tolist", "numpy"}


class ValueTracer(_value_trace.ValueTracer):
    """The compiler's example-value tracer: the first call's inputs, in order, are the
    placeholders' values; framework modules stay leaves (run eagerly on values); ops
    called without traced arguments (``arange(T)``, ``randn(B, T)``) are recorded so
    that they run on every call. Reading a traced tensor's data, or the shape of a
    data-dependent result, raises ``TraceError``. Each node's value is also kept in
    ``meta['example_value']``."""

    record_constant_ops = True

    def __init__(self, inputs):
        super().__init__()
        self._inputs = iter(inputs)

    def example_input(self, node):
        return next(self._inputs)

    def attach(self, node, value):
        node.meta["example_value"] = value
        super().attach(node, value)

    def shape_query(self, proxy, what):
        if proxy.node.meta.get("data_dependent_shape"):
            raise TraceError(f"{what} of a traced tensor whose shape depends on its data "
                             f"({proxy.node.format_node()})")

    def data_read(self, proxy, name):
        if name in _DATA_READS:
            raise TraceError(f"Tensor.{name}() reads a traced tensor's data: the graph "
                             "cannot depend on it")


def _rng_states():
    return _random.get_rng_state(), _cuda_random.get_rng_state_all()


def _set_rng_states(states):
    _random.set_rng_state(states[0])
    _cuda_random.set_rng_state_all(states[1])


def trace(root, inputs, concrete, rewind=False):
    """(GraphModule of ``root``, its result) traced with the example values ``inputs``
    (every argument, in the signature's order); ``concrete`` maps the names of the
    non-tensor arguments to their values, fixed in the graph. A failed trace, or one
    with ``rewind``, puts the random generators back as they were, so that the eager run
    that follows draws what it would have drawn."""
    global compiling
    compiling = True
    states = _rng_states()
    tracer = ValueTracer(inputs)
    try:
        graph = tracer.trace(root, concrete or None)
    except BaseException:
        _set_rng_states(states)
        raise
    finally:
        compiling = False
    if rewind:
        _set_rng_states(states)
    name = type(root).__name__ if isinstance(root, Module) else getattr(
        root, "__name__", "fn")
    gm = GraphModule(tracer.root, graph, name)
    out = next(n for n in graph.nodes if n.op == "output")
    result = map_arg(out.args[0], tracer.value_of)
    counters["traces"] += 1
    return gm, result


def optimize(gm):
    """Records each node's tensor metadata and device from its example value (what
    ``ShapeProp`` records), drops the example values, then fuses the pointwise groups
    on cuda."""
    for n in gm.graph.nodes:
        if "example_value" not in n.meta:
            continue
        value = n.meta.pop("example_value")
        n.meta.pop("val", None)
        n.meta["type"] = type(value)
        if isinstance(value, Tensor) and not n.meta.get("data_dependent_shape"):
            n.meta["device"] = value.device
        if _has_tensor(value) and not n.meta.get("data_dependent_shape"):
            n.meta["tensor_meta"] = map_aggregate(
                value, lambda v: _extract_tensor_metadata(v) if isinstance(v, Tensor) else v)
    try:
        groups = partition(gm)
        if groups:
            rewrite(gm, groups, lambda g, ins, outs: FusedCall(gm, g, ins, outs))
    except Exception as e:  # noqa: BLE001 - a fusion failure costs speed, not results
        # each group is replaced whole or not at all: the graph stays correct
        warnings.warn(f"framework.compile: fusion failed, the graph runs unfused "
                      f"({type(e).__name__}: {e})", UserWarning, stacklevel=3)
        gm.recompile()


class _Slot:
    """An argument of a recorded op: the k-th input of the group, or the j-th op's value."""
    __slots__ = ("source", "index")

    def __init__(self, source, index):
        self.source, self.index = source, index


class FusedCall:
    """One fused group in the rewritten graph: ``call(*inputs)`` returns the tuple of the
    group's values used outside it."""

    def __init__(self, gm, group, inputs, outputs):
        dtypes = [tensor_meta(o).dtype for o in outputs]
        if getattr(group, "gemm", False):
            source, name, consts, where = gemm.generate(group, inputs, outputs)
            self.kernel = gemm.GemmKernel(source, name, consts, where, group.ops[0].name,
                                          group.shape, dtypes)
            self.kernel.eager = self.eager   # operands whose rows the kernel cannot walk
        elif getattr(group, "row", False):
            source, name, consts = codegen.generate(group, inputs, outputs)
            self.kernel = codegen.RowKernel(source, name, consts, group.shape, dtypes,
                                            [tuple(tensor_meta(o).shape) for o in outputs])
            self.kernel.eager = self.eager   # rows the kernel cannot walk
        else:
            source, name, consts = codegen.generate(group, inputs, outputs)
            self.kernel = codegen.Kernel(source, name, consts, group.shape, dtypes)
        self.__name__ = name
        counters["kernels"] += 1
        # the autocast state the group was traced (and guarded) in: its ops recompute in it
        st = autocast.state
        self.autocast = (dict(st.enabled), dict(st.dtype)) if st.active else None
        # the group's ops as eager calls, for the backward's recompute
        where = {n: _Slot("in", k) for k, n in enumerate(inputs)}
        self.program = []
        for j, op in enumerate(group.ops):
            node = op.node
            target = (gm.get_submodule(node.target)
                      if node.op == "call_module" else node.target)

            def slot(a):
                return where[a] if isinstance(a, Node) else a
            self.program.append((node.op, target, tuple(slot(a) for a in node.args),
                                 {k: slot(v) for k, v in node.kwargs.items()}))
            where[node] = _Slot("v", j)
        self.outputs = [where[o].index for o in outputs]

    @property
    def source(self):
        return self.kernel.source

    def __call__(self, *inputs):
        if grad_mode._mode.enabled and any(t.requires_grad for t in inputs):
            return _FusedFunction.apply(self, *inputs)
        return self.kernel.run(*inputs)

    def eager(self, *inputs):
        """The group's outputs computed by its ops one by one, as eager code does."""
        if self.autocast is None:
            return self._eager(inputs)
        # a backward pass runs with autocast off: the ops it recomputes must cast as the
        # forward's did (linear's float32 weight to bfloat16...) for eager's gradients
        st = autocast.state
        saved = st.enabled, st.dtype, st.excluded, st.cache_enabled
        st.enabled, st.dtype = dict(self.autocast[0]), dict(self.autocast[1])
        st.excluded, st.cache_enabled = 0, False   # (casts cached past their region: stale)
        st.refresh()
        try:
            return self._eager(inputs)
        finally:
            st.enabled, st.dtype, st.excluded, st.cache_enabled = saved
            st.refresh()

    def _eager(self, inputs):
        values = []

        def get(a):
            if isinstance(a, _Slot):
                return inputs[a.index] if a.source == "in" else values[a.index]
            return a
        for kind, target, args, kwargs in self.program:
            args = [get(a) for a in args]
            kwargs = {k: get(v) for k, v in kwargs.items()}
            if kind == "call_method":
                values.append(getattr(args[0], target)(*args[1:], **kwargs))
            else:
                values.append(target(*args, **kwargs))
        return tuple(values[j] for j in self.outputs)


class _FusedFunction(autograd.Function):
    """A fused group under autograd: the generated kernel forward; backward recomputes
    the group's ops eagerly from the saved inputs and returns their vector-Jacobian
    product."""

    @staticmethod
    def forward(ctx, call, *inputs):
        ctx.call = call
        ctx.save_for_backward(*inputs)
        outs = call.kernel.run(*inputs)
        ctx.mark_non_differentiable(*[o for o in outs if not o.dtype.is_floating_point])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        needs = ctx.needs_input_grad[1:]
        # grad mode is on in a backward pass only with create_graph=True: then the
        # recompute starts from the inputs themselves, so the gradients it returns have
        # a history back to them (double backward)
        create = grad_mode._mode.enabled
        with autograd.enable_grad():
            xs = [x if create else x.detach().requires_grad_(need)
                  for x, need in zip(ctx.saved_tensors, needs)]
            outs = ctx.call.eager(*xs)
            pairs = [(o, g) for o, g in zip(outs, grads)
                     if g is not None and o.requires_grad]
            wrt = [x for x, need in zip(xs, needs) if need]
            if not pairs:
                return (None,) * (len(xs) + 1)
            gs = iter(autograd.grad([o for o, _ in pairs], wrt, [g for _, g in pairs],
                                    allow_unused=True, create_graph=create))
        return (None,) + tuple(next(gs) if need else None for need in needs)
