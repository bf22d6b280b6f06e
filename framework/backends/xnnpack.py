"""framework.backends.xnnpack (PyTorch's ``torch.backends.xnnpack``): ``enabled`` is
False, the framework is not built with XNNPACK; it cannot be assigned (as PyTorch's)."""
import sys
import types


class _Module(types.ModuleType):
    @property
    def enabled(self):
        return False

    @enabled.setter
    def enabled(self, value):
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _Module
