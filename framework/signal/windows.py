"""framework.signal.windows: window functions, as torch.signal.windows.

The functions are filled in from the ``signal.windows.`` rows of ops.yaml (their code is in
framework/_ops/window_functions.py)."""

__all__ = [
    "bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
    "general_hamming", "hamming", "hann", "kaiser", "nuttall",
]
