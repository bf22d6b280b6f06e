"""framework.cpu: PyTorch's ``torch.cpu``, the cpu counterparts of ``framework.cuda``'s
device and stream functions, for device-agnostic code (there is one cpu device and its
work is synchronous)."""
import os
import platform
from contextlib import AbstractContextManager
from functools import lru_cache
from types import MappingProxyType

from . import amp  # noqa: F401

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event",
           "get_capabilities"]


def is_available():
    """Always True (the cpu is always there)."""
    return True


def is_initialized():
    """Always True."""
    return True


def synchronize(device=None):
    """Waits for all cpu work: cpu ops are synchronous, so nothing to do."""


class Stream:
    """A cpu stream: only here so that device-agnostic code runs."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """A cpu event: always complete."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


def current_stream(device=None):
    """The current cpu :class:`Stream` (``device`` is ignored)."""
    return _current_stream


class StreamContext(AbstractContextManager):
    """Context manager that makes a cpu stream current (None: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        global _current_stream
        if self.stream is None:
            return
        self.prev_stream = _current_stream
        _current_stream = self.stream

    def __exit__(self, type, value, traceback):
        global _current_stream
        if self.stream is None:
            return
        _current_stream = self.prev_stream


def stream(stream):
    """``with framework.cpu.stream(s):`` (a :class:`StreamContext`)."""
    return StreamContext(stream)


def device_count():
    """The number of cpu devices (not cores): 1."""
    return 1


def set_device(device):
    """Does nothing (one cpu device)."""


def current_device():
    """Always "cpu"."""
    return "cpu"


# PyTorch's capability names -> the Linux /proc/cpuinfo flag that reports each (x86)
_X86_FLAGS = {
    "sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3", "sse4_1": "sse4_1",
    "sse4_2": "sse4_2", "sse4a": "sse4a", "avx": "avx", "avx2": "avx2", "avx_vnni": "avx_vnni",
    "avx512_f": "avx512f", "avx512_cd": "avx512cd", "avx512_dq": "avx512dq",
    "avx512_bw": "avx512bw", "avx512_vl": "avx512vl", "avx512_ifma": "avx512ifma",
    "avx512_vbmi": "avx512vbmi", "avx512_vbmi2": "avx512_vbmi2",
    "avx512_bitalg": "avx512_bitalg", "avx512_vpopcntdq": "avx512_vpopcntdq",
    "avx512_vnni": "avx512_vnni", "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16",
    "avx512_vp2intersect": "avx512_vp2intersect", "avx512_4vnniw": "avx512_4vnniw",
    "avx512_4fmaps": "avx512_4fmaps", "avx_vnni_int8": "avx_vnni_int8",
    "avx_vnni_int16": "avx_vnni_int16", "avx_ne_convert": "avx_ne_convert",
    "amx_bf16": "amx_bf16", "amx_tile": "amx_tile", "amx_int8": "amx_int8",
    "amx_fp16": "amx_fp16", "fma3": "fma", "fma4": "fma4", "f16c": "f16c", "bmi": "bmi1",
    "bmi2": "bmi2", "popcnt": "popcnt", "lzcnt": "abm", "aes": "aes", "sha": "sha_ni",
    "clflush": "clflush", "clflushopt": "clflushopt", "clwb": "clwb",
}


@lru_cache(None)
def get_capabilities():
    """An immutable mapping of the cpu's features, with PyTorch's names ("avx2": True, ...,
    "architecture": "x86_64", "num_logical_cores": n). Read from /proc/cpuinfo (Linux):
    features the kernel does not list there are False."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    caps = {"architecture": platform.machine(), "num_logical_cores": os.cpu_count() or 1}
    if platform.machine() in ("x86_64", "AMD64", "i686"):
        caps.update({k: v in flags for k, v in _X86_FLAGS.items()})
    return MappingProxyType(caps)
