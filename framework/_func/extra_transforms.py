"""``functionalize``, ``linearize``, ``debug_unwrap`` and ``replace_all_batch_norm_modules_``
of torch.func. Transforms here run eagerly on plain tensors, so functionalize has no
program to rewrite: it calls ``func``, and mutations of the inputs are visible to the
caller afterwards, as torch's copy-back of input mutations makes them."""
import functools

from .pytree import tree_flatten
from .eager import jvp

_REMOVE_ERROR = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
    "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
    "removed from the program, and replaced with their out-of-place equivalents.\n     "
    "remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")


def functionalize(func, *, remove="mutations"):
    """A function computing what ``func`` computes with mutations removed from the program;
    eagerly that is ``func`` itself (input mutations stay visible to the caller)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_REMOVE_ERROR.format(remove=remove))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped


def _check_tangents(flat_primals, primals_spec, tangents):
    flat_t, t_spec = tree_flatten(tangents)
    if t_spec != primals_spec:
        raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the "
                           f"primals {primals_spec}")
    for i, (p, t) in enumerate(zip(flat_primals, flat_t)):
        if t.shape != p.shape:
            raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree doesn't "
                               f"match the shape {p.shape} of the corresponding primal.")
        if t.device != p.device:
            raise RuntimeError(f"tangent:{i} with device {t.device} in flattened pytree "
                               f"doesn't match the device {p.device} of the corresponding "
                               "primal.")
        if t.dtype != p.dtype:
            raise RuntimeError(f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't "
                               f"match the dtype {p.dtype} of the corresponding primal.")


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product of
    ``func`` at ``primals`` (tangents shaped like the primals)."""
    output = func(*primals)
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        _check_tangents(flat_primals, primals_spec, tangents)
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrapper; tensors here are never wrapped (vmap calls
    ``func`` on plain slices), so this is ``tensor``."""
    return tensor


def replace_all_batch_norm_modules_(root):
    """In place sets ``running_mean`` and ``running_var`` to None and
    ``track_running_stats`` to False in every BatchNorm module of ``root``; returns
    ``root``."""
    from ..nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
