"""``torch.distributions.laplace``: re-exports Laplace from ``.continuous``."""
from .continuous import Laplace

__all__ = ["Laplace"]
