"""``torch.distributions.cauchy``: re-exports Cauchy from ``.continuous``."""
from .continuous import Cauchy

__all__ = ["Cauchy"]
