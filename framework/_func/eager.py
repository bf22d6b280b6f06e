"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd and hessian on the define-by-run autograd.

Each transform runs ``func`` on differentiable stand-ins of its inputs (a detached copy that
requires grad, or a ``view_as`` alias when the input already requires grad, so that graphs
reach outer transforms and ordinary autograd) inside an enabled-grad region, and
differentiates with ``autograd.grad``. A nesting depth records whether an outer transform
is running: then (or when an input requires grad) graphs are kept (``create_graph=True``) so
that transforms compose (grad(grad(f)), jacrev(jacrev(f)), vmap(grad(f))); otherwise the
results are returned detached, as torch.func's are at the outermost level. Forward mode
(jvp, jacfwd) uses the double-vjp trick: J v = d/du [vjp(u)] . v.
"""
import contextlib
import threading

from .._tensor import Tensor
from ..autograd.graph import reached_leaves
from .pytree import tree_flatten, tree_unflatten, tree_map

class _State(threading.local):
    depth = 0   # transforms of the grad family now running in this thread


_state = _State()


@contextlib.contextmanager
def _nesting():
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1


def _grad_enabled():
    from ..autograd.grad_mode import is_grad_enabled
    return is_grad_enabled()


def _enable_grad():
    from ..autograd.grad_mode import enable_grad
    return enable_grad()


def _is_standin(t):
    return t.__dict__.get("_func_standin", False) if hasattr(t, "__dict__") else False


def _standin(t):
    """A fresh leaf requiring grad, marked as a transform's own."""
    t = t.detach().requires_grad_(True)
    try:
        t._func_standin = True
    except AttributeError:
        pass
    return t


def _reaches_outside(t, own):
    """Whether the graph of ``t`` reaches a leaf that requires grad other than the stand-ins
    of this or of nested transforms (ids in ``own``, or marked ``_func_standin``): a tensor
    ``func`` closed over, say a module's weight."""
    return any(id(v) not in own and not _is_standin(v) for v in reached_leaves([t]))


class _Keeper:
    """Decides which results keep their graph. ``all``: every result (an outer transform is
    running, or an input requires grad); else ``some``: the results whose graph reaches a
    tensor requiring grad that ``func`` closed over (torch's results require grad then too).
    Nothing when grad mode was off at the call."""

    def __init__(self, inputs):
        self.enabled = _grad_enabled()
        self.all = self.enabled and (_state.depth > 0 or any(
            isinstance(t, Tensor) and t.requires_grad for t in inputs))
        self.some = self.all
        self.own = set()

    def track(self, leaves):
        self.own.update(id(t) for t in leaves if isinstance(t, Tensor))

    def check(self, outputs):
        """After ``func`` ran: whether a graph must be built (create_graph)."""
        if self.enabled and not self.all:
            self.some = any(_reaches_outside(t, self.own) for t in outputs
                            if isinstance(t, Tensor))
        return self.some

    def finish(self, t, all_now=None):
        if not isinstance(t, Tensor):
            return t
        if self.all if all_now is None else all_now:
            return t
        if self.some and _reaches_outside(t, self.own):
            return t
        return t.detach()

    def aux(self, aux):
        def one(a):
            if not isinstance(a, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
            return self.finish(a)
        return tree_map(one, aux)


def _make_diff(x):
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.requires_grad:
        return x.view_as(x)
    return _standin(x)


def _zeros_like(t):
    from .._ops import creation
    return creation.zeros_like(t)


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=False, create_graph=True):
    """autograd.grad over the outputs that require grad; zeros for unreached inputs."""
    from .. import autograd
    if grad_outputs is None:
        pairs = [(o, None) for o in outputs if o.requires_grad]
    else:
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    inputs = list(inputs)
    if not pairs or not inputs:
        return tuple(_zeros_like(x) for x in inputs)
    gos = None if grad_outputs is None else [g for _, g in pairs]
    got = autograd.grad([o for o, _ in pairs], inputs, gos, retain_graph=retain_graph,
                        create_graph=create_graph, allow_unused=True)
    return tuple(_zeros_like(x) if g is None else g for g, x in zip(got, inputs))


# ----------------------------------------------------------------------------- argnums

def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _check_argnums(argnums, num_args):
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        wrapped = tuple(_wrap_argnum(a, num_args) for a in argnums)
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return wrapped
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _slice(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replace_diff(args, argnums):
    """args with the argnums entries replaced by differentiable stand-ins."""
    args = list(args)
    for i in ((argnums,) if isinstance(argnums, int) else argnums):
        args[i] = tree_map(_make_diff, args[i])
    return tuple(args)


def _error_if_complex(name, args, is_input):
    for idx, a in enumerate(tree_flatten(args)[0]):
        if isinstance(a, Tensor) and a.dtype.is_complex:
            what = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {idx}")


def _check_tensor_outputs(flat, api):
    if (len(flat) == 1 and flat[0] is None) or len(flat) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {flat})")
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")


def _split_outputs(out, has_aux, api):
    """(flat outputs, their spec, aux) of what f returned, with PyTorch's checks: a pair
    (output, aux) with ``has_aux``, and tensors only."""
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(f"{api}: output of function f should be a tuple: "
                               "(output, aux) if has_aux is True")
        out, aux = out
    flat_out, out_spec = tree_flatten(out)
    _check_tensor_outputs(flat_out, api)
    return flat_out, out_spec, aux


# ----------------------------------------------------------------------------- grad

def grad_and_value_impl(func, argnums, has_aux, args, kwargs):
    keeper = _Keeper(tree_flatten((args, kwargs))[0])
    argnums = _check_argnums(argnums, len(args))
    with _enable_grad(), _nesting():
        args = _replace_diff(args, argnums)
        diff_args = _slice(args, argnums)
        output = func(*args, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a "
                                   "tuple: (output, aux) if has_aux is True")
            output, aux = output
        if not isinstance(output, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                               f"got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {output.dim()} dims. Maybe you wanted "
                               "to use the vjp or jacrev APIs instead?")
        flat_diff, spec = tree_flatten(diff_args)
        keeper.track(flat_diff)
        keep = keeper.check([output] + tree_flatten(aux)[0])
        grads = _autograd_grad([output], flat_diff, retain_graph=keep, create_graph=keep)
    grads = tree_unflatten([keeper.finish(g) for g in grads], spec)
    output = keeper.finish(output)
    if has_aux:
        return grads, (output, keeper.aux(aux))
    return grads, output


def _wraps(func, wrapper):
    try:
        import functools
        functools.update_wrapper(wrapper, func)
    except (AttributeError, TypeError):
        pass
    return wrapper


def grad_and_value(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        return grad_and_value_impl(func, argnums, has_aux, args, kwargs)
    return _wraps(func, wrapper)


def grad(func, argnums=0, has_aux=False):
    def wrapper(*args, **kwargs):
        g, value = grad_and_value_impl(func, argnums, has_aux, args, kwargs)
        if has_aux:
            return g, value[1]
        return g
    return _wraps(func, wrapper)


# ----------------------------------------------------------------------------- vjp

def _vjp_with_argnums(func, primals, argnums=None, has_aux=False):
    """(output, vjp_fn[, aux]); vjp_fn's result covers the primals selected by argnums (all,
    as a tuple, when argnums is None)."""
    keeper = _Keeper(tree_flatten(primals)[0])
    with _enable_grad(), _nesting():
        if argnums is None:
            primals = tree_map(_make_diff, primals)
            diff = primals
        else:
            primals = _replace_diff(primals, argnums)
            diff = _slice(primals, argnums)
        flat_out, out_spec, aux = _split_outputs(func(*primals), has_aux, "vjp(f, *primals)")
        for o in flat_out:
            if not (o.is_floating_point() or o.dtype.is_complex):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")
    flat_diff, diff_spec = tree_flatten(diff)
    keeper.track(flat_diff)
    keeper.check(flat_out + tree_flatten(aux)[0])

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = _grad_enabled()
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. "
                               f"cotangents: {ct_spec}, primal output: {out_spec}")
        ct_grad = any(isinstance(c, Tensor) and c.requires_grad for c in flat_ct)
        all_now = bool(create_graph) and (keeper.all or _state.depth > 0)
        some_now = bool(create_graph) and (all_now or keeper.some or ct_grad)
        with _enable_grad():
            res = _autograd_grad(flat_out, flat_diff, flat_ct, retain_graph=True,
                                 create_graph=some_now)
        if not all_now:
            res = [r if some_now and _reaches_outside(r, keeper.own) else r.detach()
                   for r in res]
        return tree_unflatten(list(res), diff_spec)

    out_r = tree_unflatten([keeper.finish(o) for o in flat_out], out_spec)
    if has_aux:
        return out_r, vjp_fn, keeper.aux(aux)
    return out_r, vjp_fn


def vjp(func, *primals, has_aux=False):
    return _vjp_with_argnums(func, primals, None, has_aux)


# ----------------------------------------------------------------------------- jvp

_JVP = "jvp(f, primals, tangents)"


def _check_list_of_tensors(flat, api, argname):
    if len(flat) == 0:
        raise RuntimeError(f"{api}: Expected {argname} to contain at least one Tensor.")
    for t in flat:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected {argname} to only contain Tensors, got "
                               f"{type(t)}")


def _jvp_with_argnums(func, primals, tangents, argnums=None, *, strict=False, has_aux=False):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    diff_args = primals if argnums is None else _slice(primals, _check_argnums(argnums,
                                                                                 len(primals)))
    flat_primals, p_spec = tree_flatten(diff_args)
    flat_tangents, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           "tangents also must be. Got primals with structure "
                           f"{p_spec} and tangents with structure {t_spec}")
    _check_list_of_tensors(flat_primals, _JVP, "primals")
    _check_list_of_tensors(flat_tangents, _JVP, "tangents")
    for p, t in zip(flat_primals, flat_tangents):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is "
                               f"of size {list(p.shape)} while the given forward gradient is of "
                               f"size {list(t.shape)}.")
    everything = tree_flatten(primals)[0] + flat_tangents
    keeper = _Keeper(everything)
    with _enable_grad(), _nesting():
        if argnums is None:
            primals = tree_map(_make_diff, primals)
            diff = primals
        else:
            argnums = _check_argnums(argnums, len(primals))
            primals = _replace_diff(primals, argnums)
            diff = _slice(primals, argnums)
        flat_out, out_spec, aux = _split_outputs(func(*primals), has_aux, _JVP)
        flat_diff = tree_flatten(diff)[0]
        keeper.track(flat_diff)
        keep = keeper.check(flat_out + tree_flatten(aux)[0])
        tangents_out, us = double_vjp(flat_out, flat_diff, flat_tangents, retain_graph=keep,
                                      create_graph=keep)
        if strict and any(t is None for t in tangents_out):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                               "independent of the inputs. This is not allowed with "
                               "strict=True.")
        tangents_out = [_zeros_like(o) if t is None else t
                        for t, o in zip(tangents_out, flat_out)]
    keeper.track(u for u in us if u is not None)
    p_out = tree_unflatten([keeper.finish(o) for o in flat_out], out_spec)
    t_out = tree_unflatten([keeper.finish(t) for t in tangents_out], out_spec)
    if has_aux:
        return p_out, t_out, keeper.aux(aux)
    return p_out, t_out


def double_vjp(outputs, inputs, tangents, retain_graph=False, create_graph=False):
    """The tangents J v of ``outputs`` for ``tangents`` of ``inputs``, by the double-vjp
    trick: g(u) = J^T u is linear in u, so d<g(u), v>/du = J v (two backward passes, no
    forward formulas). Returns (per output its tangent, None where it does not depend on
    the inputs; the dummy cotangents u, None for outputs that do not require grad).
    ``retain_graph``/``create_graph`` apply to the second pass."""
    us = [_standin(_zeros_like(o)) if o.requires_grad else None for o in outputs]
    live = [(o, u) for o, u in zip(outputs, us) if u is not None]
    pairs = []
    if live:
        g = _autograd_grad([o for o, _ in live], inputs, [u for _, u in live],
                           retain_graph=True, create_graph=True)
        pairs = [(gi, vi) for gi, vi in zip(g, tangents) if gi.requires_grad]
    if not pairs:
        return [None] * len(outputs), us
    from .. import autograd
    jv = iter(autograd.grad([p for p, _ in pairs], [u for _, u in live],
                            [v for _, v in pairs], retain_graph=retain_graph,
                            create_graph=create_graph, allow_unused=True))
    return [None if u is None else next(jv) for u in us], us


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    return _jvp_with_argnums(func, primals, tangents, None, strict=strict, has_aux=has_aux)


# ----------------------------------------------------------------------------- jacobians

def _jacobian(name, func, argnums, has_aux, chunk_size, args):
    # error texts as torch's: jacrev's come from vjp, jacfwd's from jvp
    api = "vjp(f, *primals)" if name == "jacrev" else _JVP
    """The Jacobian of func w.r.t. args[argnums], one reverse pass per output element: an
    output-structured tree whose leaves are (argnums-structured trees of) tensors shaped
    out.shape + in.shape."""
    from .. import stack
    _error_if_complex(name, args, is_input=True)
    argnums = _check_argnums(argnums, len(args))
    keeper = _Keeper(tree_flatten(args)[0])
    with _enable_grad(), _nesting():
        args = _replace_diff(args, argnums)
        diff = _slice(args, argnums)
        flat_out, out_spec, aux = _split_outputs(func(*args), has_aux, api)
        _error_if_complex(name, flat_out, is_input=False)
        for o in flat_out:
            if name == "jacrev" and not (o.is_floating_point() or o.dtype.is_complex):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")
        flat_diff, diff_spec = tree_flatten(diff)
        keeper.track(flat_diff)
        keep = keeper.check(flat_out + tree_flatten(aux)[0])
        per_out = []
        for o in flat_out:
            rows = [[] for _ in flat_diff]
            flat = o.reshape(-1)
            for k in range(flat.numel() if o.is_floating_point() else 0):
                gs = _autograd_grad([flat[k]], flat_diff, retain_graph=True, create_graph=keep)
                for j, g in enumerate(gs):
                    rows[j].append(g)
            jacs = []
            for j, x in enumerate(flat_diff):
                shape = tuple(o.shape) + tuple(x.shape)
                if rows[j]:
                    jac = stack(rows[j]).reshape(shape)
                else:
                    from .._ops import creation
                    dt = x.dtype if o.is_floating_point() else o.dtype
                    jac = creation.zeros(shape, dtype=dt, device=x.device)
                jacs.append(keeper.finish(jac))
            per_out.append(tree_unflatten(jacs, diff_spec))
    result = tree_unflatten(per_out, out_spec)
    if has_aux:
        return result, keeper.aux(aux)
    return result


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args):
        return _jacobian("jacrev", func, argnums, has_aux, chunk_size, args)
    return _wraps(func, wrapper)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    def wrapper(*args):
        if randomness not in ("error", "different", "same"):
            raise RuntimeError("Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        from .vmap import _level   # torch runs func under vmap: random ops obey randomness
        with _level(randomness):
            return _jacobian("jacfwd", func, argnums, has_aux, None, args)
    return _wraps(func, wrapper)


def hessian(func, argnums=0):
    return jacfwd(jacrev(func, argnums), argnums)
