"""``torch.distributions.weibull``: re-exports Weibull from ``.derived``."""
from .derived import Weibull

__all__ = ["Weibull"]
