"""``torch.distributions.half_cauchy``: re-exports HalfCauchy from ``.derived``."""
from .derived import HalfCauchy

__all__ = ["HalfCauchy"]
