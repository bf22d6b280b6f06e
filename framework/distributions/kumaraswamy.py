"""``torch.distributions.kumaraswamy``: re-exports Kumaraswamy from ``.derived``."""
from .derived import Kumaraswamy

__all__ = ["Kumaraswamy"]
