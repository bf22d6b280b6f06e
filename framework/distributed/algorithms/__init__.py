"""Distributed training algorithms (``torch.distributed.algorithms``): DDP communication
hooks in ``ddp_comm_hooks``, and the ``Join`` context manager for uneven inputs."""
from .join import Join, JoinHook, Joinable  # noqa: F401

__all__ = ["Join", "JoinHook", "Joinable"]
