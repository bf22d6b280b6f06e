"""Special functions with arguments of their own: polygamma (the order ``n`` picks the
kernel: digamma, trigamma, or the Hurwitz-zeta form with ``n`` as the parameter) and the
multivariate log-gamma, composed from lgamma. The plain unary/binary special functions are
ops.yaml rows of kind unary/binary (pointwise.py)."""
import builtins
import math

from .. import _dtype
from .._tensor import Tensor
from . import pointwise


def polygamma(n, input, *, out=None):
    """polygamma(n, input, *, out=None) -> Tensor

    The n-th derivative of the digamma function, :math:`\\psi^{(n)}(x)`."""
    if isinstance(n, Tensor) or not isinstance(n, (builtins.int, builtins.bool)):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    kernel = "digamma" if n == 0 else "trigamma" if n == 1 else "polygamma"
    return pointwise.unary("polygamma", kernel, input, out, "float", builtins.float(n))


def polygamma_method(self, n):
    """Tensor.polygamma(n) -> Tensor"""
    from .dispatcher import function
    return function("polygamma")(n, self)


def polygamma_(self, n):
    """In-place version of :meth:`Tensor.polygamma`."""
    return _write_back("polygamma_", self, polygamma_method(self, n))


def _check_mvlgamma(input, p):
    if not isinstance(p, builtins.int) or isinstance(p, builtins.bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    pointwise.require_tensor("mvlgamma", input, "input", 1)


def mvlgamma(input, p, *, out=None):
    """mvlgamma(input, p, *, out=None) -> Tensor

    The multivariate log-gamma function of dimension ``p``:
    :math:`\\frac{p(p-1)}{4}\\log\\pi + \\sum_{i=1}^{p}\\log\\Gamma(x - \\frac{i-1}{2})`."""
    import framework as fw
    _check_mvlgamma(input, p)
    x = input
    if x.dtype.category < 2:
        x = x.to(_dtype.get_default_dtype())
    if x.numel() and not bool((x > 0.5 * (p - 1)).all()):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    shifts = fw.arange(p, dtype=x.dtype, device=x.device) * -0.5
    result = (x.unsqueeze(-1) + shifts).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    if out is None:
        return result
    if input.requires_grad and fw.is_grad_enabled():
        raise RuntimeError("mvlgamma(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    target = pointwise.check_out("mvlgamma", out, result.shape, result.dtype, False, (input,))
    return pointwise._finish(result.detach(), target)


def mvlgamma_(self, p):
    """In-place version of :meth:`Tensor.mvlgamma`."""
    return _write_back("mvlgamma_", self, mvlgamma(self, p))


def _write_back(op, self, result):
    """``self`` overwritten by ``result`` (through copy_, which records autograd history),
    after PyTorch's check that the result's dtype fits in place."""
    if not _dtype.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {result.dtype.scalar_name} can't be cast to the "
                           f"desired output type {self.dtype.scalar_name}")
    return self.copy_(result)
