"""``framework.utils.deterministic``: ``fill_uninitialized_memory``, whether the empty
family of factories fills new memory (NaN, the largest integer) while deterministic
algorithms are on (framework.use_deterministic_algorithms). True by default, as PyTorch's."""
import sys
import types

from .. import _determinism


class _Module(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        """Whether the empty family fills new memory in deterministic mode."""
        return _determinism.fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"expected a bool, but got {type(value).__name__}")
        _determinism.fill_uninitialized_memory = value


sys.modules[__name__].__class__ = _Module
