"""DLPack: zero-copy exchange of tensors with other libraries (NumPy, PyTorch, JAX, CuPy...).

The C structures of ``dlpack.h`` (v1.0) are declared with ctypes. A producer capsule holds a
``DLManagedTensor`` (named ``"dltensor"``) or a ``DLManagedTensorVersioned`` (named
``"dltensor_versioned"``) whose ``deleter`` drops the reference that keeps the exported
tensor's storage alive; a consumer renames the capsule ``"used_..."`` and calls the deleter
when it is done with the memory. A capsule nobody consumed calls the deleter itself when it
is garbage collected.
"""
import ctypes
import enum

import numpy as np

from . import _dtype
from ._device import CPU, device as _device_cls
from ._storage import Storage, _Owned, cpu_alloc


class DLDeviceType(enum.IntEnum):
    """``DLDeviceType`` of dlpack.h (the values PyTorch's ``__dlpack_device__`` returns)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


# the DLPack version this module produces, and the flags of DLManagedTensorVersioned
DLPACK_VERSION = (1, 0)
_FLAG_READ_ONLY = 1
_FLAG_IS_COPIED = 2

# DLDataTypeCode
_kDLInt, _kDLUInt, _kDLFloat, _kDLBfloat, _kDLComplex, _kDLBool = 0, 1, 2, 4, 5, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


# The capsule names live as long as the module: a capsule keeps a pointer to its name.
_NAME = b"dltensor"
_USED_NAME = b"used_dltensor"
_VNAME = b"dltensor_versioned"
_USED_VNAME = b"used_dltensor_versioned"

_api = ctypes.pythonapi
_capsule_new = _api.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = _api.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_get = _api.PyCapsule_GetPointer
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_set_name = _api.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

_capsule_get_destructor = _api.PyCapsule_GetDestructor
_capsule_get_destructor.restype = ctypes.c_void_p
_capsule_get_destructor.argtypes = [ctypes.c_void_p]
_mem_malloc = _api.PyMem_Malloc
_mem_malloc.restype = ctypes.c_void_p
_mem_malloc.argtypes = [ctypes.c_size_t]
_incref = _api.Py_IncRef
_incref.restype = None
_incref.argtypes = [ctypes.py_object]


def _numpy_hooks(versioned):
    """The C capsule destructor and managed-tensor deleter of NumPy's own DLPack export, or
    None where they do not behave as relied on here.

    Both may run while an exception is being raised (a consumer that rejects a capsule drops
    it; an array freed while a frame unwinds calls the deleter): C code that saves and
    restores the error indicator is then required, which a ctypes callback is not. NumPy's
    pair is exactly that, and generic: the destructor calls ``deleter`` of a capsule nobody
    consumed; the deleter frees the struct with ``PyMem_Free`` and drops a reference to
    ``manager_ctx``, a Python object. We verify the latter on a probe array."""
    probe = np.empty(0)
    kw, name, cls = (({"max_version": (1, 0)}, _VNAME, DLManagedTensorVersioned) if versioned
                     else ({}, _NAME, DLManagedTensor))
    try:
        cap = probe.__dlpack__(**kw)
    except (TypeError, BufferError):
        return None
    c = ctypes.c_void_p(id(cap))
    if not _capsule_is_valid(c, name):
        return None
    m = cls.from_address(_capsule_get(c, name))
    if m.manager_ctx != id(probe) or not m.deleter:
        return None
    return _capsule_get_destructor(c), m.deleter


_HOOKS = {}


def _hooks(versioned):
    if versioned not in _HOOKS:
        _HOOKS[versioned] = _numpy_hooks(versioned)
    return _HOOKS[versioned]


# Fallback without NumPy's hooks: ctypes callbacks; ``_exported`` maps the address of a
# managed tensor to what keeps it and its tensor alive until the deleter runs.
_exported = {}


def _release(addr):
    _exported.pop(addr, None)


_deleter = _Deleter(_release)
_DELETER_ADDR = ctypes.cast(_deleter, ctypes.c_void_p).value


def _capsule_destructor(capsule):
    # A capsule still carrying its producer name was never consumed: its managed tensor is
    # released here. A consumed one ("used_...") belongs to the consumer.
    for name in (_NAME, _VNAME):
        if _capsule_is_valid(capsule, name):
            _release(_capsule_get(capsule, name))
            return


_destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_capsule_destructor)
_DESTRUCTOR_ADDR = ctypes.cast(_destructor, ctypes.c_void_p).value


# ---- dtypes and devices ------------------------------------------------------------------
_TO_DL = {
    _dtype.bool: (_kDLBool, 8), _dtype.uint8: (_kDLUInt, 8), _dtype.int8: (_kDLInt, 8),
    _dtype.int16: (_kDLInt, 16), _dtype.int32: (_kDLInt, 32), _dtype.int64: (_kDLInt, 64),
    _dtype.float16: (_kDLFloat, 16), _dtype.bfloat16: (_kDLBfloat, 16),
    _dtype.float32: (_kDLFloat, 32), _dtype.float64: (_kDLFloat, 64),
    _dtype.complex64: (_kDLComplex, 64), _dtype.complex128: (_kDLComplex, 128),
}
_FROM_DL = {v: k for k, v in _TO_DL.items()}


def dlpack_device(t):
    """``Tensor.__dlpack_device__``: ``(DLDeviceType, index)``. A ``cuda`` tensor reports
    kDLCUDA even under the simulator, where its memory is in fact host memory: only this
    framework (or another simulated consumer) can then read it as a cuda tensor."""
    d = t.device
    if d.type == "cuda":
        return (DLDeviceType.kDLCUDA, d.index if d.index is not None else 0)
    return (DLDeviceType.kDLCPU, 0)


def _sync_stream(t, stream):
    # Consumer stream semantics: ``-1`` asks for no synchronisation; None (the legacy
    # default stream) or any other value is a consumer stream. Instead of an event between
    # two streams we wait for the producer's current stream: simple and always correct (the
    # data is then ready for any stream).
    if stream == -1:
        return
    from . import cuda
    cuda.current_stream(t.device).synchronize()


def to_capsule(t, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: a capsule over ``t``'s memory (a copy only where ``copy=True``
    or ``dl_device`` asks for another device)."""
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if t.dtype not in _TO_DL:
        raise BufferError(f"__dlpack__: unsupported dtype {t.dtype}")
    own = dlpack_device(t)
    if t.device.type == "cpu":
        if stream is not None and stream != -1:
            raise AssertionError("stream should be None on cpu.")
    else:
        _sync_stream(t, stream)
    copied = False
    if dl_device is not None and (int(dl_device[0]), int(dl_device[1])) != own:
        target = (int(dl_device[0]), int(dl_device[1]))
        if target[0] == DLDeviceType.kDLCPU:
            dest = "cpu"
        elif target[0] == DLDeviceType.kDLCUDA:
            dest = f"cuda:{target[1]}"
        else:
            raise BufferError(f"__dlpack__: unsupported dl_device {dl_device}")
        if copy is False:
            raise BufferError(f"__dlpack__: copy=False, but the tensor is on {t.device} and "
                              f"dl_device {dl_device} asks for another device")
        t = t.detach().to(dest)
        copied = True
    elif copy:
        t = t.detach().clone()
        copied = True
    versioned = max_version is not None and int(max_version[0]) >= 1
    return _make_capsule(t, versioned, copied)


def _make_capsule(t, versioned, copied):
    ndim = t.dim()
    cls, name = (DLManagedTensorVersioned, _VNAME) if versioned else (DLManagedTensor, _NAME)
    head = ctypes.sizeof(cls)
    hooks = _hooks(versioned)
    if hooks is not None:
        # one PyMem block (struct, shape, strides) that NumPy's deleter frees
        addr = _mem_malloc(head + 16 * max(ndim, 1))
        if not addr:
            raise MemoryError("__dlpack__: out of memory")
        ctypes.memset(addr, 0, head)
        keep = None
    else:
        keep = ctypes.create_string_buffer(head + 16 * max(ndim, 1))
        addr = ctypes.addressof(keep)
    shape = (ctypes.c_int64 * max(ndim, 1)).from_address(addr + head)
    strides = (ctypes.c_int64 * max(ndim, 1)).from_address(addr + head + 8 * max(ndim, 1))
    shape[:ndim] = t._shape
    strides[:ndim] = t._stride
    m = cls.from_address(addr)
    dl = m.dl_tensor
    # data points at the first element, byte_offset 0, as PyTorch and NumPy export (some
    # consumers ignore byte_offset)
    dl.data = t.data_ptr() if t.numel() else (t._storage.ptr or None)
    dev = dlpack_device(t)
    dl.device = DLDevice(int(dev[0]), dev[1])
    dl.ndim = ndim
    code, bits = _TO_DL[t.dtype]
    dl.dtype = DLDataType(code, bits, 1)
    dl.shape = ctypes.cast(addr + head, ctypes.POINTER(ctypes.c_int64))
    dl.strides = ctypes.cast(addr + head + 8 * max(ndim, 1), ctypes.POINTER(ctypes.c_int64))
    dl.byte_offset = 0
    if versioned:
        m.version = DLPackVersion(*DLPACK_VERSION)
        m.flags = _FLAG_IS_COPIED if copied else 0
    if hooks is not None:
        # the tensor (and so its storage) lives until the deleter drops this reference
        _incref(t)
        m.manager_ctx = id(t)
        m.deleter = hooks[1]
        return _capsule_new(addr, name, hooks[0])
    m.manager_ctx = None
    m.deleter = _DELETER_ADDR
    _exported[addr] = (keep, t)
    return _capsule_new(addr, name, _DESTRUCTOR_ADDR)


# ---- import ------------------------------------------------------------------------------
class _ManagedOwner:
    """Holds a consumed managed tensor; calls its producer's deleter when the storage that
    views its memory is freed."""

    __slots__ = ("addr", "deleter")

    def __init__(self, addr, deleter):
        self.addr = addr
        self.deleter = deleter

    def __del__(self):
        deleter, self.deleter = self.deleter, None
        if deleter:
            try:
                _Deleter(deleter)(self.addr)
            except Exception:   # interpreter shutdown: ctypes may already be torn down
                pass


def from_capsule(capsule):
    """A tensor over the memory of a DLPack capsule (consumed: renamed ``used_...``)."""
    cap = ctypes.c_void_p(id(capsule))
    if _capsule_is_valid(cap, _VNAME):
        addr = _capsule_get(cap, _VNAME)
        m = DLManagedTensorVersioned.from_address(addr)
        if m.version.major > DLPACK_VERSION[0]:
            raise BufferError(f"from_dlpack: DLPack version {m.version.major}."
                              f"{m.version.minor} is newer than the supported "
                              f"{DLPACK_VERSION[0]}.{DLPACK_VERSION[1]}")
        used = _USED_VNAME
    elif _capsule_is_valid(cap, _NAME):
        addr = _capsule_get(cap, _NAME)
        m = DLManagedTensor.from_address(addr)
        used = _USED_NAME
    else:
        raise ValueError("from_dlpack: expected a DLPack capsule named 'dltensor' or "
                         "'dltensor_versioned' that was not consumed yet (a capsule can be "
                         "consumed only once)")
    dl = m.dl_tensor
    key = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1 or key not in _FROM_DL:
        raise BufferError(f"from_dlpack: unsupported DLPack dtype (code {dl.dtype.code}, "
                          f"bits {dl.dtype.bits}, lanes {dl.dtype.lanes})")
    dt = _FROM_DL[key]
    dev_type, dev_id = dl.device.device_type, dl.device.device_id
    if dev_type in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        dev = CPU
    elif dev_type == DLDeviceType.kDLCUDA:
        dev = _device_cls("cuda", dev_id)
    else:
        raise BufferError(f"from_dlpack: unsupported device type {dev_type} (only kDLCPU, "
                          "kDLCUDAHost and kDLCUDA)")
    ndim = dl.ndim
    shape = tuple(dl.shape[i] for i in range(ndim))
    if dl.strides:
        strides = tuple(dl.strides[i] for i in range(ndim))
    else:   # NULL strides: compact row-major (DLPack < 1.2)
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= max(n, 1)
        strides = tuple(reversed(strides))
    numel = 1
    for n in shape:
        numel *= n
    if numel and any(s < 0 for n, s in zip(shape, strides) if n > 1):
        raise BufferError(f"from_dlpack: negative strides {strides} are not supported "
                          "(framework tensors, like PyTorch's, have non-negative strides)")
    # from here on the capsule's memory is ours: the producer must not free it
    _capsule_set_name(cap, used)
    owner = _ManagedOwner(addr, m.deleter)
    itemsize = dt.itemsize
    if numel == 0:
        # no memory to view; the producer's buffer is released right away
        del owner
        storage = cpu_alloc(0) if dev.type == "cpu" else Storage(0, 0, dev, None)
        return _make(storage, shape, strides, 0, dt)
    if dl.byte_offset % itemsize:
        raise BufferError(f"from_dlpack: byte_offset {dl.byte_offset} is not a multiple of "
                          f"the element size {itemsize}")
    offset = dl.byte_offset // itemsize
    extent = offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides) if n > 1)
    nbytes = extent * itemsize
    if dev.type == "cpu":
        view = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(dl.data))
        storage = Storage(dl.data, nbytes, CPU, _Owned(view, owner))
    else:
        # device memory (host memory under the simulator), kept alive by ``owner``
        storage = Storage(dl.data, nbytes, dev, owner)
    return _make(storage, shape, strides, offset, dt)


def _make(storage, shape, strides, offset, dt):
    from ._tensor import Tensor
    return Tensor._make(storage, tuple(shape), tuple(strides), offset, dt)


def _stream_for(dev):
    from . import cuda
    s = cuda.current_stream(dev)
    # 1 names the legacy default stream in DLPack's convention
    return s.cuda_stream or 1


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A framework tensor over the memory of ``ext_tensor`` (an object with ``__dlpack__``
    and ``__dlpack_device__``, or a legacy DLPack capsule); shares memory unless
    ``copy=True`` or ``device`` names another device (then the data is copied there)."""
    if hasattr(ext_tensor, "__dlpack__"):
        dev_type, dev_id = ext_tensor.__dlpack_device__()
        kwargs = {}
        if int(dev_type) == DLDeviceType.kDLCUDA:
            kwargs["stream"] = _stream_for(_device_cls("cuda", int(dev_id)))
        try:
            capsule = ext_tensor.__dlpack__(max_version=DLPACK_VERSION, **kwargs)
        except TypeError:
            # a producer of DLPack < 1.0: no max_version
            capsule = ext_tensor.__dlpack__(**kwargs)
    elif type(ext_tensor).__name__ == "PyCapsule":
        capsule = ext_tensor
    else:
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(ext_tensor).__name__}")
    t = from_capsule(capsule)
    if device is not None:
        d = device if isinstance(device, _device_cls) else _device_cls(device)
        if d.type != t.device.type or (d.index is not None and d.index != t.device.index):
            if copy is False:
                raise BufferError(f"from_dlpack: copy=False, but the tensor is on {t.device}, "
                                  f"not {d}")
            return t.to(d)
    return t.clone() if copy else t


def to_dlpack(tensor):
    """A legacy (unversioned) DLPack capsule over ``tensor``'s memory, for
    :func:`from_dlpack` in this or another library."""
    return to_capsule(tensor)
