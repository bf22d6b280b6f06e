import warnings

from ..._dtype import bfloat16
from ...amp import autocast_mode as _autocast_mode

__all__ = ["autocast"]


class autocast(_autocast_mode.autocast):
    """See :class:`framework.autocast`. ``framework.cpu.amp.autocast(args...)`` is
    deprecated: use ``framework.amp.autocast("cpu", args...)``."""

    def __init__(self, enabled=True, dtype=bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
