"""``LayerNorm``, ``GroupNorm``, ``RMSNorm``, ``LocalResponseNorm``."""
import numbers

import framework as fw

from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]


class LocalResponseNorm(Module):
    r"""Local response normalization across channels (see
    :func:`~framework.nn.functional.local_response_norm`).

    Args:
        size: number of neighbouring channels in the window
        alpha: multiplicative factor. Default: 1e-4
        beta: exponent. Default: 0.75
        k: additive factor. Default: 1
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _as_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    r"""Layer normalization over the last ``len(normalized_shape)`` dimensions.

    Args:
        normalized_shape: the trailing shape to normalize over (an int for the last one)
        eps: added to the variance for numerical stability. Default: 1e-5
        elementwise_affine: learnable ``weight`` (ones) and ``bias`` (zeros) of shape
            ``normalized_shape``. Default: ``True``
        bias: with ``elementwise_affine``, also learn ``bias``. Default: ``True``
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(fw.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(fw.empty(self.normalized_shape, device=device,
                                               dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            with fw.no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    r"""Group normalization: channels split into ``num_groups`` groups, each normalized
    over its channels and spatial dimensions.

    Args:
        num_groups: number of groups (must divide ``num_channels``)
        num_channels: number of channels ``C`` of the ``(N, C, *)`` input
        eps: added to the variance for numerical stability. Default: 1e-5
        affine: learnable per-channel ``weight`` (ones) and ``bias`` (zeros). Default: ``True``
        bias: with ``affine``, also learn ``bias``. Default: ``True``
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(fw.empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(fw.empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            with fw.no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    r"""Root mean square normalization over the last ``len(normalized_shape)`` dimensions.

    Args:
        normalized_shape: the trailing shape to normalize over (an int for the last one)
        eps: added to the mean square; ``None`` means ``finfo(input.dtype).eps``.
            Default: ``None``
        elementwise_affine: learnable ``weight`` (ones) of shape ``normalized_shape``.
            Default: ``True``
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(fw.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            with fw.no_grad():
                self.weight.fill_(1)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
