"""``torch.distributions.negative_binomial``: re-exports NegativeBinomial from ``.discrete``."""
from .discrete import NegativeBinomial

__all__ = ["NegativeBinomial"]
