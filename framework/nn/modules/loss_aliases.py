"""Loss classes that PyTorch keeps under older names: ``NLLLoss2d`` (an ``NLLLoss``, which
handles ``(N, C, d1, ...)`` inputs itself)."""
import warnings

from .loss import NLLLoss

__all__ = ["NLLLoss2d"]


class NLLLoss2d(NLLLoss):
    r"""The negative log likelihood loss of :class:`NLLLoss` (kept for old code that used
    this name for ``(N, C, H, W)`` inputs; arguments as :class:`NLLLoss`). Deprecated:
    constructing one warns (``FutureWarning``), as in PyTorch."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
