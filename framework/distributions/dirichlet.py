"""``torch.distributions.dirichlet``: re-exports Dirichlet from ``.gamma``."""
from .gamma import Dirichlet

__all__ = ["Dirichlet"]
