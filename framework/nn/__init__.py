"""Neural network building blocks (PyTorch's ``torch.nn``); modules arrive with the nn issue."""
from . import functional  # noqa: F401
