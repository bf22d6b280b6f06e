"""``torch.distributions.fishersnedecor``: re-exports FisherSnedecor from ``.gamma``."""
from .gamma import FisherSnedecor

__all__ = ["FisherSnedecor"]
