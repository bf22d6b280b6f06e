"""Forward-mode AD (PyTorch's ``torch.autograd.forward_ad``): ``make_dual`` pairs a tensor
with a tangent inside a ``dual_level``; ``unpack_dual`` gives back a result's primal and
its tangent (the Jacobian-vector product J t).

There are no per-op forward (JVP) formulas here: this is forward mode computed as
reverse-over-reverse. ``make_dual`` returns a differentiable alias of the primal that the
reverse-mode graph records; ``unpack_dual(y)`` obtains y's tangent with the double-vjp trick
shared with ``framework.func.jvp`` (u = grad(y, duals, v, create_graph=True) for a dummy
cotangent v, then tangent = grad(u, v, tangents)). Each first ``unpack_dual`` of a tensor
thus costs about two backward passes over y's history; the result is cached on the tensor
(until it is modified in place or the level exits), so asking again is cheap. Computations
run under ``no_grad`` record no graph, so their results get no tangent (PyTorch's forward
AD does not depend on grad mode).
"""
import collections
import weakref

from .._tensor import Tensor
from . import grad_mode
from .graph import reached_leaves

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """Namedtuple returned by :func:`unpack_dual` containing the
primal and tangent components of the dual tensor."""


class _Level:
    """A forward AD level: its duals (the aliases and their tangents) and the tensors whose
    tangents it has cached."""

    def __init__(self, number):
        self.number = number
        self.duals = []      # (dual, tangent)
        self.cached = []     # weakrefs of tensors holding a cached tangent of this level


_current_level = -1
_level = None


def enter_dual_level():
    """Enters a new forward grad level and makes it the default one; returns its number."""
    global _current_level, _level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level += 1
    _level = _Level(_current_level)
    return _current_level


def exit_dual_level(*, level=None):
    """Exits the forward grad level (only the latest one may be exited); its duals lose
    their tangents."""
    global _current_level, _level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if _level is None:
        raise RuntimeError("Dual level must be a positive number.")
    lvl = _level
    _level = None
    _current_level = level - 1
    for dual, _ in lvl.duals:
        dual.__dict__.pop("_fwd", None)
        if dual.__dict__.pop("_fwd_standin", False):
            dual._requires_grad = False     # back to the plain alias of the primal
    for ref in lvl.cached:
        t = ref()
        if t is not None and t.__dict__.get("_fwd", (None,))[0] is lvl:
            del t.__dict__["_fwd"]
    lvl.duals.clear()
    lvl.cached.clear()


def _level_for(level):
    """The live level object for ``level`` (None: the current one), or None."""
    if level is None:
        level = _current_level
    if _level is not None and level == _level.number:
        return _level
    return None


def make_dual(tensor, tangent, *, level=None):
    """Associates ``tensor`` with its ``tangent`` into a dual tensor for forward AD.

    The result is an alias of ``tensor``; functions of it carry the tangent forward, which
    :func:`unpack_dual` reads. ``tangent`` must have the shape of ``tensor``."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        bad = tensor if not isinstance(tensor, Tensor) else tangent
        raise TypeError(f"make_dual(): expected tensor and tangent to be Tensors, but got "
                        f"{type(bad).__name__}")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    lvl = _level_for(level)
    if lvl is None:
        raise RuntimeError("Invalid level given to _make_dual")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if tensor.device != tangent.device:
        raise RuntimeError("Trying to set a forward gradient that is on a different device "
                           f"({tangent.device}) than that of the original Tensor "
                           f"({tensor.device}), this is not supported.")
    if _tangent(tensor, lvl) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {lvl.number} is not supported.")
    with grad_mode.enable_grad():
        if tensor.requires_grad:
            # the user's graph continues through the dual
            dual = tensor.view_as(tensor)
        else:
            # a leaf of our own that shares the primal's storage; it stops requiring
            # grad when the level exits
            dual = tensor.detach().requires_grad_(True)
            dual.__dict__["_fwd_standin"] = True
    lvl.duals.append((dual, tangent))
    _cache(dual, lvl, tangent)
    return dual


def _cache(t, lvl, tangent):
    # keyed by the tensor's history and version: an in-place op on it changes either
    t.__dict__["_fwd"] = (lvl, t._grad_fn, t._storage.version, tangent)
    lvl.cached.append(weakref.ref(t))


def _own(t, lvl):
    return t.__dict__.get("_fwd_standin", False) and t.__dict__.get("_fwd", (None,))[0] is lvl


def _reaches_outside(t, lvl):
    """Whether the graph of ``t`` reaches a leaf requiring grad that is not a dual of ours
    (a module's weight, say): then results keep their reverse-mode graph."""
    return any(not _own(v, lvl) for v in reached_leaves([t]))


def _tangent(t, lvl):
    """The tangent of ``t`` at level ``lvl`` (None when it depends on none of its duals)."""
    c = t.__dict__.get("_fwd")
    if c is not None and c[0] is lvl and c[1] is t._grad_fn and c[2] == t._storage.version:
        return c[3]
    if not t._requires_grad or not lvl.duals:
        return None
    from .._func.eager import double_vjp
    duals = [d for d, _ in lvl.duals]
    tangents = [v for _, v in lvl.duals]
    keep = _reaches_outside(t, lvl)
    with grad_mode.enable_grad():
        (tangent,), _ = double_vjp([t], duals, tangents, retain_graph=True,
                                   create_graph=keep)
    _cache(t, lvl, tangent)
    return tangent


def function_jvp(ctx, args, outs):
    """The outputs of a custom ``Function`` that defines ``jvp``, called inside a level: its
    ``jvp(ctx, *input_tangents)`` gives the output tangents (missing input tangents are
    zeros, as in PyTorch). Each differentiable output is then a dual of the level of its
    own, cut from the inputs' history so that the double-vjp never runs the Function's
    backward for tangents. When an input reaches a leaf outside the level (a reverse-mode
    graph the user keeps), the outputs are left as they are and get their tangents through
    ``backward``."""
    lvl = _level
    tensors = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
    if any(_reaches_outside(a, lvl) for a in tensors):
        return outs
    tangents = [_tangent(a, lvl) if isinstance(a, Tensor) and a._requires_grad else None
                for a in args]
    if all(t is None for t in tangents):
        return outs
    tangents = [a.new_zeros(a.shape) if t is None and isinstance(a, Tensor) else t
                for a, t in zip(args, tangents)]
    ctx._in_jvp = True
    try:
        with grad_mode.enable_grad():
            out_tangents = ctx._cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    if not isinstance(out_tangents, tuple):
        out_tangents = (out_tangents,)
    if len(out_tangents) != len(outs):
        raise RuntimeError(f"function {ctx.name()} returned an incorrect number of forward "
                           f"gradients (expected {len(outs)}, got {len(out_tangents)})")
    fixed = []
    for o, t in zip(outs, out_tangents):
        if isinstance(o, Tensor) and o._grad_fn is ctx:
            o = o.detach()
            if t is not None:      # else no tangent (PyTorch's undefined forward grad)
                o.requires_grad_(True)
                o.__dict__["_fwd_standin"] = True
                lvl.duals.append((o, t.detach()))
                _cache(o, lvl, t.detach())
        fixed.append(o)
    return fixed


def unpack_dual(tensor, *, level=None):
    """Unpacks a dual tensor into ``UnpackedDualTensor(primal, tangent)``: ``primal`` is a
    view of ``tensor``'s primal, ``tangent`` its forward gradient (None when ``tensor``
    does not depend on a dual of the level). The first unpack of a tensor runs about two
    backward passes over its history (see the module docstring); repeats are cached."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    lvl = _level_for(level)
    if lvl is None or not tensor._requires_grad:
        return UnpackedDualTensor(tensor.view_as(tensor), None)
    tangent = _tangent(tensor, lvl)
    if _reaches_outside(tensor, lvl):
        with grad_mode.enable_grad():
            primal = tensor.view_as(tensor)
    else:
        primal = tensor.detach()
    return UnpackedDualTensor(primal, tangent)


class dual_level(grad_mode._DecoratorContextManager):
    """Context manager (or decorator) for forward AD: enters a dual level on entry and
    exits it at the end; all forward AD computation happens inside one. Nested levels are
    not supported."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
