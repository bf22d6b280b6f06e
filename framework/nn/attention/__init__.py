"""framework.nn.attention: ``sdpa_kernel`` and ``SDPBackend``, PyTorch's switches of
scaled_dot_product_attention's backends (framework/backends/cuda.py keeps them; every
backend is computed by the one fused attention kernel here)."""
import contextlib
import enum

from ...backends import cuda as _cuda
from ...backends.cuda import (SDPAParams, can_use_efficient_attention,  # noqa: F401
                              can_use_flash_attention)
from ._registry import (  # noqa: F401
    activate_flash_attention_impl, current_flash_attention_impl, list_flash_attention_impls,
    register_flash_attention_impl, restore_flash_attention_impl)

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "SDPAParams",
           "can_use_flash_attention", "can_use_efficient_attention",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The backends of scaled_dot_product_attention, with PyTorch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
         SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
         SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Inside the block only ``backends`` (an SDPBackend or a list of them) may compute
    scaled_dot_product_attention; the previous switches come back on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    chosen = {_FLAG[b] for b in backends if b in _FLAG}
    saved = dict(_cuda._sdp)
    try:
        for name in _cuda._sdp:
            _cuda._sdp[name] = name in chosen
        yield {}
    finally:
        _cuda._sdp.update(saved)


from . import varlen  # noqa: E402,F401  (torch.nn.attention.varlen)
