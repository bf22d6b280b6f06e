"""Pooling modules: thin holders of options that call ``nn.functional``'s pooling
functions. Attributes and ``extra_repr`` texts are PyTorch's, so printed models read the
same."""
from .module import Module
from .utils import _ntuple, _single

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
           "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d"]


def _F():
    # nn.functional is imported after nn.modules; look it up at call time
    import framework.nn.functional as F
    return F


# ---- max pooling ---------------------------------------------------------------------------

class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")

    def forward(self, input):
        return getattr(_F(), self._fn)(input, self.kernel_size, self.stride, self.padding,
                                       self.dilation, ceil_mode=self.ceil_mode,
                                       return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    r"""1D max pooling over an input of shape (N, C, L) or (C, L)."""
    _fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    r"""2D max pooling over an input of shape (N, C, H, W) or (C, H, W)."""
    _fn = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    r"""3D max pooling over an input of shape (N, C, D, H, W) or (C, D, H, W)."""
    _fn = "max_pool3d"


# ---- average pooling -----------------------------------------------------------------------

class AvgPool1d(Module):
    r"""1D average pooling over an input of shape (N, C, L) or (C, L)."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return _F().avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                               self.ceil_mode, self.count_include_pad)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return getattr(_F(), self._fn)(input, self.kernel_size, self.stride, self.padding,
                                       self.ceil_mode, self.count_include_pad,
                                       self.divisor_override)


class AvgPool2d(_AvgPoolNd):
    r"""2D average pooling over an input of shape (N, C, H, W) or (C, H, W)."""
    _fn = "avg_pool2d"


class AvgPool3d(_AvgPoolNd):
    r"""3D average pooling over an input of shape (N, C, D, H, W) or (C, D, H, W)."""
    _fn = "avg_pool3d"


# ---- adaptive pooling ----------------------------------------------------------------------

class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return getattr(_F(), self._fn)(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    r"""Adaptive 1D average pooling to ``output_size``."""
    _fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    r"""Adaptive 2D average pooling to ``output_size`` (None keeps the input's size)."""
    _fn = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    r"""Adaptive 3D average pooling to ``output_size`` (None keeps the input's size)."""
    _fn = "adaptive_avg_pool3d"


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return getattr(_F(), self._fn)(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    r"""Adaptive 1D max pooling to ``output_size``."""
    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    r"""Adaptive 2D max pooling to ``output_size`` (None keeps the input's size)."""
    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    r"""Adaptive 3D max pooling to ``output_size`` (None keeps the input's size)."""
    _fn = "adaptive_max_pool3d"


# ---- unpooling -----------------------------------------------------------------------------

class _MaxUnpoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._n
        self.kernel_size = _ntuple(n)(kernel_size)
        self.stride = _ntuple(n)(stride if stride is not None else kernel_size)
        self.padding = _ntuple(n)(padding)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        return getattr(_F(), self._fn)(input, indices, self.kernel_size, self.stride,
                                       self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    r"""Partial inverse of :class:`MaxPool1d`: values go back to their indices, zeros
    elsewhere."""
    _n, _fn = 1, "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    r"""Partial inverse of :class:`MaxPool2d`."""
    _n, _fn = 2, "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    r"""Partial inverse of :class:`MaxPool3d`."""
    _n, _fn = 3, "max_unpool3d"


# ---- Lp pooling ----------------------------------------------------------------------------

class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")

    def forward(self, input):
        return getattr(_F(), self._fn)(input, float(self.norm_type), self.kernel_size,
                                       self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    r"""1D power-average pooling: (sum over each window of x**p) ** (1/p)."""
    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    r"""2D power-average pooling."""
    _fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    r"""3D power-average pooling."""
    _fn = "lp_pool3d"
