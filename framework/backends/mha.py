"""framework.backends.mha: PyTorch's ``torch.backends.mha`` fast-path switch.

Kept for scripts that set it; MultiheadAttention and TransformerEncoder here have one
code path, so the value does not change what they compute.
"""
__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Returns whether fast path for TransformerEncoder and MultiHeadAttention is enabled."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    """Sets whether fast path is enabled."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
