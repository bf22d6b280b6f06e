"""The ``"nccl"`` backend: ``cuda`` tensors through NCCL (``libnccl.so.2`` of the
``nvidia-nccl-cu12`` wheel), bound with ctypes, on framework's own CUDA streams.

Here: the binding (``Library``), the communicators of a process group (``GroupState``,
``pg.nccl``: made on first use for each device; rank 0's unique id reaches the others
through the group's MPI communicator, the rendezvous the launcher already formed) and the
watchdog thread that aborts a communicator whose operation outlived the group's timeout or
hit an asynchronous error, so that the next ``wait`` or collective raises instead of
hanging. The operations are in ``nccl_collectives``. Simulated ``cuda`` (TRITON_INTERPRET=1)
has no GPU for NCCL: use ``backend="mpi"`` there.
"""
import collections
import ctypes
import glob
import importlib.util
import os
import sys
import threading
import time
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_void_p

from .. import _dtype

_MSG = "backend 'nccl' needs a GPU and the nvidia-nccl-cu12 wheel"

# ---- the C API (nccl.h) -------------------------------------------------------------------

ncclResult_t = c_int
ncclComm_t = c_void_p
cudaStream_t = c_void_p
NCCL_UNIQUE_ID_BYTES = 128


class ncclUniqueId(ctypes.Structure):
    """``typedef struct { char internal[128]; } ncclUniqueId;`` (bytes, not a C string)."""
    _fields_ = [("internal", ctypes.c_ubyte * NCCL_UNIQUE_ID_BYTES)]


# ncclResult_t
ncclSuccess, ncclUnhandledCudaError, ncclSystemError, ncclInternalError, \
    ncclInvalidArgument, ncclInvalidUsage, ncclRemoteError, ncclInProgress = range(8)

# ncclDataType_t
ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64, ncclUint64, ncclFloat16, \
    ncclFloat32, ncclFloat64, ncclBfloat16 = range(10)

# ncclRedOp_t
ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg = range(5)

# framework dtype -> ncclDataType_t; bool travels as uint8 (int16 has no NCCL type)
DATATYPES = {
    _dtype.bool: ncclUint8, _dtype.uint8: ncclUint8, _dtype.int8: ncclInt8,
    _dtype.int32: ncclInt32, _dtype.int64: ncclInt64, _dtype.float16: ncclFloat16,
    _dtype.bfloat16: ncclBfloat16, _dtype.float32: ncclFloat32, _dtype.float64: ncclFloat64,
}
# ReduceOp name -> ncclRedOp_t (BAND, BOR, BXOR: none)
RED_OPS = {"SUM": ncclSum, "PRODUCT": ncclProd, "MAX": ncclMax, "MIN": ncclMin,
           "AVG": ncclAvg}

_COLL = [c_void_p, c_void_p, c_size_t, c_int]          # sendbuff, recvbuff, count, datatype
_P2P = [c_void_p, c_size_t, c_int, c_int, ncclComm_t, cudaStream_t]
# name -> (restype, argtypes)
SIGNATURES = {
    "ncclGetVersion": (ncclResult_t, [POINTER(c_int)]),
    "ncclGetUniqueId": (ncclResult_t, [POINTER(ncclUniqueId)]),
    "ncclCommInitRank": (ncclResult_t, [POINTER(ncclComm_t), c_int, ncclUniqueId, c_int]),
    "ncclCommDestroy": (ncclResult_t, [ncclComm_t]),
    "ncclCommAbort": (ncclResult_t, [ncclComm_t]),
    "ncclCommGetAsyncError": (ncclResult_t, [ncclComm_t, POINTER(ncclResult_t)]),
    "ncclGetErrorString": (c_char_p, [ncclResult_t]),
    "ncclAllReduce": (ncclResult_t, _COLL + [c_int, ncclComm_t, cudaStream_t]),
    "ncclBroadcast": (ncclResult_t, _COLL + [c_int, ncclComm_t, cudaStream_t]),
    "ncclReduce": (ncclResult_t, _COLL + [c_int, c_int, ncclComm_t, cudaStream_t]),
    "ncclAllGather": (ncclResult_t, _COLL + [ncclComm_t, cudaStream_t]),
    "ncclReduceScatter": (ncclResult_t, _COLL + [c_int, ncclComm_t, cudaStream_t]),
    "ncclSend": (ncclResult_t, _P2P),
    "ncclRecv": (ncclResult_t, _P2P),
    "ncclGroupStart": (ncclResult_t, []),
    "ncclGroupEnd": (ncclResult_t, []),
}
_OPTIONAL = {"ncclGetLastError": (c_char_p, [ncclComm_t])}   # NCCL >= 2.13: more detail


class NcclError(RuntimeError):
    """A failed NCCL call: ``code`` is its ``ncclResult_t``."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def decode_version(code):
    """NCCL_VERSION_CODE as (major, minor, patch); the encoding changed at 2.9."""
    if code >= 10000:
        return code // 10000, code // 100 % 100, code % 100
    return code // 1000, code // 100 % 10, code % 100


class Library:
    """``libnccl.so.2`` (or any object with the same functions, as tests inject): each
    method is one NCCL call whose ``ncclResult_t`` is checked; a failure raises NcclError
    naming the call, NCCL's words for the error and its version."""

    def __init__(self, lib):
        self.lib = lib
        self._fn = {}
        for table in (SIGNATURES, _OPTIONAL):
            for name, (res, args) in table.items():
                fn = getattr(lib, name, None)
                if fn is None and table is SIGNATURES:
                    raise RuntimeError(f"{lib} has no {name}: not an NCCL library")
                if fn is not None:
                    if hasattr(fn, "argtypes"):      # a ctypes function, not a test double
                        fn.restype, fn.argtypes = res, args
                    self._fn[name] = fn
        v = c_int()
        self._call("ncclGetVersion", byref(v))
        self.version_code = v.value
        self.version = decode_version(v.value)

    def error_string(self, code):
        s = self._fn["ncclGetErrorString"](code)
        return s.decode(errors="replace") if isinstance(s, bytes) else str(s)

    def _call(self, name, *args):
        code = self._fn[name](*args)
        if code != ncclSuccess:
            v = ".".join(map(str, getattr(self, "version", ()))) or "unknown"
            msg = f"NCCL error in: {name}, {self.error_string(code)}, NCCL version {v}"
            last = self._fn.get("ncclGetLastError")
            detail = last(None) if last is not None else None
            if detail:
                msg += "\nLast error:\n" + (detail.decode(errors="replace")
                                            if isinstance(detail, bytes) else str(detail))
            raise NcclError(msg, code)

    def unique_id(self):
        uid = ncclUniqueId()
        self._call("ncclGetUniqueId", byref(uid))
        return uid

    def comm_init_rank(self, nranks, uid, rank):
        comm = ncclComm_t()
        self._call("ncclCommInitRank", byref(comm), nranks, uid, rank)
        return comm.value

    def comm_destroy(self, comm):
        self._call("ncclCommDestroy", comm)

    def comm_abort(self, comm):
        self._call("ncclCommAbort", comm)

    def comm_async_error(self, comm):
        err = ncclResult_t()
        self._call("ncclCommGetAsyncError", comm, byref(err))
        return err.value

    def all_reduce(self, send, recv, count, dtype, op, comm, stream):
        self._call("ncclAllReduce", send, recv, count, dtype, op, comm, stream)

    def broadcast(self, send, recv, count, dtype, root, comm, stream):
        self._call("ncclBroadcast", send, recv, count, dtype, root, comm, stream)

    def reduce(self, send, recv, count, dtype, op, root, comm, stream):
        self._call("ncclReduce", send, recv, count, dtype, op, root, comm, stream)

    def all_gather(self, send, recv, sendcount, dtype, comm, stream):
        self._call("ncclAllGather", send, recv, sendcount, dtype, comm, stream)

    def reduce_scatter(self, send, recv, recvcount, dtype, op, comm, stream):
        self._call("ncclReduceScatter", send, recv, recvcount, dtype, op, comm, stream)

    def send(self, buf, count, dtype, peer, comm, stream):
        self._call("ncclSend", buf, count, dtype, peer, comm, stream)

    def recv(self, buf, count, dtype, peer, comm, stream):
        self._call("ncclRecv", buf, count, dtype, peer, comm, stream)

    def group_start(self):
        self._call("ncclGroupStart")

    def group_end(self):
        self._call("ncclGroupEnd")


# ---- finding and loading the library ---------------------------------------------------

def find_library():
    """The path of ``libnccl.so.2`` from the ``nvidia-nccl-cu12`` (or ``-cu13``) wheel, or None."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        # nvidia/nccl/lib in the cu12 wheels; later wheels may share nvidia/cu13/lib
        hits = (glob.glob(os.path.join(root, "nccl", "lib", "libnccl.so*"))
                or glob.glob(os.path.join(root, "*", "lib", "libnccl.so*")))
        if hits:
            return sorted(hits)[0]
    return None


def _simulated():
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _has_gpu():
    if _simulated():
        return False     # simulated cuda: no device for NCCL to drive
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


_lib = None              # the loaded Library (tests put a fake one here)
_lib_lock = threading.Lock()


def library():
    """The NCCL library, loaded once."""
    global _lib
    with _lib_lock:
        if _lib is None:
            path = find_library()
            if path is None:
                raise RuntimeError(f"{_MSG}: libnccl.so.2 was not found (pip install "
                                   "nvidia-nccl-cu12)")
            _lib = Library(ctypes.CDLL(path))
        return _lib


def version():
    """NCCL's version as (major, minor, patch), or None when the library is missing."""
    try:
        return library().version
    except (RuntimeError, OSError):
        return None


def is_available():
    """Whether NCCL can be used: a GPU (not simulated) and the library."""
    return _has_gpu() and (_lib is not None or find_library() is not None)


def _device_usable():
    from .. import cuda
    return cuda.is_available() and not cuda.is_simulated()


def require():
    """Raises RuntimeError, saying what is missing, when NCCL cannot be used here."""
    if not is_available():
        if _simulated():
            why = "cuda is simulated here (TRITON_INTERPRET=1); use backend='mpi'"
        elif _lib is None and find_library() is None:
            why = "libnccl.so.2 was not found (pip install nvidia-nccl-cu12)"
        else:
            why = "no GPU driver (libcuda.so.1) was found"
        raise RuntimeError(f"{_MSG}: {why}")
    if not _device_usable():
        raise RuntimeError(f"{_MSG}: no CUDA device is usable")
    lib = library()
    if lib.version < (2, 10, 0):   # ncclAvg and bfloat16 came in 2.10
        raise RuntimeError(f"{_MSG}: NCCL >= 2.10 is required, found "
                           f"{'.'.join(map(str, lib.version))}")
    return lib


# ---- communicators of a process group ------------------------------------------------

_PAIR_TAG = 32766       # MPI tag of the unique id sent for a two-rank communicator


class Communicator:
    """One ``ncclComm_t`` on one device: ``size`` ranks, this one being ``rank``."""

    def __init__(self, handle, device, size, rank):
        self.handle, self.device, self.size, self.rank = handle, device, size, rank
        self.aborted = False
        self.destroyed = False


class _Pending:
    """An operation queued on a stream, watched until its event completes."""
    __slots__ = ("event", "comm", "what", "seq", "start", "limit", "numel_in", "numel_out")

    def __init__(self, event, comm, what, seq, limit, numel_in, numel_out):
        self.event, self.comm, self.what, self.seq = event, comm, what, seq
        self.start, self.limit = time.monotonic(), limit
        self.numel_in, self.numel_out = numel_in, numel_out

    def done(self):
        from ..cuda import _runtime
        with _runtime.on_device(self.comm.device):   # the watchdog thread has no context
            return self.event.query()

    def timeout_message(self, now):
        ms = int(self.limit * 1000)
        return (f"{self.what} timed out: Watchdog caught collective operation timeout: "
                f"WorkNCCL(SeqNum={self.seq}, OpType={self.what.upper()}, "
                f"NumelIn={self.numel_in}, NumelOut={self.numel_out}, Timeout(ms)={ms}) ran "
                f"for {int((now - self.start) * 1000)} milliseconds before timing out. A "
                f"rank may have died or not called this collective.")


class GroupState:
    """The NCCL side of a process group (``pg.nccl``): its communicators by device (and by
    peer for two-rank ones), the operations in flight, and its failure."""

    def __init__(self, pg, lib):
        self.pg = pg
        self.lib = lib
        self.only_cuda = pg.backend == "nccl"   # "cpu:gloo,cuda:nccl" keeps MPI for cpu
        self.comms = {}
        self.pending = collections.deque()
        self.lock = threading.RLock()
        self.seq = 0
        self.last_device = None

    # -- communicators --
    def comm(self, device, peer=None):
        """The communicator of ``device``: the whole group's, or for a point-to-point with
        group rank ``peer`` before any collective made that one, a two-rank one (as
        PyTorch does: the other ranks are not there to make the group's)."""
        self.check("nccl")
        self.last_device = device
        full = self.comms.get(device)
        if full is not None or peer is None or self.pg.size() <= 2:
            return full if full is not None else self._make(device, None)
        me = self.pg.rank()
        key = (device, min(me, peer), max(me, peer))
        return self.comms.get(key) or self._make(device, peer, key)

    def _make(self, device, peer, key=None):
        import numpy as np
        from .collectives import _wait_requests
        from ..cuda import _runtime
        pg, me = self.pg, self.pg.rank()
        uid = ncclUniqueId()
        raw = np.frombuffer(uid, np.uint8)      # MPI sends the struct's bytes in place
        if peer == me:          # to itself: a communicator of one, nobody to ask
            size, rank = 1, 0
            ctypes.memmove(byref(uid), byref(self.lib.unique_id()), ctypes.sizeof(uid))
        elif peer is None:
            size, rank = pg.size(), me
            if me == 0:
                ctypes.memmove(byref(uid), byref(self.lib.unique_id()), ctypes.sizeof(uid))
            if size > 1:
                _wait_requests([pg.comm.Ibcast(raw, root=0)], pg, "nccl rendezvous")
        else:
            size, rank = 2, int(me > peer)
            if rank == 0:
                ctypes.memmove(byref(uid), byref(self.lib.unique_id()), ctypes.sizeof(uid))
                req = pg.comm.Isend(raw, dest=peer, tag=_PAIR_TAG)
            else:
                req = pg.comm.Irecv(raw, source=peer, tag=_PAIR_TAG)
            _wait_requests([req], pg, "nccl rendezvous")
        # NCCL takes the device from the context current on this thread
        with _runtime.on_device(device):
            handle = self.lib.comm_init_rank(size, uid, rank)
        c = Communicator(handle, device, size, rank)
        with self.lock:
            self.comms[device if key is None else key] = c
        _watch(self)
        return c

    # -- operations in flight --
    def track(self, event, comm, what, numel_in, numel_out, timeout=None):
        with self.lock:
            self.seq += 1
            limit = (timeout or self.pg.timeout).total_seconds()
            p = _Pending(event, comm, what, self.seq, limit, numel_in, numel_out)
            self.pending.append(p)
        _wake.set()
        return p

    def check(self, what):
        """Raises when an earlier failure left the group unusable."""
        if self.pg.broken is not None:
            raise RuntimeError(f"{what}: the process group is unusable after an earlier "
                               f"failure: {self.pg.broken}")

    def fail(self, message):
        """Marks the group broken and aborts its communicators (their kernels end, so a
        stream waiting for a dead rank moves on)."""
        from . import mpi_backend
        with self.lock:
            first = self.pg.broken is None
            if first:
                self.pg.broken = message
            self.pending.clear()
            comms = [c for c in self.comms.values() if not c.aborted and not c.destroyed]
            for c in comms:
                c.aborted = True
        for c in comms:
            try:
                from ..cuda import _runtime
                with _runtime.on_device(c.device):
                    self.lib.comm_abort(c.handle)
            except Exception:   # noqa: BLE001 - aborting is best effort
                pass
        # MPI_Finalize would wait for a rank that is stuck: leave without it at exit
        mpi_backend._fail()
        if first:
            print(f"[rank {self.pg.ranks[self.pg.rank()]}] {message}", file=sys.stderr,
                  flush=True)

    def poll(self, now):
        """One watchdog step: forgets finished operations, fails the group on an NCCL
        asynchronous error or an operation older than its timeout. Returns whether some
        operation is still pending."""
        with self.lock:
            live = [p for p in self.pending if not p.done()]
            self.pending = collections.deque(live)
        for p in live:
            if p.comm.aborted:
                continue
            err = self.lib.comm_async_error(p.comm.handle)
            if err not in (ncclSuccess, ncclInProgress):
                self.fail(f"{p.what} failed: NCCL communicator encountered error: "
                          f"{self.lib.error_string(err)} (WorkNCCL(SeqNum={p.seq}, "
                          f"OpType={p.what.upper()}))")
                return False
            if now - p.start > p.limit:
                self.fail(p.timeout_message(now))
                return False
        return bool(live)

    def host_wait(self, p, limit=None):
        """Blocks this thread until ``p`` is done; raises on a failure or after ``limit``
        seconds (default: the operation's timeout)."""
        limit = p.limit if limit is None else limit
        start = time.monotonic()
        delay = 0.0
        while True:
            self.check(p.what)
            if p.done():
                return
            now = time.monotonic()
            if now - start > limit:
                p.limit = limit
                self.fail(p.timeout_message(now))
                self.check(p.what)
            time.sleep(delay)
            delay = min(0.001, delay + 0.0001)

    def destroy(self):
        """Frees the communicators once their work is done (aborts them after a failure,
        or when that work does not finish within its timeout)."""
        _unwatch(self)
        try:
            for p in list(self.pending):
                self.host_wait(p)
        except RuntimeError:
            pass
        from ..cuda import _runtime
        with self.lock:
            comms = [c for c in self.comms.values() if not c.aborted and not c.destroyed]
            self.comms.clear()
            broken = self.pg.broken is not None
        for c in comms:
            c.destroyed = True
            try:
                with _runtime.on_device(c.device):
                    (self.lib.comm_abort if broken else self.lib.comm_destroy)(c.handle)
            except Exception:   # noqa: BLE001 - freeing is best effort at shutdown
                pass


def attach(pg, device_id=None):
    """Gives ``pg`` its NCCL state; with ``device_id`` the communicator of that device is
    made now (PyTorch's eager initialization), otherwise at the first operation."""
    pg.nccl = GroupState(pg, require())
    if device_id is not None:
        from ..cuda import _device_index
        pg.nccl.comm(_device_index(device_id))
    return pg.nccl


# ---- the watchdog thread ---------------------------------------------------------------

_POLL_S = 0.1
_watched = []
_watch_lock = threading.Lock()
_wake = threading.Event()
_thread = [None]


def _watch(state):
    with _watch_lock:
        if state not in _watched:
            _watched.append(state)
        if _thread[0] is None:
            t = threading.Thread(target=_watchdog, name="nccl-watchdog", daemon=True)
            _thread[0] = t
            t.start()


def _unwatch(state):
    with _watch_lock:
        if state in _watched:
            _watched.remove(state)
    _wake.set()


def _watchdog():
    """Polls every group with operations in flight; sleeps while none has any."""
    while True:
        with _watch_lock:
            states = list(_watched)
            if not states:
                _thread[0] = None
                return
        busy = False
        now = time.monotonic()
        for s in states:
            try:
                busy = s.poll(now) or busy
            except Exception as e:   # noqa: BLE001 - a failing query fails the group
                s.fail(f"NCCL watchdog: {e}")
        if busy:
            time.sleep(_POLL_S)
        else:
            _wake.wait(1.0)
            _wake.clear()
