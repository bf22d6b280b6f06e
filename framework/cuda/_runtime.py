"""The CUDA runtime state: which mode the process runs in, its devices, the current device
and stream of each thread, one caching allocator per device, and raw byte copies.

Two modes, chosen once at first use:

* ``driver``: a real GPU through the CUDA driver API (framework/cuda/driver.py). Memory
  comes from ``cuMemAlloc`` through the caching allocator; copies are ``cuMemcpy*Async``
  on the current stream; Triton launches on our current stream (we install it as Triton's).
* ``sim``: no GPU and ``TRITON_INTERPRET=1``. Device memory is host memory from the same
  caching allocator (HostRawBackend), Triton's interpreter runs the same kernels on it, and
  all work is synchronous, so streams and events only keep order and time.
  ``FRAMEWORK_SIM_DEVICES`` (default 1) sets how many devices the simulator has and
  ``FRAMEWORK_SIM_MEMORY`` (bytes) caps each one's memory, for out-of-memory tests.
"""
import collections
import ctypes
import os
import threading

from .. import _C
from .._device import device as _device_cls
from .._storage import Storage
from . import allocator as _allocator

_lock = threading.RLock()
_state = None          # the _State once initialised
_error = None          # why CUDA is unusable, once known


class _Local(threading.local):
    """Per-thread state; the class attributes are what a thread sees before it sets its
    own (read as plain attributes: getattr with a default pays for an exception)."""
    device = 0      # the current device's index
    ctx = None      # the device whose context is current on this thread
    streams = None  # device index -> the current Stream, once a thread sets one


_tls = _Local()


def _interpreting():
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


class _State:
    """Everything known about the devices of this process (built once, lazily)."""

    def __init__(self):
        self.mode = "sim" if _interpreting() else "driver"
        self.driver = None
        if self.mode == "driver":
            from . import driver
            self.driver = driver.get()
            self.count = self.driver.device_count()
            if self.count == 0:
                raise RuntimeError("No CUDA GPUs are available")
            self.handles = [self.driver.device_get(i) for i in range(self.count)]
            self.contexts = [None] * self.count
        else:
            self.count = int(os.environ.get("FRAMEWORK_SIM_DEVICES", "1"))
            cap = os.environ.get("FRAMEWORK_SIM_MEMORY")
            self.sim_capacity = int(cap) if cap else None
        self.allocators = [None] * self.count
        self.default_streams = [None] * self.count
        self.properties = [None] * self.count

    # -- per device, created on first use -----------------------------------------------
    def context(self, index):
        """Makes device ``index``'s primary context current on this thread (driver mode)."""
        ctx = self.contexts[index]
        if ctx is None:
            ctx = self.contexts[index] = self.driver.primary_ctx_retain(self.handles[index])
        self.driver.ctx_set_current(ctx)
        _tls.ctx = index
        return ctx

    def allocator(self, index):
        a = self.allocators[index]
        if a is None:
            with _lock:
                a = self.allocators[index]
                if a is None:
                    if self.mode == "driver":
                        backend = _allocator.DriverRawBackend(self.driver,
                                                              lambda: on_device(index))
                    else:
                        backend = _allocator.HostRawBackend(self.sim_capacity)
                    conf = _alloc_conf()
                    a = _allocator.CachingAllocator(backend, index,
                                                    max_split_size=conf.get("max_split_size"))
                    self.allocators[index] = a
        return a


def _alloc_conf():
    """The options of PYTORCH_CUDA_ALLOC_CONF we honour (max_split_size_mb)."""
    out = {}
    for item in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "").split(","):
        key, _, value = item.partition(":")
        if key.strip() == "max_split_size_mb" and value.strip():
            out["max_split_size"] = int(value) * _allocator.MB
    return out


def state():
    """The initialised runtime; raises RuntimeError (PyTorch's words) without CUDA."""
    global _state, _error
    s = _state
    if s is not None:
        return s
    with _lock:
        if _state is None:
            if _error is not None:
                raise RuntimeError(_error)
            try:
                st = _State()
            except RuntimeError as e:
                _error = str(e)
                raise
            _state = st
            if st.mode == "driver":
                st.context(0)
                _install_triton_hooks()
        return _state


def available():
    try:
        state()
        return True
    except RuntimeError:
        return False


def mode():
    return state().mode


# -- current device and stream (per thread, as in PyTorch) -------------------------------

def current_index():
    return _tls.device


def set_index(index):
    s = state()
    if not 0 <= index < s.count:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {index}, "
                           f"{s.count} available)")
    if s.mode == "driver":
        s.context(index)
    _tls.device = index


class on_device:
    """``with on_device(i):`` makes device ``i``'s context current on this thread for the
    block (driver mode; nothing in the simulator), then the current device's context again.
    Driver calls that act on "the current context" (allocations, the legacy default stream,
    synchronisation, event creation) must run inside one when the device may not be the
    current one; a thread that never set a device gets the current device's context."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __enter__(self):
        s = _state
        if s.driver is not None and _tls.ctx != self.index:
            s.context(self.index)

    def __exit__(self, *exc):
        s = _state
        if s.driver is not None:
            cur = current_index()
            if _tls.ctx != cur:
                s.context(cur)
        return False


def check_index(index):
    """Device ``index`` as an int, checked against the device count."""
    s = state()
    if index is None:
        return current_index()
    if not 0 <= index < s.count:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {index}, "
                           f"{s.count} available)")
    return index


def current_streams():
    """This thread's {device index: Stream} of current streams."""
    d = _tls.streams
    if d is None:
        d = _tls.streams = {}
    return d


# set once any thread makes a non-default stream current: until then every current stream
# is the default one, and stream_handle answers without looking at the thread's streams
streams_in_use = False


def stream_handle(index):
    """The raw handle of the current stream of device ``index`` (0: the default stream).
    Every allocation and every launch asks: a thread that never set a stream makes no dict."""
    if not streams_in_use:
        return 0
    streams = _tls.streams
    st = streams.get(index) if streams else None
    return 0 if st is None else st.cuda_stream


# -- storage ---------------------------------------------------------------------------

def driver_release(method, handle):
    """``driver.<method>(handle)`` in driver mode (destroying a stream or event), from a
    ``__del__``: quiet at interpreter shutdown, when the driver may already be gone."""
    try:
        s = _state
        if s is not None and s.mode == "driver":
            getattr(s.driver, method)(handle)
    except Exception:
        pass


def alloc_storage(nbytes, device):
    """A new uninitialised storage of ``nbytes`` bytes on cuda device ``device``."""
    s = _state if _state is not None else state()  # every cuda op result comes here
    index = device.index
    if index is None:  # "cuda": the storage is on the current device, and says which
        index = current_index()
        device = _device_cls("cuda", index)
    if index >= s.count:
        check_index(index)
    if nbytes == 0:
        return Storage(0, 0, device, None)
    # the block (a _C.DeviceBlock) goes back to the cache when the storage is collected
    a = s.allocators[index] or s.allocator(index)
    block = a.alloc_owned(nbytes, stream_handle(index))
    return Storage(block.ptr, nbytes, device, block)


def host_alias(storage):
    """A cpu Storage over a simulated cuda storage's memory (Triton's interpreter)."""
    from .._device import CPU
    if state().mode != "sim":
        raise RuntimeError("a cuda storage can only be viewed from the host in the simulator")
    return Storage(storage.ptr, storage.nbytes, CPU, _host_view(storage.ptr, storage.nbytes,
                                                                  storage))


def record_stream(storage, stream):
    """Marks a storage as used on ``stream``: its memory is not reused until that stream's
    work queued so far is done (Tensor.record_stream)."""
    buf = storage.buf
    if isinstance(buf, _C.DeviceBlock):
        state().allocator(storage.device.index).record_stream(buf, stream.cuda_stream)


# -- copies of bytes ---------------------------------------------------------------------

def copy_bytes(dst, src, nbytes, dst_offset=0, src_offset=0, non_blocking=False):
    """Copies ``nbytes`` from storage ``src`` to storage ``dst`` (any devices), on the
    current stream of the cuda device involved. Blocks until done unless ``non_blocking``
    and the host side is pinned memory, or the copy is host to device (as PyTorch's: the
    driver has taken pageable memory into its staging buffers when the call returns), or
    device to device."""
    if nbytes == 0:
        return
    dp, sp = dst.ptr + dst_offset, src.ptr + src_offset
    dcuda, scuda = dst.device.type == "cuda", src.device.type == "cuda"
    s = state() if (dcuda or scuda) else None
    if s is None or s.mode == "sim":
        ctypes.memmove(dp, sp, nbytes)
        return
    drv = s.driver
    if dcuda and scuda:
        si, di = src.device.index, dst.device.index
        if si == di:
            with on_device(si):
                drv.memcpy_dtod(dp, sp, nbytes, stream_handle(si))
            return
        # between devices: the destination's queued work may still use its memory, so it
        # finishes first; the copy runs on the source's current stream and is waited for
        # (blocking, unlike PyTorch; these copies are rare)
        with on_device(di):
            drv.stream_synchronize(stream_handle(di))
        with on_device(si):
            stream = stream_handle(si)
            drv.memcpy_dtod(dp, sp, nbytes, stream)
            drv.stream_synchronize(stream)
        return
    index = (dst if dcuda else src).device.index
    host = src if dcuda else dst
    with on_device(index):
        stream = stream_handle(index)
        if dcuda:
            drv.memcpy_htod(dp, sp, nbytes, stream)
        else:
            drv.memcpy_dtoh(dp, sp, nbytes, stream)
        if non_blocking and is_pinned(host):
            keep_alive(drv, index, stream, host)
        elif not (non_blocking and dcuda):
            # a pageable source need not wait: cuMemcpyHtoDAsync returns once the driver
            # has staged it (CUDA's "API synchronization behavior"); waiting for the whole
            # stream would stall the host behind every queued kernel
            drv.stream_synchronize(stream)


_inflight = collections.deque()   # (event, pinned host storage, device) of async copies
_event_pools = {}                 # device index -> recycled events (no timing)


def keep_alive(drv, index, stream, host):
    """Holds the pinned host storage of an asynchronous copy just queued on ``stream`` (of
    device ``index``) until the copy is done, so that freeing its tensor early cannot
    unmap memory the copy engine still reads or writes (PyTorch's pinned allocator records
    an event for the same reason). Copies seen done are let go on each call."""
    from .driver import CU_EVENT_DISABLE_TIMING
    with _lock:
        while _inflight and drv.event_query(_inflight[0][0]):
            ev, _, i = _inflight.popleft()
            _event_pools.setdefault(i, []).append(ev)
        pool = _event_pools.setdefault(index, [])
        ev = pool.pop() if pool else drv.event_create(CU_EVENT_DISABLE_TIMING)
        drv.event_record(ev, stream)
        _inflight.append((ev, host, index))


# -- pinned host memory ------------------------------------------------------------------

class PinnedBuffer:
    """Owns page-locked host memory (cuMemHostAlloc; plain host memory in the simulator)."""

    __slots__ = ("ptr", "_host", "__weakref__")

    def __init__(self, nbytes):
        s = state()
        self._host = None
        if s.mode == "driver":
            with on_device(current_index()):
                self.ptr = s.driver.mem_host_alloc(max(nbytes, 1))
        else:
            from .. import _C
            self._host = _C.host_alloc(max(nbytes, 1))
            self.ptr = self._host.ptr

    def __del__(self):
        if self._host is None and _state is not None and _state.driver is not None:
            try:
                with on_device(current_index()):
                    _state.driver.mem_free_host(self.ptr)
            except Exception:  # interpreter shutdown: the driver may already be gone
                pass


def _host_view(ptr, nbytes, owner):
    """A uint8 NumPy array over host memory at ``ptr`` that keeps ``owner`` alive."""
    import numpy as np
    from .._storage import _Owned
    if nbytes == 0:
        return _Owned(np.empty(0, np.uint8), owner)
    arr = np.ctypeslib.as_array((ctypes.c_uint8 * max(nbytes, 1)).from_address(ptr))[:nbytes]
    return _Owned(arr, owner)


def pinned_storage(nbytes):
    """A new cpu storage of ``nbytes`` bytes in pinned memory."""
    from .._device import CPU
    owner = PinnedBuffer(nbytes)
    return Storage(owner.ptr, nbytes, CPU, _host_view(owner.ptr, nbytes, owner))


def is_pinned(storage):
    return isinstance(getattr(storage.buf, "_owner", None), PinnedBuffer)


# -- Triton -----------------------------------------------------------------------------

def _install_triton_hooks():
    """Makes Triton launch on our current device and stream (it would ask torch)."""
    try:
        from triton.runtime import driver as tdriver
        d = tdriver.active
        if hasattr(d, "_initialize_obj"):  # older Triton: a lazy proxy
            d = d._initialize_obj()
    except Exception:  # noqa: BLE001 - no Triton GPU driver: memory and copies still work,
        return         # and a kernel launch raises Triton's own error
    d.get_current_device = current_index
    d.set_current_device = set_index
    d.get_current_stream = lambda index=None: stream_handle(
        current_index() if index is None else index)
    from . import _triton_driver
    _triton_driver.patch_gpu(d)


def synchronize(index=None):
    s = state()
    if s.mode == "driver":
        index = check_index(index)
        with on_device(index):
            s.driver.ctx_synchronize()
        with _lock:  # every copy on this device is done: let go of their host buffers
            done = [e for e in _inflight if e[2] == index]
            for e in done:
                _inflight.remove(e)
                _event_pools.setdefault(index, []).append(e[0])


def device_of(index):
    return _device_cls("cuda", index)
