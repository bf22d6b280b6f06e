"""``torch.distributions.half_normal``: re-exports HalfNormal from ``.continuous``."""
from .continuous import HalfNormal

__all__ = ["HalfNormal"]
