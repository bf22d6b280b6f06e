"""Loss functions of ``nn.functional``: regression losses (mse, l1, smooth_l1, huber),
classification losses (nll, cross_entropy, binary_cross_entropy[_with_logits]) and
likelihood/divergence losses (kl_div, poisson_nll, gaussian_nll). The margin, embedding,
multi-label, triplet and CTC losses live in loss_extra.py and are re-exported here.

Every loss takes ``reduction`` ('none' | 'mean' | 'sum') and, where PyTorch still does,
the deprecated ``size_average``/``reduce`` pair, which overrides ``reduction``.
"""
import math
import warnings

import framework as fw
from framework._ops.pointwise import broadcast_shapes, type_name
from framework.autograd.loss_nodes import present_cross_entropy

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss",
           "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "kl_div", "poisson_nll_loss", "gaussian_nll_loss"]


# -- reduction helpers (shared with loss_extra.py and the loss modules) -------------------

def legacy_reduction(size_average, reduce, emit_warning=True, stacklevel=3):
    """The ``reduction`` string that the deprecated ``size_average``/``reduce`` pair means
    (each defaults to True), with PyTorch's deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=stacklevel)
    return ret


def resolve_reduction(size_average, reduce, reduction, valid=("none", "mean", "sum")):
    """``reduction`` after the legacy arguments are applied, checked as PyTorch does."""
    if size_average is not None or reduce is not None:
        # the warning names the caller of the loss function
        reduction = legacy_reduction(size_average, reduce, stacklevel=4)
    if reduction not in valid:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def reduce_loss(loss, reduction):
    """Applies a checked ``reduction`` to an elementwise loss."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def warn_target_size(input, target):
    """PyTorch's warning when a regression target silently broadcasts against input."""
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the "
                      f"input size ({input.size()}). This will likely lead to incorrect "
                      "results due to broadcasting. Please ensure they have the same size.",
                      stacklevel=3)


def check_no_grad_arg(fn, name, t):
    """PyTorch refuses gradients for class/element weights of its native losses."""
    if t is not None and t.requires_grad and fw.is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to "
                           f"argument '{name}'. This input cannot have requires_grad True.")


def _weighted(fn_loss, weight, input, reduction, mean_by_weight):
    """The optional elementwise ``weight`` of mse/l1/huber loss, then the reduction."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = fn_loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return reduce_loss(loss, reduction)


def _check_weighted_reduction(reduction, weight):
    if weight is not None and reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")


# -- regression losses --------------------------------------------------------------------

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r"""Mean squared error ``(input - target)^2``, optionally weighted elementwise (a
    weighted mean divides by the sum of the weights)."""
    warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    _check_weighted_reduction(reduction, weight)
    if weight is None:
        reduction = resolve_reduction(None, None, reduction)
        return fw._mse_loss(input, target, reduction)    # one op: MseLossBackward0
    diff = input - target
    return _weighted(diff * diff, weight, input, reduction, True)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    r"""Mean absolute error ``|input - target|``, optionally weighted elementwise."""
    warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    _check_weighted_reduction(reduction, weight)
    if weight is None:
        reduction = resolve_reduction(None, None, reduction)
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction, True)
    return reduce_loss(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    r"""``0.5 * d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``; ``beta=0``
    is the L1 loss."""
    warn_target_size(input, target)
    reduction = resolve_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:     # the L1 loss, composed (as PyTorch: MeanBackward0 of AbsBackward0)
        return reduce_loss((input - target).abs(), reduction)
    return fw._smooth_l1_loss(input, target, reduction, float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    r"""``0.5 * d^2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``;
    optionally weighted elementwise (a weighted mean is the plain mean)."""
    warn_target_size(input, target)
    _check_weighted_reduction(reduction, weight)
    if weight is None:
        reduction = resolve_reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return fw._huber_loss(input, target, reduction, float(delta))
    diff = input - target
    z = diff.abs()
    loss = fw.where(z < delta, 0.5 * diff * diff, delta * (z - 0.5 * delta))
    return _weighted(loss, weight, input, reduction, False)


# -- negative log likelihood and cross entropy --------------------------------------------

def _check_class_weight(weight, n_classes, input, prefix=""):
    if weight is None:
        return
    if weight.numel() != n_classes:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of "
                           f"shape: {list(weight.shape)}")
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                           f"{type_name(weight.dtype)}")


def _check_nll_shapes(input, target):
    """PyTorch's shape checks of nll_loss for 1-D, 2-D and N-d (N, C, d1, ...) inputs."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.dim() == 1 and target.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target "
                             f"size: {target.shape[0]}")
        return
    t_batch = target.shape[0] if target.dim() > 0 else 0
    if input.shape[0] != t_batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({t_batch}).")
    if input.dim() == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.dim() == 4:
        if target.dim() != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but "
                               f"got targets of dimension: {target.dim()}")
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    else:
        expected = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")


def _check_class_targets(target, n_classes, ignore_index):
    """IndexError naming the first class index outside [0, n_classes) (ignored ones
    aside), as PyTorch raises on both devices."""
    bad = (target != ignore_index) & ((target < 0) | (target >= n_classes))
    if bad.any().item():
        first = target[bad].reshape(-1)[0].item()
        raise IndexError(f"Target {first} is out of bounds.")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    r"""Negative log likelihood of class indices ``target`` under log-probabilities
    ``input`` (class dim 1, or 0 for an unbatched ``(C,)`` input). A weighted mean divides
    by the summed weights of the non-ignored targets."""
    reduction = resolve_reduction(size_average, reduce, reduction)
    check_no_grad_arg("nll_loss_forward", "weight", weight)
    _check_nll_shapes(input, target)
    if target.dtype not in (fw.int64, fw.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{type_name(target.dtype)}")
    n_classes = input.shape[1 if input.dim() >= 2 else 0]
    _check_class_weight(weight, n_classes, input)
    _check_class_targets(target, n_classes, ignore_index)
    if input.dim() <= 2:
        return fw._nll_loss(input, target, weight, reduction, ignore_index)
    if input.dim() == 4:
        return fw._nll_loss2d(input, target, weight, reduction, ignore_index)
    # other (N, C, d1, ...) inputs go through the spatial op on a 4-d view, as PyTorch's
    n, c = input.shape[0], input.shape[1]
    flat = input.contiguous().view(n, c, 1, -1)
    loss = fw._nll_loss2d(flat, target.contiguous().view(n, 1, -1), weight, reduction,
                          ignore_index)
    return loss.view(target.shape) if reduction == "none" else loss


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    r"""Cross entropy between logits ``input`` (class dim 1, or 0 if unbatched) and
    ``target``: class indices (as :func:`nll_loss` of ``log_softmax``, computed by one
    fused op that never stores the probabilities), or class probabilities of ``input``'s
    shape; ``label_smoothing`` mixes the target with the uniform distribution."""
    reduction = resolve_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")
    cdim = 1 if input.dim() >= 2 else 0
    n_classes = input.shape[cdim] if input.dim() > 0 else 1
    if input.shape == target.shape:
        import framework.nn.functional as F
        return _cross_entropy_probs(F.log_softmax(input, cdim), target, weight, ignore_index,
                                    reduction, label_smoothing, cdim, n_classes)
    check_no_grad_arg("nll_loss_forward", "weight", weight)
    _check_nll_shapes(input, target)
    if target.dtype not in (fw.int64, fw.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{type_name(target.dtype)}")
    _check_class_weight(weight, n_classes, input)
    loss = fw._cross_entropy_loss(input, target, weight, reduction, ignore_index,
                                  float(label_smoothing))[0]
    # the kernels compute 16-bit logits in float32; under autocast the loss stays float32
    # (PyTorch's log_softmax runs in float32 there), otherwise it has the input's dtype
    dtype = input.dtype
    if loss.dtype is not dtype and fw.is_autocast_enabled(input.device.type):
        dtype = loss.dtype
    if loss._grad_fn is not None:   # PyTorch's nodes: NllLoss over LogSoftmax, ...
        return present_cross_entropy(loss, input.dim(), dtype, reduction, label_smoothing,
                                     weight is not None)
    return loss if loss.dtype is dtype else loss.to(dtype)


def _class_view(weight, ndim, cdim):
    """``weight`` (C,) shaped to broadcast along the class dim of an ``ndim`` tensor."""
    shape = [1] * ndim
    shape[cdim] = weight.numel()
    return weight.reshape(shape)


def _cross_entropy_probs(logp, target, weight, ignore_index, reduction, eps, cdim,
                         n_classes):
    """Cross entropy against class probabilities (soft labels)."""
    if not target.dtype.is_floating_point:
        raise RuntimeError("Expected floating point type for target with class "
                           f"probabilities, got {type_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    _check_class_weight(weight, n_classes, logp, "cross_entropy: ")
    if eps > 0:
        target = target * (1 - eps) + eps / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, logp.dim(), cdim)
    if reduction == "mean":
        # divides by the number of samples (N * d1 * ...), never by the weights
        count = logp.numel() // n_classes if n_classes else 0
        return -prod.sum() / count
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum(cdim)


# -- binary cross entropy -----------------------------------------------------------------

def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    r"""Binary cross entropy between probabilities ``input`` (in [0, 1]) and ``target``;
    the logs are clamped at -100 so the loss stays finite."""
    reduction = resolve_reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the "
                         f"input size ({input.size()}) is deprecated. Please ensure they "
                         "have the same size.")
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {type_name(target.dtype)} but expected "
                           f"{type_name(input.dtype)}")
    check_no_grad_arg("binary_cross_entropy", "weight", weight)
    if weight is not None:
        weight = _expand_weight(weight, target)
    # NaN fails both comparisons, so it is refused as PyTorch does
    if (~((input >= 0) & (input <= 1))).any().item():
        raise RuntimeError("all elements of input should be between 0 and 1")
    return fw._binary_cross_entropy(input, target, weight, reduction)


def _expand_weight(weight, target):
    """``weight`` broadcast to ``target``'s shape, with PyTorch's message when it can't."""
    wshape, tshape = list(weight.shape), list(target.shape)
    for i in range(1, len(wshape) + 1):
        w = wshape[-i]
        t = tshape[-i] if i <= len(tshape) else 1
        if w != t and w != 1 and t != 1:
            raise RuntimeError(f"Attempting to broadcast a dimension of length {w} at -{i}! "
                               f"Mismatching argument at index 1 had {weight.size()}; but "
                               f"expected shape should be broadcastable to {tshape}")
    return weight.expand(broadcast_shapes(weight.shape, target.shape))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    r"""Binary cross entropy of ``sigmoid(input)`` and ``target``, in the stable form
    ``pos_weight * t * softplus(-x) + (1 - t) * softplus(x)``."""
    reduction = resolve_reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    check_no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    check_no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return fw._binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


# -- divergence and likelihood losses -----------------------------------------------------

def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False):
    r"""Kullback-Leibler divergence ``target * (log(target) - input)`` with ``input`` in
    log space (``target`` too if ``log_target``). ``'batchmean'`` divides the sum by the
    batch size, which is the mathematical KL divergence."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size "
                          "and the support size.'batchmean' divides only by the batch "
                          "size, and aligns with the KL div math definition.'mean' will be "
                          "changed to behave the same as 'batchmean' in the next major "
                          "release.", stacklevel=2)
        if reduction not in ("none", "mean", "sum", "batchmean"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = fw.xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() != 0 else total
    return reduce_loss(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None,
                     eps=1e-8, reduce=None, reduction="mean"):
    r"""Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``)
    or ``input - target * log(input + eps)``; ``full`` adds the Stirling term
    ``t log t - t + 0.5 log(2 pi t)`` where ``target > 1``."""
    reduction = resolve_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        # evaluate the Stirling term on safe values only, so that no NaN reaches the
        # gradient of target through the discarded branch
        t = fw.where(big, target, fw.ones_like(target))
        stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + fw.where(big, stirling, fw.zeros_like(stirling))
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    r"""Gaussian negative log likelihood ``0.5 * (log(var) + (input - target)^2 / var)``
    (+ ``0.5 log(2 pi)`` if ``full``). ``var`` matches ``input``'s shape, lacks its last
    dim, has one dim of size 1 (shared variance), or is a float; it is clamped at ``eps``
    without stopping its gradient."""
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = fw.full_like(input, float(var))
    elif (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with fw.no_grad():
        var.clamp_(min=eps)
    diff = input - target
    loss = 0.5 * (var.log() + diff * diff / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


from .loss_extra import *  # noqa: E402,F401,F403
from .loss_extra import __all__ as _extra_all  # noqa: E402

__all__ = __all__ + _extra_all
