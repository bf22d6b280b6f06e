"""``framework.types``: the type aliases PyTorch's ``torch.types`` gives annotations."""
import builtins
import os
from typing import IO, Union

from ._device import device as _device
from ._tensor import Size, Tensor  # noqa: F401

__all__ = ["Number", "Device", "FileLike", "IntLikeType", "FloatLikeType", "BoolLikeType",
           "Size", "Tensor"]

Number = Union[builtins.int, builtins.float, builtins.bool]
Device = Union[_device, builtins.str, builtins.int, None]
FileLike = Union[builtins.str, os.PathLike, IO[bytes]]
IntLikeType = builtins.int
FloatLikeType = builtins.float
BoolLikeType = builtins.bool
