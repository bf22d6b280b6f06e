"""``torch.distributions.normal``: re-exports Normal from ``.continuous``."""
from .continuous import Normal

__all__ = ["Normal"]
