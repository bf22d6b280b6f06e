"""Tracing for export: ``framework.fx``'s tracer run through every module (no leaves) on
proxies that carry the example values, so shapes, dtypes and ranks are known while
tracing and Python code reading them runs as in eager mode. Values read from shapes are
specialized into the graph; control flow on tensor data raises."""
import inspect

from .. import nn
from .._tensor import Tensor
from ..autograd import grad_mode
from ..profiler._record import Patches, module_functions
from ..fx._bindings import _function_wrapper
from ..fx._value_trace import ValueProxy, ValueTracer, target_name
from ..fx._value_trace import has_tensor as _has_tensor
from ..fx.node import map_aggregate
from .dynamic_shapes import GuardOnDataDependentSymNode, UserError

# queries whose results are ranks or flags, never a size that a dynamic dim changes
_RANK_QUERIES = {"dim", "ndimension", "ndim", "get_device", "is_floating_point",
                 "is_complex", "is_contiguous", "element_size", "requires_grad", "dtype",
                 "device", "is_cuda", "layout"}
_DATA_QUERIES = {"item", "tolist"}


def _has_size(value):
    found = []
    map_aggregate(value, lambda v: found.append(v)
                  if isinstance(v, int) and not isinstance(v, bool) else v)
    return bool(found)


def _plain_attr(mod, target):
    """``mod``'s attribute at the qualified name ``target``, not through the
    ``Module.__getattr__`` the tracer patches."""
    value = mod
    for atom in target.split("."):
        d = vars(value)
        for table in ("_parameters", "_buffers", "_modules"):
            if atom in d.get(table, {}):
                value = d[table][atom]
                break
        else:
            value = d[atom]
    return value


class _ExportProxy(ValueProxy):
    """A proxy with its example value in ``node.meta['val']``; Python control flow on
    it raises ``GuardOnDataDependentSymNode``."""

    def _data_dependent(self, what):
        raise GuardOnDataDependentSymNode(
            f"Could not guard on data-dependent expression {what}({self.node.name}): Python "
            f"control flow depends on the value of '{self.node.name}', computed from "
            "tensor data, which a traced graph cannot hold. Rewrite it without Python "
            "branches on tensor values (e.g. framework.where), or export the branches as "
            "separate programs.")

    def __bool__(self):
        self._data_dependent("bool")

    def __int__(self):
        self._data_dependent("int")

    def __float__(self):
        self._data_dependent("float")

    def __index__(self):
        self._data_dependent("index")

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class ExportTracer(ValueTracer):
    """Traces through every module, parameters and buffers as ``get_attr`` nodes, each
    node's example value in ``meta['val']``. Sizes read from traced tensors are
    constants of the trace (``shape_specialized``)."""

    def __init__(self, examples):
        super().__init__()
        self.examples = examples          # placeholder name -> example value
        self.shape_specialized = False
        self._attr_vals = {}

    def is_leaf_module(self, m, module_qualified_name):
        return False

    def _placeholders(self, fn, skip_self, concrete_args):
        params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
        out = []
        for p in params:
            if p.name not in self.examples:
                if p.default is p.empty:
                    raise UserError(f"export: no example input for argument '{p.name}'")
                out.append(p.default)
                continue
            value = self.examples[p.name]
            if isinstance(value, Tensor):
                out.append(self.create_proxy("placeholder", p.name, (), {}))
            else:
                # a non-tensor input is an input of the graph, but the trace specializes
                # on its value (module() guards it)
                self.create_node("placeholder", p.name, (), {})
                out.append(value)
        return out

    def attach(self, node, value):
        super().attach(node, value)
        node.meta["data_dependent"] = node.op in ("call_method", "call_function") and (
            target_name(node) in _DATA_QUERIES or
            any(a.meta.get("data_dependent") for a in node.all_input_nodes))

    def example_input(self, node):
        value = self.examples[node.target]
        # in-place ops of forward must not change the caller's example inputs
        return value.clone() if isinstance(value, Tensor) else value

    def attr_value(self, node):
        if node.target not in self._attr_vals:
            value = _plain_attr(self.root, node.target)
            # buffers may be updated in place by forward: trace on a copy, leaving the
            # module as it was, as PyTorch's export does
            if isinstance(value, Tensor) and not isinstance(value, nn.Parameter):
                value = value.clone()
            self._attr_vals[node.target] = value
        return self._attr_vals[node.target]

    def shape_query(self, proxy, what):
        self.shape_specialized = True

    def constant_attribute(self, proxy, name, value):
        if name not in _RANK_QUERIES and _has_size(value):
            self.shape_specialized = True

    def proxy(self, node):
        val = node.meta["val"]
        if _has_tensor(val) or node.meta["data_dependent"]:
            return _ExportProxy(node, self)
        # a size, rank or flag: a constant of this trace (the node is removed later)
        node.meta["specialized"] = True
        if target_name(node) not in _RANK_QUERIES and _has_size(val):
            self.shape_specialized = True
        return val


def _patch_module_functions(patches):
    """Wraps the op functions that framework modules hold as class attributes
    (``Conv2d._FN = staticmethod(F.conv2d)``), which the fx tracer, keeping those modules
    as leaves, never needs to see."""
    for cls, attr, fn in module_functions():
        # (an op autocast wraps is named for its home, the framework module itself)
        if cls.__module__.startswith("framework.nn") and \
                (getattr(fn, "__module__", None) or "").partition(".")[0] == "framework":
            patches.set(cls, attr, staticmethod(_function_wrapper(fn)))


def trace(mod, examples):
    """The fx ``Graph`` of ``mod`` on the example inputs (name -> value), and whether it
    read tensor sizes into constants."""
    tracer = ExportTracer(examples)
    patches = Patches()
    try:
        _patch_module_functions(patches)
        with grad_mode.no_grad():
            graph = tracer.trace(mod)
    finally:
        patches.restore()
    graph.eliminate_dead_code(
        is_impure_node=lambda n: n.is_impure() or not n.meta.get("specialized"))
    return graph, tracer.shape_specialized
