"""``torch.distributions.studentT``: re-exports StudentT from ``.gamma``."""
from .gamma import StudentT

__all__ = ["StudentT"]
