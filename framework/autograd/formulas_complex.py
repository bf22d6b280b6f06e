"""Gradient formulas of the complex ops, in PyTorch's convention: the gradient of a real
loss L with respect to complex z is dL/d(conj z) times 2, i.e. grad_z = conj(df/dz) * grad
for holomorphic f, and the real and imaginary parts are the gradients of the real and
imaginary parts (autograd's "conjugate Wirtinger" rule)."""
import framework


def imag_backward(grad, dtype):
    """Gradient of ``imag``: ``grad`` as the imaginary parts of a complex tensor of
    ``dtype`` whose real parts are zero."""
    grad = grad.to(dtype.to_real())
    return framework.view_as_complex(framework.stack([framework.zeros_like(grad), grad], -1))
