"""``torch.distributions.chi2``: re-exports Chi2 from ``.gamma``."""
from .gamma import Chi2

__all__ = ["Chi2"]
