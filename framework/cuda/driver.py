"""ctypes binding to the CUDA driver API (``libcuda.so.1``, the library Triton loads).

The library is loaded on first use, so importing this module works without a GPU. Every
call's ``CUresult`` is checked; a failure raises :class:`CudaError` naming the call and the
error (``cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)``).
"""
import ctypes
import threading
from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p

CUresult = c_int
CUdevice = c_int
CUdeviceptr = c_uint64  # 64-bit on every platform CUDA supports
CUcontext = c_void_p
CUstream = c_void_p
CUevent = c_void_p

CUDA_SUCCESS = 0
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_NOT_READY = 600

# CUdevice_attribute values from cuda.h
CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8
CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10
CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_INTEGRATED = 18
CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82

CU_STREAM_DEFAULT = 0
CU_STREAM_NON_BLOCKING = 1
CU_EVENT_DEFAULT = 0
CU_EVENT_BLOCKING_SYNC = 1
CU_EVENT_DISABLE_TIMING = 2
CU_MEMHOSTALLOC_PORTABLE = 1
CU_MEMHOSTALLOC_DEVICEMAP = 2
# CUstreamCaptureMode and CUstreamCaptureStatus
CU_STREAM_CAPTURE_MODE_GLOBAL = 0
CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
CU_STREAM_CAPTURE_MODE_RELAXED = 2
CU_STREAM_CAPTURE_STATUS_NONE = 0
CU_STREAM_CAPTURE_STATUS_ACTIVE = 1
CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2

# Used when cuGetErrorName itself fails (unknown code, or the library is half-broken).
_KNOWN_ERRORS = {
    1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED",
    100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
    201: "CUDA_ERROR_INVALID_CONTEXT", 400: "CUDA_ERROR_INVALID_HANDLE",
    600: "CUDA_ERROR_NOT_READY", 700: "CUDA_ERROR_ILLEGAL_ADDRESS",
    900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
    999: "CUDA_ERROR_UNKNOWN",
}

# name -> argtypes; every function returns CUresult.
_SIGNATURES = {
    "cuGetErrorName": [CUresult, POINTER(c_char_p)],
    "cuGetErrorString": [CUresult, POINTER(c_char_p)],
    "cuInit": [c_uint],
    "cuDriverGetVersion": [POINTER(c_int)],
    "cuDeviceGetCount": [POINTER(c_int)],
    "cuDeviceGet": [POINTER(CUdevice), c_int],
    "cuDeviceGetName": [c_char_p, c_int, CUdevice],
    "cuDeviceTotalMem_v2": [POINTER(c_size_t), CUdevice],
    "cuDeviceGetAttribute": [POINTER(c_int), c_int, CUdevice],
    "cuDevicePrimaryCtxRetain": [POINTER(CUcontext), CUdevice],
    "cuDevicePrimaryCtxRelease_v2": [CUdevice],
    "cuCtxSetCurrent": [CUcontext],
    "cuCtxGetCurrent": [POINTER(CUcontext)],
    "cuCtxSynchronize": [],
    "cuMemAlloc_v2": [POINTER(CUdeviceptr), c_size_t],
    "cuMemFree_v2": [CUdeviceptr],
    "cuMemGetInfo_v2": [POINTER(c_size_t), POINTER(c_size_t)],
    "cuMemcpyHtoD_v2": [CUdeviceptr, c_void_p, c_size_t],
    "cuMemcpyDtoH_v2": [c_void_p, CUdeviceptr, c_size_t],
    "cuMemcpyDtoD_v2": [CUdeviceptr, CUdeviceptr, c_size_t],
    "cuMemcpyHtoDAsync_v2": [CUdeviceptr, c_void_p, c_size_t, CUstream],
    "cuMemcpyDtoHAsync_v2": [c_void_p, CUdeviceptr, c_size_t, CUstream],
    "cuMemcpyDtoDAsync_v2": [CUdeviceptr, CUdeviceptr, c_size_t, CUstream],
    "cuMemsetD8_v2": [CUdeviceptr, ctypes.c_ubyte, c_size_t],
    "cuMemsetD8Async": [CUdeviceptr, ctypes.c_ubyte, c_size_t, CUstream],
    "cuStreamCreate": [POINTER(CUstream), c_uint],
    "cuStreamCreateWithPriority": [POINTER(CUstream), c_uint, c_int],
    "cuStreamDestroy_v2": [CUstream],
    "cuStreamSynchronize": [CUstream],
    "cuStreamQuery": [CUstream],
    "cuStreamWaitEvent": [CUstream, CUevent, c_uint],
    "cuEventCreate": [POINTER(CUevent), c_uint],
    "cuEventRecord": [CUevent, CUstream],
    "cuEventSynchronize": [CUevent],
    "cuEventQuery": [CUevent],
    "cuEventElapsedTime": [POINTER(c_float), CUevent, CUevent],
    "cuEventDestroy_v2": [CUevent],
    "cuMemHostAlloc": [POINTER(c_void_p), c_size_t, c_uint],
    "cuMemFreeHost": [c_void_p],
    # CUDA graphs (framework/cuda/graphs.py): stream capture, instantiate, launch
    "cuStreamBeginCapture_v2": [CUstream, c_int],
    "cuStreamEndCapture": [CUstream, POINTER(c_void_p)],
    "cuStreamIsCapturing": [CUstream, POINTER(c_int)],
    "cuGraphInstantiateWithFlags": [POINTER(c_void_p), c_void_p, c_uint64],
    "cuGraphLaunch": [c_void_p, CUstream],
    "cuGraphExecDestroy": [c_void_p],
    "cuGraphDestroy": [c_void_p],
}


class CudaError(RuntimeError):
    """A CUDA driver call failed; ``code`` is the CUresult, ``name`` its name."""

    def __init__(self, call, code, name, description):
        self.call = call
        self.code = code
        self.name = name
        super().__init__(f"CUDA driver error: {call} failed: {name} ({description})")


class Driver:
    """The driver functions of one loaded library (``lib``: a ctypes CDLL, or a fake in
    tests). Methods return Python values; handles are ints (0 is the null stream)."""

    def __init__(self, lib):
        self._lib = lib
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, name, None)
            if fn is None:
                continue  # checked at call time, so an old driver still loads
            if isinstance(fn, ctypes._CFuncPtr):
                fn.argtypes = argtypes
                fn.restype = CUresult

    # -- error handling --------------------------------------------------------------
    def error_name(self, code):
        """The CUresult's name and description, e.g. ('CUDA_ERROR_OUT_OF_MEMORY', ...)."""
        name = desc = None
        try:
            p = c_char_p()
            if self._lib.cuGetErrorName(code, ctypes.pointer(p)) == CUDA_SUCCESS and p.value:
                name = p.value.decode()
            p = c_char_p()
            if self._lib.cuGetErrorString(code, ctypes.pointer(p)) == CUDA_SUCCESS and p.value:
                desc = p.value.decode()
        except (AttributeError, OSError, ctypes.ArgumentError):
            pass  # fall back to the table: a broken error lookup must not hide the error
        if name is None:
            name = _KNOWN_ERRORS.get(code, f"CUresult {code}")
        return name, desc or "no description"

    def call(self, name, *args):
        """Calls ``name`` and raises CudaError unless it returns CUDA_SUCCESS."""
        fn = getattr(self._lib, name, None)
        if fn is None:
            raise RuntimeError(f"CUDA driver error: {name} is missing from the driver "
                               "library (driver too old?)")
        code = fn(*args)
        if code != CUDA_SUCCESS:
            raise CudaError(name, code, *self.error_name(code))

    def _query(self, name, handle):
        # cuEventQuery / cuStreamQuery: NOT_READY is an answer, not an error
        code = getattr(self._lib, name)(handle)
        if code == CUDA_SUCCESS:
            return True
        if code == CUDA_ERROR_NOT_READY:
            return False
        raise CudaError(name, code, *self.error_name(code))

    # -- devices and contexts ----------------------------------------------------------
    def init(self):
        self.call("cuInit", 0)

    def driver_version(self):
        v = c_int()
        self.call("cuDriverGetVersion", byref(v))
        return v.value

    def device_count(self):
        n = c_int()
        self.call("cuDeviceGetCount", byref(n))
        return n.value

    def device_get(self, ordinal):
        d = CUdevice()
        self.call("cuDeviceGet", byref(d), ordinal)
        return d.value

    def device_name(self, dev):
        buf = ctypes.create_string_buffer(256)
        self.call("cuDeviceGetName", buf, len(buf), dev)
        return buf.value.decode()

    def device_total_mem(self, dev):
        n = c_size_t()
        self.call("cuDeviceTotalMem_v2", byref(n), dev)
        return n.value

    def device_attribute(self, attr, dev):
        v = c_int()
        self.call("cuDeviceGetAttribute", byref(v), attr, dev)
        return v.value

    def compute_capability(self, dev):
        return (self.device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                self.device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))

    def multiprocessor_count(self, dev):
        return self.device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)

    def primary_ctx_retain(self, dev):
        ctx = CUcontext()
        self.call("cuDevicePrimaryCtxRetain", byref(ctx), dev)
        return ctx.value or 0

    def primary_ctx_release(self, dev):
        self.call("cuDevicePrimaryCtxRelease_v2", dev)

    def ctx_set_current(self, ctx):
        self.call("cuCtxSetCurrent", CUcontext(ctx or None))

    def ctx_get_current(self):
        ctx = CUcontext()
        self.call("cuCtxGetCurrent", byref(ctx))
        return ctx.value or 0

    def ctx_synchronize(self):
        self.call("cuCtxSynchronize")

    # -- memory ---------------------------------------------------------------------------
    def mem_alloc(self, nbytes):
        p = CUdeviceptr()
        self.call("cuMemAlloc_v2", byref(p), nbytes)
        return p.value

    def mem_free(self, ptr):
        self.call("cuMemFree_v2", CUdeviceptr(ptr))

    def mem_get_info(self):
        """(free, total) bytes of the current context's device."""
        free, total = c_size_t(), c_size_t()
        self.call("cuMemGetInfo_v2", byref(free), byref(total))
        return free.value, total.value

    def memcpy_htod(self, dst, src, nbytes, stream=None):
        if stream is None:
            self.call("cuMemcpyHtoD_v2", CUdeviceptr(dst), c_void_p(src), nbytes)
        else:
            self.call("cuMemcpyHtoDAsync_v2", CUdeviceptr(dst), c_void_p(src), nbytes,
                      CUstream(stream or None))

    def memcpy_dtoh(self, dst, src, nbytes, stream=None):
        if stream is None:
            self.call("cuMemcpyDtoH_v2", c_void_p(dst), CUdeviceptr(src), nbytes)
        else:
            self.call("cuMemcpyDtoHAsync_v2", c_void_p(dst), CUdeviceptr(src), nbytes,
                      CUstream(stream or None))

    def memcpy_dtod(self, dst, src, nbytes, stream=None):
        if stream is None:
            self.call("cuMemcpyDtoD_v2", CUdeviceptr(dst), CUdeviceptr(src), nbytes)
        else:
            self.call("cuMemcpyDtoDAsync_v2", CUdeviceptr(dst), CUdeviceptr(src), nbytes,
                      CUstream(stream or None))

    def memset_d8(self, dst, value, nbytes, stream=None):
        if stream is None:
            self.call("cuMemsetD8_v2", CUdeviceptr(dst), value & 0xFF, nbytes)
        else:
            self.call("cuMemsetD8Async", CUdeviceptr(dst), value & 0xFF, nbytes,
                      CUstream(stream or None))

    def mem_host_alloc(self, nbytes, flags=CU_MEMHOSTALLOC_PORTABLE):
        """Page-locked host memory (for pin_memory and async copies)."""
        p = c_void_p()
        self.call("cuMemHostAlloc", byref(p), nbytes, flags)
        return p.value or 0

    def mem_free_host(self, ptr):
        self.call("cuMemFreeHost", c_void_p(ptr))

    # -- streams and events ---------------------------------------------------------------
    def stream_create(self, flags=CU_STREAM_NON_BLOCKING, priority=None):
        s = CUstream()
        if priority is None:
            self.call("cuStreamCreate", byref(s), flags)
        else:
            self.call("cuStreamCreateWithPriority", byref(s), flags, priority)
        return s.value or 0

    def stream_destroy(self, stream):
        self.call("cuStreamDestroy_v2", CUstream(stream or None))

    def stream_synchronize(self, stream):
        self.call("cuStreamSynchronize", CUstream(stream or None))

    def stream_query(self, stream):
        """True when all work on the stream has completed."""
        return self._query("cuStreamQuery", CUstream(stream or None))

    def stream_wait_event(self, stream, event):
        self.call("cuStreamWaitEvent", CUstream(stream or None), CUevent(event), 0)

    def event_create(self, flags=CU_EVENT_DEFAULT):
        e = CUevent()
        self.call("cuEventCreate", byref(e), flags)
        return e.value

    def event_record(self, event, stream):
        self.call("cuEventRecord", CUevent(event), CUstream(stream or None))

    def event_synchronize(self, event):
        self.call("cuEventSynchronize", CUevent(event))

    def event_query(self, event):
        """True when the work captured by the event has completed."""
        return self._query("cuEventQuery", CUevent(event))

    def event_elapsed_time(self, start, end):
        """Milliseconds between two recorded events."""
        ms = c_float()
        self.call("cuEventElapsedTime", byref(ms), CUevent(start), CUevent(end))
        return ms.value

    def event_destroy(self, event):
        self.call("cuEventDestroy_v2", CUevent(event))

    # -- graphs (stream capture) ------------------------------------------------------------
    def stream_begin_capture(self, stream, mode=CU_STREAM_CAPTURE_MODE_GLOBAL):
        self.call("cuStreamBeginCapture_v2", CUstream(stream or None), mode)

    def stream_end_capture(self, stream):
        """The captured CUgraph (its handle as an int)."""
        g = c_void_p()
        self.call("cuStreamEndCapture", CUstream(stream or None), byref(g))
        return g.value or 0

    def stream_is_capturing(self, stream):
        """The stream's CUstreamCaptureStatus (0: not capturing, 1: active, 2: invalidated)."""
        status = c_int()
        self.call("cuStreamIsCapturing", CUstream(stream or None), byref(status))
        return status.value

    def graph_instantiate(self, graph, flags=0):
        """An executable graph (CUgraphExec) of ``graph``."""
        e = c_void_p()
        self.call("cuGraphInstantiateWithFlags", byref(e), c_void_p(graph), flags)
        return e.value or 0

    def graph_launch(self, graph_exec, stream):
        self.call("cuGraphLaunch", c_void_p(graph_exec), CUstream(stream or None))

    def graph_exec_destroy(self, graph_exec):
        self.call("cuGraphExecDestroy", c_void_p(graph_exec))

    def graph_destroy(self, graph):
        self.call("cuGraphDestroy", c_void_p(graph))


_LIBRARY = "libcuda.so.1"
_lock = threading.Lock()
_driver = None


def load(path=_LIBRARY):
    """The CDLL of the driver library; raises RuntimeError saying why it is unusable."""
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise RuntimeError(f"Found no NVIDIA driver on your system: could not load the CUDA "
                           f"driver library {path} ({e}). Please check that you have an "
                           "NVIDIA GPU and installed a driver") from None


def get():
    """The process-wide Driver, loaded and cuInit'ed on first use."""
    global _driver
    if _driver is None:
        with _lock:
            if _driver is None:
                d = Driver(load())
                d.init()
                _driver = d
    return _driver


def is_loadable():
    """Whether the driver library loads and initialises (no exception)."""
    try:
        get()
        return True
    except RuntimeError:
        return False
