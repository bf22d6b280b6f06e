"""The storage classes, as ``torch.storage``."""
from ._typed_storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
