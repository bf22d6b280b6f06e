"""NumPy's names for ``dim`` and ``keepdim``: PyTorch's bound functions and Tensor methods
take ``axis=`` and ``keepdims=`` too (``pi.log_prob(act).sum(axis=-1)``, common in RL code).
Its Python-level functions (``F.softmax``) do not, so only ops of the ``torch`` namespace do.

The public function takes the alias as one more keyword-only parameter of the generated
wrapper (the autograd wrapper where the op has one, so no extra call); ``inspect.signature``
still shows the schema's parameters, through ``__wrapped__``."""
import inspect

_ALIAS = {"dim": "axis", "keepdim": "keepdims"}


class _Missing:
    def __repr__(self):
        return "<missing>"


NA = _Missing()


def aliases(op, sig):
    """[(parameter, alias, required)] for the parameters of ``sig`` that also take NumPy's
    name; empty outside the torch namespace or for a signature with ``*args``/``**kwargs``."""
    if op.namespace:
        return []
    params = list(sig.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return []
    out = []
    for i, p in enumerate(params):
        alias = _ALIAS.get(p.name)
        if alias is None or alias in sig.parameters:
            continue
        out.append((p.name, alias, p.default is p.empty))
    return out


def placeholders(sig, found):
    """The parameters whose default becomes the placeholder ``_NA``: a required ``dim``
    (``cumsum(x, axis=0)`` leaves it unnamed) and the required ones after it
    (``gather(x, axis=1, index=i)``)."""
    required = [name for name, _, req in found if req]
    if not required:
        return []
    params = list(sig.parameters.values())
    first = [p.name for p in params].index(required[0])
    return [p.name for p in params[first:]
            if p.default is p.empty and p.kind is not p.KEYWORD_ONLY]


def prologue(op_name, found, missing=()):
    """Source lines (indented for a function body) that move ``axis``/``keepdims`` into
    ``dim``/``keepdim``, with PyTorch's errors for both given and for neither given
    (``missing``: the other placeholders, which must have been given)."""
    lines = []
    aliased = {name for name, _, _ in found}
    for name in missing:
        if name not in aliased:
            lines += [f"    if {name} is _NA:",
                      f"        raise TypeError('{op_name}() missing 1 required positional "
                      f"arguments: \"{name}\"')"]
    for name, alias, required in found:
        default = "_NA" if required else f"_d_{name}"
        lines += [f"    if {alias} is not _NA:",
                  f"        if {name} is not {default}:",
                  f"            raise TypeError(\"{op_name}() got an unexpected keyword argument "
                  f"'{alias}'\")",
                  f"        {name} = {alias}"]
        if required:
            lines += [f"    elif {name} is _NA:",
                      f"        raise TypeError('{op_name}() missing 1 required positional "
                      f"arguments: \"{name}\"')"]
    return "".join(line + "\n" for line in lines)


def wrap(op, fn):
    """``fn`` taking NumPy's names too, or ``fn`` itself when it has none to take."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    found = aliases(op, sig)
    if not found:
        return fn
    required = placeholders(sig, found)
    params, call, g = [], [], {"_impl": fn, "_NA": NA}
    star = False
    for p in sig.parameters.values():
        n = p.name
        if p.default is not p.empty:
            g[f"_d_{n}"] = p.default
        dflt = "=_NA" if n in required else (f"=_d_{n}" if p.default is not p.empty else "")
        if p.kind is p.KEYWORD_ONLY:
            if not star:
                params.append("*")
                star = True
            call.append(f"{n}={n}")
        else:
            call.append(n)
        params.append(f"{n}{dflt}")
    if not star:
        params.append("*")
    params += [f"{alias}=_NA" for _, alias, _ in found]
    name = getattr(fn, "__name__", op.name)
    src = (f"def {name}({', '.join(params)}):\n"
           f"{prologue(op.name, found, required)}"
           f"    return _impl({', '.join(call)})\n")
    exec(compile(src, f"<numpy names of {op.name}>", "exec"), g)
    out = g[name]
    out.__doc__, out.__qualname__ = fn.__doc__, getattr(fn, "__qualname__", name)
    out.__module__, out.__wrapped__ = getattr(fn, "__module__", None), fn
    out._numpy_names = True
    return out
