"""Tensor parallelism (PyTorch's ``torch.distributed.tensor.parallel``): lay out
``nn.Linear`` and ``nn.Embedding`` column- or row-wise over a 1-D DeviceMesh with
``parallelize_module``. See ``framework.distributed.tensor`` for the differences from
PyTorch."""
from .api import parallelize_module  # noqa: F401
from .style import (  # noqa: F401
    ColwiseParallel, ParallelStyle, PrepareModuleInput, PrepareModuleOutput, RowwiseParallel,
    SequenceParallel)

__all__ = ["parallelize_module", "ColwiseParallel", "RowwiseParallel", "SequenceParallel",
           "PrepareModuleInput", "PrepareModuleOutput", "ParallelStyle"]
