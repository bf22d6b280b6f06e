"""``Fold`` and ``Unfold``: sliding local blocks to columns and back (nn.functional.fold /
unfold, the im2col / col2im kernels)."""
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    r"""Combines an array of sliding local blocks (N, C * prod(kernel_size), L) into a
    tensor (N, C, *output_size), summing overlapping values (the adjoint of
    :class:`Unfold`). Unbatched inputs (C * prod(kernel_size), L) are accepted.

    Args:
        output_size: spatial size of the output (int or 2-tuple)
        kernel_size: size of the sliding blocks
        dilation: spacing of the block's elements. Default: 1
        padding: implicit zero padding of the output on both sides. Default: 0
        stride: step of the sliding blocks. Default: 1
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    r"""Extracts sliding local blocks from a batched input (N, C, H, W) into columns
    (N, C * prod(kernel_size), L), L the number of blocks. Unbatched inputs (C, H, W) are
    accepted.

    Args:
        kernel_size: size of the sliding blocks
        dilation: spacing of the block's elements. Default: 1
        padding: implicit zero padding of the input on both sides. Default: 0
        stride: step of the sliding blocks. Default: 1
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
