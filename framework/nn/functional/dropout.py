"""Dropout family: elementwise, channel-wise (1d/2d/3d) and alpha dropout. Masks come from
the device's default generator, so ``framework.manual_seed`` makes them reproducible.

Elementwise dropout (not in place) is the fused op ``_fused_dropout`` (framework/_ops/
dropout.py): one kernel that draws the mask from the Philox stream and scales, and a
backward that regenerates the mask from the same (seed, offset) instead of storing it.
``_dropout_add`` is residual + dropout in one kernel (the transformer layers' residual
adds). The other variants draw a Bernoulli mask and multiply, with gradients
``mask * scale`` through autograd."""
import warnings

import framework as fw
from framework import random as _random
from framework._ops.dropout import counters as _counters

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

# -selu_alpha * selu_scale: the value SELU saturates to, which alpha dropout drops to
_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, feature):
    """A 0/1 keep mask (probability ``1 - p``), one value per element, or per (sample,
    channel) broadcast over the remaining dimensions when ``feature``."""
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    return fw.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def _dropout_impl(input, p, training, inplace, feature, alpha):
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = fw.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if not alpha and not (input.dtype.is_floating_point or input.dtype.is_complex):
        # PyTorch scales into input's dtype, which cannot hold the scaled values
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype.scalar_name}")
    mask = _noise(input, p, feature)
    if not alpha:
        mask = mask * (1.0 / (1 - p))
        return input.mul_(mask) if inplace else input * mask
    # kept: a * x + alpha * a * p; dropped: a * alpha * (p - 1); a keeps unit variance
    a = 1.0 / ((_ALPHA * _ALPHA * p + 1) * (1 - p)) ** 0.5
    shift = (mask - 1) * (_ALPHA * a) + _ALPHA * a * p
    mask = mask * a
    if inplace:
        return input.mul_(mask).add_(shift)
    return input * mask + shift


_FUSED_DTYPES = (fw.float16, fw.bfloat16, fw.float32, fw.float64)


def _fusable(input, p, training):
    """Whether the fused kernels apply: training with 0 < p < 1 on a non-empty floating
    tensor (the other cases keep the composite's results: input itself, or input * 0)."""
    return (training and 0 < p < 1 and isinstance(input, fw.Tensor)
            and input.dtype in _FUSED_DTYPES and input.numel() > 0)


def _seed_offset(input):
    """(seed, offset) for a fused dropout over ``input``, taken from its device's default
    generator (which advances past the counters used)."""
    gen = _random.resolve(None, input._storage.device)
    return gen._take(_counters(input.numel()))


def dropout(input, p=0.5, training=True, inplace=False):
    r"""Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``
    (only when ``training``)."""
    _check_p(p)
    if not inplace and _fusable(input, p, training):
        seed, offset = _seed_offset(input)
        return fw._fused_dropout(input, p, seed, offset)
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=False)


def _dropout_add(input, residual, p=0.5, training=True):
    r"""``residual + dropout(input, p, training)``, in one fused kernel when ``residual``
    has input's shape, dtype and device (else the composite). Internal: used by the
    transformer layers' residual connections."""
    _check_p(p)
    if (_fusable(input, p, training) and isinstance(residual, fw.Tensor)
            and tuple(residual.shape) == tuple(input.shape) and residual.dtype is input.dtype
            and residual.device == input.device):
        seed, offset = _seed_offset(input)
        return fw._fused_dropout_add(input, residual, p, seed, offset)
    return residual + dropout(input, p, training)


def _feature_dropout(input, p, training, inplace, batched):
    if batched:
        return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout_impl(x, p, training, inplace, feature=True, alpha=False)
    return out.squeeze_(0) if inplace else out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    r"""Zeroes whole channels of a ``(N, C, L)`` or ``(C, L)`` input with probability
    ``p``, scaling the rest by ``1 / (1 - p)``."""
    _check_p(p)
    d = input.dim()
    if d not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {d}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, batched=d == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    r"""Zeroes whole channels of a ``(N, C, H, W)`` or ``(C, H, W)`` input with probability
    ``p``, scaling the rest by ``1 / (1 - p)``."""
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 3D or 4D inputs).")
    if d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.")
    # as PyTorch today: every input is treated as batched (N, C, ...)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    r"""Zeroes whole channels of a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability ``p``, scaling the rest by ``1 / (1 - p)``."""
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        warnings.warn(f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 4D or 5D inputs).")
    return _feature_dropout(input, p, training, inplace, batched=d == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    r"""Dropout for SELU networks: dropped elements take SELU's negative saturation value
    and an affine map keeps the input's mean and variance (only when ``training``)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    r"""Alpha dropout of whole channels (one mask value per sample and channel)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)
