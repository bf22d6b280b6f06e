"""Padding layers: ``ZeroPad1d/2d/3d``, ``ConstantPad1d/2d/3d``, ``ReflectionPad1d/2d/3d``,
``ReplicationPad1d/2d/3d``, ``CircularPad1d/2d/3d``. Each holds its padding (an int
is used on every side) and calls ``F.pad``."""

from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d"]


class _PadNd(Module):
    """A padding layer over the last ``_NDIM`` dims; ``padding`` is an int or a tuple
    (left, right, top, bottom, front, back), last dim first."""

    _NDIM = 0
    _MODE = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._NDIM)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._MODE)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _MODE = "circular"

    def forward(self, input):
        n = self._NDIM
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    r"""Pads the last dim of an input (C, W) or (N, C, W) by wrapping around.

    Args:
        padding: int, or (left, right)
    """
    _NDIM = 1


class CircularPad2d(_CircularPadNd):
    r"""Pads the last 2 dims of an input (C, H, W) or (N, C, H, W) by wrapping around.

    Args:
        padding: int, or (left, right, top, bottom)
    """
    _NDIM = 2


class CircularPad3d(_CircularPadNd):
    r"""Pads the last 3 dims of an input (C, D, H, W) or (N, C, D, H, W) by wrapping
    around.

    Args:
        padding: int, or (left, right, top, bottom, front, back)
    """
    _NDIM = 3


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    r"""Pads the last dim with a constant ``value``.

    Args:
        padding: int, or (left, right)
        value: the fill value
    """
    _NDIM = 1


class ConstantPad2d(_ConstantPadNd):
    r"""Pads the last 2 dims with a constant ``value``.

    Args:
        padding: int, or (left, right, top, bottom)
        value: the fill value
    """
    _NDIM = 2


class ConstantPad3d(_ConstantPadNd):
    r"""Pads the last 3 dims with a constant ``value``.

    Args:
        padding: int, or (left, right, top, bottom, front, back)
        value: the fill value
    """
    _NDIM = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    r"""Pads the last dim with zeros.

    Args:
        padding: int, or (left, right)
    """
    _NDIM = 1


class ZeroPad2d(_ZeroPadNd):
    r"""Pads the last 2 dims with zeros.

    Args:
        padding: int, or (left, right, top, bottom)
    """
    _NDIM = 2


class ZeroPad3d(_ZeroPadNd):
    r"""Pads the last 3 dims with zeros.

    Args:
        padding: int, or (left, right, top, bottom, front, back)
    """
    _NDIM = 3


class _ReflectionPadNd(_PadNd):
    _MODE = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    r"""Pads the last dim of an input (C, W) or (N, C, W) with its reflection (the edge
    is not repeated).

    Args:
        padding: int, or (left, right)
    """
    _NDIM = 1


class ReflectionPad2d(_ReflectionPadNd):
    r"""Pads the last 2 dims of an input (C, H, W) or (N, C, H, W) with their reflection.

    Args:
        padding: int, or (left, right, top, bottom)
    """
    _NDIM = 2


class ReflectionPad3d(_ReflectionPadNd):
    r"""Pads the last 3 dims of an input (C, D, H, W) or (N, C, D, H, W) with their
    reflection.

    Args:
        padding: int, or (left, right, top, bottom, front, back)
    """
    _NDIM = 3


class _ReplicationPadNd(_PadNd):
    _MODE = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    r"""Pads the last dim of an input (C, W) or (N, C, W) by repeating its edge values.

    Args:
        padding: int, or (left, right)
    """
    _NDIM = 1


class ReplicationPad2d(_ReplicationPadNd):
    r"""Pads the last 2 dims of an input (C, H, W) or (N, C, H, W) by repeating their edge
    values.

    Args:
        padding: int, or (left, right, top, bottom)
    """
    _NDIM = 2


class ReplicationPad3d(_ReplicationPadNd):
    r"""Pads the last 3 dims of an input (C, D, H, W) or (N, C, D, H, W) by repeating their
    edge values.

    Args:
        padding: int, or (left, right, top, bottom, front, back)
    """
    _NDIM = 3
