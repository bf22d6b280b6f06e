"""framework.cuda.amp: PyTorch's deprecated ``torch.cuda.amp`` spellings of
``framework.amp`` for cuda: ``GradScaler(...)`` is ``framework.amp.GradScaler("cuda", ...)``,
``autocast(...)`` is ``framework.autocast("cuda", ...)`` (float16 by default),
``custom_fwd``/``custom_bwd`` take ``device_type="cuda"``."""
import warnings

import framework as fw

from ..amp import autocast_mode as _autocast_mode
from ..amp.grad_scaler import GradScaler as _GradScaler, OptState  # noqa: F401

__all__ = ["GradScaler", "autocast", "custom_fwd", "custom_bwd"]


def _deprecated(old, new):
    warnings.warn(f"`framework.cuda.amp.{old}(args...)` is deprecated. Please use "
                  f"`framework.amp.{new}` instead.", FutureWarning, stacklevel=3)


class GradScaler(_GradScaler):
    """See :class:`framework.amp.GradScaler`. ``framework.cuda.amp.GradScaler(args...)`` is
    deprecated: use ``framework.amp.GradScaler("cuda", args...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        _deprecated("GradScaler", "GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


class autocast(_autocast_mode.autocast):
    """See :class:`framework.autocast`. ``framework.cuda.amp.autocast(args...)`` is
    deprecated: use ``framework.amp.autocast("cuda", args...)``."""

    def __init__(self, enabled=True, dtype=fw.float16, cache_enabled=True):
        _deprecated("autocast", "autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: use ``framework.amp.custom_fwd(args..., device_type='cuda')``."""
    _deprecated("custom_fwd", "custom_fwd(args..., device_type='cuda')")
    return _autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: use ``framework.amp.custom_bwd(args..., device_type='cuda')``."""
    _deprecated("custom_bwd", "custom_bwd(args..., device_type='cuda')")
    return _autocast_mode.custom_bwd(bwd, device_type="cuda")
