"""Linear layers: ``Identity``, ``Linear``, ``Bilinear``."""
import math
import warnings

import framework as fw

from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


def _uniform_(t, bound):
    """Fills ``t`` from U(-bound, bound), unrecorded (the init PyTorch uses for these
    layers; ``kaiming_uniform_(a=sqrt(5))`` reduces to bound ``1 / sqrt(fan_in)``)."""
    with fw.no_grad():
        if t.numel():
            t.uniform_(-bound, bound)
    return t


class Identity(Module):
    r"""A placeholder that returns its input; its constructor arguments are ignored."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    r"""Applies an affine map ``y = x A^T + b`` to the last dimension.

    Args:
        in_features: size of each input sample
        out_features: size of each output sample
        bias: if ``False``, the layer has no additive bias. Default: ``True``

    Weight ``(out_features, in_features)`` and bias ``(out_features,)`` are drawn from
    ``U(-1/sqrt(in_features), 1/sqrt(in_features))``.
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(fw.empty((out_features, in_features), device=device,
                                         dtype=dtype))
        if bias:
            self.bias = Parameter(fw.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        fan_in = self.weight.shape[1]
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        # kaiming_uniform_(a=sqrt(5)): gain sqrt(2 / 6), bound gain * sqrt(3 / fan_in)
        if self.weight.numel() == 0:
            warnings.warn("Initializing zero-element tensors is a no-op")
        _uniform_(self.weight, bound)
        if self.bias is not None:
            _uniform_(self.bias, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    r"""Applies a bilinear map ``y = x1^T A x2 + b``.

    Args:
        in1_features: size of each first input sample
        in2_features: size of each second input sample
        out_features: size of each output sample
        bias: if ``False``, the layer has no additive bias. Default: ``True``

    Weight ``(out_features, in1_features, in2_features)`` and bias ``(out_features,)`` are
    drawn from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``.
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(fw.empty((out_features, in1_features, in2_features),
                                         device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(fw.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] > 0 else 0
        _uniform_(self.weight, bound)
        if self.bias is not None:
            _uniform_(self.bias, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
