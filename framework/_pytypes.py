"""Python types accepted where a dtype is expected (``dtype=float``), as PyTorch does."""
import builtins

from . import _dtype


def from_python_type(t):
    if t is builtins.float:
        return _dtype.float64
    if t is builtins.int:
        return _dtype.int64
    if t is builtins.bool:
        return _dtype.bool
    raise TypeError(f"expected a framework.dtype, got {t!r}")
