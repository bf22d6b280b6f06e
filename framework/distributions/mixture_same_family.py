"""``torch.distributions.mixture_same_family``: re-exports MixtureSameFamily from ``.mixture``."""
from .mixture import MixtureSameFamily

__all__ = ["MixtureSameFamily"]
