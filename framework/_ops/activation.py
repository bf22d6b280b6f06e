"""Elementwise activations: framework.relu and the pointwise functions of
framework.nn.functional (gelu, silu, softplus, elu, leaky_relu, hardtanh, ...).

``inplace=True`` writes into ``input`` and returns it, as in PyTorch.
"""
import builtins

from .. import _dtype
from .pointwise import checked_scalar, unary
from .arith import require_tensor


def _target(input, inplace):
    return input if inplace else None


def relu(input):
    """max(input, 0)."""
    return _relu(input, None)


def relu_(input):
    """In-place :func:`relu`."""
    return _relu(input, input)


def _relu(input, out):
    require_tensor("relu", input, "input", 1)
    if input.dtype is _dtype.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return unary("relu", "relu", input, out, "same")


def f_relu(input, inplace=False):
    """max(input, 0)."""
    return _relu(input, _target(input, inplace))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamps to [min_val, max_val] in the input's dtype."""
    require_tensor("hardtanh", input, "input", 1)
    if input.dtype is _dtype.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dtype.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    checked_scalar(min_val, input.dtype)
    checked_scalar(max_val, input.dtype)
    return unary("hardtanh", "clamp", input, _target(input, inplace), "same",
                 builtins.float(min_val), builtins.float(max_val), 3.0)


def relu6(input, inplace=False):
    """min(max(input, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input, threshold, value, inplace=False):
    """value where input <= threshold, else input."""
    require_tensor("threshold", input, "input", 1)
    for v in (threshold, value):   # PyTorch converts to float32 first, then to the dtype
        checked_scalar(checked_scalar(v, input.dtype, opmath=True), input.dtype)
    return unary("threshold", "threshold", input, _target(input, inplace), "same",
                 builtins.float(threshold), builtins.float(value))


def gelu(input, approximate="none"):
    """x * Phi(x); approximate='tanh' uses the tanh formula."""
    require_tensor("gelu", input, "input", 1)
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return unary("gelu", "gelu_tanh" if approximate == "tanh" else "gelu", input, None, "same")


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    require_tensor("silu", input, "input", 1)
    return unary("silu", "silu", input, _target(input, inplace), "same")


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    require_tensor("mish", input, "input", 1)
    return unary("mish", "mish", input, _target(input, inplace), "same")


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    require_tensor("softplus", input, "input", 1)
    checked_scalar(beta, input.dtype, opmath=True)
    checked_scalar(threshold, input.dtype, opmath=True)
    return unary("softplus", "softplus", input, None, "same", builtins.float(beta),
                 builtins.float(threshold))


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    require_tensor("elu", input, "input", 1)
    checked_scalar(alpha, input.dtype, opmath=True)
    return unary("elu", "elu", input, _target(input, inplace), "same", builtins.float(alpha),
                 1.0, 1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalizing constants."""
    require_tensor("selu", input, "input", 1)
    return unary("selu", "elu", input, _target(input, inplace), "same", _SELU_ALPHA,
                 _SELU_SCALE, 1.0)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    require_tensor("celu", input, "input", 1)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    checked_scalar(alpha, input.dtype, opmath=True)
    return unary("celu", "elu", input, _target(input, inplace), "same", builtins.float(alpha),
                 1.0, 1.0 / alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    require_tensor("leaky_relu", input, "input", 1)
    checked_scalar(negative_slope, input.dtype, opmath=True)
    return unary("leaky_relu", "leaky_relu", input, _target(input, inplace), "same",
                 builtins.float(negative_slope))


def hardsigmoid(input, inplace=False):
    """min(max(x + 3, 0), 6) / 6."""
    require_tensor("hardsigmoid", input, "input", 1)
    return unary("hardsigmoid", "hardsigmoid", input, _target(input, inplace), "same")


def hardswish(input, inplace=False):
    """x * min(max(x + 3, 0), 6) / 6."""
    require_tensor("hardswish", input, "input", 1)
    return unary("hardswish", "hardswish", input, _target(input, inplace), "same")


def sigmoid(input):
    """1 / (1 + exp(-x))."""
    return unary("sigmoid", "sigmoid", input, None, "float")


def tanh(input):
    """Hyperbolic tangent."""
    return unary("tanh", "tanh", input, None, "float")
