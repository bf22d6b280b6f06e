"""``torch.distributions.independent``: re-exports Independent (``.transformed_distribution``)."""
from .transformed_distribution import Independent

__all__ = ["Independent"]
