"""framework.utils.benchmark: ``Timer`` for timing statements, ``Measurement`` for their
statistics and ``Compare`` for tables of many (PyTorch's ``torch.utils.benchmark``;
the Callgrind and fuzzer utilities are not provided)."""
from .common import *  # noqa: F401,F403
from .compare import *  # noqa: F401,F403
from .timer import *  # noqa: F401,F403
from .common import __all__ as _common_all
from .compare import __all__ as _compare_all
from .timer import __all__ as _timer_all

__all__ = [*_common_all, *_compare_all, *_timer_all]
