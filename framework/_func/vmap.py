"""vmap by running ``func`` once per index of the mapped dimension.

The framework has no batching rules, so ``vmap(func)(x)`` calls ``func`` on ``x.select(in_dim,
i)`` for every ``i`` and stacks each output along its ``out_dim``: the results equal torch's,
but the cost is one call of ``func`` per slice (correct, not fast).
"""
import contextlib
import functools
import threading

from .._tensor import Tensor, _VMAP_SLICES as _SLICES
from .pytree import tree_flatten, tree_unflatten, broadcast_to_and_flatten

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap")

BATCH_NORM_ERROR = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on "
    "how to patch your module to work with vmap")


class _State(threading.local):
    def __init__(self):
        self.levels = []   # the randomness modes of this thread's running vmaps, outermost first


_state = _State()


def _random_hook():
    """Called by framework.random before every random draw (once framework.random has the
    ``_draw_hook``): raises inside a vmap with randomness="error" (at any level)."""
    if "error" in _state.levels:
        raise RuntimeError(RANDOM_ERROR)


@contextlib.contextmanager
def _level(randomness):
    from .. import random as _random
    if getattr(_random, "_draw_hook", _random_hook) is None:
        _random._draw_hook = _random_hook   # installed once; a no-op outside vmap
    _state.levels.append(randomness)
    try:
        yield
    finally:
        _state.levels.pop()


def check_running_stats(running_mean, running_var):
    """Called by batch and instance norm when they would update running statistics: inside
    vmap the input is batched, and PyTorch refuses running statistics that are not (here:
    that are not slices func was given), rather than update them once per slice."""
    if not _state.levels:
        return
    for t in (running_mean, running_var):
        if t is not None and id(t) not in _SLICES:
            raise RuntimeError(BATCH_NORM_ERROR)


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _check_randomness_arg(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for d in tree_flatten(out_dims)[0] if out_dims is not None else []:
        if not (d is None or isinstance(d, int)):
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` "
                             "must be an int, None or a python collection of ints representing "
                             "where in the outputs the vmapped dimension should appear.")


def _process_inputs(in_dims, args, func):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_to_and_flatten(in_dims, spec)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(arg)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        if d is not None and (d < -arg.dim() or d >= arg.dim()):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for some input, but that input is a Tensor of dimensionality "
                             f"{arg.dim()} so expected in_dim to satisfy -{arg.dim()} <= "
                             f"in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_dims[i] = d % arg.dim()
    sizes = [arg.shape[d] for d, arg in zip(flat_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _rng_snapshot():
    from .. import random as _random
    return {d: (g._seed, g._offset) for d, g in _random._defaults.items()}


def _rng_restore(saved):
    from .. import random as _random
    for d, (s, o) in saved.items():
        g = _random._defaults.get(d)
        if g is not None:
            g._seed, g._offset = s, o


def _flat_out_dims(output, out_spec, out_dims, func):
    def incompatible():
        raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims})(<inputs>): "
                         "out_dims is not compatible with the structure of `outputs`. out_dims "
                         f"has structure {tree_flatten(out_dims)[1]} but outputs has structure "
                         f"{out_spec}.")
    if isinstance(output, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        incompatible()
    flat = broadcast_to_and_flatten(out_dims, out_spec)
    if flat is None:
        incompatible()
    return flat


def _varies(first, parts):
    """Whether a tensor output differs between slices (torch: it is batched)."""
    from .. import equal
    for p in parts[1:]:
        if p is first:
            continue
        if not isinstance(p, Tensor) or p.shape != first.shape or p.dtype != first.dtype:
            return True
        if not equal(p, first):
            return True
    return False


def vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    from .. import stack
    _check_out_dims(out_dims, func)
    batch, flat_dims, flat_args, spec = _process_inputs(in_dims, args, func)
    name = _get_name(func)

    def call(i):
        sliced = [a if d is None else a.select(d, i) for a, d in zip(flat_args, flat_dims)]
        marked = [t for t, d in zip(sliced, flat_dims) if d is not None]
        for t in marked:
            _SLICES[id(t)] = t
        try:
            return func(*tree_unflatten(sliced, spec), **kwargs)
        finally:
            for t in marked:
                _SLICES.pop(id(t), None)

    outputs = []
    with _level(randomness):
        if batch == 0:   # one call on zero-filled slices gives the outputs' shapes
            def call(i):  # noqa: F811
                sliced = [a if d is None else a.new_zeros(a.shape[:d] + a.shape[d + 1:])
                          for a, d in zip(flat_args, flat_dims)]
                return func(*tree_unflatten(sliced, spec), **kwargs)
            outputs.append(call(0))
        elif randomness == "same":
            saved = _rng_snapshot()
            for i in range(batch):
                if i:
                    after_first = _rng_snapshot()
                    _rng_restore(saved)
                    # generators first created by slice 0 start from offset 0 again
                    from .. import random as _random
                    for d in after_first:
                        if d not in saved:
                            _random._defaults[d]._offset = 0
                outputs.append(call(i))
        else:
            for i in range(batch):
                outputs.append(call(i))

    first = outputs[0]
    flat0, out_spec = tree_flatten(first)
    flat_outs = [flat0]
    for o in outputs[1:]:
        f, s = tree_flatten(o)
        if s != out_spec:
            raise ValueError(f"vmap({name}, ...): `{name}` must return outputs of the same "
                             "structure for every slice of the mapped dimension")
        flat_outs.append(f)
    dims = _flat_out_dims(first, out_spec, out_dims, func)
    results = []
    for j, d in enumerate(dims):
        leaf = flat0[j]
        if d is None:
            if isinstance(leaf, Tensor) and _varies(leaf, [f[j] for f in flat_outs]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a "
                                 "BatchedTensor when out_dim is None")
            results.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(leaf)}. Did you mean to set out_dims= to None for output?")
        parts = [f[j] for f in flat_outs]
        for p in parts:
            if not isinstance(p, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(p)}. Did you mean to set out_dims= to None for "
                                 "output?")
        out = stack(parts, dim=d)
        if batch == 0:
            out = out.narrow(d, 0, 0)
        results.append(out)
    return tree_unflatten(results, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    _check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args, **kwargs):
        return vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    try:
        functools.update_wrapper(wrapped, func)
    except (AttributeError, TypeError):
        pass
    return wrapped
