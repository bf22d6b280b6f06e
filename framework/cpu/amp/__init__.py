"""framework.cpu.amp: PyTorch's deprecated ``torch.cpu.amp`` spellings:
``autocast(...)`` is ``framework.autocast("cpu", ...)`` (bfloat16 by default),
``GradScaler(...)`` is ``framework.amp.GradScaler("cpu", ...)``."""
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler"]
