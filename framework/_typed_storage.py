"""The storages a user reaches: ``Tensor.untyped_storage()`` (``UntypedStorage``, bytes)
and ``Tensor.storage()`` (``TypedStorage``, elements of one dtype), with PyTorch's legacy
``FloatStorage``-style names.

Both are views of the tensor's buffer (``framework._storage.Storage``), never copies: a
write through one is seen by every tensor over that buffer. Element access goes through a
1-D tensor over the whole buffer, so it works on every device with the dispatcher's rules.
As in PyTorch, ``TypedStorage`` is deprecated, and says so once a process.
"""
import warnings

import numpy as np

from . import _dtype
from ._storage import Storage as _Storage
from ._tensor import Tensor, _UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage", "is_storage"]

_warned = False


def _warn_typed_storage_removal(stacklevel=3):
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel)


def _new_storage(name, args, dtype, device):
    """The buffer of ``Storage(size)`` (zero-filled, as PyTorch's are not: uninitialised
    memory would make results depend on what was there) or ``Storage(sequence)``."""
    from ._ops import creation
    if len(args) > 1:
        raise TypeError(f"{name}(): expected at most one positional argument (a size or a "
                        f"sequence), got {len(args)}")
    if not args:
        t = creation.empty((0,), dtype=dtype, device=device)
    elif isinstance(args[0], int) and not isinstance(args[0], bool):
        if args[0] < 0:
            raise RuntimeError(f"{name}(): size must be non-negative, got {args[0]}")
        t = creation.zeros((args[0],), dtype=dtype, device=device)
    else:
        t = creation.tensor(list(args[0]), dtype=dtype, device=device)
    return t._storage


def _elements(storage, dtype):
    """A 1-D tensor over every whole element of ``storage``."""
    return Tensor._make(storage, (storage.nbytes // dtype.itemsize,), (1,), 0, dtype)


def _check_index(s, idx, n):
    if isinstance(idx, bool) or not isinstance(idx, (int, slice)):
        if hasattr(idx, "__index__") and not isinstance(idx, bool):
            idx = idx.__index__()
        else:
            raise RuntimeError(f"can't index a {type(s)} with {type(idx)}")
    if isinstance(idx, int) and not -n <= idx < n:
        raise IndexError(f"index {idx} out of range for storage of size {n}")
    return idx


def _host_bytes(storage):
    """The bytes of ``storage``, copied to the host (for pickling)."""
    return _elements(storage, _dtype.uint8).cpu().numpy().tobytes()


def _from_bytes(data, device):
    from ._ops import creation
    arr = np.frombuffer(data, dtype=np.uint8).copy()
    return creation.tensor(arr, dtype=_dtype.uint8, device=device)._storage


def _rebuild_untyped(data, device):
    return UntypedStorage(_from_bytes(data, device))


def _rebuild_typed(data, dtype, device):
    return TypedStorage._wrap(_from_bytes(data, device), dtype)


class UntypedStorage(_UntypedStorage):
    """A device buffer of bytes: ``Tensor.untyped_storage()``; ``UntypedStorage(size)`` or
    ``UntypedStorage(sequence of bytes)`` makes one (``device=``)."""

    __slots__ = ()

    def __init__(self, *args, device=None, host_alias=False):
        if len(args) == 1 and isinstance(args[0], _Storage):
            super().__init__(args[0], host_alias)
        else:
            super().__init__(_new_storage("UntypedStorage", args, _dtype.uint8, device))

    def _bytes(self):
        return _elements(self._s, _dtype.uint8)

    def __len__(self):
        return self._s.nbytes

    def element_size(self):
        return 1

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def __getitem__(self, idx):
        idx = _check_index(self, idx, len(self))
        if isinstance(idx, slice):
            start, stop, step = idx.indices(len(self))
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step "
                                   "of 1 is supported")
            stop = max(start, stop)
            s = self._s
            if s.device.type != "cpu":
                raise RuntimeError(f"UntypedStorage: slicing a {s.device.type} storage is not "
                                   "supported; slice the tensor instead")
            # a NumPy view of the parent's bytes keeps the parent's memory alive
            buf = np.asarray(memoryview(s.buf).cast("B"))[start:stop]
            return UntypedStorage(_Storage(s.ptr + start, stop - start, s.device, buf))
        return int(self._bytes()[idx].item())

    def __setitem__(self, idx, value):
        self._bytes()[_check_index(self, idx, len(self))] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._bytes().tolist()

    def fill_(self, value):
        self._bytes().fill_(value)
        return self

    def untyped(self):
        return self

    def cpu(self):
        """This storage in host memory (itself when it already is)."""
        host = super().cpu()
        return host if host is self else UntypedStorage(host._s, host_alias=host.host_alias)

    def clone(self):
        return UntypedStorage(self._bytes().clone()._storage)

    def __reduce__(self):   # pickle and deepcopy: a copy of the bytes, on the same device
        return _rebuild_untyped, (_host_bytes(self._s), str(self.device))

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = f"{body}\n" if body else " \n"
        return f"{head}[framework.UntypedStorage(device={self.device}) of size " \
               f"{len(self)}]"


class TypedStorage:
    """A storage read as elements of one dtype: ``Tensor.storage()``. Deprecated in PyTorch
    in favour of ``UntypedStorage``; ``TypedStorage(size or sequence, dtype=, device=)``
    or ``TypedStorage(wrap_storage=untyped, dtype=)`` makes one."""

    is_sparse = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        dtype = getattr(type(self), "dtype", None) or dtype or _dtype.get_default_dtype()
        device = getattr(type(self), "_device_type", None) or device
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage(): wrap_storage takes no size, sequence or "
                                   "device")
            if not isinstance(wrap_storage, _UntypedStorage):
                raise TypeError(f"expected wrap_storage to be an UntypedStorage, but got "
                                f"{type(wrap_storage)}")
            storage = wrap_storage._s
        else:
            storage = _new_storage(type(self).__name__, args, dtype, device)
        self.__dict__["dtype"] = dtype
        self._untyped_storage = UntypedStorage(storage)

    @classmethod
    def _wrap(cls, storage, dtype):
        obj = TypedStorage.__new__(TypedStorage)
        obj.__dict__["dtype"] = dtype
        obj._untyped_storage = UntypedStorage(storage)
        return obj

    @property
    def _s(self):   # the buffer, for Tensor.set_
        return self._untyped_storage._s

    def _elements(self):
        return _elements(self._s, self.dtype)

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def size(self):
        """The number of elements."""
        return self._s.nbytes // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._s.nbytes

    def data_ptr(self):
        return self._s.ptr

    def untyped(self):
        """The ``UntypedStorage`` this reads."""
        return self._untyped_storage

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        idx = _check_index(self, idx, self.size())
        return self._elements()[idx].item()

    def __setitem__(self, idx, value):
        idx = _check_index(self, idx, self.size())
        if not isinstance(value, (bool, int, float, complex, Tensor)):
            raise TypeError(f"can't assign a {type(value).__name__} to a "
                            f"{_dtype_name(self.dtype)} storage")
        self._elements()[idx] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._elements().tolist()

    def fill_(self, value):
        self._elements().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        self._elements().copy_(source._elements() if isinstance(source, TypedStorage)
                               else source)
        return self

    def clone(self):
        return TypedStorage._wrap(self._elements().clone()._storage, self.dtype)

    def __reduce__(self):
        return _rebuild_typed, (_host_bytes(self._s), self.dtype, str(self.device))

    def cpu(self):
        """This storage in host memory (a new wrapper of the same buffer on the CPU)."""
        if self.device.type == "cpu":
            return TypedStorage._wrap(self._s, self.dtype)
        return TypedStorage._wrap(self._elements().cpu()._storage, self.dtype)

    def to(self, device=None, non_blocking=False):
        return TypedStorage._wrap(self._elements().to(device)._storage, self.dtype)

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device)

    def type(self, dtype=None, non_blocking=False):
        """Without ``dtype``: the legacy type name, "framework.FloatStorage" say."""
        if dtype is None:
            where = "framework.cuda." if self.is_cuda else "framework."
            return f"{where}{_LEGACY_NAMES[self.dtype]}Storage"
        raise NotImplementedError("TypedStorage.type(dtype): convert the tensor instead")

    def is_shared(self):
        from ._shared_memory import is_shared
        return is_shared(self._s)

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = f"{body}\n" if body else " \n"
        return (f"{head}[framework.TypedStorage(dtype={self.dtype}, device="
                f"{self.device}) of size {self.size()}]")


def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def _storage(self):
    """The tensor's storage as a (deprecated) ``TypedStorage`` of its dtype."""
    _warn_typed_storage_removal()
    return TypedStorage._wrap(self._storage, self.dtype)


def _untyped_storage(self):
    """The tensor's storage as bytes (``UntypedStorage``), shared with the tensor."""
    return UntypedStorage(self._storage)


def is_storage(obj):
    """Whether ``obj`` is a storage (``TypedStorage`` or ``UntypedStorage``)."""
    return isinstance(obj, (TypedStorage, _UntypedStorage))


# -- PyTorch's legacy names: FloatStorage(3), isinstance(s, framework.FloatStorage) -----------

_LEGACY_NAMES = {_dtype.float32: "Float", _dtype.float64: "Double", _dtype.float16: "Half",
                 _dtype.bfloat16: "BFloat16", _dtype.uint8: "Byte", _dtype.int8: "Char",
                 _dtype.int16: "Short", _dtype.int32: "Int", _dtype.int64: "Long",
                 _dtype.bool: "Bool", _dtype.complex64: "ComplexFloat",
                 _dtype.complex128: "ComplexDouble"}


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, obj):
        return (isinstance(obj, TypedStorage) and obj.dtype is cls.dtype
                and obj.device.type == cls._device_type)


def legacy_storages(device_type, module):
    """PyTorch's legacy storage classes of a device type (``FloatStorage``, ...), by name:
    each makes that device's TypedStorage of its dtype and is an ``isinstance`` test for one."""
    return {name + "Storage": _LegacyStorageMeta(
                name + "Storage", (TypedStorage,),
                {"dtype": dt, "_device_type": device_type, "__module__": module})
            for dt, name in _LEGACY_NAMES.items()}


LEGACY = legacy_storages("cpu", "framework")


def install(tensor_cls):
    """Sets ``Tensor.storage`` and ``Tensor.untyped_storage`` (returning ``UntypedStorage``,
    a ``_tensor._UntypedStorage``: what Triton's interpreter reads of a kernel argument)."""
    tensor_cls.storage = _storage
    tensor_cls.untyped_storage = _untyped_storage
