"""``torch.distributions.log_normal``: re-exports LogNormal from ``.continuous``."""
from .continuous import LogNormal

__all__ = ["LogNormal"]
