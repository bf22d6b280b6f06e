"""``torch.distributions.multinomial``: re-exports Multinomial from ``.categorical``."""
from .categorical import Multinomial

__all__ = ["Multinomial"]
