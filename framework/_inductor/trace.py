"""From a function or module and example inputs to the callable that runs it compiled:
trace with ``framework.fx.symbolic_trace``, run ``ShapeProp`` on the real inputs (which
also gives the first call's result), partition the graph into fusible groups and replace
each by one call of its generated kernel.

Under autograd a fused group runs as an ``autograd.Function`` whose backward recomputes
the group's ops eagerly and takes their vector-Jacobian product, so gradients are eager's.
"""
import warnings

from .. import autograd
from .._tensor import Tensor
from ..autograd import grad_mode
from ..fx import symbolic_trace
from ..fx.node import Node
from ..fx.passes.shape_prop import ShapeProp
from . import codegen
from .fuse import partition, rewrite, tensor_meta

counters = {"traces": 0, "kernels": 0}
compiling = False   # True while ``trace`` runs: framework.compiler.is_compiling()


class _ShapeDeviceProp(ShapeProp):
    """ShapeProp that also records each tensor result's device in ``meta['device']``."""

    def run_node(self, n):
        result = super().run_node(n)
        if isinstance(result, Tensor):
            n.meta["device"] = result.device
        return result


def trace(root, concrete):
    """The GraphModule of ``root``; ``concrete`` maps the names of the non-tensor
    arguments to their values, fixed in the graph."""
    global compiling
    compiling = True
    try:
        gm = symbolic_trace(root, concrete_args=concrete or None)
    finally:
        compiling = False
    counters["traces"] += 1
    return gm


def optimize(gm, args):
    """Runs ``gm`` on ``args`` recording shapes, dtypes and devices, then fuses its
    pointwise groups on cuda; returns the first call's result."""
    result = _ShapeDeviceProp(gm).propagate(*args)
    try:
        groups = partition(gm)
        if groups:
            rewrite(gm, groups, lambda g, ins, outs: FusedCall(gm, g, ins, outs))
    except Exception as e:  # noqa: BLE001 - a fusion failure costs speed, not results
        # each group is replaced whole or not at all: the graph stays correct
        warnings.warn(f"framework.compile: fusion failed, the graph runs unfused "
                      f"({type(e).__name__}: {e})", UserWarning, stacklevel=3)
        gm.recompile()
    return result


class _Slot:
    """An argument of a recorded op: the k-th input of the group, or the j-th op's value."""
    __slots__ = ("source", "index")

    def __init__(self, source, index):
        self.source, self.index = source, index


class FusedCall:
    """One fused group in the rewritten graph: ``call(*inputs)`` returns the tuple of the
    group's values used outside it."""

    def __init__(self, gm, group, inputs, outputs):
        source, name, consts = codegen.generate(group, inputs, outputs)
        self.__name__ = name
        self.kernel = codegen.Kernel(source, name, consts, group.shape,
                                     [tensor_meta(o).dtype for o in outputs])
        counters["kernels"] += 1
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
