"""Distributed optimizers (PyTorch's ``torch.distributed.optim``)."""
from .zero import ZeroRedundancyOptimizer  # noqa: F401

__all__ = ["ZeroRedundancyOptimizer"]
