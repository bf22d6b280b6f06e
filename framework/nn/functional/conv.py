"""Convolution functions: conv1d/2d/3d and conv_transpose1d/2d/3d (im2col + GEMM + col2im,
in framework/_ops/conv.py, the same functions as framework.conv2d and friends, as in
PyTorch). unfold and fold are ops of the table (nn.functional.unfold / fold)."""
from framework import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: F401
                       conv_transpose3d)

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]
