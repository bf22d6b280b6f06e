"""Activation functions of ``nn.functional`` that are not rows of the op table: prelu,
rrelu, glu, hardshrink, softshrink, softsign, tanhshrink, logsigmoid, and the in-place
``*_`` forms (relu_, elu_, ...). Each is a composite of table ops, so autograd follows.
"""
import framework as fw
from framework import _nn_functional_ops as _table
from framework._ops.pointwise import type_name

__all__ = ["prelu", "rrelu", "rrelu_", "glu", "hardshrink", "softshrink", "softsign",
           "tanhshrink", "logsigmoid", "relu_", "elu_", "celu_", "selu_", "leaky_relu_",
           "hardtanh_", "threshold_"]

# largest finite value per float dtype, for softshrink's range message (as PyTorch prints it)
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e+38,
              "float32": 3.4028234663852886e+38, "float64": 1.7976931348623157e+308}


def _require_float(kernel, input):
    """PyTorch's error for an activation kernel called on a non-float tensor."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}_{input.device.type}" not implemented for '
                                  f"'{type_name(input.dtype)}'")


def _inplace(op, input, *args):
    """``op(input, *args)`` written into ``input`` and returned, as ``inplace=True`` does
    (the table's ops make that safe under autograd: framework/_ops/dispatcher.py)."""
    return op(input, *args, inplace=True)


def prelu(input, weight):
    r"""prelu(input, weight) -> Tensor

    ``max(0, x) + weight * min(0, x)``, with one learnable slope per channel (dim 1) or
    one shared slope."""
    _require_float("prelu", input)
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.dim() >= 2 else 1
        if weight.dim() != 1 or n != channels:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
        # one slope per channel: broadcast along dim 1
        weight = weight.reshape([channels] + [1] * (input.dim() - 2))
    elif weight.dim() > 0:
        weight = weight.reshape(())
    return fw.where(input > 0, input, weight * input)


def _check_rrelu_bounds(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    r"""Randomized leaky ReLU: in training, each non-positive element is scaled by a slope
    drawn from ``U(lower, upper)``; in eval, by the fixed slope ``(lower + upper) / 2``."""
    _check_rrelu_bounds(lower, upper)
    if not training:
        _require_float("leaky_relu", input)
        slope = (lower + upper) / 2
        if inplace:
            return _inplace(_table.leaky_relu, input, slope)
        return _table.leaky_relu(input, slope)
    _require_float("rrelu_with_noise", input)
    with fw.no_grad():
        noise = fw.empty_like(input).uniform_(lower, upper)
        # positive elements pass unchanged (slope 1), as PyTorch's noise buffer holds
        slope = fw.where(input > 0, fw.ones_like(input), noise)
    if inplace:
        return input.mul_(slope)
    return input * slope


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    r"""In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def glu(input, dim=-1):
    r"""Gated linear unit: splits ``input`` in halves ``a, b`` along ``dim`` and returns
    ``a * sigmoid(b)``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _require_float("glu", input)
    size = input.size(dim)  # raises PyTorch's IndexError for a bad dim
    d = dim % input.dim()
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    a, b = input.chunk(2, d)
    return a * fw.sigmoid(b)


def hardshrink(input, lambd=0.5):
    r"""hardshrink(input, lambd=0.5) -> Tensor

    ``input`` where ``|input| > lambd``, else 0."""
    _require_float("hardshrink", input)
    keep = (input > lambd) | (input < -lambd)
    return fw.where(keep, input, fw.zeros_like(input))


def softshrink(input, lambd=0.5):
    r"""softshrink(input, lambd=0.5) -> Tensor

    ``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0."""
    _require_float("softshrink", input)
    top = _FLOAT_MAX[input.dtype.name] if input.dtype.name in _FLOAT_MAX else float("inf")
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{type_name(input.dtype)}, but found {lambd:g}")
    zero = fw.zeros_like(input)
    return fw.where(input > lambd, input - lambd,
                    fw.where(input < -lambd, input + lambd, zero))


def softsign(input):
    r"""softsign(input) -> Tensor

    ``input / (1 + |input|)``."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    r"""tanhshrink(input) -> Tensor

    ``input - tanh(input)``."""
    return input - input.tanh()


def logsigmoid(input):
    r"""logsigmoid(input) -> Tensor

    ``log(sigmoid(input))``, computed stably as ``-softplus(-input)``."""
    _require_float("log_sigmoid", input)
    # softplus turns linear past its threshold (20), which drops the exp(input) term of
    # log(sigmoid(input)) = input - log1p(exp(input)); far below 0 that term is kept
    # (clamped so the branch not taken has a finite gradient)
    far = input.clamp_max(-15.0)
    tail = far - far.exp()
    return fw.where(input < -15.0, tail, -_table.softplus(-input))


# In-place forms: PyTorch exposes these as separate functions of nn.functional.

def relu_(input):
    r"""relu_(input) -> Tensor

    In-place :func:`relu`."""
    return _inplace(_table.relu, input)


def elu_(input, alpha=1.0):
    r"""elu_(input, alpha=1.) -> Tensor

    In-place :func:`elu`."""
    return _inplace(_table.elu, input, alpha)


def celu_(input, alpha=1.0):
    r"""celu_(input, alpha=1.) -> Tensor

    In-place :func:`celu`."""
    return _inplace(_table.celu, input, alpha)


def selu_(input):
    r"""selu_(input) -> Tensor

    In-place :func:`selu`."""
    return _inplace(_table.selu, input)


def leaky_relu_(input, negative_slope=0.01):
    r"""leaky_relu_(input, negative_slope=0.01) -> Tensor

    In-place :func:`leaky_relu`."""
    return _inplace(_table.leaky_relu, input, negative_slope)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    r"""hardtanh_(input, min_val=-1., max_val=1.) -> Tensor

    In-place :func:`hardtanh`."""
    return _inplace(_table.hardtanh, input, min_val, max_val)


def threshold_(input, threshold, value):
    r"""threshold_(input, threshold, value) -> Tensor

    In-place :func:`threshold`."""
    return _inplace(_table.threshold, input, threshold, value)
