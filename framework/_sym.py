"""torch's ``sym_*`` helpers. The framework runs eagerly, so there are no symbolic ints:
every size is a plain Python number and these reduce to the builtins, with torch's
promotion rules and checks."""
import builtins
import math

import numpy as np

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sum",
           "sym_sqrt", "sym_constrain_range", "sym_constrain_range_for_size",
           "sym_fresh_size"]

_ALL_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)


def sym_int(a):
    r"""SymInt-aware utility for int casting."""
    return builtins.int(a)


def sym_float(a):
    r"""SymInt-aware utility for float casting."""
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


def _check_number(a):
    if not isinstance(a, _ALL_TYPES):
        raise AssertionError(f"expected {_ALL_TYPES}, got {type(a)}")


def sym_max(a, b):
    """SymInt-aware utility for max; promotes to float if either argument is a float."""
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a, b):
    """SymInt-aware utility for min()."""
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a):
    r"""SymInt-aware utility for logical negation."""
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_ite(b, t, f):
    """SymInt-aware utility for ternary operator (``t if b else f``.)"""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sum(*args):
    """N-ary add; accepts both ``sym_sum([a, b, c])`` and ``sym_sum(a, b, c)``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_sqrt(a):
    """SymInt-aware utility for ``math.sqrt``."""
    if hasattr(a, "__sym_sqrt__"):
        return a.__sym_sqrt__()
    return math.sqrt(a)


def sym_constrain_range(size, *, min=None, max=None):
    """Checks that ``size`` lies in ``[min, max]`` (eager: a concrete value is checked now)."""
    lo = -(2 ** 63) if min is None else min
    hi = 2 ** 63 - 1 if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """Like :func:`sym_constrain_range`, for a value used as a size (so at least 0)."""
    lo = 0 if min is None else min
    hi = 2 ** 63 - 1 if max is None else max
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_fresh_size(expr):
    """Returns ``expr`` as a fresh (eager: concrete) size."""
    import framework
    return framework.tensor(expr).item()
