"""``framework.export``: whole-graph capture of a module into an ``ExportedProgram``
(torch.export), built on ``framework.fx``."""
from .dynamic_shapes import Dim, GuardOnDataDependentSymNode, UserError, dims
from .exported_program import ExportedProgram, default_decompositions, export, load, save
from .graph_signature import ExportGraphSignature
from . import graph_signature  # noqa: F401

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "Dim", "dims", "save",
           "load", "default_decompositions", "UserError", "GuardOnDataDependentSymNode"]
