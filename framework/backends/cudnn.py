"""framework.backends.cudnn: PyTorch's ``torch.backends.cudnn`` switches.

There is no cuDNN here: convolutions are the framework's own Triton kernels
(framework/kernels/conv_gemm.py). The switches keep PyTorch's names, defaults and
checks so that training scripts set them unchanged, and mean what they can:
- ``allow_tf32`` (default True, as PyTorch's): float32 convolutions on cuda may use TF32;
- ``deterministic``: the convolution kernels are deterministic whatever its value (their
  reductions have a fixed order; no atomics);
- ``benchmark``, ``benchmark_limit``, ``enabled``: kept, no effect (no algorithm search:
  each shape has one kernel configuration).
``is_available()`` is False and ``version()`` None: no cuDNN library is loaded.
"""
import contextlib
import sys
import types

from .. import _matmul_precision

_state = {"enabled": True, "benchmark": False, "deterministic": False, "benchmark_limit": 10}


def is_available():
    """Whether cuDNN is available: never (the convolutions are Triton kernels)."""
    return False


def version():
    """cuDNN's version: None, none is loaded."""
    return None


def is_acceptable(tensor):
    """Whether cuDNN would take ``tensor``: never."""
    return False


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"{name} expects a bool, but got {type(value).__name__}")


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Sets the switches inside the block and restores them after."""
    mod = sys.modules[__name__]
    saved = (mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic,
             mod.allow_tf32)
    mod.enabled, mod.benchmark, mod.deterministic, mod.allow_tf32 = (
        enabled, benchmark, deterministic, allow_tf32)
    if benchmark_limit is not None:
        mod.benchmark_limit = benchmark_limit
    try:
        yield
    finally:
        (mod.enabled, mod.benchmark, mod.benchmark_limit, mod.deterministic,
         mod.allow_tf32) = saved


class _Module(types.ModuleType):
    @property
    def enabled(self):
        return _state["enabled"]

    @enabled.setter
    def enabled(self, value):
        _check_bool("set_enabled_cudnn", value)
        _state["enabled"] = value

    @property
    def benchmark(self):
        return _state["benchmark"]

    @benchmark.setter
    def benchmark(self, value):
        _check_bool("set_benchmark_cudnn", value)
        _state["benchmark"] = value

    @property
    def deterministic(self):
        return _state["deterministic"]

    @deterministic.setter
    def deterministic(self, value):
        _check_bool("set_deterministic_cudnn", value)
        _state["deterministic"] = value

    @property
    def benchmark_limit(self):
        return _state["benchmark_limit"]

    @benchmark_limit.setter
    def benchmark_limit(self, value):
        _state["benchmark_limit"] = value

    @property
    def allow_tf32(self):
        return _matmul_precision.allow_conv_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value):
        _check_bool("set_allow_tf32_cublas", value)   # PyTorch's text
        _matmul_precision.set_conv_tf32(value)


sys.modules[__name__].__class__ = _Module
