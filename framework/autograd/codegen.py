"""Code generated per op from its ops.yaml row: the wrapper the dispatcher installs (it
records a node when a call needs gradients), the two functions that capture a call's
edges and saved arguments, and the op's backward (its derivative formulas inlined).
Straight-line code over fast locals costs far less per call than interpreting the row
each time; everything here runs once per op, at import or on first use."""
import ast
import inspect

from .._tensor import Tensor
from .._ops import numpy_names as _numpy
from . import grad_mode
from .graph import Packed, _hooks, grad_accumulator, modified_error, view_fn
from .record import (_PLAIN, TensorMeta, _attach, _fit, _list_input, _save, _unpack,
                     _unpack_results, Derivatives, namespace, record)


def _any_rg(seq):
    if seq is None:
        return False
    for t in seq:
        if isinstance(t, Tensor) and t._requires_grad:
            return True
    return False


def make_wrapper(op, impl, tensor_params, inplace=False):
    """A function with ``impl``'s signature that records a node when it must (``inplace``:
    impl modifies and returns its first argument)."""
    sig = inspect.signature(impl)
    params, call, names, defaults = [], [], [], {}
    star = False
    # NumPy's axis=/keepdims= (framework/_ops/numpy_names.py), taken here at no extra call
    numpy_names = _numpy.aliases(op, sig)
    required = _numpy.placeholders(sig, numpy_names)
    for p in sig.parameters.values():
        n = p.name
        names.append(n)
        if p.default is not p.empty:
            defaults[f"_d_{n}"] = p.default
        dflt = "=_NA" if n in required else (f"=_d_{n}" if p.default is not p.empty else "")
        if p.kind is p.VAR_POSITIONAL:
            params.append(f"*{n}")
            call.append(f"*{n}")
            star = True
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                params.append("*")
                star = True
            params.append(f"{n}{dflt}")
            call.append(f"{n}={n}")
        elif p.kind is p.VAR_KEYWORD:
            params.append(f"**{n}")
            call.append(f"**{n}")
        else:
            params.append(f"{n}{dflt}")
            call.append(n)
    if numpy_names:
        params += ([] if star else ["*"]) + [f"{a}=_NA" for _, a, _ in numpy_names]
    # the schema's names for the parameters: an in-place method may call its first one
    # ``self`` where the schema says ``input`` (transpose_, tril_, ...)
    first = op.args[0][1]
    schema = {names[0]: first} if names and names[0] != first else {}
    d = Derivatives(op, [schema.get(n, n) for n in names])
    d.inplace = inplace
    # an argument not typed Tensor but with a formula (max's dim, which may be the other
    # tensor of max(a, b)) is differentiable when a tensor is passed there
    typed = {n for n, _ in tensor_params}
    tensor_params = list(tensor_params) + [(n, is_list) for n, is_list, _ in d.inputs
                                           if n not in typed]
    impl_name = {v: k for k, v in schema.items()}
    # with formulas declared, the inputs without one are not differentiable (view_as's
    # other: only its shape is read): their requires_grad does not make the result need one
    declared = {n for n, _, _ in d.inputs} if op.derivatives else None
    checks = []
    for n, is_list in tensor_params:
        if declared is not None and n not in declared:
            continue
        n = impl_name.get(n, n)
        if n not in names:
            continue
        checks.append(f"_any_rg({n})" if is_list else f"(isinstance({n}, _T) and {n}._requires_grad)")
    if not checks:
        return impl, d
    guard = _numpy.prologue(op.name, numpy_names, required)
    env = "{" + ", ".join(f"{schema.get(n, n)!r}: {n}" for n in names) + "}"
    # the common call (not in place, no out=) records inline: the op's generated edges and
    # saves functions, the op with grad mode off, the node; the rest goes through record()
    fast = ""
    if not inplace:
        # a no-op (contiguous() of a contiguous tensor) returns its input itself, which
        # keeps its own history: a leaf stays a leaf
        plain = [impl_name.get(n, n) for n, is_list in tensor_params if not is_list]
        plain = [n for n in plain if n in names]
        same = (f"            if {' or '.join(f'_r is {n}' for n in plain)}:\n"
                "                return _r\n") if plain else ""
        args = ", ".join(names)
        fast = (f"        if {'out is None' if 'out' in names else 'True'}:\n"
                f"            _e, _s = (_d.edges or _compile(_d))({args})\n"
                f"            _d.saves(_s, _e, {args})\n"
                "            _mode.enabled = False\n"
                "            try:\n"
                f"                _r = _impl({', '.join(call)})\n"
                "            finally:\n"
                "                _mode.enabled = True\n"
                f"{same}"
                "            return _attach(_d, _e, _s, _r)\n")
    # an in-place op on an inference tensor outside inference mode is PyTorch's error
    # (one list read until an inference tensor exists)
    if inplace:
        guard += f"    if _inf_seen[0]:\n        _inf_inplace({names[0]})\n"
    src = (f"def {impl.__name__}({', '.join(params)}):\n{guard}"
           f"    if _mode.enabled and ({' or '.join(checks)}):\n"
           f"{fast}"
           f"        return _record(_d, lambda: _impl({', '.join(call)}), {env})\n"
           f"    return _impl({', '.join(call)})\n")
    g = {"_mode": grad_mode._mode, "_T": Tensor, "_inf_seen": grad_mode._seen,
         "_inf_inplace": grad_mode.check_inplace, "_any_rg": _any_rg, "_record": record,
         "_d": d, "_impl": impl, "_compile": compile_capture, "_attach": _attach,
         "_NA": _numpy.NA, **defaults}
    exec(compile(src, f"<autograd wrapper of {op.name}>", "exec"), g)
    fn = g[impl.__name__]
    fn._numpy_names = bool(numpy_names)
    fn.__doc__ = impl.__doc__
    fn.__qualname__ = impl.__qualname__
    fn.__module__ = impl.__module__
    fn.__wrapped__ = impl
    return fn, d


def capture_source(d):
    """Source of the two functions an op records with, over its arguments (positional, in
    ``d.params`` order): ``edges(...)`` gives the node's edges (flat: child, output_nr per
    input tensor) and the start of its ``_saved`` list, (shape, dtype) per formula input;
    ``saves(_s, ...)`` appends (value, version) per saved argument (version None: nothing
    to check; a packed value under saved_tensors_hooks)."""
    args = ", ".join(d.params)
    e = [f"def edges({args}):", "    _e = []", "    _s = []"]
    for name, is_list, _ in d.inputs:
        if is_list:
            e.append(f"    _list_input({name}, _e, _s)")
            continue
        e += [f"    if isinstance({name}, _T):",
              f"        if {name}._requires_grad:",
              f"            _f = {name}._grad_fn if {name}._base is None else _view_fn({name})",
              "            if _f is None:",
              f"                _e += (_acc({name}), 0)",
              "            else:",
              f"                _e += (_f, {name}._output_nr)",
              "        else:",
              "            _e += (None, 0)",
              f"        _s += ({name}._shape, {name}.dtype)",
              "    else:",
              "        _e += (None, 0)",
              "        _s += (None, None)"]
    e.append("    return _e, _s")
    v = [f"def saves(_s, _e, {args}):"]
    for k in d.save:
        tensor = (f"(_TensorMeta({k}), None)" if k in d.meta_only else
                  f"(_Packed({k}, _hooks.stack[-1]), None) if _hooks.stack else "
                  f"({k}, {k}._storage.version)")
        # as PyTorch, an argument is saved only when an input whose formula reads it needs
        # a gradient (a * b with only a requiring grad saves b alone)
        users = [j for j, u in enumerate(d.uses) if any(name == k for name, _ in u)]
        if d.simple and 0 < len(users) < len(d.inputs):
            need = " or ".join(f"_e[{2 * j}] is not None" for j in users)
            v += [f"    if not ({need}):", "        _s += (None, None)",
                  f"    elif {k} is None or {k}.__class__ in _PLAIN:"]
        else:
            v += [f"    if {k} is None or {k}.__class__ in _PLAIN:"]
        v += [f"        _s += ({k}, None)",
              f"    elif isinstance({k}, _T):",
              "        if _inf_seen[0]:",
              f"            _inf_saved({k})",
              f"        _s += {tensor}",
              "    else:",
              f"        _s += (_save({k}), None)"]
    v.append("    return _s")
    return "\n".join(e + v) + "\n"


def compile_capture(d):
    g = {"_T": Tensor, "_view_fn": view_fn, "_acc": grad_accumulator, "_list_input": _list_input,
         "_TensorMeta": TensorMeta, "_Packed": Packed, "_hooks": _hooks, "_save": _save,
         "_PLAIN": _PLAIN, "_inf_seen": grad_mode._seen,
         "_inf_saved": grad_mode.check_saved}
    exec(compile(capture_source(d), f"<recording of {d.op_name}>", "exec"), g)
    d.edges, d.saves = g["edges"], g["saves"]
    return d.edges


def compile_backward(d):
    """Generates this op's backward as one Python function: the formulas inlined as
    expressions over fast locals, run only for inputs with an edge, each reading (and
    version-checking) just the saved arguments it names, and fitting its value to the
    input's shape and dtype. ``fn(node, grads)`` returns a gradient (or None) per edge."""
    lines = ["def backward(_node, grads):",
             "    _saved = _node._saved",
             "    _nxt = _node._next",
             "    grad = grads[0]",
             "    _outs = []"]
    if d.save_result:
        lines += ["    results = _unpack_results(_node)", "    result = results[0]"]
    formulas = [f for _, _, f in d.inputs]
    if any("grad_input_mask" in f for f in formulas):
        if not d.simple:
            raise ValueError(f"ops.yaml: {d.op_name}: grad_input_mask with a list input")
        mask = ", ".join(f"_nxt[{2 * j}] is not None" for j in range(len(d.inputs)))
        lines.append(f"    grad_input_mask = ({mask},)")
    shared = _shared_calls(formulas)
    lines += [f"    {local} = None" for local in sorted(set(shared.values()))]
    edge = "0"          # the index of the input's first edge: a literal until a list
    for j, ((name, is_list, formula), uses) in enumerate(zip(d.inputs, d.uses)):
        loads = []
        for k, p in sorted(uses, key=lambda kp: kp[1]):
            loads += [f"{k} = _saved[{p}]",
                      f"_v = _saved[{p + 1}]",
                      "if _v is not None:",
                      f"    if {k}._storage.version != _v:",
                      f"        _modified({k}, _v)",
                      f"elif {k}.__class__ is _Packed:",
                      f"    {k} = {k}.unpack()",
                      f"elif {k}.__class__ is list or {k}.__class__ is tuple:",
                      f"    {k} = _unpack({k}, _node)"]
        if not is_list:
            lines += [f"    if _nxt[2 * ({edge})] is not None:"]
            lines += ["        " + ln for ln in loads]
            if formula in shared:   # one call gives several inputs' gradients
                call, index = _subscript(formula)
                local = shared[formula]
                lines += [f"        if {local} is None:",
                          f"            {local} = ({call})",
                          f"        _g = {local}[{index}]"]
            else:
                lines += [f"        _g = ({formula})"]
            lines += [f"        if _g is not None and (_g._shape != _saved[{2 * j}] or "
                      f"_g.dtype is not _saved[{2 * j + 1}]):",
                      f"            _g = _fit(_g, _saved[{2 * j}], _saved[{2 * j + 1}])",
                      "        _outs.append(_g)",
                      "    else:",
                      "        _outs.append(None)"]
            edge = f"{edge} + 1" if not edge.isdigit() else str(int(edge) + 1)
        else:
            # (builtins by other names: the formulas' globals are framework's, whose
            # range/any/... are ops)
            lines += [f"    _metas = _saved[{2 * j}]",
                      f"    _pos = {edge}",
                      "    _live = [_nxt[2 * (_pos + _k)] is not None "
                      "for _k in _range(_len(_metas))]",
                      "    if _any(_live):"]
            lines += ["        " + ln for ln in loads]
            lines += [f"        for _gi, _m, _l in _zip(_list({formula}), _metas, _live):",
                      "            _outs.append(_fit(_gi, *_m) if _l and _m is not None "
                      "else None)",
                      "    else:",
                      "        _outs.extend([None] * _len(_metas))",
                      "    _end = _pos + _len(_metas)"]
            edge = "_end"
    lines.append("    return _outs")
    g = dict(namespace())
    g.update(_fit=_fit, _Packed=Packed, _modified=modified_error, _unpack=_unpack,
             _unpack_results=_unpack_results, _range=range, _len=len, _any=any,
             _zip=zip, _list=list)
    exec(compile("\n".join(lines) + "\n", f"<backward of {d.op_name}>", "exec"), g)
    d.backward = g["backward"]
    return d.backward


def _subscript(formula):
    """(call text, index) of a formula ``call[index]`` with a literal int index, else None."""
    node = ast.parse(formula.strip(), mode="eval").body
    if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int):
        return ast.get_source_segment(formula.strip(), node.value), node.slice.value
    return None


def _shared_calls(formulas):
    """{formula: local name} for formulas that index one call another formula indexes too
    (``native_layer_norm_backward(..., grad_input_mask)[0]``, ``[1]``, ``[2]``): the
    backward makes that call once, for whichever of those inputs needs a gradient first,
    as PyTorch's derivatives.yaml computes a joint formula once."""
    calls = {}
    for f in formulas:
        sub = _subscript(f)
        if sub is not None:
            calls.setdefault(sub[0], []).append(f)
    shared = {}
    for i, fs in enumerate(fs for fs in calls.values() if len(fs) > 1):
        for f in fs:
            shared[f] = f"_call{i}"
    return shared
