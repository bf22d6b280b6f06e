"""Gradient formulas of the complex ops, in PyTorch's convention: the gradient of a real
loss L with respect to complex z is dL/d(conj z) times 2, i.e. grad_z = conj(df/dz) * grad
for holomorphic f, and the real and imaginary parts are the gradients of the real and
imaginary parts (autograd's "conjugate Wirtinger" rule).

The formulas of ops.yaml conjugate what multiplies ``grad`` (``grad * other.conj()``);
``conj`` of a real tensor is the tensor itself, so real inputs get the formulas they always
had. A complex gradient that reaches a real input keeps its real part (record._fit)."""
import cmath

import framework
from .._tensor import Tensor
from . import formulas


def cj(x):
    """The conjugate of a tensor or a number (a real one is returned as it is, at the cost
    of two checks: the real formulas call this on every backward)."""
    if x.__class__ is complex:
        return x.conjugate()
    if isinstance(x, Tensor) and x.dtype.is_complex:
        return x.conj()
    return x


def imag_backward(grad, dtype):
    """Gradient of ``imag``: ``grad`` as the imaginary parts of a complex tensor of
    ``dtype`` whose real parts are zero."""
    grad = grad.to(dtype.to_real())
    return framework.view_as_complex(framework.stack([framework.zeros_like(grad), grad], -1))


def sgn_backward(grad, input, result):
    """Gradient of ``sgn``: zero for real inputs; for complex z with s = z / |z|,
    (grad - s^2 conj(grad)) / (2 |z|), and zero where z = 0 (PyTorch's formula)."""
    if not input.dtype.is_complex:
        return grad * 0
    r = input.abs()
    g = (grad - result * result * grad.conj()) / (2 * r)
    return g.masked_fill(r == 0, 0)


def angle_backward(grad, input):
    """Gradient of ``angle``: grad * i z / |z|^2 (0 at z = 0) for complex z; zero for
    real inputs, whose angle is piecewise constant."""
    if not input.dtype.is_complex:
        return framework.zeros_like(input)
    r2 = input.abs().pow(2)
    g = grad * input / r2 * 1j
    return g.masked_fill(input == 0, 0)


def polar_backward(grad, result, wrt_abs):
    """Gradients of ``polar(abs, angle)``: Re(conj(grad) sgn(result)) for abs and
    Re(conj(grad) i result) for angle (PyTorch's formulas)."""
    g = grad.conj()
    if wrt_abs:
        return framework.real(g * result.sgn())
    return framework.real(g * (result * 1j))


def pow_input_backward(grad, input, exponent):
    """Gradient of ``pow`` for the base: grad * conj(w z^(w-1)), zero where w = 0."""
    if not grad.dtype.is_complex:
        return formulas.pow_backward_input(grad, input, exponent)
    if not isinstance(exponent, Tensor):
        if exponent == 0:
            return grad * 0
        return grad * cj(exponent * input.pow(exponent - 1))
    return (grad * (exponent * input.pow(exponent - 1)).conj()).masked_fill(exponent == 0, 0)


def pow_exponent_backward(grad, input, exponent, result):
    """Gradient of ``pow`` for the exponent: grad * conj(z^w log z), zero where z = 0
    and w is real and >= 0 (PyTorch's pow_backward_exponent)."""
    if not grad.dtype.is_complex:
        return formulas.pow_backward_exponent(grad, input, result)
    if not isinstance(input, Tensor):    # a number base: 2 ** w
        if input == 0:
            return grad * 0
        return grad * (result * cmath.log(input)).conj()
    z = input.to(result.dtype)
    cond = (z == 0) & (exponent.real >= 0)     # (the exponent is a tensor here)
    if exponent.dtype.is_complex:
        cond = cond & (exponent.imag == 0)
    return (grad * (result * z.log()).conj()).masked_fill(cond, 0)


def prod_grad(grad, input, result, dim=None, keepdim=False):
    """Gradient of ``prod``: formulas.prod_backward, which computes grad * d prod / dz with
    complex products, applied to conj(grad) and conjugated for complex inputs."""
    if not grad.dtype.is_complex:
        return formulas.prod_backward(grad, input, result, dim, keepdim)
    return formulas.prod_backward(grad.conj(), input, result, dim, keepdim).conj()


def _real_if(g, A):
    """A gradient computed in complex arithmetic for input ``A``: its real part when ``A``
    is real (a real input's gradient is real)."""
    return g if A.dtype.is_complex else framework.real(g).clone()


def eig_backward(grads, results, A):
    """Gradient of linalg.eig (PyTorch's formula): with gA = V^H gV projected onto the
    matrices whose diagonal has zero real part and divided by conj(L_j - L_i) off the
    diagonal, gL on the diagonal, the gradient is V^{-H} gA V^H. The loss must not depend
    on the phases of the eigenvectors (checked, as PyTorch does)."""
    gL, gV = grads
    L, V = results
    Vh = V.mH
    if gV is None:
        return _real_if(framework.linalg.solve(Vh, gL.unsqueeze(-1) * Vh), A)
    VhgV = Vh.matmul(gV)
    diag = VhgV.diagonal(0, -2, -1)
    if not framework.allclose(diag.imag, framework.zeros_like(diag.imag), 1e-2, 1e-2):
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are "
                           "specified up to multiplication by e^{i phi}. The specified loss "
                           "function depends on this quantity, so it is ill-defined.")
    VhgV = VhgV - Vh.matmul(V * diag.real.unsqueeze(-2))
    Lc = L.conj()
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
    E.diagonal(0, -2, -1).fill_(1)
    gA = VhgV / E
    if gL is None:
        gA.diagonal(0, -2, -1).zero_()
    else:
        gA.diagonal(0, -2, -1).copy_(gL)
    return _real_if(framework.linalg.solve(Vh, gA.matmul(Vh)), A)


def eigvals_backward(grad, A):
    """Gradient of linalg.eigvals: V^{-H} diag(grad) V^H with V the eigenvectors."""
    L, V = framework.linalg.eig(A)
    return eig_backward((grad, None), (L, V), A)


def logsumexp_grad(grad, input, result, dim, keepdim):
    """Gradient of ``logsumexp``: grad * conj(exp(z - result)) (formulas.logsumexp_backward
    applied to conj(grad) and conjugated for complex inputs)."""
    if not grad.dtype.is_complex:
        return formulas.logsumexp_backward(grad, input, result, dim, keepdim)
    return formulas.logsumexp_backward(grad.conj(), input, result, dim, keepdim).conj()
