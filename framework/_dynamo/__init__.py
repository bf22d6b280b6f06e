"""``framework._dynamo``: the few names of PyTorch's ``torch._dynamo`` that scripts use
(``reset``, ``config``, ``disable``, ``mark_dynamic`` ...). ``framework.compile`` traces
with ``framework.fx`` (framework/_inductor), without graph breaks or dynamic shapes, so the
marking functions only keep such scripts running."""
from . import config, exc  # noqa: F401
from ..compiler import (  # noqa: F401
    allow_in_graph, assume_constant_result, disable, is_compiling, list_backends, reset,
)

__all__ = ["config", "exc", "reset", "disable", "is_compiling", "allow_in_graph",
           "assume_constant_result", "mark_dynamic", "maybe_mark_dynamic", "mark_static",
           "graph_break", "reset_code_caches", "list_backends"]


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Marks dimension(s) ``index`` of ``t`` as dynamic for the compiler: a no-op here."""


def maybe_mark_dynamic(t, index):
    """Hints that dimension(s) ``index`` of ``t`` may vary: a no-op here."""


def mark_static(t, index=None):
    """Marks dimension(s) of ``t`` (or a module) as static: a no-op here."""


def graph_break(msg=""):
    """Forces a graph break under the compiler: a no-op in eager code."""


def reset_code_caches():
    """Clears compiled-code caches: there are none."""
