"""The orthogonal polynomials of torch.special, p(input, n): binary pointwise ops over the
kernels of native/pointwise_polynomials.cpp and framework/kernels/pointwise_polynomials.py
(the generic binary op, under PyTorch's argument name ``n``). n is truncated to an integer;
n < 0 gives 0; integer inputs promote to the default float dtype."""
from .pointwise import binary


def _poly(name, input, n, out):
    return binary(name, name, input, n, out, "float")


def chebyshev_polynomial_t(input, n, *, out=None):
    """The Chebyshev polynomial of the first kind T_n(input)."""
    return _poly("chebyshev_polynomial_t", input, n, out)


def chebyshev_polynomial_u(input, n, *, out=None):
    """The Chebyshev polynomial of the second kind U_n(input)."""
    return _poly("chebyshev_polynomial_u", input, n, out)


def chebyshev_polynomial_v(input, n, *, out=None):
    """The Chebyshev polynomial of the third kind V_n(input)."""
    return _poly("chebyshev_polynomial_v", input, n, out)


def chebyshev_polynomial_w(input, n, *, out=None):
    """The Chebyshev polynomial of the fourth kind W_n(input)."""
    return _poly("chebyshev_polynomial_w", input, n, out)


def shifted_chebyshev_polynomial_t(input, n, *, out=None):
    """The shifted Chebyshev polynomial of the first kind T*_n(input) = T_n(2 input - 1)."""
    return _poly("shifted_chebyshev_polynomial_t", input, n, out)


def shifted_chebyshev_polynomial_u(input, n, *, out=None):
    """The shifted Chebyshev polynomial of the second kind U*_n(input)."""
    return _poly("shifted_chebyshev_polynomial_u", input, n, out)


def shifted_chebyshev_polynomial_v(input, n, *, out=None):
    """The shifted Chebyshev polynomial of the third kind V*_n(input)."""
    return _poly("shifted_chebyshev_polynomial_v", input, n, out)


def shifted_chebyshev_polynomial_w(input, n, *, out=None):
    """The shifted Chebyshev polynomial of the fourth kind W*_n(input)."""
    return _poly("shifted_chebyshev_polynomial_w", input, n, out)


def hermite_polynomial_h(input, n, *, out=None):
    """The physicists' Hermite polynomial H_n(input)."""
    return _poly("hermite_polynomial_h", input, n, out)


def hermite_polynomial_he(input, n, *, out=None):
    """The probabilists' Hermite polynomial He_n(input)."""
    return _poly("hermite_polynomial_he", input, n, out)


def laguerre_polynomial_l(input, n, *, out=None):
    """The Laguerre polynomial L_n(input)."""
    return _poly("laguerre_polynomial_l", input, n, out)


def legendre_polynomial_p(input, n, *, out=None):
    """The Legendre polynomial P_n(input)."""
    return _poly("legendre_polynomial_p", input, n, out)
