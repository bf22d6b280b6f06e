"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``,
``ConvTranspose2d``, ``ConvTranspose3d``. They hold the weight, bias and options and call
the functional forms (framework/_ops/conv.py: im2col + GEMM)."""
import math
import warnings

import framework as fw

from .. import functional as F
from ..parameter import Parameter
from .module import Module
from .utils import _ntuple, _reverse_repeat_tuple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]


class _ConvNd(Module):
    """What the convolution layers share: options, parameters, init and repr."""

    _NDIM = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        n = self._NDIM
        kernel_size, stride, dilation = (_ntuple(n)(v) for v in (kernel_size, stride, dilation))
        output_padding = _ntuple(n)(output_padding)
        if not isinstance(padding, str):
            padding = _ntuple(n)(padding)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts for the non-zeros padding modes (last dim first)
        if isinstance(padding, str):
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for i, (d, k) in enumerate(zip(reversed(dilation), reversed(kernel_size))):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        self.weight = Parameter(fw.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(fw.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """PyTorch's init: kaiming_uniform_(weight, a=sqrt(5)), i.e. U(-b, b) with
        b = 1/sqrt(fan_in), and the bias from the same range."""
        w = self.weight
        fan_in = w.shape[1] * math.prod(w.shape[2:])
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        with fw.no_grad():
            if w.numel() == 0:
                warnings.warn("Initializing zero-element tensors is a no-op")
            else:
                w.uniform_(-bound, bound)
            if self.bias is not None and self.bias.numel():
                # PyTorch leaves the bias uninitialised when fan_in is 0; zeros here
                if fan_in > 0:
                    self.bias.uniform_(-bound, bound)
                else:
                    self.bias.zero_()

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _FN = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._FN
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, (0,) * self._NDIM, self.dilation,
                      self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    r"""Applies a 1-d convolution over an input (N, C_in, L) or (C_in, L).

    Args:
        in_channels, out_channels: channels of the input and of the output
        kernel_size, stride, padding, dilation: int or tuple; padding may be 'valid' or
            'same' (stride 1 only)
        groups: blocked connections from input to output channels. Default: 1
        bias: add a learnable bias. Default: ``True``
        padding_mode: 'zeros', 'reflect', 'replicate' or 'circular'. Default: 'zeros'
    """

    _NDIM = 1
    _FN = staticmethod(F.conv1d)


class Conv2d(_Conv):
    r"""Applies a 2-d convolution over an input (N, C_in, H, W) or (C_in, H, W).

    Args: as :class:`Conv1d`, with 2-tuples.
    """

    _NDIM = 2
    _FN = staticmethod(F.conv2d)


class Conv3d(_Conv):
    r"""Applies a 3-d convolution over an input (N, C_in, D, H, W) or (C_in, D, H, W).

    Args: as :class:`Conv1d`, with 3-tuples.
    """

    _NDIM = 3
    _FN = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _FN = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        """The output_padding that gives ``output_size`` (PyTorch's rule and errors)."""
        if output_size is None:
            return _ntuple(num_spatial_dims)(self.output_padding)
        non_spatial = 2 if input.dim() == num_spatial_dims + 2 else 1
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{non_spatial + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            size = ((input.size(d + non_spatial) - 1) * stride[d] - 2 * padding[d]
                    + dil * (kernel_size[d] - 1) + 1)
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for "
                             f"{self.__class__.__name__}")
        n = self._NDIM
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, n, self.dilation)
        return type(self)._FN(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    r"""Applies a 1-d transposed convolution over an input (N, C_in, L) or (C_in, L).

    Args:
        in_channels, out_channels: channels of the input and of the output
        kernel_size, stride, padding, output_padding, dilation: int or tuple
        groups: blocked connections from input to output channels. Default: 1
        bias: add a learnable bias. Default: ``True``

    ``forward(input, output_size=None)``: ``output_size`` picks the output_padding.
    """

    _NDIM = 1
    _FN = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    r"""Applies a 2-d transposed convolution over an input (N, C_in, H, W) or (C_in, H, W).

    Args: as :class:`ConvTranspose1d`, with 2-tuples.
    """

    _NDIM = 2
    _FN = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    r"""Applies a 3-d transposed convolution over an input (N, C_in, D, H, W) or
    (C_in, D, H, W).

    Args: as :class:`ConvTranspose1d`, with 3-tuples.
    """

    _NDIM = 3
    _FN = staticmethod(F.conv_transpose3d)
