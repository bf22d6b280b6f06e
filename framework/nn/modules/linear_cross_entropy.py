"""``LinearCrossEntropyLoss``: a ``Linear`` head and the cross entropy of its logits in one
module (``F.linear_cross_entropy``), and ``LinearCrossEntropyOptions``, PyTorch's options
for its chunked implementation.

framework's ``F.linear_cross_entropy`` computes the logits in one piece: the options are
checked as PyTorch checks them, kept, and otherwise have no effect (the results are the
same; only PyTorch's peak memory differs).
"""
import dataclasses
import math
from typing import Literal

import framework as fw

from .. import functional as F
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    r"""How PyTorch chunks :func:`~framework.nn.functional.linear_cross_entropy` (accepted
    and validated; framework computes the logits in one piece).

    Args:
        allow_retain_graph (bool): allow a second backward. Default: ``False``
        batch_chunk_size (int, optional): rows per chunk. Default: ``None``
        chunking_method (str, optional): ``"auto"``, ``"aspect_ratio"``,
            ``"aspect_ratio:N"`` or ``None``. Default: ``"auto"``
        acc_policy (str): ``"auto"``, ``"accurate"``, ``"balanced"`` or ``"compact"``.
            Default: ``"auto"``
        acc_dtype (dtype, optional): accumulation dtype. Default: ``None``
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        supported = {fw.float16, fw.bfloat16, fw.float32, fw.float64}
        if self.acc_dtype is not None and self.acc_dtype not in supported:
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")


class LinearCrossEntropyLoss(_WeightedLoss):
    r"""Cross entropy between the logits ``linear(input)`` and ``target``: the linear head
    (``self.linear``, weight ``(num_classes * prod(out_features), in_features)``) and the
    loss in one module.

    Args:
        in_features (int): size of each input sample
        num_classes (int): number of classes ``C``
        out_features (tuple of int): ``(d_1, ..., d_K)`` for a K-dimensional loss.
            Default: ``()``
        bias (bool): a learnable bias on the logits. Default: ``False``
        reduction, weight, ignore_index, label_smoothing: as :class:`CrossEntropyLoss`
            (``ignore_index=None`` ignores no class)
        options (LinearCrossEntropyOptions, optional): PyTorch's chunking options
    """

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index",
                     "label_smoothing"]

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # Linear holds 2-d weights: reshaped in forward
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (self.linear.bias.reshape((self.num_classes, *self.out_features))
                       if self.linear.bias is not None else None)
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features},"
                f" num_classes={self.num_classes},"
                f" out_features={self.out_features},"
                f" bias={self.linear.bias is not None},"
                f" reduction={self.reduction},"
                f" ignore_index={self.ignore_index},"
                f" label_smoothing={self.label_smoothing},"
                f" options={self.options}")
