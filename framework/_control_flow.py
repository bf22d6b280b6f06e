"""``framework.cond`` and ``framework.while_loop``: PyTorch's control-flow operators.

PyTorch defines them as higher-order ops so that ``torch.compile`` and ``export`` can keep
both branches (or the loop) in one graph. Here they run eagerly, as PyTorch does outside a
trace: the branch the predicate picks runs once (autograd records it as usual), the loop
body runs while the condition holds. The argument checks and their messages are PyTorch's.
"""
from . import _dtype
from ._tensor import Tensor
from .utils import _pytree

__all__ = ["cond", "while_loop"]


def cond(pred, true_fn, false_fn, operands=()):
    """Returns ``true_fn(*operands)`` if ``pred`` is true, else ``false_fn(*operands)``.

    ``pred``: a bool or a one-element tensor; ``operands``: a tuple (or list) of tensors,
    possibly nested in lists, tuples and dicts."""
    if isinstance(pred, (bool, int, float)):
        # a Python constant: PyTorch specializes on it without checking the rest
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or not all(
            isinstance(t, Tensor) for t in _pytree.tree_leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


def _check_pred(pred):
    if isinstance(pred, bool) or (isinstance(pred, Tensor) and pred.dim() == 0
                                  and pred.dtype is _dtype.bool):
        return bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got "
                       f"{pred}")


def while_loop(cond_fn, body_fn, carried_inputs):
    """Runs ``carried_inputs = body_fn(*carried_inputs)`` while
    ``cond_fn(*carried_inputs)`` is true and returns the final values as a tuple.

    ``cond_fn`` returns a bool or a boolean scalar tensor; ``body_fn`` returns a tuple of
    as many tensors (or ints) as ``carried_inputs`` holds. The results never alias the
    inputs: when the body does not run, tensors are cloned, as in PyTorch."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got "
                           f"{type(carried_inputs)}")
    if not all(isinstance(t, (Tensor, int)) for t in _pytree.tree_leaves(carried_inputs)):
        raise RuntimeError("Expect carried_inputs to be a tuple of possibly nested "
                           "dict/list/tuple that onlyconsists of tensor or int leaves, but got "
                           f"{carried_inputs}.")
    carried = tuple(carried_inputs)
    if not _check_pred(cond_fn(*carried)):
        return tuple(v.clone() if isinstance(v, Tensor) else v for v in carried)
    while True:
        out = body_fn(*carried)
        if not isinstance(out, tuple):
            raise AssertionError(f"body_fn should return a tuple but got {type(out)}")
        if len(out) != len(carried):
            raise AssertionError("body_fn should return the same number of elements as "
                                 f"carried_inputs, got {len(out)} vs {len(carried)}")
        carried = out
        if not _check_pred(cond_fn(*carried)):
            return carried
