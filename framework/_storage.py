"""Storage: one buffer of bytes on a device, shared by a tensor and its views."""
import ctypes

import numpy as np

from . import _C
from ._device import CPU

_host_alloc = _C.host_alloc
_writable_address = _C.writable_address

class Storage:
    """A device buffer. On the CPU ``buf`` is a 64-byte aligned host buffer or the NumPy
    array a tensor was made from (either way ``Tensor.numpy()`` shares memory); on CUDA it is a block of the caching allocator. ``version`` is the
    in-place version counter shared by every view of this storage."""

    __slots__ = ("ptr", "nbytes", "device", "buf", "version", "__weakref__")

    def __init__(self, ptr, nbytes, device, buf):
        self.ptr = ptr
        self.nbytes = nbytes
        self.device = device
        self.buf = buf
        self.version = 0

    def __repr__(self):
        return f"Storage(nbytes={self.nbytes}, device='{self.device}')"


def cpu_alloc(nbytes):
    """A 64-byte aligned host buffer of ``nbytes`` bytes (uninitialised). The buffer
    supports the buffer protocol, so NumPy arrays can share it."""
    try:
        buf = _host_alloc(nbytes)
    except MemoryError:
        raise cpu_oom(nbytes) from None
    return Storage(buf.ptr, nbytes, CPU, buf)


def cpu_oom(nbytes):
    """PyTorch's out-of-memory error of the CPU allocator, as framework.OutOfMemoryError
    (a RuntimeError, never Python's MemoryError)."""
    from .cuda.allocator import OutOfMemoryError
    return OutOfMemoryError(f"DefaultCPUAllocator: can't allocate memory: you tried to "
                            f"allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)")


def cpu_from_array(arr):
    """A storage over the memory of a NumPy array (shared, not copied). Returns the storage
    and the element offset of ``arr[0, ..., 0]`` inside it."""
    if arr.size == 0:
        return cpu_alloc(0), 0
    flags = arr.flags
    if flags.c_contiguous and flags.writeable:
        # the common case: the array itself is the buffer (it keeps its memory alive)
        return Storage(_writable_address(arr), arr.nbytes, CPU, arr), 0
    itemsize = arr.itemsize
    lo = hi = 0
    for n, st in zip(arr.shape, arr.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    start = arr.ctypes.data + lo
    nbytes = hi - lo + itemsize
    buf = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(start))
    # keep `arr` (and so its memory) alive for as long as the storage lives
    buf = _Owned(buf, arr)
    return Storage(start, nbytes, CPU, buf), -lo // itemsize


class _Owned(np.ndarray):
    """A uint8 view that keeps the array owning the memory alive."""

    def __new__(cls, view, owner):
        obj = view.view(cls)
        obj._owner = owner
        return obj

    def __array_finalize__(self, obj):
        self._owner = getattr(obj, "_owner", None)
