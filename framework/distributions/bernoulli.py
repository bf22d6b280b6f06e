"""``torch.distributions.bernoulli``: re-exports Bernoulli from ``.discrete``."""
from .discrete import Bernoulli

__all__ = ["Bernoulli"]
