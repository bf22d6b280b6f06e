"""Neural network building blocks (PyTorch's ``torch.nn``)."""
from .parameter import *  # noqa: F401,F403
from .modules import *  # noqa: F401,F403
from . import functional, init, parallel, utils  # noqa: F401
