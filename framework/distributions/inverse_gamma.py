"""``torch.distributions.inverse_gamma``: re-exports InverseGamma from ``.derived``."""
from .derived import InverseGamma

__all__ = ["InverseGamma"]
