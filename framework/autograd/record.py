"""Graph recording, called by the dispatcher: for an op with ``derivatives`` in ops.yaml,
a call made with grad mode on and an input that requires grad runs the op without
recording and adds one ``OpNode`` to the graph.

Derivative formulas are Python expressions over framework ops (as PyTorch's
derivatives.yaml). Their names: the op's arguments by schema name, ``grad`` (gradient of
the first output), ``grads`` (all), ``result`` / ``results`` (the outputs),
``grad_input_mask`` (per formula input, whether its gradient is needed) and the helpers of
framework/autograd/formulas*.py. Formulas that index one call (``f(...)[0]``, ``f(...)[1]``)
share it: the backward makes the call once. A formula's value is reduced to its input's
shape (broadcasting) and cast to its dtype, so formulas need not. codegen.py turns each
op's formulas into one backward function, and makes its wrapper and the functions that
capture a call's edges and saved values.
Because the formulas are framework ops, running them with grad mode on (create_graph)
records their own graph: higher-order gradients need no extra code.
"""
import copy
import re

import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor
from . import anomaly_mode, grad_mode
from .graph import _seq as _node_seq
from .graph import Node, Packed, SavedTensor, ViewOfBase, _hooks, edge_of, unpack_output

_IDENT = re.compile(r"[A-Za-z_]\w*")
_namespace = None


def namespace():
    """The globals of derivative formulas: framework's functions and the helpers of
    formulas*.py."""
    global _namespace
    if _namespace is None:
        import framework
        from . import formulas, formulas_index, formulas_linalg
        from . import formulas_complex, formulas_linalg_extra
        ns = {k: getattr(framework, k) for k in dir(framework) if not k.startswith("__")}
        for helpers in (formulas, formulas_index, formulas_linalg, formulas_linalg_extra,
                        formulas_complex):
            ns.update({k: getattr(helpers, k) for k in dir(helpers) if not k.startswith("_")})
        ns["fw"] = framework
        _namespace = ns
    return _namespace


class Derivatives:
    """The compiled derivative formulas of one op."""

    def __init__(self, op, params):
        self.op_name = op.name
        # PyTorch's node name, from the op's name unless its row names it (NllLoss2D)
        self.node_name = ((getattr(op, "row", None) or {}).get("node_name") or
                          "".join(p.capitalize() for p in op.name.split("_")) + "Backward0")
        types = {name: typ for typ, name, _, _ in op.args}
        self.inputs = []        # (name, is_list, formula)
        used = set()
        derivatives = op.derivatives or {
            name: f"not_implemented({op.name!r}, {name!r})" for typ, name, _, _ in op.args
            if typ.startswith("Tensor") and name != "out"}
        uses = []   # per input: the names its formula reads
        for name, formula in derivatives.items():
            if name not in types:
                raise ValueError(f"ops.yaml: {op.name}: derivative for unknown input {name!r}")
            compile(str(formula), f"<derivative of {op.name} wrt {name}>", "eval")  # syntax
            idents = set(_IDENT.findall(str(formula)))
            used.update(idents)
            uses.append(idents)
            typ = types[name]
            self.inputs.append((name, "[]" in typ or "..." in typ, str(formula)))
        self.params = params
        # in PyTorch's order (saved_tensors_hooks see it): by name, the first argument
        # (``input`` here) named ``self`` there
        first = op.args[0][1]
        self.save = sorted((p for p in params if p in used),
                           key=lambda p: "self" if p == first else p)
        # where each saved argument sits in OpNode._saved, and which of them each formula reads
        base = 2 * len(self.inputs)
        self.save_at = [(k, base + 2 * i) for i, k in enumerate(self.save)]
        self.uses = [frozenset(ki for ki in self.save_at if ki[0] in u) for u in uses]
        # inputs the formulas read only the shape, dtype or device of: saved as TensorMeta,
        # so that in-place changes to them later do not invalidate this node
        text = " ".join(str(f) for f in derivatives.values())
        self.meta_only = {p for p in self.save if _meta_only(p, text)}
        self.save_result = "result" in used or "results" in used
        # the outputs the formulas read: only those are kept (and version-checked), so
        # that an output no formula reads may be changed in place before backward
        # (native_layer_norm's output, when its formulas read the saved statistics)
        idx = {int(i) for i in re.findall(r"\bresults\[(\d+)\]", text)}
        if re.search(r"\bresult\b", text):
            idx.add(0)
        bare = re.search(r"\bresults\b(?!\[\d+\])", text)
        self.saved_outputs = None if bare else frozenset(idx)
        first = op.args[0]
        self.self_name = first[1]
        self.out_param = "out" in params
        self.is_view = op.returns.startswith("Tensor(a)")
        self.inplace = False
        self.simple = not any(is_list for _, is_list, _ in self.inputs)
        # the functions generated for this op (framework/autograd/codegen.py), on first use
        self.backward = None
        self.edges = self.saves = None
        # outputs that never get a gradient (ops.yaml ``output_differentiability``)
        flags = (getattr(op, "row", None) or {}).get("output_differentiability")
        self.nondiff = frozenset(i for i, f in enumerate(flags or ()) if not f)

    @property
    def node_name(self):
        return self._node_name

    @node_name.setter
    def node_name(self, name):
        self._node_name = name
        self.node_cls = None     # the OpNode subclass of that name, made on first use


_META_USES = (r"\b{0}\.(shape|dtype|device)\b", r"\b{0}\.(dim|numel)\(\)",
              r"\b(unreduce|moved|index_backward|numel_of|reduced_dims|as_strided_backward)"
              r"\((grads?(\[0\])?, )?{0}\b")


def _meta_only(name, text):
    for pat in _META_USES:
        text = re.sub(pat.format(re.escape(name)), "", text)
    return re.search(rf"\b{re.escape(name)}\b", text) is None


class TensorMeta:
    """What formulas may read of a tensor saved for its metadata only."""

    __slots__ = ("shape", "dtype", "device", "_stride", "_offset")

    def __init__(self, t):
        self.shape = Size(t._shape)
        self.dtype = t.dtype
        self.device = t._storage.device
        self._stride, self._offset = t._stride, t._offset   # as_strided's backward

    def stride(self):
        return self._stride

    def storage_offset(self):
        return self._offset

    def dim(self):
        return len(self.shape)

    def numel(self):
        from .._ops.alloc import numel
        return numel(self.shape)


def _is_float(t):
    return isinstance(t, Tensor) and t.dtype.category >= 2    # floating or complex


def _save(v):
    if v.__class__ is Tensor or isinstance(v, Tensor):
        return SavedTensor(v)
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, Tensor) for x in v):
        # a tuple stays a tuple: an index (t[i, j]) means something else as a list
        return type(v)(SavedTensor(x) for x in v) if type(v) in (list, tuple) else \
            [SavedTensor(x) for x in v]
    return v


def _unpack(v, node):
    if isinstance(v, SavedTensor):
        return v.unpack(node)
    if isinstance(v, (list, tuple)) and v and isinstance(v[0], SavedTensor):
        return type(v)(x.unpack(node) for x in v)
    return v


class OpNode(Node):
    """The backward of one call of an op-table op.

    What it keeps is one flat tuple ``_saved`` (few objects for the garbage collector to
    walk): two entries per formula input, its (shape, dtype) (for a list input: a tuple of
    them, and None), then two per saved argument, (value, version) where version is None
    for what needs no version check. Saved outputs are ``_results``: six entries per output,
    its fields and version (not the tensor, whose grad_fn is this node)."""

    _results = None

    def name(self):
        return self._d.node_name

    def apply(self, grads):
        if self._saved is None:
            from .graph import _FREED
            raise RuntimeError(_FREED)
        d = self._d
        if d.backward is None:
            from . import codegen
            codegen.compile_backward(d)
        return d.backward(self, grads)

    def release(self):
        self._released = True
        self._saved = None
        self._results = None

    def __getattr__(self, name):
        # only reached for missing attributes: grad_fn._saved_self, _raw_saved_result, ...
        if name.startswith("_") and "saved_" in name and "_d" in self.__dict__:
            from .saved_attrs import saved_attr
            return saved_attr(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        from .saved_attrs import saved_names
        return sorted(set(super().__dir__()) | set(saved_names(self)))


def _fit(g, shape, dtype):
    """A formula's value as the gradient of an input of ``shape`` and ``dtype``."""
    if g is None:
        return None
    if g._shape != shape:
        g = g.sum_to_size(shape) if len(g._shape) >= len(shape) else g.expand(shape)
    if g.dtype is not dtype:
        if g.dtype.is_complex and not dtype.is_complex:
            g = g.real      # a real input's gradient is real (PyTorch's handle_r_to_c)
        g = g.to(dtype)
    return g


def _save_results(outs, keep=None):
    r = []
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and (keep is None or i in keep):
            st = o._storage
            if _hooks.stack:    # packed as a tensor without grad_fn (no cycle to the node)
                alias = Tensor._make(st, o._shape, o._stride, o._offset, o.dtype)
                r += (Packed(alias, _hooks.stack[-1]), None, None, None, None, None)
            else:
                r += (st, o._shape, o._stride, o._offset, o.dtype, st.version)
        else:
            r += (None, None, None, None, None, None)
    return tuple(r)


def _unpack_results(node):
    r = node._results
    out = []
    for i in range(0, len(r), 6):
        v = r[i]
        if v is None:
            out.append(None)
        elif v.__class__ is Packed:
            t = v.unpack()
            out.append(unpack_output(t._storage, t._shape, t._stride, t._offset, t.dtype,
                                     t._storage.version, node, i // 6))
        else:
            out.append(unpack_output(*r[i:i + 6], node, i // 6))
    return out


def record(d, call, env):
    """Runs ``call`` (the op without recording) and records its node; ``env`` maps the
    op's parameter names to this call's arguments."""
    out = env.get("out") if d.out_param else None
    self_t = env.get(d.self_name)
    if d.inplace:
        return record_inplace(d, call, env, self_t)
    inplace = out is not None and out is self_t
    if out is not None and not inplace:
        raise RuntimeError(f"{d.op_name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if inplace:
        return record_inplace(d, call, env, self_t)
    edges, saved = _inputs(d, env)
    _save_args(d, env, saved, edges)
    mode = grad_mode._mode
    mode.enabled = False
    try:
        result = call()
    finally:
        mode.enabled = True
    if isinstance(result, Tensor) and any(result is v for v in env.values()):
        # a no-op (contiguous() of a contiguous tensor, flatten() that changes nothing)
        # returns its input itself: it keeps its own history (a leaf stays a leaf)
        return result
    return _attach(d, edges, saved, result)


def record_inplace(d, call, env, self_t):
    """An in-place op on ``self_t``: the node takes self's previous history as its input and
    becomes self's grad_fn (self's old value is cloned first if a formula needs it)."""
    if self_t._requires_grad and self_t.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = self_t._base
    fn = self_t._grad_fn
    if base is not None and fn is not None and fn._num_outputs > 1 and fn._version is not None:
        raise RuntimeError(
            f"Output {self_t._output_nr} of {fn.name()} is a view and is being modified "
            "inplace. This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one.")
    on_view = base is not None and (base._requires_grad or _needs_grad(d, env))
    if on_view:
        if base._requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        if not base.is_contiguous():
            raise RuntimeError(f"{d.op_name}_(): in-place operation on a view of a "
                               "non-contiguous tensor that requires grad is not supported")
        base_edge = edge_of(base) if base._requires_grad else None
    edges, saved = _inputs(d, env)
    if d.self_name in d.save:
        # recorded (grad mode is on here): the clone keeps self's old history, so that a
        # double backward through the formulas reaches it
        env = dict(env)
        env[d.self_name] = self_t.clone()
    # saved before the call: an argument that aliases self is then caught as modified
    _save_args(d, env, saved, edges)
    with grad_mode.no_grad():
        result = call()
    _attach(d, edges, saved, self_t)
    node = self_t.grad_fn
    if on_view:
        _rebase_view(base, base_edge, self_t, node)
    return result


def _needs_grad(d, env):
    for name, is_list, _ in d.inputs:
        v = env.get(name)
        for t in (v if is_list and v is not None else (v,)):
            if isinstance(t, Tensor) and t._requires_grad:
                return True
    return False


class CopySlices(Node):
    """The new history of a base tensor after an in-place op on one of its views: the
    gradient outside the view goes to the base's old history, inside it to the op."""

    def __init__(self, base_edge, op_node, geometry):
        super().__init__((base_edge, (op_node, 0)))
        self._geometry = geometry

    def apply(self, grads):
        g = grads[0].contiguous()
        size, stride, offset = self._geometry
        region = g.as_strided(size, stride, g.storage_offset() + offset)
        rest = g.clone()
        rest.as_strided(size, stride, rest.storage_offset() + offset).zero_()
        return [rest, region.clone()]


def _rebase_view(base, base_edge, view, op_node):
    geometry = (view._shape, view._stride, view._offset - base._offset)
    cs = CopySlices(base_edge, op_node, geometry)
    cs._out_meta = ((base._shape, base.dtype, base._storage.device),)
    base._grad_fn = cs
    base._requires_grad = True
    base._output_nr = 0
    view._grad_fn = ViewOfBase((cs, 0), base, view)
    view._requires_grad = True
    view._output_nr = 0


def _list_input(v, edges, saved):
    """Edges and (shape, dtype) metas of a list input (cat's tensors)."""
    metas = []
    for t in (v if v is not None else ()):
        if isinstance(t, Tensor):
            edges += edge_of(t) or (None, 0)
            metas.append((t._shape, t.dtype))
        else:
            edges += (None, 0)
            metas.append(None)
    saved += (tuple(metas), None)


def _inputs(d, env):
    """The node's edges and the start of its saved list (codegen.capture_source)."""
    if d.edges is None:
        from . import codegen
        codegen.compile_capture(d)
    return d.edges(*[env[p] for p in d.params])


def _save_args(d, env, saved, edges):
    """Appends what the formulas read of the arguments to ``saved`` (None for what no
    input with an edge reads)."""
    if d.saves is None:
        from . import codegen
        codegen.compile_capture(d)
    d.saves(saved, edges, *[env[p] for p in d.params])


_PLAIN = (int, float, bool, str)


_NODE_CLASSES = {}


def _node_class(d):
    """The OpNode subclass named ``d.node_name``: ``type(t.grad_fn).__name__`` is PyTorch's
    node name (MseLossBackward0), as its repr and name() are."""
    cls = _NODE_CLASSES.get(d.node_name)
    if cls is None:
        cls = _NODE_CLASSES[d.node_name] = type(d.node_name, (OpNode,), {})
        cls.__module__ = OpNode.__module__
    d.node_cls = cls
    return cls


def _attach(d, edges, saved, result):
    cls = d.node_cls or _node_class(d)
    node = cls.__new__(cls)
    node._next = tuple(edges)
    node._seq = next(_node_seq)
    node._d = d
    node._saved = tuple(saved)
    if result.__class__ is Tensor:      # the common case: one tensor output
        if d.save_result:
            node._results = _save_results((result,), d.saved_outputs)
        if result.dtype.category >= 2:     # floating or complex
            result._grad_fn = node
            result._requires_grad = True
            result._output_nr = 0
            if result._base is not None:
                node._version = result._storage.version
        if anomaly_mode._enabled:
            anomaly_mode.record_trace(node)
        return result
    outs = result if isinstance(result, tuple) else (result,)
    node._num_outputs = len(outs)
    # (shape, dtype, device) per output, to give missing gradients of some outputs zeros;
    # None for outputs marked not differentiable (mean/rstd, lse, ...): no gradient ever
    # reaches them and their formulas never read one, so the engine passes None (as
    # PyTorch passes an undefined gradient) instead of filling zeros on every backward
    nondiff = d.nondiff
    node._out_meta = tuple((o._shape, o.dtype, o._storage.device)
                           if isinstance(o, Tensor) and i not in nondiff else None
                           for i, o in enumerate(outs))
    if d.save_result:
        node._results = _save_results(outs, d.saved_outputs)
    for i, o in enumerate(outs):
        if _is_float(o) and i not in d.nondiff:
            o._grad_fn = node
            o._requires_grad = True
            o._output_nr = i
    if any(isinstance(o, Tensor) and o._base is not None for o in outs):
        # the outputs may view different storages (meshgrid, broadcast_tensors)
        node._version = tuple(o._storage.version if isinstance(o, Tensor) else None
                              for o in outs)
    if anomaly_mode._enabled:
        anomaly_mode.record_trace(node)
    return result


# ---- indexing and conversion (Tensor.__getitem__ / __setitem__ / to are not op-table rows) --

class _IndexOp:
    def __init__(self, name, args, derivatives, returns="Tensor"):
        self.name, self.args, self.derivatives, self.returns = name, args, derivatives, returns


_GETITEM = Derivatives(_IndexOp("getitem", [("Tensor", "input", None, False),
                                            ("Any", "index", None, False)],
                                {"input": "index_backward(grad, input, index)"}),
                       ["input", "index"])
_SETITEM = Derivatives(_IndexOp("setitem", [("Tensor", "input", None, False),
                                            ("Any", "index", None, False),
                                            ("Tensor", "value", None, False)],
                                {"input": "setitem_self_backward(grad, index)",
                                 "value": "grad[index]"}),
                       ["input", "index", "value"])
_GETITEM.node_name = "IndexBackward0"
_SETITEM.node_name = "IndexPutBackward0"
_SETITEM.inplace = True


_GETITEM_VIEWS = {}     # node name -> _GETITEM named so


def _getitem_node(shape, index):
    """_GETITEM under PyTorch's node name for ``t[index]``: its indexing applies, in order,
    select (an int), slice (a slice; within a tuple, one that takes a whole dim is skipped)
    and unsqueeze (None), then index (tensors, lists, bools); the last op names the node."""
    if isinstance(index, tuple):
        name, d = "AliasBackward0", 0
        for i in index:
            if i is None:
                name = "UnsqueezeBackward0"
            elif i is Ellipsis:
                d += len(shape) - sum(1 for j in index if j is not None and j is not Ellipsis)
            elif isinstance(i, slice):
                if d < len(shape) and i.indices(shape[d]) != (0, shape[d], 1):
                    name = "SliceBackward0"
                d += 1
            elif _select_index(i):
                name, d = "SelectBackward0", d + 1
            else:
                return _GETITEM
    elif isinstance(index, slice):
        name = "SliceBackward0"
    elif index is None:
        name = "UnsqueezeBackward0"
    elif index is Ellipsis:
        name = "AliasBackward0"
    elif _select_index(index):
        name = "SelectBackward0"
    else:
        return _GETITEM
    d = _GETITEM_VIEWS.get(name)
    if d is None:
        d = _GETITEM_VIEWS[name] = copy.copy(_GETITEM)
        d.node_name = name
    return d


def _select_index(i):
    """Whether index ``i`` selects (an int, or a 0-d integer tensor), as PyTorch does."""
    if isinstance(i, Tensor):
        return i.dim() == 0 and not i.dtype.is_floating_point and i.dtype is not _dtype.bool \
            and not i.dtype.is_complex
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def getitem(impl, input, index):
    """``input[index]``, recorded when it needs a gradient."""
    if grad_mode._mode.enabled and input._requires_grad:
        return record(_getitem_node(input._shape, index), lambda: impl(input, index),
                      {"input": input, "index": index})
    return impl(input, index)


def setitem(impl, input, index, value):
    """``input[index] = value``, recorded when it needs a gradient."""
    if grad_mode._mode.enabled and (input._requires_grad or (
            isinstance(value, Tensor) and value._requires_grad)):
        record(_SETITEM, lambda: impl(input, index, value),
               {"input": input, "index": index, "value": value})
        return
    impl(input, index, value)


_TO = Derivatives(_IndexOp("to", [("Tensor", "input", None, False)],
                           {"input": "grad.to(dtype=input.dtype, device=input.device)"}),
                  ["input"])
_TO.node_name = "ToCopyBackward0"


def to(impl, input, args, kwargs):
    """``input.to(...)`` (dtype and/or device), recorded when it needs a gradient and
    converts (a no-op conversion returns input itself)."""
    if not grad_mode._mode.enabled:
        return impl(input, *args, **kwargs)
    with grad_mode.no_grad():
        out = impl(input, *args, **kwargs)
    if out is input:
        return out
    return record(_TO, lambda: out, {"input": input})
