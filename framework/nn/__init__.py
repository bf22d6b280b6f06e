"""Neural network building blocks (PyTorch's ``torch.nn``)."""
from . import functional  # noqa: F401
