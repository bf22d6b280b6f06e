"""Batch normalization: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d`` (and the base
``_NormBase`` that the instance norms share)."""
import framework as fw

from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _NormBase(Module):
    """Parameters (``weight``, ``bias``) and running statistics (``running_mean``,
    ``running_var``, ``num_batches_tracked``) shared by batch and instance norm."""

    # version 2 added num_batches_tracked; older checkpoints lack it
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(fw.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(fw.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", fw.zeros(num_features, device=device,
                                                          dtype=dtype))
            self.register_buffer("running_var", fw.ones(num_features, device=device,
                                                        dtype=dtype))
            self.register_buffer("num_batches_tracked", fw.tensor(0, dtype=fw.int64,
                                                                  device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            with fw.no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed load with the count kept
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked
                                   if self.num_batches_tracked is not None
                                   else fw.tensor(0, dtype=fw.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # cumulative moving average over every batch seen so far
                factor = 1.0 / float(self.num_batches_tracked)
        # batch statistics in training, and in eval when there are no running ones
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        # running statistics are passed only where they are read or updated
        pass_running = not self.training or self.track_running_stats
        return F.batch_norm(input,
                            self.running_mean if pass_running else None,
                            self.running_var if pass_running else None,
                            self.weight, self.bias, use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    r"""Batch normalization over a ``(N, C)`` or ``(N, C, L)`` input.

    Args:
        num_features: number of channels ``C``
        eps: added to the variance for numerical stability. Default: 1e-5
        momentum: weight of the new batch in the running statistics; ``None`` for a
            cumulative average. Default: 0.1
        affine: learnable per-channel ``weight`` and ``bias``. Default: ``True``
        track_running_stats: keep running statistics (used in eval mode). Default: ``True``
        bias: with ``affine``, also learn ``bias``. Default: ``True``
    """

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch normalization over a ``(N, C, H, W)`` input (arguments as
    :class:`BatchNorm1d`)."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch normalization over a ``(N, C, D, H, W)`` input (arguments as
    :class:`BatchNorm1d`)."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")
