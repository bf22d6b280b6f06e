"""Softmax functions of nn.functional: softmax, log_softmax, softmin, gumbel_softmax.

The math is the op table's softmax/log_softmax (one stable kernel per device, derivatives
in ops.yaml); these add PyTorch's functional conventions: an implicit ``dim`` (deprecated,
with its warning) and ``dtype``.
"""
import warnings

import framework as _fw

__all__ = ["softmax", "log_softmax", "softmin", "gumbel_softmax"]


def _implicit_dim(name, ndim, stacklevel):
    """PyTorch's legacy choice of dim when none is given: 0 for 0-d, 1-d and 3-d inputs,
    else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax(x_i) = exp(x_i) / sum_j exp(x_j) along ``dim``.

    Args:
        input (Tensor): input
        dim (int): the dim along which softmax is computed
        dtype (framework.dtype, optional): the input is cast to this dtype first
    """
    if dim is None:
        dim = _implicit_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably; ``dtype`` casts the input first."""
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Softmin(x) = softmax(-x) along ``dim``; ``dtype`` casts the input first."""
    if dim is None:
        dim = _implicit_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-Softmax distribution: softmax((logits + g) / tau) with g
    i.i.d. Gumbel(0, 1) noise. ``hard=True`` returns one-hot vectors whose gradient is the
    soft sample's (straight-through estimator). ``eps`` is deprecated and unused."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_fw.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _fw.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
