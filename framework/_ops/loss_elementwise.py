"""The elementwise losses as single ops (one autograd node each, as PyTorch's
MseLossBackward0, SmoothL1LossBackward0, HuberLossBackward0, BinaryCrossEntropyBackward0,
BinaryCrossEntropyWithLogitsBackward0, SoftMarginLossBackward0, NllLossBackward0 and
NllLoss2DBackward0): framework._mse_loss, _smooth_l1_loss, _huber_loss,
_binary_cross_entropy, _binary_cross_entropy_with_logits, _soft_margin_loss, _nll_loss,
_nll_loss2d. nn.functional checks the arguments (PyTorch's messages live there) and calls
them.

Each forward is a short composite of framework ops run without recording; its backward
is one function per op below, written with framework ops, so that the backward records
its own graph under create_graph (double backward) and computes both inputs' gradients in
one call (the formulas in ops.yaml index its result). A 'mean' or 'sum' backward scales
the 0-d upstream gradient first, so that the elementwise work is done once.
"""
from .. import _dtype
from .loss import check_reduction as _check_reduction


def _fw():
    import framework
    return framework


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _upstream(grad, reduction, numel, scale=1.0):
    """The gradient reaching each element of the unreduced loss, times ``scale``: ``grad``
    itself ('none' and 'sum', where it broadcasts), or divided by the number of elements
    ('mean'); one op on the 0-d gradient of a reduced loss."""
    if reduction == "mean":
        return grad * (scale / numel)
    return grad * scale if scale != 1.0 else grad


def _floating(kernel, diff):
    """``diff``, refused as PyTorch refuses integer inputs of its regression kernels."""
    if not diff.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}_{diff.device.type}\" not implemented for "
                                  f"'{diff.dtype.scalar_name}'")
    return diff


def _numel(*tensors):
    from .alloc import numel
    from .pointwise import broadcast_shapes
    return numel(broadcast_shapes(*(t.shape for t in tensors)))


# ---- regression losses ----------------------------------------------------------------

def mse_loss(input, target, reduction="mean"):
    """Mean squared error ``(input - target)^2`` (input and target broadcast)."""
    _check_reduction(reduction)
    diff = _floating("mse", input - target)
    return _reduce(diff * diff, reduction)


def mse_loss_backward(grad, input, target, reduction, grad_input_mask):
    """(d input, d target) of mse_loss: ``+-2 (input - target) grad``."""
    g = _upstream(grad, reduction, _numel(input, target), 2.0)
    gi = (input - target) * g
    return gi, (-gi if grad_input_mask[1] else None)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta > 0``)."""
    _check_reduction(reduction)
    z = _floating("smooth_l1", input - target).abs()
    m = z.clamp(max=beta)
    # m (z - m / 2) / beta: 0.5 z^2 / beta below beta, z - beta / 2 above
    return _reduce(m * (z - 0.5 * m) / beta, reduction)


def smooth_l1_loss_backward(grad, input, target, reduction, beta, grad_input_mask):
    """(d input, d target) of smooth_l1_loss: ``+-clamp(d / beta, -1, 1) grad``."""
    g = _upstream(grad, reduction, _numel(input, target))
    gi = ((input - target) / beta).clamp(-1, 1) * g
    return gi, (-gi if grad_input_mask[1] else None)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    _check_reduction(reduction)
    z = _floating("huber", input - target).abs()
    m = z.clamp(max=delta)
    return _reduce(m * (z - 0.5 * m), reduction)


def huber_loss_backward(grad, input, target, reduction, delta, grad_input_mask):
    """(d input, d target) of huber_loss: ``+-clamp(d, -delta, delta) grad``."""
    g = _upstream(grad, reduction, _numel(input, target))
    gi = (input - target).clamp(-delta, delta) * g
    return gi, (-gi if grad_input_mask[1] else None)


# ---- binary cross entropy -------------------------------------------------------------

# PyTorch's floor of x (1 - x) in the BCE gradient: 1e-12 rounded to float32, whatever
# the dtype (so saturated inputs get the very same huge gradient)
_BCE_EPS = 9.999999960041972e-13


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """``-(t log(x) + (1 - t) log(1 - x))`` with the logs clamped at -100, times
    ``weight`` (broadcast to the input)."""
    _check_reduction(reduction)
    log_x = input.log().clamp_min(-100)
    log_1mx = (-input).log1p().clamp_min(-100)
    loss = -_fw().lerp(log_1mx, log_x, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_backward(grad, input, target, weight, reduction, grad_input_mask):
    """(d input, d target) of binary_cross_entropy: ``(x - t) / max(x (1 - x), 1e-12)``
    (finite where x is 0 or 1) and ``log(1 - x) - log(x)`` (unclamped, as PyTorch)."""
    g = _upstream(grad, reduction, input.numel())
    if weight is not None:
        g = g * weight
    gi = gt = None
    if grad_input_mask[0]:
        gi = (input - target) / (input * (1 - input)).clamp_min(_BCE_EPS) * g
    if grad_input_mask[1]:
        gt = ((-input).log1p() - input.log()) * g
    return gi, gt


def _softplus():
    return _fw().nn.functional.softplus


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction="mean"):
    """``(1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)``: BCE of ``sigmoid(x)`` in a
    form that never overflows, times ``weight``."""
    _check_reduction(reduction)
    sp = _softplus()(-input)        # -log(sigmoid(x))
    if pos_weight is not None:
        sp = sp * ((pos_weight - 1) * target + 1)
    loss = _fw().addcmul(sp, 1 - target, input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits_backward(grad, input, target, weight, pos_weight,
                                              reduction, grad_input_mask):
    """(d input, d target) of binary_cross_entropy_with_logits:
    ``lw sigmoid(x) - pos_weight t`` (lw = 1 + (pos_weight - 1) t) and
    ``(pos_weight - 1) softplus(-x) - x``."""
    g = _upstream(grad, reduction, input.numel())
    if weight is not None:
        g = g * weight
    gi = gt = None
    if grad_input_mask[0]:
        s = input.sigmoid()
        if pos_weight is None:
            gi = (s - target) * g
        else:
            gi = (((pos_weight - 1) * target + 1) * s - pos_weight * target) * g
    if grad_input_mask[1]:
        if pos_weight is None:
            gt = -input * g
        else:
            gt = ((pos_weight - 1) * _softplus()(-input) - input) * g
    return gi, gt


def soft_margin_loss(input, target, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))``."""
    _check_reduction(reduction)
    return _reduce(_softplus()(-target * input), reduction)


def soft_margin_loss_backward(grad, input, target, reduction):
    """d input of soft_margin_loss: ``-t sigmoid(-t x) grad``."""
    g = _upstream(grad, reduction, input.numel())
    z = -target * input
    return -target * z.sigmoid() * g


# ---- negative log likelihood ----------------------------------------------------------

def _nll_pick(input, target, weight, ignore_index):
    """(index, w, cdim): the class index of each target (0 where ignored), its weight (0
    where ignored) and the class dim, for a (C,), (N, C) or (N, C, d1, ...) input."""
    fw = _fw()
    if input.dim() == 1:
        target = target.reshape(())
    target = target.to(_dtype.int64)
    keep = target != ignore_index
    index = fw.where(keep, target, fw.zeros_like(target))
    if weight is None:
        w = keep.to(input.dtype)
    else:
        w = weight.index_select(0, index.reshape(-1)).reshape(index.shape)
        w = fw.where(keep, w, fw.zeros_like(w))
    return index, w, (1 if input.dim() >= 2 else 0)


def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    """``-weight[t] * input[.., t, ..]`` over the targets not ``ignore_index``; a 'mean'
    divides by the summed weights of those targets."""
    _check_reduction(reduction)
    index, w, cdim = _nll_pick(input, target, weight, ignore_index)
    picked = input.gather(cdim, index.unsqueeze(cdim)).squeeze(cdim)
    loss = -picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def nll_loss_backward(grad, input, target, weight, reduction, ignore_index):
    """d input of nll_loss: ``-weight[t] grad`` scattered at each target's class."""
    fw = _fw()
    with fw.no_grad():
        index, w, cdim = _nll_pick(input, target, weight, ignore_index)
        g = grad / w.sum() if reduction == "mean" else grad
        src = (-w * g).to(input.dtype).unsqueeze(cdim)
        zeros = fw.zeros(input.shape, dtype=input.dtype, device=input.device)
        out = zeros.scatter(cdim, index.unsqueeze(cdim), src)
    if not fw.is_grad_enabled():
        return out
    # PyTorch's NllLossBackwardBackward0: a graph to grad and to input (create_graph)
    from ..autograd.loss_nodes import attach_nll_double_backward
    return attach_nll_double_backward(out, grad, input, target, weight, reduction,
                                      ignore_index)


def nll_loss2d(input, target, weight=None, reduction="mean", ignore_index=-100):
    """nll_loss of an (N, C, H, W) input (PyTorch's spatial form, its own node)."""
    if input.dim() != 4:
        raise RuntimeError(f"nll_loss2d: expected input of 4 dimensions, got shape "
                           f"{list(input.shape)}")
    return nll_loss(input, target, weight, reduction, ignore_index)
