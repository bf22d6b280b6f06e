"""``framework.nn.parallel.comm``: PyTorch's home of the multi-GPU copies
(framework/cuda/comm.py holds them)."""
from ...cuda.comm import (  # noqa: F401
    broadcast, broadcast_coalesced, gather, reduce_add, reduce_add_coalesced, scatter,
)

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced",
           "scatter", "gather"]
