"""Shared-memory storages: the memory under tensors that cross process boundaries
(framework.multiprocessing, DataLoader workers).

A shared storage is an ordinary :class:`~framework._storage.Storage` whose ``buf`` is a
NumPy view of an ``mmap`` of a shared-memory segment (so ``Tensor.numpy()`` and the native
kernels see plain host memory). Two sharing strategies, as in PyTorch:

* ``"file_descriptor"`` (the default): an anonymous segment (``memfd_create``), alive while
  some process holds an fd or a mapping of it; nothing ever appears in /dev/shm. The
  handle sent to another process is the fd itself (multiprocessing's fd passing).
* ``"file_system"``: a named segment ``/dev/shm/fw_shm_*``, opened by name by the receiver.
  Its first 64 bytes hold a reference count (updated under an ``lockf`` lock): one per
  process that maps it and one per handle in flight (pickled, not yet unpickled). The
  process that drops it to zero unlinks it. Python's resource tracker (the daemon
  ``multiprocessing.shared_memory`` uses) unlinks what a killed process left behind once
  every process sharing it has exited. Call ``set_sharing_strategy("file_system")`` before
  starting the processes, so that they share one tracker.

A process maps a segment once: storages are cached by segment, so that views of one
storage received separately are views of one storage again.
"""
import fcntl
import itertools
import mmap
import os
import secrets
import threading
import weakref

import numpy as np

from . import _fd_channel
from ._storage import Storage, _Owned

PREFIX = "fw_shm_"
STRATEGIES = ("file_descriptor", "file_system")
_HEADER = 64                   # file_system: int64 refcount, then data (64-byte aligned)

_strategy = "file_descriptor"
_lock = threading.RLock()
_counter = itertools.count()
_storages = weakref.WeakValueDictionary()   # segment key -> the Storage mapping it here
_segments = weakref.WeakSet()               # segments this process holds a reference of
_exit_hook_pid = None
_tls = threading.local()
_deferred = []                              # counts to drop once no file lock is held


def get_strategy():
    return _strategy


def set_strategy(strategy):
    global _strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"invalid sharing strategy {strategy!r}; expected one of "
                         f"{', '.join(STRATEGIES)}")
    if strategy == "file_system":
        # start the tracker here, so that the children started later share it
        from multiprocessing import resource_tracker
        resource_tracker.ensure_running()
    _strategy = strategy


class Segment:
    """One mapping of a shared-memory segment in this process. ``kind`` is "fd" (the
    segment is kept alive by ``fd``) or "fs" (named ``name``, reference counted)."""

    __slots__ = ("kind", "name", "fd", "mm", "nbytes", "key", "pid", "counted",
                 "__weakref__")

    def __init__(self, kind, name, fd, mm, nbytes, key, counted):
        self.kind, self.name, self.fd, self.mm = kind, name, fd, mm
        self.nbytes, self.key, self.counted = nbytes, key, counted
        self.pid = os.getpid()
        _segments.add(self)
        _ensure_exit_hook()

    def release(self):
        """Drops this process's reference: closes the fd, or counts down (and unlinks at
        zero) a named segment. The mapping itself goes with the last array over it."""
        with _lock:
            if self.pid != os.getpid():   # inherited through fork: the parent's to drop
                return
            fd, self.fd = self.fd, None
            counted, self.counted = self.counted, False
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        if counted:
            _add_ref(self.name, -1)

    def __del__(self):
        try:
            self.release()
        except Exception:  # interpreter shutdown: modules may already be gone
            pass

    def __repr__(self):
        return f"Segment({self.kind}, {self.name}, nbytes={self.nbytes})"


# ---- the reference count of named segments -------------------------------------------

def _add_ref(name, delta):
    """Adds ``delta`` to the count of named segment ``name``, under a lock on its file;
    unlinks it when the count reaches zero. Returns the new count (None if gone)."""
    if getattr(_tls, "busy", False):
        # a segment collected while this thread holds another's file lock: counting it now
        # could deadlock with a process doing the converse, so it is counted just after
        _deferred.append((name, delta))
        return None
    _tls.busy = True
    try:
        n = _add_ref_now(name, delta)
    finally:
        _tls.busy = False
    while _deferred:
        try:
            _add_ref(*_deferred.pop())
        except IndexError:   # another thread took it
            break
    return n


def _add_ref_now(name, delta):
    import _posixshmem
    with _lock:    # lockf locks belong to the process: the threads queue here
        try:
            fd = _posixshmem.shm_open(name, os.O_RDWR, 0o600)
        except FileNotFoundError:
            return None
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX)
            n = int.from_bytes(os.pread(fd, 8, 0), "little", signed=True) + delta
            os.pwrite(fd, n.to_bytes(8, "little", signed=True), 0)
            if n <= 0:
                _unlink(name)
            return n
        finally:
            os.close(fd)   # and with it the lock


def _unlink(name):
    import _posixshmem
    from multiprocessing import resource_tracker
    try:
        _posixshmem.shm_unlink(name)
    except FileNotFoundError:
        pass
    # registering first makes the unregistering valid whichever process created it
    resource_tracker.register(name, "shared_memory")
    resource_tracker.unregister(name, "shared_memory")


# ---- making and opening segments -------------------------------------------------------

_MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)   # Linux >= 5.14


def _map(fd, size, populate=False):
    """A shared read-write mapping; ``populate``: with its page tables filled now, in one
    call, for a new segment its creator is about to write whole (a batch): the first write
    to each 4 KiB page would otherwise take a fault (~0.8 ms for a 3 MiB batch)."""
    mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    if populate:
        try:
            mm.madvise(_MADV_POPULATE_WRITE)
        except (OSError, ValueError):   # an older kernel: the pages fault in as written
            pass
    return mm


def _reserve(fd, size, where):
    """Sizes a new segment and reserves its pages now: a full tmpfs then fails here with
    an error, instead of killing the process with SIGBUS on the first write."""
    os.ftruncate(fd, size)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        raise RuntimeError(f"unable to allocate {size} bytes of shared memory ({where}): "
                           f"{e.strerror}. If /dev/shm is small (as in containers), enlarge "
                           "it or use the other sharing strategy") from None


def _new_segment(nbytes, strategy):
    tag = f"{PREFIX}{os.getpid()}_{next(_counter)}_{secrets.token_hex(4)}"
    if strategy == "file_descriptor":
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create(tag, os.MFD_CLOEXEC)
        else:   # a named segment, unlinked at once: the fd keeps it
            import _posixshmem
            fd = _posixshmem.shm_open("/" + tag, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            _posixshmem.shm_unlink("/" + tag)
        try:
            _reserve(fd, max(nbytes, 1), "memfd")
            mm = _map(fd, max(nbytes, 1), populate=True)
        except BaseException:
            os.close(fd)
            raise
        st = os.fstat(fd)
        return Segment("fd", tag, fd, mm, nbytes, ("fd", st.st_dev, st.st_ino), False)
    import _posixshmem
    from multiprocessing import resource_tracker
    name = "/" + tag
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    resource_tracker.register(name, "shared_memory")
    try:
        _reserve(fd, _HEADER + nbytes, name)
        os.pwrite(fd, (1).to_bytes(8, "little", signed=True), 0)
        mm = _map(fd, _HEADER + nbytes, populate=True)
    except BaseException:
        _unlink(name)
        raise
    finally:
        os.close(fd)
    return Segment("fs", name, None, mm, nbytes, ("fs", name), True)


def _segment_buf(seg):
    """The uint8 array over a segment's data (keeps the segment alive) and its address."""
    start = _HEADER if seg.kind == "fs" else 0
    arr = np.frombuffer(seg.mm, np.uint8, count=seg.nbytes, offset=start)
    return _Owned(arr, seg), arr.ctypes.data


def segment_of(storage):
    """The Segment a storage lives in, or None."""
    owner = getattr(storage.buf, "_owner", None)
    return owner if isinstance(owner, Segment) else None


def _publish(storage, seg):
    with _lock:
        _storages[seg.key] = storage
    return storage


# ---- the API ---------------------------------------------------------------------------

def is_shared(storage):
    """Whether ``storage`` is in shared memory (CUDA storages always count as shared, as
    in PyTorch: they cross processes by CUDA IPC)."""
    return storage.device.type == "cuda" or segment_of(storage) is not None


def share_storage_(storage):
    """Moves a cpu (or simulated cuda) storage into a new shared-memory segment in place:
    every tensor over it follows, since they read ``storage.ptr``. NumPy arrays taken
    from it earlier keep the old memory. Returns the storage."""
    with _lock:    # two threads pickling one storage must not both move it
        if segment_of(storage) is not None:
            return storage
        seg = _new_segment(storage.nbytes, _strategy)
        buf, ptr = _segment_buf(seg)
        if storage.nbytes:
            buf[:] = np.frombuffer(_host_bytes(storage), np.uint8, count=storage.nbytes)
        storage.ptr, storage.buf = ptr, buf
        return _publish(storage, seg)


def _host_bytes(storage):
    if storage.device.type == "cpu":
        return storage.buf
    from .cuda import _runtime
    return _runtime.host_alias(storage).buf


def empty_shared(shape, dtype):
    """A new uninitialised contiguous cpu tensor of ``shape`` and ``dtype`` whose storage
    is in shared memory from the start (the current sharing strategy)."""
    from ._ops.alloc import contiguous_strides
    from ._tensor import Tensor
    shape = tuple(int(n) for n in shape)
    numel = 1
    for n in shape:
        numel *= n
    seg = _new_segment(numel * dtype.itemsize, _strategy)
    buf, ptr = _segment_buf(seg)
    from ._device import CPU
    storage = _publish(Storage(ptr, seg.nbytes, CPU, buf), seg)
    return Tensor._make(storage, shape, contiguous_strides(shape), 0, dtype)


def share_tensor_(t):
    """Tensor.share_memory_: cpu storages move to shared memory; cuda is a no-op."""
    if t._storage.device.type == "cpu":
        share_storage_(t._storage)
    return t


# ---- handles: what crosses the process boundary ----------------------------------------

def storage_handle(storage):
    """A picklable handle of ``storage`` (moved to shared memory first if need be), for
    :func:`storage_from_handle` in another process. Pickle it at once: a named segment
    counts the handle as a reference until it is opened."""
    seg = segment_of(share_storage_(storage))
    device = str(storage.device)
    if seg.kind == "fd":
        from multiprocessing import reduction
        if seg.fd is None:
            raise RuntimeError("cannot share a storage whose shared-memory segment this "
                               "process has already released")
        sent = _fd_channel.outgoing(seg.fd)     # a DataLoader worker's batch
        if sent is not None:
            return ("fdch", sent, seg.nbytes, device)
        return ("fd", reduction.DupFd(seg.fd), seg.nbytes, device)
    if _add_ref(seg.name, 1) is None:
        raise RuntimeError(f"shared memory segment {seg.name} no longer exists")
    return ("fs", seg.name, seg.nbytes, device)


def storage_from_handle(handle):
    """The storage of a handle made by :func:`storage_handle`: the same Storage
    object for every handle of one segment received in this process."""
    kind, ref, nbytes, device = handle
    if kind == "fd" or kind == "fdch":
        fd = ref.detach() if kind == "fd" else _fd_channel.take(*ref)
        st = os.fstat(fd)
        key = ("fd", st.st_dev, st.st_ino)
        with _lock:
            storage = _storages.get(key)
            if storage is not None:
                os.close(fd)
                return storage
            try:
                mm = _map(fd, max(nbytes, 1))
            except BaseException:
                os.close(fd)
                raise
            seg = Segment("fd", None, fd, mm, nbytes, key, False)
            return _make_storage(seg, device)
    import _posixshmem
    key = ("fs", ref)
    with _lock:
        storage = _storages.get(key)
        if storage is not None:
            _add_ref(ref, -1)      # the handle's reference: this process has one already
            return storage
        try:
            fd = _posixshmem.shm_open(ref, os.O_RDWR, 0o600)
        except FileNotFoundError:
            raise RuntimeError(f"shared memory segment {ref} no longer exists (was it "
                               "released by a process killed while sending it?)") from None
        try:
            mm = _map(fd, _HEADER + nbytes)
        finally:
            os.close(fd)
        # the handle's reference becomes this mapping's
        seg = Segment("fs", ref, None, mm, nbytes, key, True)
        return _make_storage(seg, device)


def _make_storage(seg, device):
    from ._device import device as device_cls
    dev = device_cls(device)
    if dev.type == "cuda":
        from .cuda import _runtime
        if _runtime.mode() != "sim":
            raise RuntimeError("received a simulated cuda tensor in a process with a GPU")
    buf, ptr = _segment_buf(seg)
    return _publish(Storage(ptr, seg.nbytes, dev, buf), seg)


# ---- process exit and fork -------------------------------------------------------------

def _release_all():
    for seg in list(_segments):
        seg.release()


def _ensure_exit_hook():
    """Drops this process's references at exit. A multiprocessing finalizer, since those
    also run in forked children, which leave by os._exit (no atexit there)."""
    global _exit_hook_pid
    pid = os.getpid()
    if _exit_hook_pid != pid:
        from multiprocessing import util
        _exit_hook_pid = pid
        util.Finalize(None, _release_all, exitpriority=-100)


def _after_fork_in_child():
    global _lock, _segments
    _lock = threading.RLock()   # it may have been held by another thread at the fork
    _segments = weakref.WeakSet()
    _tls.busy = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
