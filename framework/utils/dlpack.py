"""``framework.utils.dlpack``: PyTorch's ``torch.utils.dlpack`` (to_dlpack / from_dlpack)."""
from .._dlpack import DLDeviceType, from_dlpack  # noqa: F401

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


def to_dlpack(tensor):
    """An (unversioned) DLPack capsule sharing ``tensor``'s memory."""
    return tensor.__dlpack__()
