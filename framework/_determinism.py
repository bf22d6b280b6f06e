"""Deterministic algorithms: ``use_deterministic_algorithms`` and its friends, PyTorch's.

With the mode on, every op either gives the same bits on every run or says it cannot:
- the cuda kernels that add (or multiply) floats into places several index positions may
  hit (index_add_, index_put_ with accumulate, scatter_add_, scatter_reduce, embedding's
  backward through them) walk the conflicting positions in order instead of racing with
  atomics; writes with duplicate indices (index_put_, scatter_) keep the last one;
- ops with no deterministic form raise (or warn, with ``warn_only``): ``put_`` without
  accumulate, ``bincount`` with weights on cuda (as PyTorch's);
- ``empty`` and its family fill the new memory with NaN (the largest integer, True) while
  ``framework.utils.deterministic.fill_uninitialized_memory`` is True (the default).
"""
import builtins
import warnings

_enabled = False
_warn_only = False
fill_uninitialized_memory = True


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Sets whether ops must use deterministic algorithms: an op with none raises a
    RuntimeError (a warning with ``warn_only=True``)."""
    global _enabled, _warn_only
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _enabled, _warn_only = mode, warn_only and mode


def are_deterministic_algorithms_enabled():
    """True if the global deterministic flag is on."""
    return _enabled


def is_deterministic_algorithms_warn_only_enabled():
    """True if the deterministic flag is on in warn-only mode."""
    return _warn_only


def set_deterministic_debug_mode(debug_mode):
    """The deterministic mode as a level: "default" (0, off), "warn" (1, warn only),
    "error" (2, on)."""
    if isinstance(debug_mode, str):
        names = ("default", "warn", "error")
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = names.index(debug_mode)
    elif not isinstance(debug_mode, builtins.int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The deterministic mode as a level: 0 off, 1 warn only, 2 on."""
    return 0 if not _enabled else 1 if _warn_only else 2


def alert_not_deterministic(caller):
    """Raises (or warns, in warn-only mode) that ``caller`` has no deterministic
    implementation, when the mode is on; PyTorch's words."""
    if not _enabled:
        return
    if _warn_only:
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can "
                      "file an issue at https://github.com/pytorch/pytorch/issues to help us "
                      "prioritize adding deterministic support for this operation.",
                      UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off "
                       "determinism just for this operation, or you can use the "
                       "'warn_only=True' option, if that's acceptable for your application. "
                       "You can also file an issue at https://github.com/pytorch/pytorch/"
                       "issues to help us prioritize adding deterministic support for this "
                       "operation.")


def fill_uninitialized(t):
    """``t`` (new from an empty-family factory) filled as PyTorch's deterministic mode
    fills uninitialized memory: NaN for floating and complex dtypes, the largest value for
    integers, True for bool; ``t`` unchanged when the mode or the fill is off."""
    if not (_enabled and fill_uninitialized_memory) or t.numel() == 0:
        return t
    from . import _dtype
    dt = t.dtype
    if dt is _dtype.bool:
        value = True
    elif dt.is_floating_point or dt.is_complex:
        value = float("nan")
    else:
        value = _dtype.iinfo(dt).max
    from ._ops.views import fill_
    return fill_(t, value)
