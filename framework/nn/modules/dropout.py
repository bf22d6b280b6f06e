"""Dropout layers: ``Dropout``, ``Dropout1d/2d/3d``, ``AlphaDropout``,
``FeatureAlphaDropout``. Active only in training mode."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    r"""In training, zeroes each element with probability ``p`` and scales the others by
    ``1 / (1 - p)``; the identity in eval mode.

    Args:
        p: probability of an element to be zeroed. Default: 0.5
        inplace: do it in place. Default: ``False``
    """

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    r"""Channel-wise dropout of a ``(N, C, L)`` or ``(C, L)`` input (arguments as
    :class:`Dropout`)."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    r"""Channel-wise dropout of a ``(N, C, H, W)`` or ``(C, H, W)`` input (arguments as
    :class:`Dropout`)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    r"""Channel-wise dropout of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input (arguments
    as :class:`Dropout`)."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    r"""Alpha dropout (for SELU networks): keeps zero mean and unit variance of its input.
    ``inplace`` is accepted and ignored, as in PyTorch."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    r"""Alpha dropout of whole channels. ``inplace`` is accepted and ignored, as in
    PyTorch."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
