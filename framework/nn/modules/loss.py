"""Loss modules: hold a loss's options (and class weights as buffers, so they follow
``.to()`` and appear in the state_dict as in PyTorch) and call ``nn.functional``."""
from .module import Module

__all__ = ["L1Loss", "NLLLoss", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss",
           "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
           "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss",
           "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
           "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"]


def _F():
    # nn.functional is imported after nn.modules; look it up at call time
    import framework.nn.functional as F
    return F


class _Loss(Module):
    """Base of the losses: the ``reduction`` option, set from the deprecated
    ``size_average``/``reduce`` pair when either is given."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            from ..functional.loss import legacy_reduction
            self.reduction = legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with an optional per-class ``weight`` buffer."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    r"""Mean absolute error between input and target."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return _F().l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    r"""Negative log likelihood of class indices under log-probabilities."""

    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return _F().nll_loss(input, target, weight=self.weight,
                             ignore_index=self.ignore_index, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    r"""Negative log likelihood of a Poisson-distributed target."""

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return _F().poisson_nll_loss(log_input, target, log_input=self.log_input,
                                     full=self.full, eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    r"""Negative log likelihood of a Gaussian target with predicted mean and variance."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return _F().gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                      reduction=self.reduction)


class KLDivLoss(_Loss):
    r"""Kullback-Leibler divergence of ``target`` from log-probabilities ``input``."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return _F().kl_div(input, target, reduction=self.reduction,
                           log_target=self.log_target)


class MSELoss(_Loss):
    r"""Mean squared error between input and target."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return _F().mse_loss(input, target, reduction=self.reduction)


class BCELoss(_WeightedLoss):
    r"""Binary cross entropy between probabilities and targets."""

    __constants__ = ["reduction"]

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        return _F().binary_cross_entropy(input, target, weight=self.weight,
                                         reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""Sigmoid and binary cross entropy in one numerically stable loss."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return _F().binary_cross_entropy_with_logits(input, target, self.weight,
                                                     pos_weight=self.pos_weight,
                                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    r"""``x`` for target 1, ``max(0, margin - x)`` for target -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return _F().hinge_embedding_loss(input, target, margin=self.margin,
                                         reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    r"""Multi-class multi-label hinge loss (targets listed, ended by -1)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return _F().multilabel_margin_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    r"""Squared error below ``beta``, absolute error above."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return _F().smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""Squared error below ``delta``, ``delta``-scaled absolute error above."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return _F().huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    r"""Two-class logistic loss ``log(1 + exp(-y x))``."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return _F().soft_margin_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    r"""Cross entropy of logits against class indices or class probabilities."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return _F().cross_entropy(input, target, weight=self.weight,
                                  ignore_index=self.ignore_index, reduction=self.reduction,
                                  label_smoothing=self.label_smoothing)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    r"""One-vs-all logistic loss over the classes."""

    __constants__ = ["reduction"]

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        return _F().multilabel_soft_margin_loss(input, target, weight=self.weight,
                                                reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    r"""``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for -1."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return _F().cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                          reduction=self.reduction)


class MarginRankingLoss(_Loss):
    r"""``max(0, -y * (x1 - x2) + margin)``."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return _F().margin_ranking_loss(input1, input2, target, margin=self.margin,
                                        reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    r"""Multi-class hinge loss with power ``p`` and per-class ``weight``."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, "
                             f"got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return _F().multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                      weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    r"""``max(0, margin + d(a, p) - d(a, n))`` with the p-norm distance."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return _F().triplet_margin_loss(anchor, positive, negative, margin=self.margin,
                                        p=self.p, eps=self.eps, swap=self.swap,
                                        reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    r"""Triplet margin loss with a custom ``distance_function``."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        if distance_function is None:
            # a submodule, as in PyTorch (it shows in the printed module tree)
            from .distance import PairwiseDistance
            distance_function = PairwiseDistance()
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return _F().triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    r"""Connectionist Temporal Classification loss."""

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                             self.reduction, self.zero_infinity)
