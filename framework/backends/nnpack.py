"""framework.backends.nnpack (PyTorch's ``torch.backends.nnpack``): the framework is not
built with NNPACK; the switch is kept so that scripts setting it run."""
import contextlib

__all__ = ["is_available", "flags", "set_flags"]

_enabled = [True]


def is_available():
    """Return whether the framework is built with NNPACK support: never."""
    return False


def set_flags(_enabled_value):
    """Set if nnpack is enabled globally; returns the previous setting as a tuple."""
    orig = (_enabled[0],)
    _enabled[0] = bool(_enabled_value)
    return orig


@contextlib.contextmanager
def flags(enabled=False):
    """Context manager for setting if nnpack is enabled globally."""
    orig = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(orig[0])
