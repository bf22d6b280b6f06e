"""CUDA graphs (PyTorch's ``torch.cuda.graphs``): capture the GPU work of a region once,
then replay it with one launch.

``CUDAGraph`` holds one captured graph; ``graph`` is the context manager that captures
into it; ``graph_pool_handle`` names a memory pool that graphs may share;
``make_graphed_callables`` captures the forward and backward passes of modules or
functions and returns callables whose autograd replays them.

Two back ends behind one API:

* On a GPU, capture is the CUDA driver's stream capture (``cuStreamBeginCapture``): the
  work queued on the capturing stream, Triton launches and async copies included, is
  recorded by CUDA, not run; ``cuGraphInstantiate`` and ``cuGraphLaunch`` replay it.
* On the simulated device (``TRITON_INTERPRET=1``) there is no driver graph: capture
  records each Triton launch made by the capturing thread (every framework kernel and
  every user ``@triton.jit`` kernel launched on framework tensors, through
  ``InterpretedFunction.run``) and each device-to-device copy, without running them;
  replay runs them again in order with the same arguments. Other device work during
  capture (a copy between host and device, a synchronization) raises.

In both, memory allocated on the capturing stream during capture comes from the graph's
private pool (or the pool handle given): its blocks serve no other allocation and its
segments are not released by ``empty_cache`` until every graph using the pool is reset
or deleted, so the addresses baked into the graph stay valid. As in PyTorch, the inputs
and outputs of a graph are static: copy new data into the captured input tensors, replay,
read the captured output tensors. Random ops replay with the RNG offsets of capture (the
same numbers each replay), unlike PyTorch's graph-safe generators.
"""
import ctypes
import gc
import itertools
import threading

from .._storage import Storage
from . import _runtime

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]

_ids = itertools.count(1)
_lock = threading.RLock()
_captures = []      # the CUDAGraphs being captured now (any thread)
_pool_users = {}    # (device, pool tag) -> number of graphs that use the pool
_NOT_PERMITTED = "CUDA error: operation not permitted when stream is capturing"
_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}   # CUstreamCaptureMode
_STAGING_BYTES = 1 << 16


def graph_pool_handle():
    """An opaque token naming a memory pool; pass it as ``pool=`` to share one pool between
    graphs captured one after another (see :class:`graph`)."""
    return (0, next(_ids))


def _tag(pool):
    # a pool is a negative stream tag of the caching allocator: no real stream is negative
    return -int(pool[1])


def is_current_stream_capturing():
    """True if CUDA graph capture is under way on the current CUDA stream (False, without
    initializing CUDA, when it is not initialized)."""
    if _runtime._state is None:
        return False
    s = _runtime.state()
    index = _runtime.current_index()
    handle = _runtime.stream_handle(index)
    if s.mode == "driver":
        if handle == 0:
            return False   # the legacy stream cannot capture (and asking could sync it)
        with _runtime.on_device(index):
            return s.driver.stream_is_capturing(handle) != 0
    return any(g._device == index and g._stream.cuda_stream == handle for g in _captures)


def _incref_pool(device, tag):
    """One more user (a graph, a MemPool, a use_mem_pool context) of a pool: its segments
    stay reserved while it has users."""
    with _lock:
        key = (device, tag)
        _pool_users[key] = _pool_users.get(key, 0) + 1
        _runtime.state().allocator(device).graph_pools.add(tag)


def _decref_pool(device, tag):
    """One user less of a pool; returns how many are left."""
    key = (device, tag)
    with _lock:
        n = _pool_users.get(key, 0) - 1
        if n > 0:
            _pool_users[key] = n
            return n
        _pool_users.pop(key, None)
        _runtime.state().allocator(device).graph_pools.discard(tag)
        return 0


# -- what capture hooks into (installed while any capture is under way) ----------------------

class _Hooks:
    """Module attributes swapped while graphs are captured: allocations on a capturing
    stream go to the graph's pool; host-synchronizing work raises; in the simulator,
    launches and device copies of the capturing thread are recorded. Restored when the
    last capture ends, so they cost nothing otherwise."""

    def __init__(self):
        self.saved = None

    def install(self):
        from triton.runtime.interpreter import InterpretedFunction
        from .streams import Event, Stream
        self.saved = [(_runtime, "alloc_storage", _runtime.alloc_storage),
                      (_runtime, "copy_bytes", _runtime.copy_bytes),
                      (_runtime, "synchronize", _runtime.synchronize),
                      (InterpretedFunction, "run", InterpretedFunction.__dict__["run"]),
                      (Stream, "synchronize", Stream.__dict__["synchronize"]),
                      (Event, "synchronize", Event.__dict__["synchronize"])]
        plain_alloc, plain_copy, plain_sync, plain_run, stream_sync, event_sync = (
            v for _, _, v in self.saved)

        def alloc_storage(nbytes, device):
            index = _runtime.current_index() if device.index is None else device.index
            g = _capture_on(index, _runtime.stream_handle(index))
            if g is None or nbytes == 0:
                return plain_alloc(nbytes, device)
            a = _runtime.state().allocator(index)
            block = a.alloc_owned(nbytes, _tag(g._pool))
            return Storage(block.ptr, nbytes, _runtime.device_of(index), block)

        def copy_bytes(dst, src, nbytes, dst_offset=0, src_offset=0, non_blocking=False):
            dcuda, scuda = dst.device.type == "cuda", src.device.type == "cuda"
            if not (dcuda or scuda):
                return plain_copy(dst, src, nbytes, dst_offset, src_offset, non_blocking)
            g = _capture_of_thread()
            if g is None:
                if (dcuda != scuda and not non_blocking
                        and any(c._mode == "global" for c in _captures)):
                    raise RuntimeError(_NOT_PERMITTED)
                return plain_copy(dst, src, nbytes, dst_offset, src_offset, non_blocking)
            return g._copy(plain_copy, dst, src, nbytes, dst_offset, src_offset,
                           non_blocking)

        def refuse_sync(what):
            # CUDA refuses it on the capturing thread, and in every thread while a
            # "global" capture is under way (the driver would invalidate the capture)
            if _capture_of_thread() is not None or any(c._mode == "global"
                                                       for c in _captures):
                raise RuntimeError(f"{_NOT_PERMITTED}: {what} during CUDA graph capture")

        def synchronize(index=None):
            refuse_sync("synchronize()")
            return plain_sync(index)

        def stream_synchronize(stream):
            refuse_sync("Stream.synchronize()")
            return stream_sync(stream)

        def event_synchronize(event):
            refuse_sync("Event.synchronize()")
            return event_sync(event)

        def run(fn, *args, grid, warmup, **kwargs):
            g = None if warmup else _capture_of_thread()
            if g is None or g._records is None:
                return plain_run(fn, *args, grid=grid, warmup=warmup, **kwargs)
            # the class's run at replay: a replay inside another capture is recorded
            # there, and a profiler running then sees the kernels
            args = tuple(map(_frozen, args))
            kwargs = {k: _frozen(v) for k, v in kwargs.items()}
            g._records.append(lambda: type(fn).run(fn, *args, grid=grid, warmup=False,
                                                   **kwargs))
            return None

        _runtime.alloc_storage = alloc_storage
        _runtime.copy_bytes = copy_bytes
        _runtime.synchronize = synchronize
        InterpretedFunction.run = run
        Stream.synchronize = stream_synchronize
        Event.synchronize = event_synchronize

    def uninstall(self):
        for owner, name, value in self.saved:
            setattr(owner, name, value)
        self.saved = None


_hooks = _Hooks()


def _frozen(v):
    """A launch argument as the GPU's graph holds it: a tensor's address and layout at
    capture (a new tensor object over the same storage), whatever is later done to the
    tensor object (``set_``, ``resize_``, ``.data =``)."""
    from .._tensor import Tensor
    if isinstance(v, Tensor):
        return Tensor._make(v._storage, v._shape, v._stride, v._offset, v.dtype)
    if type(v) is tuple:
        return tuple(map(_frozen, v))
    return v


def _capture_on(index, handle):
    for g in _captures:
        if g._device == index and g._stream.cuda_stream == handle:
            return g
    return None


def _capture_of_thread():
    """The capture this thread began (in the simulator every launch of the capturing thread
    is recorded, whatever stream is current: work there runs in one order anyway)."""
    me = threading.get_ident()
    for g in _captures:
        if g._thread == me:
            return g
    return None


class CUDAGraph:
    """Wrapper around a CUDA graph: ``capture_begin``/``capture_end`` record the work queued
    on the current (non-default) stream, ``replay`` runs it again. Usually captured through
    the :class:`graph` context manager."""

    def __init__(self, keep_graph=False):
        self._keep_graph = keep_graph
        self._state = None       # None, "capturing", "captured"
        self._pool = None
        self._device = None
        self._stream = None
        self._thread = None
        self._mode = "global"
        self._records = None     # simulator: the recorded work, in order
        self._keep = []          # host buffers the captured copies read or write
        self._staging = (None, 0)  # pinned memory set aside for uploads, bytes used
        self._graph = 0          # driver: CUgraph and CUgraphExec handles
        self._exec = 0

    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Begins capturing CUDA work on the current stream. ``pool``: a
        :func:`graph_pool_handle` (or another graph's ``pool()``) to share memory with;
        ``capture_error_mode``: "global", "thread_local" or "relaxed" (cudaStreamCaptureMode:
        which other threads' unsafe CUDA calls are refused during capture)."""
        if capture_error_mode not in _MODES:
            raise RuntimeError("Unknown capture error mode. Expected `global`, "
                               f"`thread_local`, or `relaxed`, got {capture_error_mode}")
        if self._state is not None:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To "
                               "capture a new graph, create a new instance.")
        s = _runtime.state()
        from .streams import current_stream
        stream = current_stream()
        if stream.cuda_stream == 0:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. "
                               "(However, after capture, it's ok to replay them on the "
                               "default stream.)")
        pool = graph_pool_handle() if pool is None else tuple(pool)
        if len(pool) != 2 or not isinstance(pool[1], int) or pool[1] <= 0:
            raise RuntimeError(f"capture_begin: pool must be a handle from graph_pool_handle() "
                               f"or CUDAGraph.pool(), got {pool}")
        index = stream.device_index
        with _lock:
            if _capture_on(index, stream.cuda_stream) is not None:
                raise RuntimeError("cannot begin a CUDA graph capture on a stream that is "
                                   "already capturing")
            if s.mode == "sim" and _capture_of_thread() is not None:
                raise RuntimeError("the simulated device captures one graph per thread at "
                                   "a time")
            self._pool, self._device, self._stream = pool, index, stream
            self._thread, self._mode = threading.get_ident(), capture_error_mode
            self._records = [] if s.mode == "sim" else None
            self._use_pool()
            if not _captures:
                _hooks.install()
            _captures.append(self)
            self._state = "capturing"
        if s.mode == "driver":
            # host-to-device uploads during capture (multi-tensor tables) are staged here
            self._staging = (_runtime.pinned_storage(_STAGING_BYTES), 0)
            self._keep.append(self._staging[0])
            try:
                with _runtime.on_device(index):
                    s.driver.stream_begin_capture(stream.cuda_stream,
                                                  _MODES[capture_error_mode])
            except BaseException:
                self._stop_capture()
                self._release_pool()
                self._state = None
                raise

    def capture_end(self):
        """Ends the capture; the graph can be replayed from now on."""
        if self._state != "capturing":
            raise RuntimeError("Called CUDAGraph::capture_end without a preceding "
                               "capture_begin")
        s = _runtime.state()
        try:
            if s.mode == "driver":
                with _runtime.on_device(self._device):
                    self._graph = s.driver.stream_end_capture(self._stream.cuda_stream)
                    if not self._keep_graph:
                        self._exec = s.driver.graph_instantiate(self._graph, 0)
                        s.driver.graph_destroy(self._graph)
                        self._graph = 0
        except BaseException:
            self._stop_capture()
            self._release_pool()
            self._state, self._records = None, None
            raise
        self._stop_capture()
        self._state = "captured"

    def _stop_capture(self):
        with _lock:
            if self in _captures:
                _captures.remove(self)
                if not _captures:
                    _hooks.uninstall()

    def _copy(self, plain_copy, dst, src, nbytes, dst_offset, src_offset, non_blocking):
        """A copy made by the capturing thread: device to device is captured; host to
        device only when ``non_blocking`` (from pageable memory the bytes are first taken
        into pinned memory the graph keeps: replay copies the values of capture time);
        device to host only ``non_blocking`` into pinned memory. Any other copy would
        make the host wait for the device, which capture forbids."""
        dcuda, scuda = dst.device.type == "cuda", src.device.type == "cuda"
        if dcuda and scuda:
            if self._records is None:   # the driver captures the async copy itself
                return plain_copy(dst, src, nbytes, dst_offset, src_offset, True)
            self._records.append(lambda: _runtime.copy_bytes(dst, src, nbytes, dst_offset,
                                                             src_offset, True))
            return None
        host = src if dcuda else dst
        if not non_blocking or not (dcuda or _runtime.is_pinned(host)):
            raise RuntimeError(f"{_NOT_PERMITTED}: a copy between host and device that "
                               "the host waits for (.item(), .cpu(), .tolist(), printing, "
                               ".to() without non_blocking) during CUDA graph capture")
        if dcuda and not _runtime.is_pinned(host):
            snap, at = self._stage(nbytes)
            ctypes.memmove(snap.ptr + at, host.ptr + src_offset, nbytes)
            host, src, src_offset = snap, snap, at
        self._keep.append(host)
        if self._records is None:
            # straight to the driver: the async copy is captured, and no event (which
            # keep_alive would record) is left pointing into the capture
            drv = _runtime.state().driver
            with _runtime.on_device(self._device):
                stream = _runtime.stream_handle(self._device)
                if dcuda:
                    drv.memcpy_htod(dst.ptr + dst_offset, src.ptr + src_offset, nbytes, stream)
                else:
                    drv.memcpy_dtoh(dst.ptr + dst_offset, src.ptr + src_offset, nbytes, stream)
            return None
        if dcuda:   # the host's bytes are known now: copied now too, as eager code may
            plain_copy(dst, src, nbytes, dst_offset, src_offset, True)  # read them
        self._records.append(lambda: _runtime.copy_bytes(dst, src, nbytes, dst_offset,
                                                         src_offset, True))
        return None

    def instantiate(self):
        """Instantiates the captured graph: done by ``capture_end`` unless the graph was
        made with ``keep_graph=True``, then by the first ``replay``."""
        if self._state != "captured":
            raise RuntimeError("Called CUDAGraph::instantiate without a preceding "
                               "successful capture.")
        s = _runtime.state()
        if s.mode == "driver" and not self._exec:
            with _runtime.on_device(self._device):
                self._exec = s.driver.graph_instantiate(self._graph, 0)

    def raw_cuda_graph(self):
        """The ``cudaGraph_t`` handle, as an int (``keep_graph=True`` only)."""
        if not self._keep_graph:
            raise RuntimeError("You cannot access the raw cudaGraph_t instance unless "
                               "CUDAGraph was initialized with keep_graph=True")
        self._check_driver("raw_cuda_graph")
        return self._graph

    def raw_cuda_graph_exec(self):
        """The ``cudaGraphExec_t`` handle, as an int (after instantiation)."""
        self._check_driver("raw_cuda_graph_exec")
        if not self._exec:
            raise RuntimeError("You cannot access the raw cudaGraphExec_t instance until "
                               "instantiate() has been called")
        return self._exec

    def _check_driver(self, what):
        if _runtime.state().mode != "driver":
            raise NotImplementedError(f"CUDAGraph.{what}: the simulated device records "
                                      "launches, it has no CUDA graph")

    def _stage(self, nbytes):
        """(pinned storage, offset) of ``nbytes`` of staging memory the graph keeps: from
        the block set aside before capture where it fits (pinning memory during capture
        may not be allowed), else a new pinned block."""
        st, used = self._staging
        at = -(-used // 64) * 64
        if st is not None and at + nbytes <= st.nbytes:
            self._staging = (st, at + nbytes)
            return st, at
        return _runtime.pinned_storage(nbytes), 0

    def replay(self):
        """Replays the work captured by this graph (on the current stream)."""
        if self._state != "captured":
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful "
                               "capture.")
        s = _runtime.state()
        if s.mode == "driver":
            if not self._exec:
                self.instantiate()
            with _runtime.on_device(self._device):
                s.driver.graph_launch(self._exec, _runtime.stream_handle(self._device))
            return
        for work in self._records:
            work()

    def reset(self):
        """Deletes the graph; its pool's memory is released (by ``empty_cache``) once no
        graph uses the pool."""
        if self._state == "capturing":
            self._stop_capture()
        s = _runtime.state() if self._state is not None else None
        if s is not None and s.mode == "driver":
            try:
                with _runtime.on_device(self._device):
                    if self._state == "capturing":   # leave the stream capturing no more
                        self._graph = s.driver.stream_end_capture(self._stream.cuda_stream)
                    if self._exec:
                        s.driver.graph_exec_destroy(self._exec)
                    if self._graph:
                        s.driver.graph_destroy(self._graph)
            except Exception:   # interpreter shutdown: the driver may be gone
                pass
        self._exec = self._graph = 0
        self._records = None
        self._keep = []
        self._staging = (None, 0)
        if self._state is not None:
            self._release_pool()
        self._state = None

    def pool(self):
        """The id of this graph's memory pool: pass it as ``pool=`` to another capture to
        share the memory."""
        if self._state != "captured":
            raise RuntimeError("Called CUDAGraph::pool() without a preceding successful "
                               "capture.")
        return self._pool

    def enable_debug_mode(self):
        raise NotImplementedError("CUDAGraph.enable_debug_mode is not supported by framework")

    def debug_dump(self, debug_path):
        raise NotImplementedError("CUDAGraph.debug_dump is not supported by framework")

    def _use_pool(self):
        _incref_pool(self._device, _tag(self._pool))

    def _release_pool(self):
        _decref_pool(self._device, _tag(self._pool))

    def __del__(self):
        try:
            if getattr(self, "_state", None) is not None:
                self.reset()
        except Exception:
            pass


class graph:
    """Context manager that captures CUDA work into a :class:`CUDAGraph`.

    ``pool``: a :func:`graph_pool_handle` or ``other_graph.pool()`` to share memory with;
    ``stream``: the capture stream (by default one side stream shared by all captures);
    ``capture_error_mode``: see :meth:`CUDAGraph.capture_begin`. On entry the device is
    synchronized, garbage collected and its cache emptied, as in PyTorch."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        from .streams import Stream, StreamContext
        if stream is None and self.__class__.default_capture_stream is None:
            self.__class__.default_capture_stream = Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else \
            self.__class__.default_capture_stream
        self.stream_ctx = StreamContext(self.capture_stream)
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        from . import empty_cache, synchronize
        synchronize()
        gc.collect()
        empty_cache()
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(*self.pool,
                                          capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            self.cuda_graph.capture_end()
        except Exception:
            if exc_type is None:
                raise
            self.cuda_graph.reset()   # the body's error is the one to see
        finally:
            self.stream_ctx.__exit__(exc_type, exc, tb)
        return False


from ._graphed_callables import make_graphed_callables  # noqa: E402,F401
