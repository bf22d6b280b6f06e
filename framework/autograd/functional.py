"""``autograd.functional``: vjp, jvp, jacobian, hessian, hvp and vhp, built on
``autograd.grad`` (jvp with the double-vjp trick)."""
from .._tensor import Tensor


def _tuple(x):
    return (x,), False if isinstance(x, Tensor) else (tuple(x), True)


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,), False
    return tuple(x), True


def _prep(inputs, create_graph):
    return tuple(x.detach().requires_grad_(True) if not create_graph or not x._requires_grad
                 else x.view_as(x) for x in inputs)


def _grads(outputs, inputs, grad_outputs, create_graph, strict=False):
    from . import grad
    outs = [o for o in outputs]
    pairs = [(o, g) for o, g in zip(outs, grad_outputs) if o._requires_grad]
    if not pairs:
        return tuple(None for _ in inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], create_graph=True,
                retain_graph=True, allow_unused=True)


def _fill_none(grads, like):
    from .._ops import creation
    return tuple(g if g is not None else creation.zeros_like(x) for g, x in zip(grads, like))


def _finish(x, create_graph):
    return x if create_graph else x.detach()


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at ``inputs``."""
    from .grad_mode import enable_grad
    ins, ins_tuple = _as_tuple(inputs)
    with enable_grad():
        ins = _prep(ins, create_graph)
        out = func(*ins)
        outs, outs_tuple = _as_tuple(out)
        if v is None:
            if any(o.numel() != 1 for o in outs):
                raise RuntimeError("The vector v can only be None if the user-provided "
                                   "function returns a single Tensor with a single element.")
            from .._ops import creation
            vs = tuple(creation.ones_like(o) for o in outs)
        else:
            vs, _ = _as_tuple(v)
        g = _fill_none(_grads(outs, ins, vs, create_graph), ins)
    out_r = tuple(_finish(o, create_graph) for o in outs)
    g = tuple(_finish(x, create_graph) for x in g)
    return (out_r if outs_tuple else out_r[0]), (g if ins_tuple else g[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by differentiating a vjp."""
    from .grad_mode import enable_grad
    from .._ops import creation
    from . import grad
    ins, ins_tuple = _as_tuple(inputs)
    with enable_grad():
        ins = _prep(ins, create_graph)
        outs, outs_tuple = _as_tuple(func(*ins))
        if v is None:
            if any(x.numel() != 1 for x in ins):
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            vs = tuple(creation.ones_like(x) for x in ins)
        else:
            vs, _ = _as_tuple(v)
        us = tuple(creation.zeros_like(o).requires_grad_(True) for o in outs)
        g = _fill_none(_grads(outs, ins, us, True), ins)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi._requires_grad]
        if pairs:
            jv = grad([p for p, _ in pairs], us, [q for _, q in pairs], create_graph=create_graph,
                      allow_unused=True)
        else:
            jv = (None,) * len(us)
        jv = _fill_none(jv, outs)
    out_r = tuple(_finish(o, create_graph) for o in outs)
    jv = tuple(_finish(x, create_graph) for x in jv)
    return (out_r if outs_tuple else out_r[0]), (jv if outs_tuple else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: shape out.shape + in.shape (tuples of them for
    several outputs/inputs)."""
    from .grad_mode import enable_grad
    from .._ops import creation
    ins, ins_tuple = _as_tuple(inputs)
    with enable_grad():
        ins = _prep(ins, create_graph)
        outs, outs_tuple = _as_tuple(func(*ins))
        table = []
        for o in outs:
            rows = [[] for _ in ins]
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                if o._requires_grad:
                    gs = _fill_none(_grads([flat[k]], ins, [creation.ones_like(flat[k])],
                                           create_graph), ins)
                else:
                    gs = tuple(creation.zeros_like(x) for x in ins)
                for j, g in enumerate(gs):
                    rows[j].append(g)
            per_in = []
            for j, x in enumerate(ins):
                if rows[j]:
                    from .. import stack
                    jac = stack(rows[j]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    jac = creation.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype,
                                         device=x.device)
                per_in.append(_finish(jac, create_graph))
            table.append(tuple(per_in) if ins_tuple else per_in[0])
    return tuple(table) if outs_tuple else table[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function at ``inputs``."""
    ins, ins_tuple = _as_tuple(inputs)

    def grad_fn(*xs):
        from . import grad
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "containing a single element")
        gs = grad([out], xs, create_graph=True, allow_unused=True)
        return _fill_none(gs, xs) if ins_tuple else _fill_none(gs, xs)[0]

    return jacobian(grad_fn, ins if ins_tuple else ins[0], create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    from .grad_mode import enable_grad
    from . import grad
    ins, ins_tuple = _as_tuple(inputs)
    with enable_grad():
        ins = _prep(ins, create_graph)
        out = func(*ins)
        gs = _fill_none(grad([out], ins, create_graph=True, allow_unused=True), ins)
        vs, _ = _as_tuple(v)
        pairs = [(g, vi, x) for g, vi, x in zip(gs, vs, ins)]
        hv = grad([g for g, _, _ in pairs if g._requires_grad],
                  ins, [vi for g, vi, _ in pairs if g._requires_grad],
                  create_graph=create_graph, allow_unused=True) \
            if any(g._requires_grad for g, _, _ in pairs) else (None,) * len(ins)
        hv = _fill_none(hv, ins)
    hv = tuple(_finish(x, create_graph) for x in hv)
    return _finish(out, create_graph), (hv if ins_tuple else hv[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) (equal to vhp for the symmetric Hessians of smooth functions)."""
    return vhp(func, inputs, v, create_graph, strict)
