"""framework.special: special functions, as torch.special.

The functions with kernels of their own (``i0e``, ``i1``, ``i1e``, the Bessel functions,
``ndtr``, ``ndtri``, ``log_ndtr``, ``erfcx``, ``entr``, ``xlog1py``, ``zeta``) are filled in
from the ``special.`` rows of ops.yaml; the others are torch.special's names for
framework functions (``psi`` is ``digamma``, ``gammaln`` is ``lgamma``, ``expit`` is
``sigmoid``, ...), defined here over them.
"""
import framework as _fw

__all__ = [
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy",
    "zeta", "airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
]


def digamma(input, *, out=None):
    """The logarithmic derivative of the gamma function, :math:`\\psi(x)`."""
    return _fw.digamma(input, out=out)


def psi(input, *, out=None):
    """Alias for :func:`framework.special.digamma`."""
    return _fw.digamma(input, out=out)


def gammaln(input, *, out=None):
    """The natural log of the absolute value of the gamma function."""
    return _fw.lgamma(input, out=out)


def polygamma(n, input, *, out=None):
    """The n-th derivative of the digamma function."""
    return _fw.polygamma(n, input, out=out)


def multigammaln(input, p, *, out=None):
    """The multivariate log-gamma function of dimension ``p``."""
    return _fw.mvlgamma(input, p, out=out)


def gammainc(input, other, *, out=None):
    """The regularized lower incomplete gamma function P(input, other)."""
    return _fw.igamma(input, other, out=out)


def gammaincc(input, other, *, out=None):
    """The regularized upper incomplete gamma function Q(input, other)."""
    return _fw.igammac(input, other, out=out)


def i0(input, *, out=None):
    """The zeroth order modified Bessel function of the first kind."""
    return _fw.i0(input, out=out)


def erf(input, *, out=None):
    """The error function."""
    return _fw.erf(input, out=out)


def erfc(input, *, out=None):
    """The complementary error function, 1 - erf(x)."""
    return _fw.erfc(input, out=out)


def erfinv(input, *, out=None):
    """The inverse error function."""
    return _fw.erfinv(input, out=out)


def expit(input, *, out=None):
    """The logistic sigmoid, 1 / (1 + exp(-x))."""
    return _fw.sigmoid(input, out=out)


def exp2(input, *, out=None):
    """2 to the power of each element."""
    return _fw.exp2(input, out=out)


def expm1(input, *, out=None):
    """exp(x) - 1, accurate for small x."""
    return _fw.expm1(input, out=out)


def log1p(input, *, out=None):
    """log(1 + x), accurate for small x."""
    return _fw.log1p(input, out=out)


def round(input, *, decimals=0, out=None):
    """Alias for :func:`framework.round`."""
    return _fw.round(input, decimals=decimals, out=out)


def sinc(input, *, out=None):
    """The normalized sinc function, sin(pi x) / (pi x)."""
    return _fw.sinc(input, out=out)


def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    return _fw.logit(input, eps, out=out)


def xlogy(input, other, *, out=None):
    """input * log(other), 0 where input is 0."""
    return _fw.xlogy(input, other, out=out)


def softmax(input, dim, *, dtype=None):
    """Alias for :func:`framework.softmax`."""
    return _fw.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """Alias for :func:`framework.log_softmax`."""
    return _fw.log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """Alias for :func:`framework.logsumexp`."""
    return _fw.logsumexp(input, dim, keepdim, out=out)
