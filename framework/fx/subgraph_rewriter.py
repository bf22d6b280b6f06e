"""``replace_pattern``: finds every occurrence of a pattern graph in a ``GraphModule``
and replaces it by another graph (torch.fx.subgraph_rewriter)."""
from typing import NamedTuple

from .graph import Graph
from .graph_module import GraphModule, _copy_attr
from .node import Node, map_arg
from .tracer import symbolic_trace


class Match(NamedTuple):
    anchor: Node        # the node the pattern's output matched
    nodes_map: dict     # pattern node -> graph node


def _as_graph_module(obj):
    if isinstance(obj, GraphModule):
        return obj
    if isinstance(obj, Graph):
        return GraphModule({}, obj) if obj.owning_module is None else obj.owning_module
    return symbolic_trace(obj)


def _match_arg(pa, ga, m):
    if isinstance(pa, Node):
        return isinstance(ga, Node) and _match_node(pa, ga, m)
    if isinstance(pa, (list, tuple)):
        return isinstance(ga, (list, tuple)) and len(pa) == len(ga) and \
            all(_match_arg(a, b, m) for a, b in zip(pa, ga))
    if isinstance(pa, dict):
        return isinstance(ga, dict) and pa.keys() == ga.keys() and \
            all(_match_arg(pa[k], ga[k], m) for k in pa)
    return type(pa) is type(ga) and pa == ga


def _match_node(pn, gn, m):
    if pn in m:
        return m[pn] is gn
    if pn.op == "placeholder":    # a pattern input stands for any value
        m[pn] = gn
        return True
    if pn.op != gn.op or pn.target != gn.target or len(pn.args) != len(gn.args):
        return False
    m[pn] = gn
    return _match_arg(pn.args, gn.args, m) and _match_arg(pn.kwargs, gn.kwargs, m)


def _find_matches(graph, pattern_graph):
    outputs = [n for n in pattern_graph.nodes if n.op == "output"]
    out = outputs[0].args[0]
    if not isinstance(out, Node):
        raise NotImplementedError("replace_pattern: the pattern must return one value")
    matches, taken = [], set()
    for gn in graph.nodes:
        if gn in taken or gn.op in ("placeholder", "output"):
            continue
        m = {}
        if not _match_node(out, gn, m):
            continue
        inner = {g for p, g in m.items() if p.op != "placeholder"}
        if inner & taken:
            continue
        # a value computed inside the match and used outside it cannot be removed
        if any(u not in inner for p, g in m.items() if p.op != "placeholder" and p is not out
               for u in g.users):
            continue
        taken |= inner
        matches.append(Match(gn, m))
    return matches


def replace_pattern(gm, pattern, replacement):
    """Replaces each non-overlapping occurrence of ``pattern`` (a function, traced) in
    ``gm.graph`` by ``replacement`` (a function of the same inputs), recompiles ``gm`` and
    returns the ``Match`` list."""
    pattern_gm = _as_graph_module(pattern)
    replacement_gm = _as_graph_module(replacement)
    graph = gm.graph
    matches = _find_matches(graph, pattern_gm.graph)
    p_inputs = [n for n in pattern_gm.graph.nodes if n.op == "placeholder"]
    r_inputs = [n for n in replacement_gm.graph.nodes if n.op == "placeholder"]
    if len(p_inputs) != len(r_inputs):
        raise ValueError("replace_pattern: pattern and replacement take different numbers "
                         f"of inputs ({len(p_inputs)} and {len(r_inputs)})")
    for match in matches:
        val_map = {r: match.nodes_map[p] for r, p in zip(r_inputs, p_inputs)}
        new_out = None
        # as PyTorch: the replacement goes right before the first user of the match
        order = {n: i for i, n in enumerate(graph.nodes)}
        where = min(match.anchor.users, key=order.__getitem__, default=match.anchor.next)
        with graph.inserting_before(where):
            for rn in replacement_gm.graph.nodes:
                if rn.op == "placeholder":
                    continue
                if rn.op == "output":
                    new_out = map_arg(rn.args[0], lambda n: val_map[n])
                    continue
                if rn.op in ("get_attr", "call_module") and not _has_attr(gm, rn.target):
                    _copy_attr(replacement_gm, gm, rn.target)
                val_map[rn] = graph.node_copy(rn, lambda n: val_map[n])
        match.anchor.replace_all_uses_with(new_out)
        for pn in reversed(list(pattern_gm.graph.nodes)):
            if pn.op not in ("placeholder", "output"):
                gn = match.nodes_map[pn]
                if not gn.users:
                    graph.erase_node(gn)
    gm.recompile()
    return matches


def _has_attr(mod, target):
    for atom in target.split("."):
        if not hasattr(mod, atom):
            return False
        mod = getattr(mod, atom)
    return True
