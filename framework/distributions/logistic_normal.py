"""``torch.distributions.logistic_normal``: re-exports LogisticNormal from ``.derived``."""
from .derived import LogisticNormal

__all__ = ["LogisticNormal"]
