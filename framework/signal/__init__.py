"""framework.signal: signal processing, as torch.signal (the window functions)."""
from . import windows  # noqa: F401

__all__ = ["windows"]
