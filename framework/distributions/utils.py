"""Helpers shared by the distributions: broadcasting, probs/logits conversion, lazy properties."""
import math
import numbers
from functools import update_wrapper

import framework as fw

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix",
           "euler_constant"]

euler_constant = 0.57721566490153286060


def _is_floating(t):
    return t.dtype in (fw.float16, fw.bfloat16, fw.float32, fw.float64)


def broadcast_all(*values):
    """Broadcasts numbers and tensors to one shape; numbers become tensors of the default
    float dtype (or of the dtype and device of the first tensor among the values)."""
    if not all(isinstance(v, (fw.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "framework.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, fw.Tensor) for v in values):
        options = dict(dtype=fw.get_default_dtype())
        for v in values:
            if isinstance(v, fw.Tensor):
                options = dict(dtype=v.dtype, device=v.device)
                break
        values = [v if isinstance(v, fw.Tensor) else fw.tensor(v, **options) for v in values]
    return fw.broadcast_tensors(*values)


def _sum_rightmost(value, dim):
    """Sums out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (math.prod(value.shape[-dim:]),)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: a sigmoid when ``is_binary``, else a softmax over the last dim."""
    if is_binary:
        return fw.sigmoid(logits)
    return fw.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into the open interval (0, 1) by the dtype's epsilon."""
    eps = fw.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log-odds when ``is_binary``, else log-probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return fw.log(ps_clamped) - fw.log1p(-ps_clamped)
    return fw.log(ps_clamped)


class lazy_property:
    """A property computed on first access and then cached on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with fw.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal ``diag``) of a (batch of) ``D x D``
    matrices, as a vector in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    arange = fw.arange(n, device=mat.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    return mat[..., tril_mask]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a (batch of) lower-triangular ``D x D`` matrices."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]
                            + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = fw.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    arange = fw.arange(n, device=vec.device)
    tril_mask = arange < arange.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat
