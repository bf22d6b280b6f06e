"""The smaller parts of PyTorch's ``torch.cuda`` API: deprecated memory aliases, the nested
memory stats, the default generators, raw allocations from the caching allocator, the
sync debug mode, peer access and the NVML queries (``utilization``, ``temperature``...).

Everything is imported into ``framework.cuda``; see each function for how it differs from
PyTorch."""
import ctypes
import operator
import os
import sys
import warnings

from . import _runtime
from . import memory as _memory

__all__ = ["memory_cached", "max_memory_cached", "reset_max_memory_cached",
           "memory_stats_as_nested_dict", "get_per_process_memory_fraction",
           "set_per_process_memory_fraction", "is_tf32_supported", "has_half", "ipc_collect",
           "get_sync_debug_mode", "set_sync_debug_mode", "can_device_access_peer",
           "caching_allocator_alloc", "caching_allocator_delete", "list_gpu_processes",
           "device_memory_used", "memory_usage", "utilization", "temperature", "power_draw",
           "clock_rate"]

has_half = True


def _index(device):
    from . import _device_index
    return _device_index(device)


# ---- deprecated memory aliases -------------------------------------------------------------

def memory_cached(device=None):
    r"""Deprecated; see :func:`~framework.cuda.memory_reserved`."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to "
                  "`torch.cuda.memory_reserved`", FutureWarning, stacklevel=2)
    return _memory.memory_reserved(device=device)


def max_memory_cached(device=None):
    r"""Deprecated; see :func:`~framework.cuda.max_memory_reserved`."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return _memory.max_memory_reserved(device=device)


def reset_max_memory_cached(device=None):
    r"""Resets the peak of the memory held by the caching allocator of a device. It calls
    :func:`~framework.cuda.reset_peak_memory_stats`, which resets /all/ peak stats."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return _memory.reset_peak_memory_stats(device=device)


def memory_stats_as_nested_dict(device=None):
    r"""The result of :func:`~framework.cuda.memory_stats` as a nested dictionary
    (``stats["allocated_bytes"]["all"]["current"]``); ``{}`` before CUDA is initialized."""
    if _runtime._state is None:
        return {}
    out = {}
    for key, value in _memory.memory_stats(device).items():
        *path, leaf = key.split(".")
        d = out
        for p in path:
            d = d.setdefault(p, {})
        d[leaf] = value
    return out


# ---- per-process memory fraction -----------------------------------------------------------

def set_per_process_memory_fraction(fraction, device=None):
    r"""Caps this process's allocations on a device at ``fraction`` (0 to 1) of its total
    memory (``framework.cuda.memory.set_per_process_memory_fraction``, remembering the
    fraction for :func:`get_per_process_memory_fraction`)."""
    _memory.set_per_process_memory_fraction(fraction, device)
    _memory._alloc(device)._compat_fraction = fraction


def get_per_process_memory_fraction(device=None):
    r"""The memory fraction of this process on a device (1.0 unless set with
    :func:`set_per_process_memory_fraction`): its allocations may take that fraction of the
    device's total memory."""
    _runtime.state()
    a = _memory._alloc(device)
    limit = a.memory_fraction_limit
    if limit is None:
        return 1.0
    total = a.backend.mem_get_info()[1]
    frac = getattr(a, "_compat_fraction", None)
    if frac is not None and int(frac * total) == limit:
        return float(frac)
    return limit / total if total else 1.0


# ---- device queries ------------------------------------------------------------------------

def is_tf32_supported():
    r"""Whether the current CUDA device supports TensorFloat-32 natively (compute capability
    8.0 or later, as bfloat16 without emulation)."""
    from . import is_bf16_supported
    return is_bf16_supported(including_emulation=False)


def ipc_collect():
    r"""Frees GPU memory released by CUDA IPC consumers. Tensors are not shared between
    processes through CUDA IPC here, so there is nothing to collect: it initializes CUDA
    (as PyTorch's does) and returns."""
    _runtime.state()


def can_device_access_peer(device, peer_device):
    r"""Whether ``device`` can access the memory of ``peer_device`` directly (the driver's
    cuDeviceCanAccessPeer; a device is never its own peer). In the simulator every device's
    memory is host memory: distinct devices are peers."""
    s = _runtime.state()
    from . import _device_index
    device = _device_index(device, optional=True)
    peer_device = _device_index(peer_device)
    if device < 0 or device >= s.count:
        raise AssertionError("Invalid device id")
    if peer_device < 0 or peer_device >= s.count:
        raise AssertionError("Invalid peer device id")
    if device == peer_device:
        return False
    if s.mode == "sim":
        return True
    out = ctypes.c_int(0)
    s.driver.call("cuDeviceCanAccessPeer", ctypes.byref(out), ctypes.c_int(s.handles[device]),
                  ctypes.c_int(s.handles[peer_device]))
    return bool(out.value)


# ---- raw allocations from the caching allocator --------------------------------------------

_raw_blocks = {}   # ptr -> (device index, block) of caching_allocator_alloc's allocations


def caching_allocator_alloc(size, device=None, stream=None):
    r"""Allocates ``size`` bytes with the caching allocator of ``device`` for use on
    ``stream`` (a ``framework.cuda.Stream`` or a stream handle; default: the device's
    current stream) and returns the address (an int; 0 for ``size`` 0). Free it with
    :func:`caching_allocator_delete`."""
    from . import current_device, current_stream
    from .streams import Stream
    if device is None:
        device = current_device()
    device = _index(device)
    if stream is None:
        stream = current_stream(device)
    if isinstance(stream, Stream):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError("Invalid type for stream argument, must be `torch.cuda.Stream` or "
                        "`int` representing a pointer to an existing stream")
    if size == 0:
        return 0
    a = _runtime.state().allocator(_runtime.check_index(device))
    block = a.malloc(size, stream)
    _raw_blocks[block.ptr] = (device, block)
    return block.ptr


def caching_allocator_delete(mem_ptr):
    r"""Frees memory allocated with :func:`caching_allocator_alloc` (0 is ignored)."""
    if mem_ptr == 0:
        return
    entry = _raw_blocks.pop(mem_ptr, None)
    if entry is None:
        raise RuntimeError(f"invalid device pointer: {mem_ptr:#x}")
    device, block = entry
    _runtime.state().allocator(device).free(block)


# ---- sync debug mode -----------------------------------------------------------------------

_sync_debug_mode = [0]
_warned_prototype = [False]   # PyTorch's TORCH_WARN_ONCE
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_plain_copy_bytes = [None]   # _runtime.copy_bytes as it was before the check was hooked in


def _warn_or_error_on_sync():
    if _sync_debug_mode[0] == 2:
        raise RuntimeError("called a synchronizing CUDA operation")
    if _sync_debug_mode[0] == 1:
        # attributed to the first caller outside the framework (the line that called
        # .item(), .cpu()...), as PyTorch's warning from C++ is
        level, f = 2, sys._getframe(1)
        while f is not None and f.f_code.co_filename.startswith(_PKG):
            level, f = level + 1, f.f_back
        warnings.warn("called a synchronizing CUDA operation", UserWarning, stacklevel=level)


def _checked_copy_bytes(dst, src, nbytes, dst_offset=0, src_offset=0, non_blocking=False):
    # a copy between host and device that the host waits for (PyTorch's memcpy_and_sync):
    # .item(), .cpu(), .tolist(), printing, .to("cuda") without non_blocking...
    if (nbytes and not non_blocking
            and (dst.device.type == "cuda") != (src.device.type == "cuda")):
        _warn_or_error_on_sync()
    return _plain_copy_bytes[0](dst, src, nbytes, dst_offset, src_offset, non_blocking)


def set_sync_debug_mode(debug_mode):
    r"""Sets the debug mode for synchronizing CUDA operations: ``"default"`` or 0: nothing;
    ``"warn"`` or 1: a warning at each; ``"error"`` or 2: a RuntimeError.

    The operations checked are the copies between host and device that the host waits for
    (``.item()``, ``.cpu()``, ``.tolist()``, ``.numpy()`` of a copy, printing a cuda tensor,
    ``.to("cuda")`` without ``non_blocking``): the ops that synchronize do so through them.
    Explicit ``synchronize()`` calls of the device, a stream or an event are not checked.
    In mode 0 nothing is hooked in, so the check costs nothing."""
    _runtime.state()
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               "`warn`, `error`")
        debug_mode = modes[debug_mode]
    if not _warned_prototype[0]:
        _warned_prototype[0] = True
        warnings.warn("Synchronization debug mode is a prototype feature and does not yet "
                      "detect all synchronizing operations", UserWarning, stacklevel=2)
    if isinstance(debug_mode, bool) or not hasattr(debug_mode, "__index__"):
        raise RuntimeError("invalid argument to set_sync_debug_mode")
    debug_mode = operator.index(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected one of 0,1,2")
    _sync_debug_mode[0] = debug_mode
    if debug_mode:
        if _runtime.copy_bytes is not _checked_copy_bytes:
            _plain_copy_bytes[0] = _runtime.copy_bytes
            _runtime.copy_bytes = _checked_copy_bytes
    elif _runtime.copy_bytes is _checked_copy_bytes:
        _runtime.copy_bytes = _plain_copy_bytes[0]


def get_sync_debug_mode():
    r"""The debug mode for synchronizing CUDA operations (0, 1 or 2; see
    :func:`set_sync_debug_mode`)."""
    _runtime.state()
    return _sync_debug_mode[0]


# ---- NVML queries --------------------------------------------------------------------------

def _pynvml():
    try:
        import pynvml
    except ImportError as e:
        raise ModuleNotFoundError(
            "nvidia-ml-py does not seem to be installed or it can't be imported.") from e
    return pynvml


def _nvml_device_index(device):
    """The NVML index of a device, through CUDA_VISIBLE_DEVICES (ordinals only)."""
    idx = _index(device)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return idx
    ordinals = []
    for part in visible.split(","):
        part = part.strip()
        if not part.lstrip("-").isdigit() or int(part) < 0:
            break
        ordinals.append(int(part))
    if idx < 0 or idx >= len(ordinals):
        raise RuntimeError(f"device {idx} is not visible (CUDA_VISIBLE_DEVICES={ordinals})")
    return ordinals[idx]


def _nvml_handle(device):
    pynvml = _pynvml()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded as e:
        raise RuntimeError("cuda driver can't be loaded, is cuda enabled?") from e
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(_nvml_device_index(device))


def list_gpu_processes(device=None):
    r"""A printout of the processes running on a device and their GPU memory (through
    pynvml, as ``nvidia-smi``); a message saying so when pynvml or the driver is missing."""
    try:
        import pynvml
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded:
        return "cuda driver can't be loaded, is cuda enabled?"
    device = _nvml_device_index(device)
    handle = pynvml.nvmlDeviceGetHandleByIndex(device)
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    lines = [f"GPU:{device}"]
    if len(procs) == 0:
        lines.append("no processes are running")
    for p in procs:
        mem = p.usedGpuMemory / (1024 * 1024)
        lines.append(f"process {p.pid:>10d} uses {mem:>12.3f} MB GPU memory")
    return "\n".join(lines)


def device_memory_used(device=None):
    r"""Used device memory in bytes as ``nvidia-smi`` reports it (needs pynvml)."""
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used


def memory_usage(device=None):
    r"""Percent of the last sample period during which device memory was read or written,
    as ``nvidia-smi`` reports it (needs pynvml)."""
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).memory


def utilization(device=None):
    r"""Percent of the last sample period during which a kernel ran on the device, as
    ``nvidia-smi`` reports it (needs pynvml)."""
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).gpu


def temperature(device=None):
    r"""The GPU die's temperature in degrees C (needs pynvml)."""
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetTemperature(handle, 0)


def power_draw(device=None):
    r"""The GPU's power draw in mW over the last sample period (needs pynvml)."""
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetPowerUsage(handle)


def clock_rate(device=None):
    r"""The SM clock in MHz over the last sample period (needs pynvml)."""
    pynvml, handle = _nvml_handle(device)
    return pynvml.nvmlDeviceGetClockInfo(handle, 1)


# ---- default_generators (looked up lazily: it needs the device count) ----------------------

def _cuda_getattr(name):
    """framework.cuda's module ``__getattr__``, for ``framework.cuda.default_generators``:
    the default generator of each cuda device (framework.random's), a tuple; empty without
    CUDA. (PyTorch fills a module attribute when CUDA initializes; a lookup here needs no
    initialization hook and never starts CUDA before ``device_count`` would.)"""
    if name == "default_generators":
        from .. import random as _random
        from .._device import device as _device
        from . import device_count
        return tuple(_random.get_generator(_device("cuda", i)) for i in range(device_count()))
    raise AttributeError(f"module 'framework.cuda' has no attribute '{name}'")
