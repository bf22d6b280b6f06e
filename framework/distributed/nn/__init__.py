"""Distributed nn (PyTorch's ``torch.distributed.nn``): the collectives that autograd
differentiates through, from ``functional``."""
from .functional import *  # noqa: F401,F403
from . import functional  # noqa: F401
