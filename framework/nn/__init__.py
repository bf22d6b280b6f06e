"""Neural network building blocks (PyTorch's ``torch.nn``)."""
from .parameter import *  # noqa: F401,F403
from .modules import *  # noqa: F401,F403
from . import attention, functional, init, parallel, utils  # noqa: F401
# ``nn.DataParallel`` and ``nn.parallel.DataParallel`` as in PyTorch (the class lives with
# the layers, in modules/data_parallel.py)
from .modules.data_parallel import DataParallel  # noqa: E402,F401
parallel.DataParallel = DataParallel
