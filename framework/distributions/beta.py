"""``torch.distributions.beta``: re-exports Beta from ``.gamma``."""
from .gamma import Beta

__all__ = ["Beta"]
