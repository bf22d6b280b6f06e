"""``torch.distributions.binomial``: re-exports Binomial from ``.discrete``."""
from .discrete import Binomial

__all__ = ["Binomial"]
