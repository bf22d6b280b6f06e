"""Instance normalization: ``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d``."""
import warnings

from .. import functional as F
from .batchnorm import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    # the input rank without a batch dimension
    _no_batch_dim = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)

    def _check_input_dim(self, input):
        d = self._no_batch_dim
        if input.dim() not in (d, d + 1):
            raise ValueError(f"expected {d}D or {d + 1}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            # checkpoints from before 0.4 stored running stats this layer no longer keeps
            keys = [prefix + n for n in ("running_mean", "running_var")
                    if prefix + n in state_dict]
            if keys:
                name = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before "
                    "0.4.0, this may be expected because {klass} does not track running "
                    "stats by default since 0.4.0. Please remove these keys from "
                    "state_dict. If the running stats are actually needed, instead set "
                    "track_running_stats=True in {klass} to enable them. See the "
                    "documentation of {klass} for details.".format(
                        names=" and ".join(f'"{k}"' for k in keys), klass=name))
                for k in keys:
                    state_dict.pop(k)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          "You can silence this warning by not passing in num_features, "
                          "which is not used because affine=False", stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    r"""Instance normalization over a ``(N, C, L)`` or ``(C, L)`` input: each channel of
    each sample normalized over ``L``.

    Args:
        num_features: number of channels ``C``
        eps: added to the variance for numerical stability. Default: 1e-5
        momentum: weight of the new batch in the running statistics. Default: 0.1
        affine: learnable per-channel ``weight`` and ``bias``. Default: ``False``
        track_running_stats: keep running statistics and use them in eval mode.
            Default: ``False``
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    r"""Instance normalization over a ``(N, C, H, W)`` or ``(C, H, W)`` input (arguments as
    :class:`InstanceNorm1d`)."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    r"""Instance normalization over a ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input
    (arguments as :class:`InstanceNorm1d`)."""

    _no_batch_dim = 4
