"""Parallel wrappers of modules (PyTorch's ``torch.nn.parallel``)."""
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
