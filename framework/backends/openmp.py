"""framework.backends.openmp (PyTorch's ``torch.backends.openmp``)."""
__all__ = ["is_available"]


def is_available():
    """Return whether the framework is built with OpenMP support: never (the cpu library
    threads with std::thread; ``framework.set_num_threads`` sets how many)."""
    return False
