"""framework.backends.mps (PyTorch's ``torch.backends.mps``): Apple's Metal backend is not
part of the framework; nothing is available."""
__all__ = ["get_core_count", "get_name", "is_available", "is_built", "is_macos13_or_newer",
           "is_macos_or_newer"]


def is_built():
    """Return whether the framework is built with MPS support: never."""
    return False


def is_available():
    """Return a bool indicating if MPS is currently available: never."""
    return False


def is_macos_or_newer(major, minor):
    """Return a bool indicating whether MPS is running on given MacOS or newer: False
    (no MPS)."""
    return False


def is_macos13_or_newer(minor=0):
    """Return a bool indicating whether MPS is running on MacOS 13 or newer: False."""
    return False


def get_name():
    """Return Metal device name (there is none)."""
    raise RuntimeError("MPS is not available: the framework is not built with MPS support")


def get_core_count():
    """Return GPU core count (there is no Metal device)."""
    raise RuntimeError("MPS is not available: the framework is not built with MPS support")
