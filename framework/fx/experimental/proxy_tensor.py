"""``make_fx``: a function traced on example inputs into a ``GraphModule`` of the tensor ops
it ran (torch.fx.experimental.proxy_tensor).

Built on the example-value tracer that ``framework.compile`` and ``framework.export`` share
(framework/fx/_value_trace.py): every op runs eagerly on the example values as it is
recorded, so sizes, dtypes and devices are concrete while tracing and Python code reading
them is specialized into the graph, as PyTorch's make_fx does. The graph holds framework
ops (``framework.add``, ``Tensor.view``, ``operator.add``) where PyTorch's holds ATen ops;
modules are traced through, their parameters and buffers read as ``get_attr`` nodes.
"""
import inspect

from ... import nn
from ..._tensor import Tensor
from ...profiler._record import Patches
from .._value_trace import ValueProxy, ValueTracer, has_tensor
from ..graph_module import GraphModule

__all__ = ["make_fx"]

_TRACING_MODES = ("real", "fake", "symbolic")
_DATA_ERROR = ("It appears that you're trying to get value out of a tracing tensor with "
               "{what} - erroring out! It's likely that this is caused by data-dependent "
               "control flow or similar.")


class _MakeFxProxy(ValueProxy):
    """A traced tensor: reading its data into Python (control flow on it) raises, as in
    PyTorch's make_fx."""

    def _data(self, what):
        raise RuntimeError(_DATA_ERROR.format(what=what))

    def __bool__(self):
        self._data("bool()")

    def __int__(self):
        self._data("int()")

    def __float__(self):
        self._data("float()")

    def __index__(self):
        self._data("__index__()")

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class _MakeFxTracer(ValueTracer):
    """Traces through every module; the example inputs are the placeholders' values;
    ops called without traced arguments (``arange(3)``) are recorded, so that the graph
    makes them on every call."""

    record_constant_ops = True

    def __init__(self, args):
        super().__init__()
        self._example_args = args
        self._inputs = {}      # placeholder name -> example value

    def is_leaf_module(self, m, module_qualified_name):
        return False

    def proxy(self, node):
        return _MakeFxProxy(node, self)

    def data_read(self, proxy, name):
        if name in ("item", "tolist", "numpy"):
            raise RuntimeError(_DATA_ERROR.format(what=f"Tensor.{name}()"))

    def example_input(self, node):
        return self._inputs[node.target]

    def _placeholders(self, fn, skip_self, concrete_args):
        """One placeholder per argument, named as PyTorch's make_fx names them (``x_1``,
        ``arg0_1`` for ``*args``); non-tensor arguments are specialized into the graph."""
        params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
        values = list(self._example_args)
        names, i = [], 0
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                names += [f"arg{k}_1" for k in range(i, len(values))]
                i = len(values)
            elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and i < len(values):
                names.append(f"{p.name}_1")
                i += 1
        if len(names) != len(values):
            raise TypeError(f"make_fx: {len(values)} arguments given to a function taking "
                            f"{len(names)}")
        self._inputs = dict(zip(names, values))
        out = []
        for name, value in zip(names, values):
            if isinstance(value, Tensor):
                out.append(self.create_proxy("placeholder", name, (), {}))
            else:
                if has_tensor(value):
                    raise NotImplementedError("make_fx: tensors inside containers (lists, "
                                              "dicts) as inputs are not supported; pass "
                                              "them as separate arguments")
                self.create_node("placeholder", name, (), {})
                out.append(value)
        return out


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False,
            *, pre_dispatch=False, record_module_stack=False, _allow_fake_constant=False,
            _error_on_data_dependent_ops=True, record_stack_traces=False,
            proxy_module_inputs=False, _disable_torch_fn_metadata_mode=False):
    """Given a function ``f``, returns a new function which, called with valid arguments to
    ``f``, returns an fx ``GraphModule`` of the operations run while executing ``f``.

    Each tensor argument is a placeholder (``x_1``); other arguments, and sizes read from
    tensors, are specialized into the graph. ``tracing_mode`` "fake" and "symbolic" trace
    as "real" does here (on the given values, sizes specialized)."""
    if tracing_mode not in _TRACING_MODES:
        raise AssertionError(f"tracing_mode must be real/fake/symbolic, got {tracing_mode}")
    if decomposition_table:
        raise NotImplementedError("make_fx: decomposition_table is not supported (the graph "
                                  "holds framework ops, not ATen ops)")

    def wrapped(*args):
        from ...export._trace import _patch_module_functions
        tracer = _MakeFxTracer(args)
        patches = Patches()
        try:
            # framework modules hold their functional op as a class attribute: wrapped so
            # that tracing through the module records it
            _patch_module_functions(patches)
            graph = tracer.trace(f)
        finally:
            patches.restore()
        name = type(f).__name__ if isinstance(f, nn.Module) else getattr(f, "__name__", "f")
        return GraphModule(tracer.root, graph, name)
    return wrapped
