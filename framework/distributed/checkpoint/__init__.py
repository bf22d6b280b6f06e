"""Distributed checkpointing helpers (PyTorch's ``torch.distributed.checkpoint``): only the
``state_dict`` module, which gets and sets model state dicts across FSDP's sharding."""
from . import state_dict  # noqa: F401
