"""``torch.distributions.poisson``: re-exports Poisson from ``.discrete``."""
from .discrete import Poisson

__all__ = ["Poisson"]
