"""framework.backends.mkldnn (PyTorch's ``torch.backends.mkldnn``): the framework is not
built with oneDNN; the switches keep PyTorch's names and defaults so that scripts setting
them run, and change nothing (the cpu kernels are the framework's own)."""
import contextlib
import sys
import types

__all__ = ["is_available", "is_acl_available", "VERBOSE_OFF", "VERBOSE_ON",
           "VERBOSE_ON_CREATION", "verbose", "set_flags", "flags"]

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2

_state = {"enabled": True, "deterministic": False, "allow_tf32": True}


def is_available():
    """Return whether the framework is built with MKL-DNN support: never."""
    return False


def is_acl_available():
    """Return whether the framework is built with MKL-DNN + ACL support: never."""
    return False


class verbose:
    """On-demand oneDNN verbosing. There is no oneDNN: ``VERBOSE_OFF`` does nothing, other
    levels raise as PyTorch's does when oneDNN cannot be set verbose."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        if self.level == VERBOSE_OFF:
            return
        raise AssertionError("Failed to set MKLDNN into verbose mode. Please consider to "
                             "disable this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Sets the switches; returns the previous ones."""
    orig = (_state["enabled"], _state["deterministic"], _state["allow_tf32"], "none")
    if _enabled is not None:
        _state["enabled"] = bool(_enabled)
    if _deterministic is not None:
        _state["deterministic"] = bool(_deterministic)
    if _allow_tf32 is not None:
        _state["allow_tf32"] = bool(_allow_tf32)
    return orig


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Sets the switches inside the block and restores them after."""
    orig = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*orig)


class _Module(types.ModuleType):
    @property
    def enabled(self):
        return _state["enabled"]

    @enabled.setter
    def enabled(self, value):
        _state["enabled"] = bool(value)

    @property
    def deterministic(self):
        return _state["deterministic"]

    @deterministic.setter
    def deterministic(self, value):
        _state["deterministic"] = bool(value)

    @property
    def allow_tf32(self):
        return _state["allow_tf32"]

    @allow_tf32.setter
    def allow_tf32(self, value):
        _state["allow_tf32"] = bool(value)


sys.modules[__name__].__class__ = _Module
