"""``torch.distributions.gumbel``: re-exports Gumbel from ``.derived``."""
from .derived import Gumbel

__all__ = ["Gumbel"]
