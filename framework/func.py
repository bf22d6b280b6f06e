"""``framework.func``: PyTorch's ``torch.func`` function transforms.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` are built on
the define-by-run autograd (``autograd.grad`` with ``create_graph`` so that they nest; forward
mode by the double-vjp trick); ``vmap`` runs ``func`` once per slice of the mapped dimension
and stacks the results (the framework has no batching rules: correct, not fast). The
implementation lives in framework/_func/.
"""
from collections.abc import Sequence

from .nn.utils.stateless import _functional_call
from ._func.eager import (grad as _grad, grad_and_value as _grad_and_value, vjp as _vjp,
                          jvp as _jvp, jacrev as _jacrev, jacfwd as _jacfwd,
                          hessian as _hessian)
from ._func.vmap import vmap as _vmap
from ._func.extra_transforms import (debug_unwrap, functionalize, linearize,  # noqa: F401
                                     replace_all_batch_norm_modules_)
from ._func.rearrange import rearrange  # noqa: F401

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap", "stack_module_state", "functionalize", "linearize",
           "debug_unwrap", "replace_all_batch_norm_modules_", "rearrange"]
def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    r"""Call ``module`` with its parameters and buffers replaced by the tensors of
    ``parameter_and_buffer_dicts`` (a dict, or a sequence of dicts with distinct keys,
    keyed by dotted names as in ``named_parameters``); the module is restored afterwards.

    ``tie_weights``: a value given for one of several tied names is used for all of them.
    ``strict``: every parameter and buffer must be given, and nothing else.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def grad(func, argnums=0, has_aux=False):
    r"""The gradient of the scalar-valued ``func`` with respect to its positional argument(s)
    ``argnums`` (an int, or a tuple of ints: then a tuple of gradients). Arguments may be
    pytrees (tuples, lists, dicts) of tensors; the gradient has the argument's structure.
    ``has_aux``: ``func`` returns ``(output, aux)``; the result is ``(grad, aux)``.
    Nests with itself and the other transforms (``grad(grad(f))``, ``vmap(grad(f))``).
    """
    return _grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    r"""Like :func:`grad`, returning ``(grad, value)`` (``(grad, (value, aux))`` with
    ``has_aux``)."""
    return _grad_and_value(func, argnums, has_aux)


def vjp(func, *primals, has_aux=False):
    r"""``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives the vector-Jacobian products
    with respect to every primal (a tuple), for cotangents shaped like the outputs. With
    ``has_aux``: ``(output, vjp_fn, aux)``."""
    return _vjp(func, *primals, has_aux=has_aux)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    r"""``(func(*primals), J @ tangents)``: the Jacobian-vector product (computed with the
    double-vjp trick, as the framework's autograd is reverse mode). ``primals`` is a tuple;
    ``tangents`` has its structure."""
    return _jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    r"""The Jacobian of ``func`` with respect to the argument(s) ``argnums`` by reverse mode:
    for each output (same structure as ``func``'s output) a tensor shaped
    ``output.shape + input.shape`` (a tuple of them for a tuple ``argnums``). ``chunk_size``
    is accepted (rows are computed one at a time anyway)."""
    return _jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    r"""The Jacobian of ``func`` with respect to ``argnums``, as :func:`jacrev` (same values and
    structure; computed with reverse-mode products here)."""
    return _jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func, argnums=0):
    r"""The Hessian of the scalar ``func`` with respect to ``argnums``:
    ``jacfwd(jacrev(func, argnums), argnums)``."""
    return _hessian(func, argnums)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    r"""Vectorizing map: ``vmap(func)(x)`` maps ``func`` over dimension ``in_dims`` of its inputs
    (an int, None for unmapped, or a tuple/nested structure matching the positional
    arguments; keyword arguments are not mapped) and stacks each output along ``out_dims``.

    This framework has no batching rules: ``func`` is called once per index of the mapped
    dimension on ``select``-ed slices and the outputs are stacked. Results equal PyTorch's;
    the cost is ``batch_size`` calls (correct, not fast). ``randomness``: "different" (each
    slice draws its own numbers), "same" (every slice sees the same random state), "error"
    (random ops raise, where framework.random has the draw hook; otherwise as "different").
    ``chunk_size`` is accepted and checked, and does not change anything.
    """
    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def _stack_leaf(tensors, name):
    from . import stack
    all_rg = all(t.requires_grad for t in tensors)
    if not all_rg and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    if all_rg:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models):
    r"""``(params, buffers)``: dicts (by ``named_parameters``/``named_buffers`` name) of the
    models' tensors stacked along a new dimension 0, for ensembling with ``vmap`` and
    ``functional_call``. Stacked parameters are new leaves that require grad when the
    originals do."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    typ = type(models[0])
    if not all(type(m) is typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stack_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stack_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
