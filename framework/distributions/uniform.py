"""``torch.distributions.uniform``: re-exports Uniform from ``.continuous``."""
from .continuous import Uniform

__all__ = ["Uniform"]
