"""framework.backends.mkl (PyTorch's ``torch.backends.mkl``): the framework is not built
with MKL (LAPACK comes from NumPy's OpenBLAS, the cpu kernels are its own)."""
__all__ = ["is_available", "VERBOSE_OFF", "VERBOSE_ON", "verbose"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    """Return whether the framework is built with MKL support: never."""
    return False


class verbose:
    """On-demand oneMKL verbosing (``with verbose(VERBOSE_ON):``). There is no MKL to make
    verbose: ``VERBOSE_OFF`` does nothing, other levels raise as PyTorch's does when MKL
    cannot be set verbose."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        if self.enable == VERBOSE_OFF:
            return
        raise AssertionError("Failed to set MKL into verbose mode. Please consider to "
                             "disable this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False
