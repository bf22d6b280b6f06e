"""The loss family: cross entropy with class indices as one fused op
(framework._cross_entropy_loss, its backward framework._cross_entropy_loss_backward);
nn.functional.cross_entropy calls it.

The kernels (native/loss.cpp, framework/kernels/loss.py) take contiguous (rows, C) logits:
an input (N, C) is used as is, (C,) as one row, and (N, C, d1, ...) is copied with the
classes moved last (a segmentation-style input, whose C is usually small). The forward
makes one pass over each row and keeps only its logsumexp (as max and log-sum, 2 x rows
floats) for the backward,
which recomputes the probabilities from the logits; the reduction ('mean' divides by the
summed weights of the non-ignored targets, as PyTorch) is a sum over rows.

The gradient is not written into the logits' buffer (Liger-Kernel's trick): in a
define-by-run framework the logits may still be read by another node of the graph, a hook
or the user after backward, and nothing here can prove they are not.

The backward's own derivatives (double backward) are formulas over framework ops below.
"""
from .. import _dtype
from .._tensor import Tensor
from . import alloc
from .reduction import sum as _sum
from .pointwise import require_tensor, type_name

_REDUCTIONS = ("none", "mean", "sum")


def check_reduction(reduction):
    """PyTorch's error for a ``reduction`` other than 'none', 'mean' and 'sum'."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _fw():
    import framework
    return framework


def _acc(dtype):
    return _dtype.float64 if dtype is _dtype.float64 else _dtype.float32


def _rows(input, target):
    """(x, t, rows, C): input as contiguous (rows, C) logits, target as contiguous int64
    (rows,) class indices."""
    if input.dim() == 1:
        C = input.shape[0]
        x = input.reshape(1, C)
    elif input.dim() == 2:
        C = input.shape[1]
        x = input
    else:
        C = input.shape[1]
        x = input.movedim(1, -1).reshape(-1, C)
    x = x.contiguous()
    t = target.reshape(-1)
    if t.dtype is not _dtype.int64:
        t = t.to(_dtype.int64)
    return x, t.contiguous(), x.shape[0], C


def _check(op, input, target, weight, reduction):
    require_tensor(op, input, "input", 1)
    require_tensor(op, target, "target", 2)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_softmax_lastdim_kernel_impl\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if target.dtype not in (_dtype.int64, _dtype.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{type_name(target.dtype)}")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    C = input.shape[1 if input.dim() >= 2 else 0]
    expected = 1 if input.dim() == 1 else alloc.numel(input.shape) // C if C else 0
    if target.numel() != expected or (input.dim() >= 2 and (
            target.dim() != input.dim() - 1 or target.shape[0] != input.shape[0])):
        raise RuntimeError(f"{op}: target of shape {list(target.shape)} does not fit input "
                           f"of shape {list(input.shape)}")
    if weight is not None:
        require_tensor(op, weight, "weight")
        if weight.numel() != C:
            raise RuntimeError(f"weight tensor should be defined either for all {C} classes "
                               f"or no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                               f"{type_name(weight.dtype)}")
    check_reduction(reduction)
    devices = {input._storage.device, target._storage.device}
    if weight is not None:
        devices.add(weight._storage.device)
    if len(devices) > 1:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                           f"least two devices, {', '.join(sorted(str(d) for d in devices))}!")


def _weight_of(weight):
    return None if weight is None else weight.reshape(-1).contiguous()


def cross_entropy_loss(input, target, weight=None, reduction="mean", ignore_index=-100,
                       label_smoothing=0.0):
    """(loss, stats): cross entropy of logits ``input`` ((N, C), (N, C, d1, ...) or (C,))
    against class indices ``target``, as nn.functional.cross_entropy. Both are in the
    compute dtype (float64 for float64 logits, else float32; nn.functional rounds the loss
    to a 16-bit input's dtype outside autocast). ``stats`` (2 * rows + 1,) holds each row's
    maximum, then each row's log(sum(exp(x - max))) (their sum is the row's logsumexp), then
    the total weight of the targets ('mean' divides by it): what the backward reads."""
    op = "cross_entropy"
    _check(op, input, target, weight, reduction)
    x, t, rows, C = _rows(input, target)
    device = x._storage.device
    acc = _acc(input.dtype)
    loss = alloc.empty((rows,), acc, device)
    stats = alloc.empty((2 * rows + 1,), acc, device)
    wrow = alloc.empty((rows,), acc, device)
    alloc.backend(device).loss.cross_entropy_forward(
        x, t, _weight_of(weight), loss, stats, wrow, rows, C, ignore_index,
        float(label_smoothing))
    total = _total_weight(stats, rows, ())
    _sum(wrow, out=total)
    if reduction == "none":
        out = loss.reshape(target.shape if input.dim() >= 2 else ())
    elif reduction == "sum":
        out = loss.sum()
    else:
        out = loss.sum() / total   # 0 / 0 = NaN when every target is ignored, as PyTorch
    return out, stats


def _total_weight(stats, rows, shape):
    """The total target weight at the end of the forward's ``stats``."""
    return Tensor._make(stats._storage, shape, (1,) * len(shape), stats._offset + 2 * rows,
                        stats.dtype)


def _target_weights(t, weight, ignore_index, dtype):
    """The weight of each row's target (0 where ignored), shaped like ``t``."""
    fw = _fw()
    keep = t != ignore_index
    if weight is None:
        return keep.to(dtype)
    index = fw.where(keep, t, fw.zeros_like(t)).to(_dtype.int64)
    w = weight.reshape(-1).to(dtype).index_select(0, index.reshape(-1)).reshape(t.shape)
    return fw.where(keep, w, fw.zeros_like(w))


def _row_grad(grad_output, target, weight, reduction, ignore_index, dtype):
    """The upstream gradient of each row's loss, shaped like ``target``: grad_output itself
    ('none'), or its scalar divided by the total target weight ('mean')."""
    g = grad_output.to(dtype)
    if reduction == "none":
        return g.reshape(target.shape)
    if reduction == "mean":
        g = g / _target_weights(target, weight, ignore_index, dtype).sum()
    return g.reshape(()).expand(target.shape)


def cross_entropy_loss_backward(grad_output, input, target, weight, reduction, ignore_index,
                                label_smoothing, stats):
    """Gradient of cross_entropy_loss with respect to ``input``, from the logits and the
    forward's per-row ``stats``."""
    op = "cross_entropy_backward"
    _check(op, input, target, weight, reduction)
    require_tensor(op, grad_output, "grad_output")
    x, t, rows, C = _rows(input, target)
    if stats.numel() != 2 * rows + 1 or not stats.is_contiguous():
        raise RuntimeError(f"{op}: expected the forward's stats, {2 * rows + 1} contiguous "
                           f"values, got shape {list(stats.shape)}")
    device = x._storage.device
    acc = _acc(input.dtype)
    if reduction == "none":      # a gradient per row
        g = grad_output.to(acc).reshape(-1).contiguous()
    else:                        # one for every row: the kernels read it as such
        g = grad_output.to(acc).reshape(1)
        if reduction == "mean":
            g = g / _total_weight(stats, rows, (1,))
        g = g.contiguous()
    wsum = None
    if weight is not None and label_smoothing > 0:
        wsum = weight.reshape(-1).to(acc).sum().reshape(1)
    gx = alloc.empty((rows, C), input.dtype, device)
    alloc.backend(device).loss.cross_entropy_backward(
        x, t, _weight_of(weight), wsum, stats, g, gx, rows, C, ignore_index,
        float(label_smoothing))
    if input.dim() <= 2:
        return gx.reshape(input.shape)
    moved = (input.shape[0],) + tuple(input.shape[2:]) + (C,)
    return gx.reshape(moved).movedim(-1, 1)


# ---- derivatives of the backward (double backward), over framework ops ---------------------

def backward_grad_output(gg, input, target, weight, reduction, ignore_index, label_smoothing,
                         stats):
    """d<gg, dx>/d grad_output: dx is linear in grad_output."""
    fw = _fw()
    ones = fw.ones((), dtype=input.dtype, device=input.device)
    if reduction == "none":
        ones = ones.expand(target.shape)
    d = fw._cross_entropy_loss_backward(ones, input, target, weight, reduction, ignore_index,
                                        label_smoothing, stats)
    prod = gg * d
    if reduction == "none":
        return prod.sum(1 if input.dim() >= 2 else 0)
    return prod.sum()


def backward_input(gg, grad_output, input, target, weight, reduction, ignore_index,
                   label_smoothing):
    """d<gg, dx>/d input: dx = g (a softmax(x) - const), so this is softmax's backward of gg
    scaled by g * a per row, a = (1 - eps) w_y + eps / C * sum(w)."""
    fw = _fw()
    cdim = 1 if input.dim() >= 2 else 0
    C = input.shape[cdim]
    dtype = input.dtype
    if input.dim() == 1:
        target = target.reshape(())
    g = _row_grad(grad_output, target, weight, reduction, ignore_index, dtype)
    keep = target != ignore_index
    a = (1 - label_smoothing) * _target_weights(target, weight, ignore_index, dtype)
    if label_smoothing > 0:
        wsum = float(C) if weight is None else weight.to(dtype).sum()
        a = a + keep.to(dtype) * (label_smoothing / C) * wsum
    # ignored rows have no gradient, even where g is inf ('mean' with every target ignored)
    coef = fw.where(keep, g * a, fw.zeros_like(a)).unsqueeze(cdim)
    p = fw.softmax(input, cdim)
    return coef * p * (gg - (gg * p).sum(cdim, keepdim=True))
