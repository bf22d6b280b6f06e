"""``torch.distributions.geometric``: re-exports Geometric from ``.discrete``."""
from .discrete import Geometric

__all__ = ["Geometric"]
