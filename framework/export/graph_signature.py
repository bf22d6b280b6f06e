"""The graph signature of an exported program: which placeholders of its graph are
parameters, buffers, constants or user inputs, and which outputs are user outputs
(torch.export.graph_signature)."""
import dataclasses
from enum import Enum, auto

__all__ = ["InputKind", "OutputKind", "TensorArgument", "ConstantArgument", "InputSpec",
           "OutputSpec", "ExportGraphSignature"]


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: object


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: object
    target: object = None
    persistent: object = None


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: object = None


@dataclasses.dataclass
class ExportGraphSignature:
    """The kinds of the graph's inputs (``input_specs``) and outputs (``output_specs``),
    in the graph's order: parameters, buffers and constants first, user inputs last."""
    input_specs: list
    output_specs: list

    def _inputs(self, kind):
        return tuple(s.target for s in self.input_specs if s.kind == kind)

    @property
    def parameters(self):
        return self._inputs(InputKind.PARAMETER)

    @property
    def buffers(self):
        return self._inputs(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        return tuple(s.target for s in self.input_specs
                     if s.kind == InputKind.BUFFER and s.persistent is False)

    @property
    def lifted_tensor_constants(self):
        return self._inputs(InputKind.CONSTANT_TENSOR)

    @property
    def user_inputs(self):
        return tuple(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.input_specs if s.kind == InputKind.USER_INPUT)

    @property
    def user_outputs(self):
        return tuple(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name
                     for s in self.output_specs
                     if s.kind == OutputKind.USER_OUTPUT)

    def _input_map(self, kind):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == kind}

    @property
    def inputs_to_parameters(self):
        return self._input_map(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self):
        return self._input_map(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self):
        return self._input_map(InputKind.CONSTANT_TENSOR)

    @property
    def buffers_to_mutate(self):
        return {s.arg.name: s.target for s in self.output_specs
                if s.kind == OutputKind.BUFFER_MUTATION}

    def __str__(self):
        lines = ["", "# inputs"]
        for s in self.input_specs:
            line = f"{s.arg.name}: {s.kind.name}"
            if s.target is not None:
                line += f" target='{s.target}'"
            if s.persistent is not None:
                line += f" persistent={s.persistent}"
            lines.append(line)
        lines += ["", "# outputs"]
        for s in self.output_specs:
            line = f"{s.arg.name}: {s.kind.name}"
            if s.target is not None:
                line += f" target='{s.target}'"
            lines.append(line)
        return "\n".join(lines) + "\n"
