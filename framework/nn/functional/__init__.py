"""Functional forms of the nn layers (PyTorch's ``torch.nn.functional``).

Two sources, one namespace: the ops declared in framework/ops.yaml under ``nn.functional``
(relu, gelu, softplus, pad, softmax, ...; kernels and derivatives from the op table), and
the Python-level functions of this package, one file per family, which compose ops. Each
family file lists its public names in ``__all__``.
"""
from framework import _nn_functional_ops as _table

globals().update({k: v for k, v in vars(_table).items() if not k.startswith("_")})
del _table

from .activation import *  # noqa: E402,F401,F403
from .softmax import *  # noqa: E402,F401,F403
from .linear import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .norm import *  # noqa: E402,F401,F403
from .dropout import *  # noqa: E402,F401,F403
from .sparse import *  # noqa: E402,F401,F403
from .distance import *  # noqa: E402,F401,F403
from .attention import *  # noqa: E402,F401,F403
from .vision import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
