"""framework.fx: symbolic tracing of modules into graphs, graph editing and Python code
generation, as torch.fx."""
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy, TraceError
from .tracer import Tracer, is_fx_tracing, symbolic_trace, wrap
from . import passes  # noqa: E402,F401  (after Interpreter, which it uses)
from .subgraph_rewriter import replace_pattern  # noqa: E402

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "map_arg", "TraceError", "is_fx_tracing",
           "replace_pattern"]
