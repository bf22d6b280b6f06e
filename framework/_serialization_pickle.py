"""The pickle side of framework.save / framework.load.

Files use PyTorch's names (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
``torch.float32``, ...) so that PyTorch reads what we write; the unpickler maps those names
back to ours. ``weights_only`` loads go through an allow-list of globals.
"""
import _compat_pickle
import collections
import contextlib
import pickle

from . import _dtype
from ._device import device as _device
from ._tensor import Size, Tensor
from .ao import _Sentinel

# ---- names written into the pickle ------------------------------------------------------


class _Global:
    """A ``GLOBAL module name`` opcode, written without importing ``module`` (torch)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):      # the pickler wants a callable; this one is never run
        raise TypeError(f"{self.module}.{self.name} is a name in a checkpoint")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_FROM_TYPE = _Global("torch._tensor", "_rebuild_from_type_v2")
# float8 tensors: raw bytes and the dtype, as PyTorch saves dtypes without a typed storage
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _Global("torch.storage", "UntypedStorage")
_TORCH_DEVICE = _Global("torch", "device")
_TORCH_SIZE = _Global("torch", "Size")

# PyTorch's typed storage class for each dtype (``torch.FloatStorage``...)
_STORAGE_NAMES = {
    _dtype.bool: "BoolStorage", _dtype.uint8: "ByteStorage", _dtype.int8: "CharStorage",
    _dtype.int16: "ShortStorage", _dtype.int32: "IntStorage", _dtype.int64: "LongStorage",
    _dtype.float16: "HalfStorage", _dtype.bfloat16: "BFloat16Storage",
    _dtype.float32: "FloatStorage", _dtype.float64: "DoubleStorage",
    _dtype.complex64: "ComplexFloatStorage", _dtype.complex128: "ComplexDoubleStorage",
}
_STORAGE_GLOBALS = {d: _Global("torch", n) for d, n in _STORAGE_NAMES.items()}
# a quantized tensor's integers are saved as PyTorch's quantized storages
_QSTORAGE_NAMES = {"qint8": ("QInt8Storage", _dtype.int8),
                   "quint8": ("QUInt8Storage", _dtype.uint8),
                   "qint32": ("QInt32Storage", _dtype.int32)}
_REBUILD_QTENSOR = _Global("torch._utils", "_rebuild_qtensor")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")


class StorageRef:
    """What a tensor's storage pickles as: a persistent id, its bytes go to ``data/<key>``."""

    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype


def location_tag(dev):
    """PyTorch's location string of a storage: ``"cpu"`` or ``"cuda:N"``."""
    if dev.type == "cpu":
        return "cpu"
    if dev.index is None:
        from . import cuda
        return f"{dev.type}:{cuda.current_device()}"
    return str(dev)


class Pickler(pickle._Pickler):
    """Protocol-2 pickler writing framework objects under PyTorch's names. The Python
    pickler is used (not the C one) because it lets a GLOBAL name a module that is not
    imported; only metadata goes through it, storage bytes are written separately."""

    def __init__(self, file, protocol=2):
        super().__init__(file, protocol=protocol)
        self.storages = {}        # key -> framework Storage, in order of first use
        self._keys = {}           # id(storage) -> key
        self._dtypes = {}         # id(storage) -> dtype it is saved as

    def persistent_id(self, obj):
        if type(obj) is not StorageRef:
            return None
        st, dt = obj.storage, obj.dtype
        key = self._keys.get(id(st))
        if key is None:
            key = self._keys[id(st)] = str(len(self._keys))
            self.storages[key] = st
            self._dtypes[id(st)] = dt
        elif self._dtypes[id(st)] is not dt:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        if getattr(dt, "is_float8", False):    # (a quantized dtype is an ao sentinel)
            return ("storage", _UNTYPED_STORAGE, key, location_tag(st.device), st.nbytes)
        name = _STORAGE_GLOBALS.get(dt) or _Global("torch", _QSTORAGE_NAMES[dt.name][0])
        return ("storage", name, key, location_tag(st.device),
                st.nbytes // dt.itemsize)

    def reducer_override(self, obj):
        t = type(obj)
        if t is _Global or t is _dtype.dtype or t is _Sentinel:
            return obj.name                      # a string: save_global below writes it
        if isinstance(obj, Tensor):
            if obj.layout.name.startswith("sparse"):
                return _reduce_sparse(obj)
            if obj.is_quantized:
                return _reduce_qtensor(obj)
            if isinstance(obj, _lazy_types()):
                # a lazy module's placeholder: its class and requires_grad, PyTorch's form
                return (_Global("torch.nn.parameter", t.__name__), (obj.requires_grad,))
            if t is not Tensor and not t.__module__.startswith("framework."):
                # a user's subclass: its class is saved too (PyTorch's form), and a
                # weights_only load needs it allowed (safe_globals)
                func, args = _reduce_tensor(obj)
                return (_REBUILD_FROM_TYPE, (func, t, args, getattr(obj, "__dict__", {})))
            return _reduce_tensor(obj)
        if t is _device:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_TORCH_DEVICE, args)
        if t is Size:
            return (_TORCH_SIZE, (tuple(obj),))
        return NotImplemented

    def save_global(self, obj, name=None):
        t = type(obj)
        if t is _Global:
            module = obj.module
        elif t is _dtype.dtype or t is _Sentinel:
            module = "torch"
        else:
            return super().save_global(obj, name)
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("utf-8"))
        self.memoize(obj)


def _reduce_tensor(t):
    from .nn.parameter import Parameter
    if isinstance(t, Parameter):
        return (_REBUILD_PARAMETER, (t.detach(), t._requires_grad, collections.OrderedDict()))
    if t._storage.device.type == "meta":
        raise RuntimeError("Cannot serialize a tensor on the meta device")
    if t.dtype.is_float8:
        return (_REBUILD_TENSOR_V3, (StorageRef(t._storage, t.dtype), t._offset,
                                     tuple(t._shape), tuple(t._stride), t._requires_grad,
                                     collections.OrderedDict(), t.dtype))
    return (_REBUILD_TENSOR, (StorageRef(t._storage, t.dtype), t._offset, tuple(t._shape),
                              tuple(t._stride), t._requires_grad, collections.OrderedDict()))


class _Layout:
    """A layout as PyTorch pickles it: ``torch.serialization._get_layout(name)``."""

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (_GET_LAYOUT, ("torch." + self.name,))


def _reduce_sparse(t):
    # PyTorch's form: the layout and the component tensors
    if t.is_sparse:
        return (_REBUILD_SPARSE, (_Layout("sparse_coo"), (t._indices(), t._values(),
                                                          Size(t.shape), t.is_coalesced())))
    from .sparse.compressed import parts
    ci, pi, v = parts(t)
    return (_REBUILD_SPARSE, (_Layout(t.layout.name), (ci, pi, v.detach(), Size(t.shape))))


def _get_layout(name):
    from . import sparse
    layout = {"torch." + lay.name: lay for lay in (
        sparse.sparse_coo, sparse.sparse_csr, sparse.sparse_csc, sparse.sparse_bsr,
        sparse.sparse_bsc)}.get(name)
    if layout is None:
        raise pickle.UnpicklingError(f"_get_layout: unsupported layout {name!r}")
    return layout


def _rebuild_sparse_tensor(layout, data):
    from . import sparse
    if layout is sparse.sparse_coo and len(data) in (3, 4):
        coalesced = data[3] if len(data) == 4 else None
        return sparse.sparse_coo_tensor(data[0], data[1], data[2], is_coalesced=coalesced)
    if layout is not sparse.sparse_coo and len(data) == 4:
        return sparse.sparse_compressed_tensor(*data, layout=layout)
    raise pickle.UnpicklingError(f"_rebuild_sparse_tensor: unsupported layout {layout}")


def _reduce_qtensor(t):
    # PyTorch's form: the integers' storage, and (qscheme, scale, zero_point[, axis])
    q = t._qint
    params = (t._qscheme, t._scale, t._zp) if t._axis is None else \
        (t._qscheme, t._scale, t._zp, t._axis)
    return (_REBUILD_QTENSOR, (StorageRef(q._storage, t.dtype), q._offset, tuple(q._shape),
                               tuple(q._stride), params, False, collections.OrderedDict()))


# ---- loading: what PyTorch's names become -----------------------------------------------

class TypedStorage:
    """A loaded storage and the dtype its tensors read it as (PyTorch's TypedStorage)."""

    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype


class StorageType:
    """``torch.FloatStorage`` and friends in a file: only their dtype matters."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    if not isinstance(storage, TypedStorage):
        raise pickle.UnpicklingError("_rebuild_tensor_v2: expected a storage from the archive")
    size, stride = tuple(size), tuple(stride)
    if (type(storage_offset) is not int or len(size) != len(stride)
            or not all(type(v) is int for v in size + stride)
            or storage_offset < 0 or min(size, default=0) < 0):
        raise RuntimeError(f"_rebuild_tensor_v2: invalid tensor metadata: size {list(size)}, "
                           f"stride {list(stride)}, storage offset {storage_offset}")
    dt = storage.dtype
    numel = storage.storage.nbytes // dt.itemsize
    if _numel(size) > 0:
        # a crafted file must not make a tensor that reaches outside its storage
        lo = storage_offset + sum((n - 1) * s for n, s in zip(size, stride) if s < 0)
        hi = storage_offset + sum((n - 1) * s for n, s in zip(size, stride) if s > 0)
        if lo < 0 or hi >= numel:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{storage_offset}, and itemsize {dt.itemsize} requiring a storage size of "
                f"{(hi + 1) * dt.itemsize} are out of bounds for storage of size "
                f"{storage.storage.nbytes}")
    t = Tensor._make(storage.storage, size, stride, storage_offset, dt)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """PyTorch's form for dtypes without a typed storage (float8): bytes read as ``dtype``."""
    if not isinstance(storage, TypedStorage) or not isinstance(dtype, _dtype.dtype):
        raise pickle.UnpicklingError("_rebuild_tensor_v3: expected a storage and a dtype")
    return _rebuild_tensor_v2(TypedStorage(storage.storage, dtype), storage_offset, size, stride,
                              requires_grad)


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params,
                     requires_grad=False, backward_hooks=None):
    from .ao import _qtensor
    q = _rebuild_tensor_v2(storage, storage_offset, size, stride)
    return _qtensor.from_saved(q, quantizer_params)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad)
    if isinstance(state, dict):
        p.__dict__.update(state)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    from .nn.parameter import Parameter
    if new_type is Parameter and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    elif isinstance(new_type, type) and issubclass(new_type, Tensor) and \
            type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    if isinstance(state, dict) and state:
        ret.__dict__.update(state)
    return ret


def _torch_device(kind, index=None):
    return _device(kind, index)


def _torch_size(shape=()):
    return Size(shape)


def _torch_names():
    """PyTorch's global names that a checkpoint may use, mapped to ours. All are safe to
    load with ``weights_only=True``."""
    from .nn.parameter import Parameter
    names = {
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_qtensor": _rebuild_qtensor,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch.serialization._get_layout": _get_layout,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch._utils._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch._tensor.Tensor": Tensor,
        "torch.device": _torch_device,
        "torch.Size": _torch_size,
        "torch.storage.UntypedStorage": StorageType(_dtype.uint8),
        "torch.UntypedStorage": StorageType(_dtype.uint8),
    }
    for d, n in _STORAGE_NAMES.items():
        names["torch." + n] = StorageType(d)
    from . import ao
    for n, d in _QSTORAGE_NAMES.values():
        names["torch." + n] = StorageType(d)
    for n in ao.SENTINELS:
        names["torch." + n] = getattr(ao, n)
    for alias in ("bool", "uint8", "int8", "int16", "short", "int32", "int", "int64", "long",
                  "float16", "half", "bfloat16", "float32", "float", "float64", "double",
                  "complex64", "cfloat", "complex128", "cdouble",
                  "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
        names["torch." + alias] = getattr(_dtype, alias)
    return names


# Python's own names that a weights-only load accepts (as PyTorch's allow-list).
_BUILTIN_SAFE = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.bytearray": bytearray,
    "builtins.complex": complex,
}


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    # protocol 2 writes ``bytes`` as _codecs.encode(str, "latin1"): only that form is
    # accepted (a codec name picks arbitrary code otherwise)
    if type(obj) is not str or encoding != "latin1" or errors != "strict":
        raise pickle.UnpicklingError("_codecs.encode is only allowed as bytes' latin1 form "
                                     "under weights_only")
    return obj.encode("latin1")


_BUILTIN_SAFE["_codecs.encode"] = _codecs_encode

_TORCH = None


def torch_names():
    global _TORCH
    if _TORCH is None:
        _TORCH = _torch_names()
    return _TORCH


# ---- user allow-list (PyTorch's add_safe_globals) ---------------------------------------

_user_safe = []


def _qualname(obj):
    if isinstance(obj, tuple):
        if len(obj) != 2 or not isinstance(obj[1], str):
            raise ValueError("add_safe_globals: tuples must be (callable, 'module.name'), "
                             f"got {obj!r}")
        return obj[1], obj[0]
    return f"{obj.__module__}.{obj.__qualname__}", obj


def add_safe_globals(safe_globals):
    """Marks the given globals as safe for ``weights_only`` load. Each entry is a class or
    function, or a tuple ``(obj, "module.name")`` when it is pickled under another name."""
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError(f"add_safe_globals expected a list, got {type(safe_globals).__name__}")
    for g in safe_globals:
        _qualname(g)
    _user_safe.extend(safe_globals)


def get_safe_globals():
    """The globals added with ``add_safe_globals`` (a copy)."""
    return list(_user_safe)


def clear_safe_globals():
    """Removes every global added with ``add_safe_globals``."""
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Within the ``with`` block, the given globals are safe for ``weights_only`` load."""
    saved = list(_user_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe[:] = saved


def _user_lookup(full):
    for g in reversed(_user_safe):
        name, obj = _qualname(g)
        if name == full:
            return obj
    return None


_WEIGHTS_ONLY_HELP = (
    "Weights only load failed. framework.load uses weights_only=True by default: only "
    "tensors, dtypes, devices and Python containers may be loaded. Re-running "
    "framework.load with weights_only=False will likely succeed, but it can run arbitrary "
    "code: do it only if you trust the source of the file. To keep weights_only=True, "
    "allow the global with framework.serialization.add_safe_globals([{name}]) or the "
    "framework.serialization.safe_globals([{name}]) context manager, if you trust it.\n\n"
    "WeightsUnpickler error: Unsupported global: GLOBAL {full} was not an allowed global by "
    "default.")


def _py3_name(module, name):
    """A protocol-2 name as Python 3 spells it (``__builtin__.set`` -> ``builtins.set``)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _lazy_types():
    from .nn.parameter import UninitializedBuffer, UninitializedParameter
    return (UninitializedParameter, UninitializedBuffer)


def _find_class(module, name, weights_only, fallback):
    if not (isinstance(module, str) and isinstance(name, str)):
        raise pickle.UnpicklingError("GLOBAL names must be strings")
    module, name = _py3_name(module, name)
    full = f"{module}.{name}"
    obj = torch_names().get(full)
    if obj is not None:
        return obj
    if not weights_only:
        # lazy placeholders: not on the weights-only allow-list, as in PyTorch
        for cls in _lazy_types():
            if full == "torch.nn.parameter." + cls.__name__:
                return cls
        return fallback(module, name)
    obj = _BUILTIN_SAFE.get(full)
    if obj is None:
        obj = _user_lookup(full)
    if obj is None:
        raise pickle.UnpicklingError(_WEIGHTS_ONLY_HELP.format(name=full, full=full))
    return obj


class Unpickler(pickle.Unpickler):
    """Reads a ``data.pkl`` (``weights_only=False``): PyTorch's names become ours and
    ``persistent_load`` gives the storages; any other global is imported (full pickle)."""

    def __init__(self, file, persistent_load, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent_load = persistent_load

    def persistent_load(self, pid):
        return self._persistent_load(pid)

    def find_class(self, module, name):
        return _find_class(module, name, False, super().find_class)


class WeightsOnlyUnpickler(pickle._Unpickler):
    """The ``weights_only=True`` unpickler: only allow-listed globals are found (any other
    raises ``pickle.UnpicklingError`` before anything runs), and BUILD may only update the
    attribute dict of the objects it made (never a tensor's storage, offset or sizes). The
    Python unpickler is used because the C one cannot restrict BUILD; ``data.pkl`` holds
    only metadata, so this costs little."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent_load = persistent_load

    def persistent_load(self, pid):
        return self._persistent_load(pid)

    def find_class(self, module, name):
        return _find_class(module, name, True, None)

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        user_types = tuple(o for _, o in map(_qualname, _user_safe) if isinstance(o, type))
        if type(inst) in user_types and hasattr(inst, "__setstate__"):
            inst.__setstate__(state)
            return
        ok = (isinstance(state, dict) and all(type(k) is str for k in state)
              and (isinstance(inst, (collections.OrderedDict, Tensor))
                   or type(inst) in user_types))
        if not ok:
            raise pickle.UnpicklingError(
                f"Weights only load failed: BUILD of a {type(inst).__name__} with state of "
                f"type {type(state).__name__} is not allowed with weights_only=True")
        if isinstance(inst, Tensor):
            # a tensor's own fields are slots, not in __dict__: reject names that would
            # shadow them anyway
            bad = [k for k in state if k.startswith("_") and hasattr(Tensor, k)]
            if bad:
                raise pickle.UnpicklingError(f"Weights only load failed: BUILD may not set "
                                             f"{bad} of a tensor")
        inst.__dict__.update(state)

    dispatch[pickle.BUILD[0]] = load_build


def globals_in_pickle(data):
    """The ``module.name`` of every global a pickle refers to, found by reading its
    opcodes (nothing is run)."""
    import pickletools
    found, strings, memo, last = set(), [], {}, None
    for op, arg, _ in pickletools.genops(data):
        pushed = None
        if op.name in ("GLOBAL", "INST", "OBJ") and isinstance(arg, str):
            module, name = _py3_name(*arg.split(" ", 1))
            found.add(f"{module}.{name}")
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            module, name = _py3_name(strings[-2], strings[-1])
            found.add(f"{module}.{name}")
        elif isinstance(arg, str) and ("UNICODE" in op.name or "STRING" in op.name):
            pushed = arg
        elif op.name in ("BINPUT", "LONG_BINPUT", "PUT", "MEMOIZE"):
            key = len(memo) if op.name == "MEMOIZE" else arg
            memo[key] = last
            continue                    # memoizing leaves the stack as it is
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            pushed = memo.get(arg)
        if pushed is not None:
            strings.append(pushed)
        last = pushed
    return found


def is_allowed(full):
    """Whether ``weights_only`` load accepts the global ``module.name``."""
    return full in torch_names() or full in _BUILTIN_SAFE or _user_lookup(full) is not None
