"""framework.cuda: devices, streams, events and memory of the GPU backend.

On a machine with an NVIDIA GPU this drives it through the CUDA driver API; with
``TRITON_INTERPRET=1`` and no GPU, a simulated device runs the same Triton kernels in
Triton's interpreter on host memory (framework/cuda/_runtime.py)."""
from . import _runtime
from . import _triton_driver
from .allocator import OutOfMemoryError
from .memory import (empty_cache, max_memory_allocated, max_memory_reserved, mem_get_info,
                     memory_allocated, memory_reserved, memory_snapshot, memory_stats,
                     memory_summary, reset_accumulated_memory_stats, reset_max_memory_allocated,
                     reset_peak_memory_stats, set_per_process_memory_fraction)
from .streams import Event, ExternalStream, Stream, StreamContext, current_stream, \
    default_stream, set_stream, stream

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "device_of", "get_device_name", "get_device_capability", "get_device_properties",
           "synchronize", "Stream", "ExternalStream", "Event", "stream", "current_stream", "default_stream",
           "set_stream", "OutOfMemoryError", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "memory_stats", "memory_summary", "empty_cache", "mem_get_info", "manual_seed",
           "manual_seed_all", "is_simulated", "CUDAGraph", "graph", "graph_pool_handle",
           "is_current_stream_capturing", "make_graphed_callables", "MemPool", "use_mem_pool"]


def is_available():
    """Whether a CUDA device (or, with TRITON_INTERPRET=1, the simulator) can be used."""
    return _runtime.available()


def is_initialized():
    return _runtime._state is not None


def init():
    """Initialises CUDA now (it is otherwise done on first use)."""
    _runtime.state()


def _lazy_init():
    _runtime.state()


def is_simulated():
    """True when cuda tensors live in host memory and kernels run in Triton's interpreter."""
    return _runtime.state().mode == "sim"


def device_count():
    """The number of CUDA devices (0 without CUDA)."""
    try:
        return _runtime.state().count
    except RuntimeError:
        return 0


def current_device():
    """The index of the current device of this thread."""
    _runtime.state()
    return _runtime.current_index()


def _device_index(d, optional=True):
    """A device argument (int, "cuda:N", framework.device, None) as an index, as PyTorch's
    ``torch.cuda._utils._get_device_index``: None or an index-less "cuda" mean the current
    device when ``optional``, and are a ValueError otherwise."""
    from .._device import device as _dev
    if isinstance(d, str):
        d = _dev(d)
    if isinstance(d, _dev):
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        d = d.index
    elif isinstance(d, device):
        return d.idx
    if d is None:
        if not optional:
            raise ValueError("Expected a framework.device with a specified index or an "
                             f"integer, but got:{d}")
        return _runtime.current_index()
    return int(d)


def set_device(device):
    """Sets the current device (a negative index does nothing, as in PyTorch)."""
    i = _device_index(device, optional=False)
    if i >= 0:
        _runtime.set_index(i)


class device:
    """Context manager that changes the current device (``with framework.cuda.device(1):``)."""

    def __init__(self, device):
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.idx != self.prev_idx:
                _runtime.set_index(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _runtime.set_index(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of a tensor current (no-op for cpu tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class _CudaDeviceProperties:
    """What ``get_device_properties`` reports about a device."""

    def __init__(self, name, major, minor, total_memory, multi_processor_count,
                 L2_cache_size=0, max_threads_per_multi_processor=0, warp_size=32,
                 shared_memory_per_block_optin=0, regs_per_multiprocessor=0,
                 shared_memory_per_block=0, shared_memory_per_multiprocessor=0):
        self.name = name
        self.major, self.minor = major, minor
        self.total_memory = total_memory
        self.multi_processor_count = multi_processor_count
        self.L2_cache_size = L2_cache_size
        self.max_threads_per_multi_processor = max_threads_per_multi_processor
        self.warp_size = warp_size
        self.shared_memory_per_block_optin = shared_memory_per_block_optin
        self.regs_per_multiprocessor = regs_per_multiprocessor
        self.shared_memory_per_block = shared_memory_per_block
        self.shared_memory_per_multiprocessor = shared_memory_per_multiprocessor
        self.is_integrated = False
        self.is_multi_gpu_board = False

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None):
    """Name, compute capability, memory and SM count of a device."""
    s = _runtime.state()
    i = _device_index(device)
    if not 0 <= i < s.count:
        raise AssertionError("Invalid device id")
    p = s.properties[i]
    if p is None:
        if s.mode == "driver":
            from . import driver as drv
            d, h = s.driver, s.handles[i]
            major, minor = d.compute_capability(h)
            p = _CudaDeviceProperties(
                d.device_name(h), major, minor, d.device_total_mem(h),
                d.multiprocessor_count(h),
                d.device_attribute(drv.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, h),
                d.device_attribute(drv.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, h),
                d.device_attribute(drv.CU_DEVICE_ATTRIBUTE_WARP_SIZE, h),
                d.device_attribute(drv.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, h),
                d.device_attribute(drv.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, h),
                d.device_attribute(drv.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, h),
                d.device_attribute(drv.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                   h))
        else:
            total = s.allocator(i).backend.mem_get_info()[1]
            # The limits of an sm_90 part, so that occupancy arithmetic in user code
            # (registers and shared memory per SM, per block) has its usual inputs.
            p = _CudaDeviceProperties("Simulated CUDA device (Triton interpreter)", 9, 0,
                                      total, 1, 50 * 1024 * 1024, 2048, 32, 227 * 1024,
                                      65536, 48 * 1024, 228 * 1024)
        s.properties[i] = p
    return p


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


def synchronize(device=None):
    """Waits for all work queued on a device (all streams)."""
    _runtime.synchronize(None if device is None else _device_index(device))


def get_arch_list():
    return ["sm_90"] if is_available() else []


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 is usable: compute capability 8.0 (Ampere) or later."""
    return is_available() and get_device_capability()[0] >= 8


# -- what the rest of the framework calls -------------------------------------------------

def alloc_storage(nbytes, device):
    """A new storage of ``nbytes`` bytes on a cuda device (through the caching allocator)."""
    return _runtime.alloc_storage(nbytes, device)


def _host_alias(storage):
    return _runtime.host_alias(storage)


def transfer(x, device, non_blocking=False):
    """A copy of ``x`` on another device (host to device, device to host or device to
    device), queued on the current stream of the cuda device involved. As PyTorch's ``to``
    (preserve_format), a dense non-overlapping layout (a transpose, a permute) keeps its
    strides and is copied as one block of bytes; any other view is first copied into dense
    strides in the same dim order (memory_format.dense_like)."""
    from .._ops import alloc
    from .._ops.memory_format import dense_like
    from .._tensor import Tensor
    if device.type == "cuda" or x._storage.device.type == "cuda":
        _runtime.state()
    src = x
    stride = dense_like(x._shape, x._stride)
    if stride != x._stride:
        src = x.clone()
        stride = src._stride
    n = alloc.numel(src._shape) * src.dtype.itemsize
    if device.type == "cpu" and non_blocking and src._storage.device.type == "cuda":
        st = _runtime.pinned_storage(n)
    else:
        st = alloc.storage(n, device)
    out = Tensor._make(st, src._shape, stride, 0, src.dtype)
    _runtime.copy_bytes(st, src._storage, n, 0, src._offset * src.dtype.itemsize, non_blocking)
    return out


def _pinned_empty(shape, dtype):
    from .._ops import alloc
    from .._tensor import Tensor
    n = alloc.numel(shape) * dtype.itemsize
    return Tensor._make(_runtime.pinned_storage(n), tuple(shape),
                        alloc.contiguous_strides(tuple(shape)), 0, dtype)
from . import amp  # noqa: E402,F401
from . import random  # noqa: E402,F401
from .._legacy_types import CUDA_TYPES as _legacy  # noqa: E402
globals().update(_legacy)   # framework.cuda.FloatTensor, ...
from .random import (  # noqa: E402,F401
    get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed,
    seed_all, set_rng_state, set_rng_state_all,
)
from . import nvtx  # noqa: E402,F401
from . import graphs  # noqa: E402,F401
from . import comm, nccl, profiler, tunable  # noqa: E402,F401
from .graphs import (  # noqa: E402,F401
    CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables,
)
from .mempool import (  # noqa: E402,F401
    caching_allocator_disabled, caching_allocator_enable, change_current_allocator,
    CUDAPluggableAllocator, MemPool, use_mem_pool,
)
from ._compat import (  # noqa: E402,F401
    caching_allocator_alloc, caching_allocator_delete, can_device_access_peer, clock_rate,
    device_memory_used, get_per_process_memory_fraction, get_sync_debug_mode, has_half,
    ipc_collect, is_tf32_supported, list_gpu_processes, max_memory_cached, memory_cached,
    memory_stats_as_nested_dict, memory_usage, power_draw, reset_max_memory_cached,
    set_per_process_memory_fraction, set_sync_debug_mode, temperature, utilization,
)
from ._compat import _cuda_getattr as __getattr__  # noqa: E402,F401  (default_generators)
from ._legacy_api import (  # noqa: E402,F401
    AcceleratorError, CudaError, check_error, cudaStatus, current_blas_handle,
    get_allocator_backend, get_gencode_flags, LEGACY_STORAGES as _legacy_storages,
)
globals().update(_legacy_storages)   # framework.cuda.FloatStorage, ...

if _runtime._interpreting():  # simulated CUDA: Triton has no GPU driver to ask, give it ours
    _triton_driver.install_sim()
