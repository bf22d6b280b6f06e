"""framework.backends.opt_einsum: PyTorch's ``torch.backends.opt_einsum`` switches.

``enabled`` and ``strategy`` keep PyTorch's names, defaults and checks. As in PyTorch,
plain assignment (``opt_einsum.enabled = False``) sets the value unchecked; ``set_flags``
and ``flags`` check it. framework.einsum contracts left to right whatever their values:
it does not read an opt_einsum contraction path.
"""
import contextlib
import functools

try:
    import opt_einsum as _opt_einsum
except ImportError:
    _opt_einsum = None

__all__ = ["is_available", "get_opt_einsum", "set_flags", "flags"]


@functools.lru_cache
def is_available():
    """Return a bool indicating if opt_einsum is currently available."""
    return _opt_einsum is not None


def get_opt_einsum():
    """Return the opt_einsum package if opt_einsum is currently available, else None."""
    return _opt_einsum


def _set_enabled(value):
    global enabled
    if value and not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap "
            "the benefits of calculating an optimal path for einsum. torch.einsum will "
            "fall back to contracting from left to right. To enable this optimal path "
            "calculation, please install opt-einsum.")
    enabled = value


def _set_strategy(value):
    global strategy
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please install opt_einsum or unset `strategy`.")
    if not enabled:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from "
            "left to right. Please set `enabled` to `True` as well or unset `strategy`.")
    if value not in ("auto", "greedy", "optimal"):
        raise ValueError("`strategy` must be one of the following: [auto, greedy, optimal] "
                         f"but is {value}")
    strategy = value


def set_flags(_enabled=None, _strategy=None):
    """Sets the given switches (checked) and returns the previous ``(enabled, strategy)``."""
    orig = (enabled, strategy if is_available() else None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return orig


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """Sets the switches inside the block and restores them after."""
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)


enabled = bool(is_available())
strategy = "auto" if is_available() else None
