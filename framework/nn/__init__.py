"""Neural network building blocks (PyTorch's ``torch.nn``)."""
from .parameter import *  # noqa: F401,F403
from .modules import *  # noqa: F401,F403
from . import functional, init, parallel, utils  # noqa: F401
from . import grad  # noqa: F401,E402
# the package nn.attention, not modules/attention.py (which `from .modules import *` binds
# to the same name, and which `from . import attention` would then return)
import importlib as _importlib  # noqa: E402
attention = _importlib.import_module(__name__ + ".attention")
# ``nn.DataParallel`` and ``nn.parallel.DataParallel`` as in PyTorch (the class lives with
# the layers, in modules/data_parallel.py)
from .modules.data_parallel import DataParallel  # noqa: E402,F401
parallel.DataParallel = DataParallel
