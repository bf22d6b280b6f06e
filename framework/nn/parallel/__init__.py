"""Parallel wrappers of modules (PyTorch's ``torch.nn.parallel``), and the functional forms
of single-process data parallelism (parallel_functions.py)."""
from .distributed import DistributedDataParallel  # noqa: F401
from .parallel_functions import (  # noqa: F401
    scatter, scatter_kwargs, gather, replicate, parallel_apply, data_parallel,
)

__all__ = ["DistributedDataParallel", "DataParallel", "scatter", "scatter_kwargs", "gather",
           "replicate", "parallel_apply", "data_parallel"]
