"""The CPU backend: thin launchers over the C++ kernels in framework._C, one module per
kernel family. Ops in framework._ops reach them as ``backend(device).<family>.<kernel>``."""
from . import copy, pointwise, reduction, sort, index, linalg, random, shape  # noqa: F401
from . import softmax, pool  # noqa: F401
from . import conv, conv_gemm  # noqa: F401
from . import optim, grad_norm  # noqa: F401
from . import amp  # noqa: F401
from . import norm  # noqa: F401
from . import loss  # noqa: F401
from . import attention  # noqa: F401
from . import dropout, embedding, sampling  # noqa: F401
from . import fused_linear  # noqa: F401
from . import grouped_mm  # noqa: F401
