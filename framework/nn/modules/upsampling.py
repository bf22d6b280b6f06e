"""Upsampling layers (PyTorch's ``Upsample``, ``UpsamplingNearest2d``,
``UpsamplingBilinear2d``)."""
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    r"""Upsamples multi-channel 1D (temporal), 2D (spatial) or 3D (volumetric) data to
    ``size`` or by ``scale_factor`` with :func:`~framework.nn.functional.interpolate`."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        # modules pickled before the option existed recomputed the scale
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    r"""2D nearest-neighbour upsampling of (N, C, H, W) input."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""2D bilinear upsampling of (N, C, H, W) input with ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
