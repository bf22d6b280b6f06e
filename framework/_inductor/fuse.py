"""Fusion: which graph nodes are pointwise ops with a Triton form, and the partition of a
traced graph into groups that run as one generated kernel.

Row groups (``RowGroup``, built first) join reductions over the last dim (``sum``,
``mean``, ``amax``, ``amin``, ``var``, ``std``) with the pointwise ops that feed them and
the ops that combine the reduced values with the rows (RMSNorm, softmax, layer norm written
by hand): one program per row, the row in registers.

A node is fusible when its op is in ``POINTWISE`` (below) with arguments the generated
kernel can take (no ``out=``, no ``inplace=True``, no rounding mode), its result is one
float or bool tensor on a cuda device, and its tensor operands are float or bool tensors
on the same device. Each op names the scalar function of the eager Triton kernels
(framework/kernels/pointwise_ops.py) that computes it, so that a fused kernel does the
same math as the eager one, in the same compute dtype (float32 for 16-bit floats).
Matmuls take the pointwise ops after them into the GEMM's epilogue (gemm.py); everything
else (random ops, other reductions, views, integer math) stays an eager call between the
fused kernels.
"""
import operator

from .. import nn

FLOATS = ("float16", "bfloat16", "float32", "float64")

# op -> (scalar function in framework.kernels.pointwise_ops, number of tensor operands);
# "cast" and "pow" are resolved by the node's arguments
POINTWISE = {
    "add": ("_add", 2), "sub": ("_sub", 2), "mul": ("_mul", 2), "div": ("_div", 2),
    "maximum": ("_maximum", 2), "minimum": ("_minimum", 2),
    "eq": ("_eq", 2), "ne": ("_ne", 2), "lt": ("_lt", 2), "le": ("_le", 2),
    "gt": ("_gt", 2), "ge": ("_ge", 2),
    "neg": ("_neg", 1), "abs": ("_abs", 1), "exp": ("_exp", 1), "log": ("_log", 1),
    "sqrt": ("_sqrt_op", 1), "rsqrt": ("_rsqrt", 1), "tanh": ("_tanh_op", 1),
    "sigmoid": ("_sigmoid", 1), "relu": ("_relu", 1), "silu": ("_silu", 1),
    "gelu": ("_gelu", 1), "gelu_tanh": ("_gelu_tanh", 1), "erf": ("_erf", 1),
    "exp2": ("_exp2", 1), "log2": ("_log2", 1), "reciprocal": ("_reciprocal", 1),
    "pow": ("_pow", 2), "pow_scalar": ("_pow_scalar", 1), "where": ("_where", 3),
    "cast": (None, 1),
}
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
              operator.truediv: "div", operator.neg: "neg", operator.abs: "abs",
              operator.pow: "pow", operator.eq: "eq", operator.ne: "ne", operator.lt: "lt",
              operator.le: "le", operator.gt: "gt", operator.ge: "ge"}
_ALIASES = {"true_divide": "div", "multiply": "mul", "subtract": "sub", "negative": "neg",
            "absolute": "abs", "greater": "gt", "less": "lt", "greater_equal": "ge",
            "less_equal": "le", "not_equal": "ne"}
_CASTS = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64"}
_MODULES = {nn.ReLU: "relu", nn.Sigmoid: "sigmoid", nn.Tanh: "tanh", nn.SiLU: "silu",
            nn.GELU: "gelu"}
REDUCTIONS = {"sum": ("keepdim",), "mean": ("keepdim",), "amax": ("keepdim",),
              "amin": ("keepdim",), "var": ("unbiased", "keepdim"),
              "std": ("unbiased", "keepdim")}   # name -> its positional args after dim
MAX_ROW = 16384   # longest row a row group holds in registers; longer rows stay eager
_functions = None
_reductions = None


def _function_names():
    """id of each public framework function with a fused form -> its op name."""
    global _functions
    if _functions is None:
        import framework as fw
        import framework.nn.functional as F
        _functions = {}
        names = set(POINTWISE) | set(_ALIASES)
        for ns in (F, fw.special, fw):   # fw last: framework.sigmoid over F.sigmoid's id
            for name in names:
                fn = getattr(ns, name, None)
                if callable(fn):
                    _functions[id(fn)] = _ALIASES.get(name, name)
    return _functions


class Op:
    """A fusible node, resolved: ``name`` (a POINTWISE key), ``operands`` (nodes or Python
    scalars, in the scalar function's order), ``param`` (its p0: alpha, the exponent) and
    for a cast the target dtype name."""
    __slots__ = ("node", "name", "operands", "param", "dtype")

    def __init__(self, node, name, operands, param=1.0, dtype=None):
        self.node, self.name, self.operands, self.param, self.dtype = (
            node, name, operands, param, dtype)


def _scalar(a):
    return type(a) in (int, float, bool)


def resolve(node, root):
    """The ``Op`` of ``node``, or None if it is not a pointwise op with a fused form."""
    if node.op == "call_function":
        name = _OPERATORS.get(node.target) or _function_names().get(id(node.target))
    elif node.op == "call_method":
        name = _ALIASES.get(node.target, node.target)
        if name in _CASTS or name in ("to", "type"):
            return _resolve_cast(node, name)
    elif node.op == "call_module":
        mod = root.get_submodule(node.target)
        name = _MODULES.get(type(mod))
        if name is None or getattr(mod, "inplace", False) or len(node.args) != 1 or node.kwargs:
            return None
        if name == "gelu" and mod.approximate == "tanh":
            name = "gelu_tanh"
        elif name == "gelu" and mod.approximate != "none":
            return None
        return Op(node, name, list(node.args))
    else:
        return None
    if name not in POINTWISE or name == "cast":
        return None
    args, kwargs = list(node.args), dict(node.kwargs)
    param = 1.0
    if name == "gelu":
        approximate = kwargs.pop("approximate", args.pop(1) if len(args) > 1 else "none")
        if approximate == "tanh":
            name = "gelu_tanh"
        elif approximate != "none":
            return None
    if name in ("relu", "silu") and (kwargs.pop("inplace", args.pop(1) if len(args) > 1
                                                else False) is not False):
        return None
    if name in ("add", "sub"):
        alpha = kwargs.pop("alpha", 1)
        if not _scalar(alpha):
            return None
        param = float(alpha)
    if name == "pow" and len(args) == 2 and _scalar(args[1]) and type(args[1]) is not bool:
        name, param, args = "pow_scalar", float(args[1]), args[:1]
    if kwargs or len(args) != POINTWISE[name][1]:
        return None   # out=, rounding_mode=, ... : eager
    if not all(isinstance(a, type(node)) or _scalar(a) for a in args):
        return None
    if not any(isinstance(a, type(node)) for a in args):
        return None
    return Op(node, name, args, param)


def _resolve_cast(node, name):
    args = list(node.args)
    if name in _CASTS:
        if len(args) != 1 or node.kwargs:
            return None
        target = _CASTS[name]
    else:
        kwargs = dict(node.kwargs)
        dtype = kwargs.pop("dtype", args[1] if len(args) == 2 else None)
        if kwargs or len(args) > 2 or (len(args) == 2 and "dtype" in node.kwargs):
            return None
        import framework as fw
        if not isinstance(dtype, fw.dtype):
            return None
        target = dtype.name
    if target not in FLOATS + ("bool",):
        return None
    return Op(node, "cast", args[:1], dtype=target)


def tensor_meta(node):
    """The node's single-tensor metadata from ShapeProp, or None."""
    meta = node.meta.get("tensor_meta") if hasattr(node, "meta") else None
    return meta if meta is not None and hasattr(meta, "dtype") else None


def _fusible(op):
    """Whether a resolved op can go into a generated kernel (dtypes and devices)."""
    meta = tensor_meta(op.node)
    device = op.node.meta.get("device")
    if meta is None or device is None or device.type != "cuda":
        return False
    if meta.dtype.name not in FLOATS + ("bool",):
        return False
    for a in op.operands:
        if _scalar(a):
            continue
        m = tensor_meta(a)
        if m is None or m.dtype.name not in FLOATS + ("bool",) or a.meta.get("device") != device:
            return False
    return True


class Group:
    """Nodes that become one kernel: ``ops`` in graph order (all of one output shape),
    ``inputs`` the nodes outside it that they read, ``first`` the graph position where
    the group runs (its first node's)."""

    def __init__(self, op, index, inputs):
        self.ops, self.first, self.shape = [op], index, tensor_meta(op.node).shape
        self.nodes, self.inputs = {op.node}, set(inputs)


class RowGroup(Group):
    """Ops that become one row kernel: rows of ``shape`` (the reductions' input shape),
    ``kinds`` maps each node to "row" (a value of ``shape``) or "scalar" (one per row)."""
    row = True

    def __init__(self, shape):
        self.ops, self.first, self.shape = [], None, shape
        self.nodes, self.inputs, self.kinds = set(), set(), {}

    def add(self, op, kind, index):
        self.ops.append(op)
        self.nodes.add(op.node)
        self.kinds[op.node] = kind
        self.first = index if self.first is None else min(self.first, index)


def _reduction_names():
    """id of each public framework reduction with a row-kernel form -> its name."""
    global _reductions
    if _reductions is None:
        import framework as fw
        _reductions = {id(getattr(fw, n)): n for n in REDUCTIONS}
    return _reductions


def resolve_reduction(node):
    """The ``Op`` of a reduction over the last dim (``param``: var/std's correction), or
    None."""
    if node.op == "call_method":
        name = node.target
    elif node.op == "call_function":
        name = _reduction_names().get(id(node.target))
    else:
        return None
    if name not in REDUCTIONS or not node.args:
        return None
    args, kwargs = list(node.args[1:]), dict(node.kwargs)
    x = node.args[0]
    dim = kwargs.pop("dim") if "dim" in kwargs else args.pop(0) if args else None
    names = REDUCTIONS[name]
    if len(args) > len(names) or any(n in kwargs for n in names[:len(args)]):
        return None
    opts = dict(zip(names, args))
    opts.update({n: kwargs.pop(n) for n in names if n in kwargs})
    correction = kwargs.pop("correction", None) if name in ("var", "std") else 0
    if kwargs or not isinstance(x, type(node)) or type(opts.get("keepdim", False)) is not bool:
        return None   # dtype=, out=
    unbiased = opts.get("unbiased")
    if name in ("var", "std"):
        if unbiased is not None and (correction is not None or type(unbiased) is not bool):
            return None
        if correction is None:
            correction = 0 if unbiased is False else 1
        if not _scalar(correction):
            return None
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    meta = tensor_meta(x)
    if type(dim) is not int or meta is None or dim not in (-1, len(meta.shape) - 1):
        return None
    return Op(node, name, [x], float(correction))


def _row_fusible(op):
    """Whether a resolved reduction can open or join a row group."""
    meta, xm = tensor_meta(op.node), tensor_meta(op.operands[0])
    device = op.node.meta.get("device")
    return (meta is not None and xm is not None and device is not None
            and device.type == "cuda" and op.operands[0].meta.get("device") == device
            and xm.dtype.name in FLOATS and meta.dtype == xm.dtype
            and len(xm.shape) >= 1 and 2 <= xm.shape[-1] <= MAX_ROW)


def row_groups(gm, index, mutations, claimed=()):
    """The row groups of ``gm``'s graph: from each reduction over the last dim not yet in
    one, back through the pointwise ops of the same shape that feed it, then forward
    through the ops (pointwise ops and further reductions of the rows) that read the
    group's values (pulling in the row ops since the group's first node that they read)
    or reduce rows of the group's shape, where each reads only the group's values and what
    exists before the group's first node."""
    nodes = list(gm.graph.nodes)
    claimed, groups = set(claimed), []
    for i, node in enumerate(nodes):
        if node in claimed:
            continue
        red = resolve_reduction(node)
        if red is None or not _row_fusible(red):
            continue
        shape = tuple(tensor_meta(red.operands[0]).shape)
        g = _grow(RowGroup(shape), red, i, nodes, index, mutations, claimed, gm)
        if len(g.ops) > 1:
            groups.append(g)
            claimed |= g.nodes
    return groups


def _grow(g, red, i, nodes, index, mutations, claimed, gm):
    """``g`` grown from the reduction ``red`` (node ``i``): its prologue, then the nodes
    after it that can join, up to the next in-place op."""
    shape = g.shape
    prologue, stack = [], [red.operands[0]]
    while stack:
        n = stack.pop()
        if n in claimed or any(p.node is n for p in prologue):
            continue
        op = resolve(n, gm)
        if op is None or not _fusible(op) or tuple(tensor_meta(n).shape) != shape:
            continue
        prologue.append(op)
        stack.extend(a for a in op.operands if not _scalar(a))
    prologue.sort(key=lambda o: index[o.node])
    first = min([index[o.node] for o in prologue] + [i])
    members = {o.node for o in prologue}
    if any(first < m < i for m in mutations) or any(
            index[a] >= first for o in prologue for a in o.operands
            if not _scalar(a) and a not in members):
        prologue, first = [], i   # a read or write inside the span: the reduction alone
    for op in prologue:
        g.add(op, "row", index[op.node])
    g.add(red, "scalar", i)
    for j in range(i + 1, len(nodes)):
        n = nodes[j]
        if j in mutations:
            break
        if n in claimed:
            continue
        op = resolve_reduction(n)
        if op is not None and _row_fusible(op):
            kind = "scalar"
        else:
            op, kind = resolve(n, gm), None
            if op is None or not _fusible(op):
                continue
        ins = [a for a in op.operands if not _scalar(a)]
        if not (any(a in g.nodes for a in ins) or kind == "scalar"
                and tuple(tensor_meta(ins[0]).shape) == shape):
            continue
        # row ops since the group's start that read only what it can read come along
        feeders = _feeders([a for a in ins if a not in g.nodes and index[a] >= first],
                           g, first, index, claimed, gm)
        if feeders is None:
            continue
        out = tuple(tensor_meta(n).shape)
        if kind == "scalar":
            ok = tuple(tensor_meta(ins[0]).shape) == shape and g.kinds.get(ins[0]) != "scalar"
        elif out == shape:
            kind = "row"
            ok = _reads_rows(op, g)
        else:
            kind = "scalar"
            ok = all(g.kinds.get(a) == "scalar" and tuple(tensor_meta(a).shape) == out
                     for a in ins)
        if ok:
            for f in feeders:
                g.add(f, "row", index[f.node])
            g.add(op, kind, j)
    g.ops.sort(key=lambda o: index[o.node])
    return g


def _reads_rows(op, g):
    """Whether a row op's group operands are rows or reduced values kept as columns."""
    keep = g.shape[:-1] + (1,)
    return all(g.kinds.get(a) != "scalar" or tuple(tensor_meta(a).shape) == keep
               for a in op.operands if not _scalar(a))


def _feeders(nodes, g, first, index, claimed, gm):
    """The row ops (not in ``g``) that compute ``nodes`` from ``g``'s values and what
    exists before ``first``, or None if some of it cannot join ``g``."""
    found, todo = {}, list(nodes)
    while todo:
        n = todo.pop()
        if n in g.nodes or n in found or index[n] < first:
            continue
        op = resolve(n, gm)
        if (n in claimed or op is None or not _fusible(op)
                or tuple(tensor_meta(n).shape) != g.shape or not _reads_rows(op, g)):
            return None
        found[n] = op
        todo.extend(a for a in op.operands if not _scalar(a))
    return list(found.values())


def partition(gm):
    """The fusible groups of ``gm``'s graph (ShapeProp's metadata and devices filled in).
    A pointwise op joins the groups of its operands of the same shape, merged into one,
    when everything they read from outside exists before the earliest group's first node
    (where the merged group runs); else it joins the latest of them it can, or starts a
    group. Groups of one op are left out: the eager kernel is already that one launch.
    The GEMM groups (gemm.py), then the row groups (``row_groups``) are formed first;
    their nodes join no other group."""
    from .gemm import gemm_groups, lower_linear
    lower_linear(gm)
    index, mutations = {}, set()
    for i, node in enumerate(gm.graph.nodes):
        # a parameter read (get_attr) can move up to any group that needs it (rewrite)
        index[node] = -1 if node.op == "get_attr" else i
        if _mutates(node, gm):
            mutations.add(i)
    gemms = gemm_groups(gm, index, mutations)
    claimed = set().union(*(g.nodes for g in gemms))
    rows = row_groups(gm, index, mutations, claimed)
    claimed = claimed.union(*(g.nodes for g in rows))
    group_of, groups = {}, []
    mutated = -1   # the last in-place op: a group that runs before it may not read after
    for i, node in enumerate(gm.graph.nodes):
        if i in mutations:
            mutated = i
            continue
        if node in claimed:
            continue
        op = resolve(node, gm)
        if op is None or not _fusible(op):
            continue
        shape = tensor_meta(node).shape
        ins = [a for a in op.operands if not _scalar(a)]
        cands = []
        for a in sorted(ins, key=lambda a: -index[a]):   # the latest producer's group first
            g = group_of.get(a)
            if g is not None and g.shape == shape and g not in cands and g.first > mutated:
                cands.append(g)
        chosen = None
        if cands:
            target = min(cands, key=lambda g: g.first)
            nodes = set().union(*(g.nodes for g in cands))
            reads = set(ins).union(*(g.inputs for g in cands)) - nodes
            if all(index[b] < target.first for b in reads):
                for g in cands:
                    if g is not target:
                        target.ops += g.ops
                        target.nodes |= g.nodes
                        groups.remove(g)
                        for n in g.nodes:
                            group_of[n] = target
                target.ops.sort(key=lambda o: index[o.node])
                target.inputs = reads
                chosen = target
            else:
                for g in cands:
                    if all(b in g.nodes or index[b] < g.first for b in ins):
                        chosen = g
                        g.inputs |= {b for b in ins if b not in g.nodes}
                        break
        if chosen is None:
            chosen = Group(op, i, ins)
            groups.append(chosen)
        else:
            chosen.ops.append(op)
            chosen.nodes.add(node)
        group_of[node] = chosen
    return gemms + rows + [g for g in groups if len(g.ops) > 1]


def _mutates(node, root):
    """Whether ``node`` may write to a tensor in place (``add_``, ``out=``,
    ``inplace=True``, item assignment): reads after it must stay after it."""
    if node.op == "call_method":
        name = node.target
    elif node.op == "call_function":
        name = getattr(node.target, "__name__", "")
        if name in ("setitem", "iadd", "isub", "imul", "itruediv", "ipow"):
            return True
    elif node.op == "call_module":
        return getattr(root.get_submodule(node.target), "inplace", False) is True
    else:
        return False
    return ((name.endswith("_") and not name.endswith("__")) or "out" in node.kwargs
            or node.kwargs.get("inplace") is True)


def rewrite(gm, groups, make_kernel):
    """Replaces each group in ``gm``'s graph by one call of ``make_kernel(group, inputs,
    outputs)`` placed before the group's first node, whose tuple of results replaces the
    group's values used outside it; recompiles ``gm``."""
    graph = gm.graph
    plans = []
    for g in groups:   # every kernel first, from the graph as traced
        inputs = []
        for op in g.ops:
            for a in op.operands:
                if not _scalar(a) and a not in g.nodes and a not in inputs:
                    inputs.append(a)
        outputs = [op.node for op in g.ops
                   if any(u not in g.nodes for u in op.node.users)]
        plans.append((g, inputs, outputs, make_kernel(g, inputs, outputs)))
    replaced = {}   # a group's output -> the getitem that now holds it
    for g, inputs, outputs, fn in plans:
        position = {n: k for k, n in enumerate(graph.nodes)}
        for a in inputs:
            if a.op == "get_attr" and position[a] > position[g.ops[0].node]:
                g.ops[0].node.prepend(a)   # a parameter read after the group's start
        with graph.inserting_before(g.ops[0].node):
            call = graph.call_function(fn, tuple(replaced.get(a, a) for a in inputs))
            results = [graph.call_function(operator.getitem, (call, k))
                       for k in range(len(outputs))]
        call.meta["type"] = tuple
        for node, res in zip(outputs, results):
            res.meta.update(node.meta)   # later passes read the values' metadata
            node.replace_all_uses_with(res)
            replaced[node] = res
        for op in reversed(g.ops):
            graph.erase_node(op.node)
    graph.lint()
    gm.recompile()
    return gm
