"""``ExportedProgram``: a traced graph whose parameters and buffers are inputs, with its
signature, state dict and shape guards (torch.export.exported_program)."""
import copy
import inspect

from .. import nn
from .._tensor import Tensor
from ..fx import Graph, GraphModule
from ..fx.node import map_arg
from ..utils import _pytree as pytree
from . import _trace
from .dynamic_shapes import UserError, process_dynamic_shapes
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec,
                              OutputKind, OutputSpec, TensorArgument)

__all__ = ["ExportedProgram", "export", "save", "load", "default_decompositions"]


def default_decompositions():
    """The decomposition table of ``run_decompositions``: empty, the graph holds framework
    ops and there is no ATen decomposition here."""
    return {}

_DTYPE_ABBR = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
               "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
               "uint8": "u8", "bool": "b8"}


def _annotation(val):
    if not isinstance(val, Tensor):
        return ""
    dt = _DTYPE_ABBR.get(str(val.dtype).rsplit(".", 1)[-1], str(val.dtype))
    return f'{dt}[{", ".join(str(s) for s in val.shape)}]'


class _Constant:
    """The example value of a non-tensor input, which the graph is specialized on."""

    def __init__(self, value):
        self.value = value


class _GuardsFn(nn.Module):
    """Checks the user inputs' shapes against the exported ones, raising PyTorch's
    ``Guard failed: x.size()[0] == 2``."""

    def __init__(self, names, shapes, dynamic, shape_specialized):
        super().__init__()
        self.names, self.shapes, self.dynamic = names, shapes, dynamic
        self.shape_specialized = shape_specialized

    def forward(self, *inputs):
        seen = {}   # symbol -> (input name, dim, size): inputs sharing a Dim must agree
        for name, shape, x in zip(self.names, self.shapes, inputs):
            if isinstance(shape, _Constant):
                if x != shape.value:
                    raise AssertionError(f"Guard failed: {name} == {shape.value!r}")
                continue
            if not isinstance(x, Tensor):
                raise AssertionError(f"Guard failed: {name} is a Tensor "
                                     f"(got {type(x).__name__})")
            if x.dim() != len(shape):
                raise AssertionError(f"Guard failed: {name}.dim() == {len(shape)}")
            dyn = self.dynamic.get(name, {})
            for i, (want, got) in enumerate(zip(shape, x.shape)):
                if i not in dyn:
                    if got != want:
                        raise AssertionError(f"Guard failed: {name}.size()[{i}] == {want}")
                    continue
                sym, lo, hi, _ = dyn[i]
                if sym in seen and seen[sym][2] != got:
                    raise AssertionError(f"Guard failed: {name}.size()[{i}] == "
                                         f"{seen[sym][0]}.size()[{seen[sym][1]}]")
                seen.setdefault(sym, (name, i, got))
                if got < lo:
                    raise AssertionError(f"Guard failed: {name}.size()[{i}] >= {lo}")
                if got > hi:
                    raise AssertionError(f"Guard failed: {name}.size()[{i}] <= {hi}")
                if got != want and self.shape_specialized:
                    # the graph holds sizes read while tracing: running it would be wrong
                    raise NotImplementedError(
                        f"{name}.size()[{i}] is dynamic, but the exported graph read "
                        f"tensor sizes while tracing and holds them as constants (traced "
                        f"with {want}, got {got}): framework.export does not keep symbolic "
                        "sizes; export again with an example of this size")
        return None


class ExportedProgram:
    """A program captured by ``export``: ``graph_module`` takes the parameters, buffers
    and constants first, then the user inputs (see ``graph_signature``); ``module()``
    gives a module that takes the user inputs only."""

    def __init__(self, root, graph, graph_signature, state_dict, range_constraints,
                 *, example_inputs=None, constants=None, out_spec=None, guards=None):
        self._graph_module = GraphModule(root, graph, "GraphModule")
        self._graph_signature = graph_signature
        self._state_dict = state_dict
        self._range_constraints = range_constraints
        self._example_inputs = example_inputs
        self._constants = constants or {}
        self._out_spec = out_spec
        self._guards = guards

    graph_module = property(lambda self: self._graph_module)
    graph = property(lambda self: self._graph_module.graph)
    graph_signature = property(lambda self: self._graph_signature)
    state_dict = property(lambda self: self._state_dict)
    range_constraints = property(lambda self: self._range_constraints)
    example_inputs = property(lambda self: self._example_inputs)
    constants = property(lambda self: self._constants)
    tensor_constants = constants
    call_spec = property(lambda self: (None, self._out_spec))
    dialect = property(lambda self: "ATEN")
    verifiers = property(lambda self: [])

    def parameters(self):
        """The parameters, in the graph's order."""
        for name in self._graph_signature.parameters:
            yield self._state_dict[name]

    def named_parameters(self):
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self):
        for name in self._graph_signature.buffers:
            yield name, self._state_dict.get(name, self._constants.get(name))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def _lifted_values(self):
        out = {}
        for s in self._graph_signature.input_specs:
            if s.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                out[s.arg.name] = (s.target, self._state_dict[s.target]
                                   if s.target in self._state_dict
                                   else self._constants[s.target])
            elif s.kind == InputKind.CONSTANT_TENSOR:
                out[s.arg.name] = (s.target, self._constants[s.target])
        return out

    def module(self):
        """A ``GraphModule`` that takes the user inputs (checked against the exported
        shapes) and holds the parameters, buffers and constants as attributes."""
        lifted = self._lifted_values()
        graph, env, root = Graph(), {}, {}
        user = [n for n in self.graph.nodes if n.op == "placeholder" and n.name not in lifted]
        for n in user:
            env[n] = graph.node_copy(n)
        guards = copy.copy(self._guards)
        root["_guards_fn"] = guards
        graph.call_module("_guards_fn", tuple(env[n] for n in user))
        for n in self.graph.nodes:
            if n.op == "placeholder" and n.name in lifted:
                target, value = lifted[n.name]
                root[target] = value
                env[n] = graph.get_attr(target)
                env[n].meta = dict(n.meta)
            elif n.op == "output":
                flat = list(map_arg(n.args[0], lambda a: env[a]))
                graph.output(pytree.tree_unflatten(flat, self._out_spec))
            elif n.op != "placeholder":
                env[n] = graph.node_copy(n, lambda a: env[a])
        gm = GraphModule(root, graph, "GraphModule")
        return gm

    def run_decompositions(self, decomp_table=None, decompose_custom_triton_ops=False):
        """A copy of this program. The graph holds framework-level ops and there is no
        ATen decomposition table here, so nothing is decomposed."""
        return ExportedProgram({}, copy.deepcopy(self.graph), self._graph_signature,
                               self._state_dict, self._range_constraints,
                               example_inputs=self._example_inputs,
                               constants=self._constants, out_spec=self._out_spec,
                               guards=self._guards)

    def validate(self):
        self.graph.lint()

    def __str__(self):
        lines = []
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        args = ", ".join(f'{n.name}: "{_annotation(n.meta.get("val"))}"'
                         if isinstance(n.meta.get("val"), Tensor) else n.name
                         for n in placeholders)
        lines.append(f"    def forward(self, {args}):")
        for n in self.graph.nodes:
            if n.op in ("placeholder", "output"):
                continue
            ann = _annotation(n.meta.get("val"))
            ann = f': "{ann}"' if ann else ""
            lines.append(f"        {n.name}{ann} = {_call_text(n)}")
        out = next(n for n in self.graph.nodes if n.op == "output")
        lines.append(f"        return {_arg_text(out.args[0])}")
        code = "\n".join("    " + line for line in lines)
        sig = "".join("\n    " + line for line in str(self._graph_signature).split("\n")[1:])
        return (f"ExportedProgram:\n    class GraphModule(framework.nn.Module):\n{code}\n"
                f"\nGraph signature: {sig}\nRange constraints: {self._range_constraints}\n")

    __repr__ = __str__


def _arg_text(a):
    if isinstance(a, tuple):
        return "(" + ", ".join(_arg_text(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(_arg_text(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_arg_text(v)}" for k, v in a.items()) + "}"
    return a.name if hasattr(a, "op") else repr(a)


def _call_text(n):
    args = [_arg_text(a) for a in n.args] + [f"{k} = {_arg_text(v)}"
                                             for k, v in n.kwargs.items()]
    if n.op == "call_method":
        return f"{args[0]}.{n.target}({', '.join(args[1:])})"
    t = n.target
    qual = getattr(t, "__qualname__", getattr(t, "__name__", t))
    name = f"{getattr(t, '__module__', '') or ''}.{qual}".lstrip(".")
    if getattr(t, "__module__", None) in ("operator", "_operator", "builtins"):
        name = f"{getattr(t, '__name__', t)}"
    return f"{name}({', '.join(args)})"


def _lift(mod, graph):
    """A new graph whose ``get_attr`` nodes of parameters, buffers and tensor constants
    are placeholders (``p_fc1_weight``, ``b_bn_running_mean``, ``c_...``) ahead of the
    user inputs; returns it with the input specs and the constants."""
    params = dict(mod.named_parameters())
    buffers = dict(mod.named_buffers())
    non_persistent = {f"{p}.{b}" if p else b for p, m in mod.named_modules()
                      for b in getattr(m, "_non_persistent_buffers_set", ())}
    new, env, specs, by_target, constants = Graph(), {}, [], {}, {}

    def placeholder(name, val):
        node = new.placeholder(name)
        node.meta["val"] = val
        return node
    for target, p in params.items():
        by_target[target] = placeholder("p_" + target.replace(".", "_"), p)
        specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(by_target[target].name),
                               target))
    for target, b in buffers.items():
        by_target[target] = placeholder("b_" + target.replace(".", "_"), b)
        if target in non_persistent:
            constants[target] = b
        specs.append(InputSpec(InputKind.BUFFER, TensorArgument(by_target[target].name),
                               target, target not in non_persistent))
    for n in graph.nodes:
        if n.op == "get_attr" and n.target not in by_target:
            value = mod
            for atom in n.target.split("."):
                value = getattr(value, atom)
            constants[n.target] = value
            by_target[n.target] = placeholder("c_" + n.target.replace(".", "_"), value)
            specs.append(InputSpec(InputKind.CONSTANT_TENSOR,
                                   TensorArgument(by_target[n.target].name), n.target))
    out_spec = None
    for n in graph.nodes:
        if n.op == "placeholder":
            env[n] = new.node_copy(n)
            val = n.meta["val"]
            arg = TensorArgument(env[n].name) if isinstance(val, Tensor) else \
                ConstantArgument(env[n].name, val)
            specs.append(InputSpec(InputKind.USER_INPUT, arg))
        elif n.op == "get_attr":
            env[n] = by_target[n.target]
        elif n.op == "output":
            flat, out_spec = pytree.tree_flatten(map_arg(n.args[0], lambda a: env[a]))
            new.output(tuple(flat))
        elif n.op == "call_method" and isinstance(n.args[0].meta.get("val"), Tensor) \
                and callable(getattr(Tensor, n.target, None)):
            # every op of an exported graph is a call_function, as in PyTorch's: the
            # method becomes its function on Tensor (``Tensor.relu(x)``)
            env[n] = new.create_node("call_function", getattr(Tensor, n.target),
                                     map_arg(n.args, lambda a: env[a]),
                                     map_arg(n.kwargs, lambda a: env[a]), n.name, n.type)
            env[n].meta = dict(n.meta)
        else:
            env[n] = new.node_copy(n, lambda a: env[a])
    out_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(a.name))
                 if hasattr(a, "op") else
                 OutputSpec(OutputKind.USER_OUTPUT, ConstantArgument("", a)) for a in flat]
    return new, specs, out_specs, constants, out_spec


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=(), prefer_deferred_runtime_asserts_over_guards=False):
    """Traces ``mod`` on the example inputs ``args``/``kwargs`` into an
    ``ExportedProgram``: one graph of framework ops, with every submodule inlined and the
    parameters and buffers lifted to inputs. Python control flow is run on the examples
    (sizes read from tensors become constants); control flow on tensor data raises.
    ``dynamic_shapes`` (``Dim``, ``Dim.AUTO``, ``Dim.DYNAMIC``) are checked and recorded in
    ``range_constraints`` and the guards of ``module()``. ``strict`` is accepted: tracing
    is always the non-strict kind; ``preserve_module_call_signature`` is accepted and not
    recorded (every submodule is inlined)."""
    if not isinstance(mod, nn.Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, "
                        f"got {type(args)}")
    kwargs = kwargs or {}
    fn = type(mod).forward
    try:
        bound = inspect.signature(fn).bind(mod, *args, **kwargs)
    except TypeError as e:
        raise UserError(f"export: example inputs do not match the signature of "
                        f"{type(mod).__name__}.forward: {e}") from None
    examples = dict(list(bound.arguments.items())[1:])
    for name, value in examples.items():
        if not isinstance(value, Tensor) and _trace._has_tensor(value):
            raise UserError(f"export: input '{name}' is a container of tensors; only "
                            "tensors and constants are supported as inputs here")
    dyn, ranges = process_dynamic_shapes(fn, args, kwargs, dynamic_shapes, examples)
    graph, specialized = _trace.trace(mod, examples)
    graph, in_specs, out_specs, constants, out_spec = _lift(mod, graph)
    signature = ExportGraphSignature(in_specs, out_specs)
    # the user inputs' placeholders follow forward's parameters, but FX may rename them
    # ("input" -> "input_1"); guards and dynamic_shapes speak of the parameter names
    names = list(examples)
    shapes = [tuple(examples[n].shape) if isinstance(examples[n], Tensor) else
              _Constant(examples[n]) for n in names]
    guards = _GuardsFn(names, shapes, dyn, specialized)
    state_dict = {k: v for k, v in mod.state_dict(keep_vars=True).items()}
    return ExportedProgram({}, graph, signature, state_dict, ranges,
                           example_inputs=(tuple(args), dict(kwargs)), constants=constants,
                           out_spec=out_spec, guards=guards)


_FORMAT = "framework.export/1"


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2):
    """Saves ``ep`` to ``f`` (a path or a file object) with ``framework.save``: the graph
    (pickled node by node, its functions by qualified name), signature and state dict."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', "
                        f"got '{type(ep).__name__}' instead.")
    from ..serialization import save as fw_save
    payload = {"format": _FORMAT, "graph_module": ep.graph_module,
               "graph_signature": ep.graph_signature, "state_dict": ep.state_dict,
               "range_constraints": ep.range_constraints, "constants": ep.constants,
               "example_inputs": ep.example_inputs,
               # a TreeSpec does not pickle: keep the output structure, leaves numbered
               "out_structure": pytree.tree_unflatten(list(range(ep._out_spec.num_leaves)),
                                                      ep._out_spec),
               "guards": ep._guards, "extra_files": dict(extra_files or {})}
    fw_save(payload, f)


def load(f, *, extra_files=None, expected_opset_version=None):
    """Loads an ``ExportedProgram`` written by ``save``. The file holds pickled Python
    objects: load only files you trust."""
    from ..serialization import load as fw_load
    payload = fw_load(f, weights_only=False)
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise RuntimeError("framework.export.load: the file was not written by "
                           "framework.export.save")
    if extra_files is not None:
        for k in extra_files:
            extra_files[k] = payload["extra_files"].get(k, "")
    return ExportedProgram({}, payload["graph_module"].graph, payload["graph_signature"],
                           payload["state_dict"], payload["range_constraints"],
                           example_inputs=payload["example_inputs"],
                           constants=payload["constants"],
                           out_spec=pytree.tree_structure(payload["out_structure"]),
                           guards=payload["guards"])
