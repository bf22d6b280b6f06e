"""``torch.distributions.exponential``: re-exports Exponential from ``.continuous``."""
from .continuous import Exponential

__all__ = ["Exponential"]
