"""Optimizers and learning-rate schedules (PyTorch's ``torch.optim``): one file per
optimizer, each listing its public names in ``__all__``."""
from .optimizer import *  # noqa: F401,F403
from .sgd import *  # noqa: F401,F403
from .adam import *  # noqa: F401,F403
from .adamw import *  # noqa: F401,F403
from .rmsprop import *  # noqa: F401,F403
from .adagrad import *  # noqa: F401,F403
from .adadelta import *  # noqa: F401,F403
from .adamax import *  # noqa: F401,F403
from .nadam import *  # noqa: F401,F403
from .radam import *  # noqa: F401,F403
from .asgd import *  # noqa: F401,F403
from .rprop import *  # noqa: F401,F403
from .lbfgs import *  # noqa: F401,F403
from .adafactor import *  # noqa: F401,F403
from .muon import *  # noqa: F401,F403
from .sparse_adam import *  # noqa: F401,F403
from . import lr_scheduler, swa_utils  # noqa: F401,E402
