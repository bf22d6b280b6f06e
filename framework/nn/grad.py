"""Gradients of convolutions with respect to their input and weight (PyTorch's
``torch.nn.grad``).

A convolution is linear in its input and in its weight, so the gradient with respect to
one does not depend on the value of that one: each function differentiates the framework's
own convolution at zeros of the requested shape, which reuses its backward kernels. With
``grad_output`` or the other operand requiring grad (and grad mode on), the result has a
history, so double backward works as in PyTorch.
"""
from .. import autograd
from ..autograd import grad_mode
from .._ops import creation

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight",
           "conv3d_input", "conv3d_weight"]


def _conv(n):
    from . import functional as F
    return (F.conv1d, F.conv2d, F.conv3d)[n - 1]


def _grad(name, n, input, weight, grad_output, wrt, stride, padding, dilation, groups):
    """d<conv>/d<wrt> for ``grad_output``: ``wrt`` is ``input`` or ``weight``, which the
    caller passed as a shape."""
    if input.dim() != weight.dim() or input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: expected a {n + 2}-D input and weight, got input size "
                           f"{list(input.shape)} and weight size {list(weight.shape)}")
    create = grad_mode.is_grad_enabled() and (grad_output.requires_grad or
                                              (weight if wrt is input else input).requires_grad)
    with grad_mode.enable_grad():
        wrt.requires_grad_(True)
        out = _conv(n)(input, weight, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(
                f"{name}: grad_output size {list(grad_output.shape)} does not match the "
                f"convolution output size {list(out.shape)} (input size {list(input.shape)},"
                f" weight size {list(weight.shape)}, stride={stride}, padding={padding}, "
                f"dilation={dilation}, groups={groups})")
        (g,) = autograd.grad(out, wrt, grad_output, create_graph=create)
    return g


def _input(n, input_size, weight, grad_output, stride, padding, dilation, groups):
    name = f"conv{n}d_input"
    x = creation.zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device)
    return _grad(name, n, x, weight, grad_output, x, stride, padding, dilation, groups)


def _weight(n, input, weight_size, grad_output, stride, padding, dilation, groups):
    name = f"conv{n}d_weight"
    w = creation.zeros(tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device)
    return _grad(name, n, input, w, grad_output, w, stride, padding, dilation, groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Computes the gradient of conv1d with respect to the input of the convolution
    (``input_size``: the shape of the input gradient)."""
    return _input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Computes the gradient of conv1d with respect to the weight of the convolution
    (``weight_size``: the shape of the weight gradient)."""
    return _weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Computes the gradient of conv2d with respect to the input of the convolution."""
    return _input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Computes the gradient of conv2d with respect to the weight of the convolution."""
    return _weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Computes the gradient of conv3d with respect to the input of the convolution."""
    return _input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Computes the gradient of conv3d with respect to the weight of the convolution."""
    return _weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)
