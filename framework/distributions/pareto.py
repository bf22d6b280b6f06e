"""``torch.distributions.pareto``: re-exports Pareto from ``.derived``."""
from .derived import Pareto

__all__ = ["Pareto"]
