"""Activation modules: thin holders of options (and PReLU's slopes) that call
``nn.functional``. ``extra_repr`` texts are PyTorch's, so printed models read the same."""
import warnings

import framework as fw
from .module import Module
from ..parameter import Parameter

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid",
           "Tanh", "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU",
           "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU",
           "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]


def _F():
    # nn.functional is imported after nn.modules; look it up at call time
    import framework.nn.functional as F
    return F


def _call(name, input, inplace, *args):
    """``F.<name>(input, *args)``, in place when asked (through nn.functional's in-place
    helper, which keeps autograd correct)."""
    F = _F()
    if inplace:
        from ..functional.activation import _inplace
        return _inplace(getattr(F, name), input, *args)
    return getattr(F, name)(input, *args)


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """An activation whose only option is ``inplace``: calls ``F.<_fn>``."""

    __constants__ = ["inplace"]
    _fn = None
    _show_inplace = True     # Hardsigmoid and Hardswish print no options in PyTorch

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return _call(self._fn, input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace) if self._show_inplace else ""


class Threshold(Module):
    r"""``value`` where ``input <= threshold``, else ``input``."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return _call("threshold", input, self.inplace, self.threshold, self.value)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class ReLU(_InplaceActivation):
    r"""``max(0, input)`` elementwise."""

    _fn = "relu"


class RReLU(Module):
    r"""Randomized leaky ReLU: random slopes in ``[lower, upper]`` in training, their
    mean in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return _F().rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class Hardtanh(Module):
    r"""Clamps ``input`` to ``[min_val, max_val]``."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to "
                          "`min_val`", FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to "
                          "`max_val`", FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val, \
            f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"

    def forward(self, input):
        return _call("hardtanh", input, self.inplace, self.min_val, self.max_val)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class ReLU6(Hardtanh):
    r"""``min(max(0, input), 6)``."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    r"""``1 / (1 + exp(-input))``."""

    def forward(self, input):
        return fw.sigmoid(input)


class Hardsigmoid(_InplaceActivation):
    r"""Piecewise-linear sigmoid ``relu6(input + 3) / 6``."""

    _fn = "hardsigmoid"
    _show_inplace = False


class Tanh(Module):
    r"""Hyperbolic tangent."""

    def forward(self, input):
        return fw.tanh(input)


class SiLU(_InplaceActivation):
    r"""``input * sigmoid(input)`` (swish)."""

    _fn = "silu"


class Mish(_InplaceActivation):
    r"""``input * tanh(softplus(input))``."""

    _fn = "mish"


class Hardswish(_InplaceActivation):
    r"""``input * relu6(input + 3) / 6``."""

    _fn = "hardswish"
    _show_inplace = False


class ELU(Module):
    r"""``input`` if positive, else ``alpha * (exp(input) - 1)``."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return _call("elu", input, self.inplace, self.alpha)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class CELU(Module):
    r"""``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return _call("celu", input, self.inplace, self.alpha)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class SELU(_InplaceActivation):
    r"""Scaled ELU with PyTorch's fixed ``alpha`` and ``scale``."""

    _fn = "selu"


class GLU(Module):
    r"""Gated linear unit ``a * sigmoid(b)`` over the halves of ``dim``."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return _F().glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    r"""Gaussian error linear unit; ``approximate='tanh'`` uses the tanh formula."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return _F().gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    r"""``input`` where ``|input| > lambd``, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return _F().hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    r"""``input`` if positive, else ``negative_slope * input``."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return _call("leaky_relu", input, self.inplace, self.negative_slope)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class LogSigmoid(Module):
    r"""``log(sigmoid(input))``."""

    def forward(self, input):
        return _F().logsigmoid(input)


class Softplus(Module):
    r"""``log(1 + exp(beta * input)) / beta``, linear above ``threshold``."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return _F().softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    r"""Soft thresholding: shrinks ``input`` towards 0 by ``lambd``."""

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return _F().softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    r"""Leaky ReLU with learnable negative slopes: one shared (``num_parameters=1``) or one
    per channel (dim 1 of the input), initialised to ``init``."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(fw.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        with fw.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return _F().prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    r"""``input / (1 + |input|)``."""

    def forward(self, input):
        return _F().softsign(input)


class Tanhshrink(Module):
    r"""``input - tanh(input)``."""

    def forward(self, input):
        return _F().tanhshrink(input)


class _SoftmaxAlongDim(Module):
    """Softmax, LogSoftmax and Softmin: ``F.<_fn>`` along ``dim`` (None: PyTorch's implicit
    choice, with its warning)."""

    __constants__ = ["dim"]
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return getattr(_F(), self._fn)(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxAlongDim):
    r"""Softmax of ``-input`` along ``dim``."""
    _fn = "softmin"


class Softmax(_SoftmaxAlongDim):
    r"""Softmax along ``dim``: entries in [0, 1] summing to 1."""
    _fn = "softmax"


class Softmax2d(Module):
    r"""Softmax over the channels (dim -3) of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return _F().softmax(input, -3, _stacklevel=5)


class LogSoftmax(_SoftmaxAlongDim):
    r"""Log of the softmax along ``dim``."""
    _fn = "log_softmax"
