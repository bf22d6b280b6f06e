"""Distributed training algorithms (``torch.distributed.algorithms``): DDP communication
hooks in ``ddp_comm_hooks``."""
