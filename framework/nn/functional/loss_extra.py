"""Margin, embedding, multi-label, triplet and CTC losses of ``nn.functional`` (re-exported
by loss.py, which also holds the reduction helpers used here)."""
import numpy as np

import framework as fw
from framework._ops.pointwise import broadcast_shapes, type_name

__all__ = ["cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "ctc_loss"]


def _loss_helpers():
    # loss.py imports this module at its end, so its helpers are looked up at call time
    from . import loss
    return loss


def _resolve(size_average, reduce, reduction):
    return _loss_helpers().resolve_reduction(size_average, reduce, reduction)


def _reduce(loss, reduction):
    return _loss_helpers().reduce_loss(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    r"""``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``; inputs (N, D) with target (N,), or unbatched (D,) with a 0-d target."""
    reduction = _resolve(size_average, reduce, reduction)
    if target.dim() not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if target.dim() == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{target.dim()}D target tensor expects {want}D input tensors, but "
                           f"found inputs with sizes {list(input1.shape)} and "
                           f"{list(input2.shape)}.")
    d = target.dim()
    eps = 1e-12  # keeps the norms of zero vectors away from 0, as PyTorch does
    dot = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + eps
    mag2 = (input2 * input2).sum(d) + eps
    cos = dot / (mag1 * mag2).sqrt()
    zero = fw.zeros_like(cos)
    loss = (fw.where(target == 1, 1 - cos, zero)
            + fw.where(target == -1, (cos - margin).clamp_min(0), zero))
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    r"""``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _resolve(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.size()}, input2: "
                           f"{input2.size()}, target: {target.size()} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    r"""``input`` where ``target == 1`` and ``max(0, margin - input)`` where
    ``target == -1`` (other target values get both terms, as in PyTorch)."""
    reduction = _resolve(size_average, reduce, reduction)
    zero = fw.zeros_like(input)
    loss = (fw.where(target != 1, (margin - input).clamp_min(0), zero)
            + fw.where(target != -1, input, zero))
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r"""Two-class logistic loss ``log(1 + exp(-target * input))``."""
    reduction = _resolve(size_average, reduce, reduction)
    _loss_helpers().check_no_grad_arg("soft_margin_loss", "target", target)
    shape = broadcast_shapes(input.shape, target.shape)
    if shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    return fw._soft_margin_loss(input, target, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    r"""One-vs-all logistic loss averaged over the classes (last dim) of ``input``."""
    if size_average is not None or reduce is not None:
        reduction = _loss_helpers().legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    from .activation import logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def _check_margin_input(input):
    """Multi-class margin losses take (C,) or (N, C) with C > 0, or a 0-dim input (one
    class)."""
    if not (input.dim() == 0 or (input.dim() == 1 and input.shape[0] != 0) or
            (input.dim() == 2 and input.shape[1] != 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")


def _check_long(target):
    if target.dtype != fw.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_name(target.dtype)}")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    r"""Multi-class multi-label hinge loss. Each row of ``target`` lists class indices,
    ended by the first -1; the loss sums ``max(0, 1 - (x[y] - x[i]))`` over listed ``y``
    and unlisted ``i``, divided by the number of classes."""
    reduction = _resolve(size_average, reduce, reduction)
    _check_margin_input(input)
    _check_long(target)
    n_classes = input.shape[-1] if input.dim() else 1
    if input.dim() <= 1:
        if not (target.dim() <= 1 and target.numel() == n_classes):
            raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input "
                               f"of size: {list(input.shape)}")
    elif target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    if ((target < -1) | (target >= n_classes)).any().item():
        raise RuntimeError("argument #2 'target' is out of range")
    x = input.reshape(-1, n_classes)
    t = target.reshape(-1, n_classes)
    # a label counts while no -1 has been seen in its row yet
    listed = (t < 0).to(fw.int64).cumsum(-1) == 0
    index = fw.where(listed, t, fw.zeros_like(t))
    classes = fw.arange(n_classes, device=input.device)
    is_target = ((index.unsqueeze(-1) == classes) & listed.unsqueeze(-1)).any(1)   # (N, C)
    x_y = x.gather(1, index)                                                      # (N, J)
    hinge = (1 - x_y.unsqueeze(-1) + x.unsqueeze(1)).clamp_min(0)                 # (N, J, C)
    use = listed.unsqueeze(-1) & ~is_target.unsqueeze(1)
    loss = fw.where(use, hinge, fw.zeros_like(hinge)).sum((1, 2)) / n_classes
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    r"""Multi-class hinge loss: the mean over classes ``i != y`` of
    ``(max(0, margin - x[y] + x[i]))^p``, times ``weight[y]``."""
    reduction = _resolve(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    n_classes = input.shape[-1] if input.dim() else 1
    n_frames = input.shape[0] if input.dim() == 2 else 1
    if not (target.dim() <= 1 and target.numel() == n_frames):
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal "
                           "to the number of input samples (batch size). Expected target "
                           f"size [{n_frames}], but got {list(target.shape)}. Input has "
                           f"shape {list(input.shape)}.")
    _check_long(target)
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"inconsistent weight size, expected {n_classes} but got "
                           f"{list(weight.shape)}")
    _loss_helpers().check_no_grad_arg("multi_margin_loss", "weight", weight)
    if ((target < 0) | (target >= n_classes)).any().item():
        raise RuntimeError("target out of range")
    x = input.reshape(-1, n_classes)
    t = target.reshape(-1, 1)
    z = (margin - x.gather(1, t) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t.reshape(-1)).unsqueeze(1)
    others = fw.arange(n_classes, device=input.device) != t
    loss = fw.where(others, z, fw.zeros_like(z)).sum(1) / n_classes
    return _reduce(loss.reshape(target.shape), reduction)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6):
    """``||x1 - x2 + eps||_p`` over the last dim (PyTorch's pairwise_distance)."""
    return fw.linalg.vector_norm(x1 - x2 + eps, ord=p, dim=-1)


def _check_triplet(anchor, positive, negative, margin):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    r"""``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the p-norm pairwise distance;
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance."""
    reduction = _resolve(size_average, reduce, reduction)
    _check_triplet(anchor, positive, negative, margin)
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = fw.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    r""":func:`triplet_margin_loss` with any ``distance_function(x1, x2)`` (default: the
    Euclidean pairwise distance)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet(anchor, positive, negative, margin)
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = fw.minimum(d_neg, dist(positive, negative))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce(loss, reduction)


# -- CTC ----------------------------------------------------------------------------------

def _logsumexp3(a, b, c):
    """log(e^a + e^b + e^c) elementwise, -inf where all three are -inf (no NaN)."""
    m = fw.maximum(fw.maximum(a, b), c)
    m = fw.where(m == float("-inf"), fw.zeros_like(m), m)
    return m + ((a - m).exp() + (b - m).exp() + (c - m).exp()).log()


def _shift(x, k, fill):
    """``x`` moved right by ``k`` along the last dim, the first ``k`` slots set to fill."""
    if k >= x.shape[-1]:
        return fw.full_like(x, fill)
    pad = fw.full_like(x[..., :k], fill)
    return fw.cat([pad, x[..., :-k]], -1)


def _unshift(x, k, fill):
    """``x`` moved left by ``k`` along the last dim, the last ``k`` slots set to fill."""
    if k >= x.shape[-1]:
        return fw.full_like(x, fill)
    pad = fw.full_like(x[..., :k], fill)
    return fw.cat([x[..., k:], pad], -1)


class _CTCLoss(fw.autograd.Function):
    """Per-sample CTC negative log likelihood with PyTorch's gradient.

    Forward: the log-space alpha recursion over the extended label sequence l' (blanks
    between and around the labels), vectorised over the batch, one step per time frame.
    Backward: the beta recursion, then PyTorch's formula for the gradient with respect to
    ``log_probs``: ``exp(lp) - sum_{s: l'_s = c} exp(alpha + beta + nll - lp)`` for frames
    inside each input length (0 after it). The ``exp(lp)`` term makes it the gradient of
    the loss through a ``log_softmax`` producing ``log_probs``, which is how PyTorch
    defines it."""

    @staticmethod
    def forward(ctx, log_probs, ext, skip, in_len, tgt_len, zero_infinity):
        T, N, _ = log_probs.shape
        L = ext.shape[1]
        ninf = float("-inf")
        lpe = log_probs.gather(2, ext.unsqueeze(0).expand(T, N, L))   # (T, N, L)
        pos = fw.arange(L, device=ext.device)
        inside = pos < (2 * tgt_len + 1).unsqueeze(1)                 # valid l' positions
        alpha = fw.where(pos < 2, lpe[0], fw.full_like(lpe[0], ninf))
        alpha = fw.where(inside, alpha, fw.full_like(alpha, ninf))
        # an empty input emits nothing: probability 1 for an empty target, 0 otherwise
        empty = fw.where(pos == 0, fw.zeros_like(alpha), fw.full_like(alpha, ninf))
        alpha = fw.where((in_len == 0).unsqueeze(1), empty, alpha)
        alphas = [alpha]
        for t in range(1, T):
            two = fw.where(skip, _shift(alpha, 2, ninf), fw.full_like(alpha, ninf))
            new = _logsumexp3(alpha, _shift(alpha, 1, ninf), two) + lpe[t]
            new = fw.where(inside, new, fw.full_like(new, ninf))
            # frames past a sample's input length keep its last alpha
            alpha = fw.where((t < in_len).unsqueeze(1), new, alpha)
            alphas.append(alpha)
        end = (2 * tgt_len).unsqueeze(1)
        last = alpha.gather(1, end).squeeze(1)
        before = alpha.gather(1, (end - 1).clamp_min(0)).squeeze(1)
        before = fw.where(tgt_len > 0, before, fw.full_like(before, ninf))
        nll = -fw.logaddexp(last, before)
        ctx.save_for_backward(log_probs, lpe, fw.stack(alphas), nll, ext, skip, in_len,
                              tgt_len)
        ctx.zero_infinity = zero_infinity
        if zero_infinity:
            nll = fw.where(nll == float("inf"), fw.zeros_like(nll), nll)
        return nll

    @staticmethod
    def backward(ctx, grad):
        log_probs, lpe, alphas, nll, ext, skip, in_len, tgt_len = ctx.saved_tensors
        T, N, C = log_probs.shape
        L = ext.shape[1]
        ninf = float("-inf")
        pos = fw.arange(L, device=ext.device)
        end = (2 * tgt_len).unsqueeze(1)
        at_end = (pos == end) | ((pos == end - 1) & (tgt_len > 0).unsqueeze(1))
        # skip transitions into s + 2 are allowed where skip[s + 2]
        skip_next = _unshift(skip, 2, False)
        beta = fw.full_like(lpe[0], ninf)
        post = []
        for t in range(T - 1, -1, -1):
            two = fw.where(skip_next, _unshift(beta, 2, ninf), fw.full_like(beta, ninf))
            step = _logsumexp3(beta, _unshift(beta, 1, ninf), two) + lpe[t]
            start = fw.where(at_end, lpe[t], fw.full_like(beta, ninf))
            last = (t == in_len - 1).unsqueeze(1)
            running = (t < in_len - 1).unsqueeze(1)
            beta = fw.where(last, start, fw.where(running, step, fw.full_like(step, ninf)))
            # posterior mass of each l' position at frame t, summed per class below
            post.append((alphas[t] + beta + nll.unsqueeze(1) - lpe[t]).exp())
        post = fw.stack(post[::-1])                                    # (T, N, L)
        occupancy = fw.zeros_like(log_probs).scatter_add(2, ext.unsqueeze(0).expand(T, N, L),
                                                          post)
        g = log_probs.exp() - occupancy
        # an impossible alignment (nll = inf) gives NaN for every class, as in PyTorch
        g = g + (nll - nll).reshape(1, N, 1)
        keep = fw.arange(T, device=ext.device).unsqueeze(1) < in_len    # (T, N)
        if ctx.zero_infinity:
            # impossible alignments: zero gradient (their NaN must not leak through)
            keep = keep & (nll != float("inf"))
        g = fw.where(keep.unsqueeze(2), g * grad.reshape(1, N, 1), fw.zeros_like(g))
        return g, None, None, None, None, None


def _lengths(x):
    """Lengths as a list of Python ints, from a tensor, a sequence or an int."""
    if isinstance(x, fw.Tensor):
        return [int(v) for v in x.reshape(-1).tolist()]
    if isinstance(x, int):
        return [x]
    return [int(v) for v in x]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    r"""Connectionist Temporal Classification loss of ``log_probs`` (T, N, C) (or (T, C)
    unbatched) against ``targets``, padded (N, S) or concatenated (sum(target_lengths),).
    ``'mean'`` divides each sample's loss by its target length, then averages; with
    ``zero_infinity`` impossible alignments give loss 0 and gradient 0."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.dim() == 1 and targets.numel() > 0:
            targets = targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-"
                           "dimensional tensor for argument #1 'log_probs' (while checking "
                           "arguments for ctc_loss_allocate_outputs)")
    T, N, C = log_probs.shape
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    for name, x in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if isinstance(x, fw.Tensor) and (x.dtype.is_floating_point or x.dtype.is_complex):
            raise RuntimeError(f"{name} must be integral")
    in_len = _lengths(input_lengths)
    tgt_len = _lengths(target_lengths)
    for name, lens in (("input_lengths", in_len), ("target_lengths", tgt_len)):
        for k in lens:
            if k < 0:
                raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                                   f"{k} (while checking arguments for "
                                   "ctc_loss_allocate_outputs)")
    if len(in_len) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tgt_len) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    suffix = (" for argument #2 'targets' (while checking arguments for "
              "ctc_loss_allocate_outputs)")
    tg = targets.to(fw.int64).cpu().numpy()
    if targets.dim() == 1:
        if tg.shape[0] != sum(tgt_len):
            raise RuntimeError(f"Expected tensor to have size {sum(tgt_len)} at dimension 0, "
                               f"but got size {tg.shape[0]}{suffix}")
        offsets = [sum(tgt_len[:n]) for n in range(N)]
        rows = [tg[o:o + k] for o, k in zip(offsets, tgt_len)]
    else:
        for k in tgt_len:
            if k > tg.shape[1]:
                raise RuntimeError(f"Expected tensor to have size at least {k} at dimension "
                                   f"1, but got size {tg.shape[1]}{suffix}")
        rows = [tg[n, :k] for n, k in enumerate(tgt_len)]
    for k in in_len:
        if k > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {k} (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
    ext, skip = _extended_labels(rows, blank, max(tgt_len, default=0))
    dev = log_probs.device
    ext = fw.tensor(ext, device=dev)
    skip = fw.tensor(skip, device=dev)
    in_len_t = fw.tensor(in_len, dtype=fw.int64, device=dev)
    tgt_len_t = fw.tensor(tgt_len, dtype=fw.int64, device=dev)
    loss = _CTCLoss.apply(log_probs, ext, skip, in_len_t, tgt_len_t, zero_infinity)
    if reduction == "mean":
        return (loss / tgt_len_t.clamp_min(1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss


def _extended_labels(rows, blank, max_len):
    """The extended label sequences l' = (blank, y1, blank, y2, ..., blank), padded with
    blanks to 2 * max_len + 1, and where the skip transition s-2 -> s is allowed."""
    L = 2 * max_len + 1
    ext = np.full((len(rows), L), blank, dtype=np.int64)
    for n, row in enumerate(rows):
        ext[n, 1:2 * len(row):2] = row
    skip = np.zeros((len(rows), L), dtype=bool)
    # PyTorch allows the skip wherever l'[s] differs from l'[s - 2], which also decides what
    # a blank inside a target means
    skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
    return ext, skip
