"""Tensor creation (tensor, empty, zeros, full, arange, linspace, eye, ...) and ``to``."""
import builtins
import math
import warnings

import numpy as np

from .. import _determinism, _dtype, _float8
from .._device import device as _device_cls
from .._storage import cpu_from_array
from .._tensor import Tensor
from . import alloc
from . import args as _args
from . import memory_format as _memory_format
from . import pointwise as _pointwise

_make = Tensor._make


def _size(args, op="empty", kw=None):
    """A shape from a factory's size arguments (``f(2, 3)``, ``f((2, 3))``, or, as PyTorch
    also takes it, ``f(size=(2, 3))`` through ``kw``): plain non-negative ints take the fast
    path, anything else goes through args.sizes."""
    if kw:
        args = _size_keyword(op, args, kw)
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    for a in args:
        if a.__class__ is not builtins.int or a < 0 or a > _args.INT64_MAX:
            break
    else:
        return tuple(args)
    for i, a in enumerate(args):
        if a.__class__ is builtins.int and not -_args.INT64_MAX - 1 <= a <= _args.INT64_MAX:
            raise TypeError(f"{op}(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"Overflow when unpacking long long\"")
        if op == "zeros" and a.__class__ is builtins.int and a < 0:  # zeros' own message
            raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _args.sizes(op, args)


def _size_keyword(op, args, kw):
    extra = [k for k in kw if k != "size"]
    if extra:
        raise TypeError(f"{op}() got an unexpected keyword argument '{extra[0]}'")
    if args:
        raise TypeError(f"{op}() got multiple values for argument 'size'")
    size = kw["size"]
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{op}(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    return (size,)


def _finish(t, requires_grad, out=None, pin_memory=False):
    """Applies requires_grad (and ``pin_memory=``), or writes the result into ``out=``
    (resized like PyTorch; ``out``'s dtype and device win when the caller gave no dtype)."""
    if pin_memory and t._storage.device.type != "meta":
        t = t.pin_memory()
    if out is not None:
        from .pointwise import check_out
        from .views import copy_
        target = check_out("out", out, t._shape, out.dtype, False)
        copy_(target, t)
        return target
    if requires_grad:
        if t.dtype.category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


def _dense(op, layout, shape=None, dt=None, device=None):
    """PyTorch's factories take ``layout=``: they make dense (strided) tensors, and
    ``zeros``/``empty`` also an empty sparse COO tensor (returned, else None)."""
    if layout is None or layout is _memory_format.strided:
        return None
    if shape is not None and getattr(layout, "name", None) == "sparse_coo":
        from .. import sparse_coo_tensor
        dev = alloc.resolve_device(device)
        return sparse_coo_tensor(alloc.empty((len(shape), 0), _dtype.int64, dev),
                                 alloc.empty((0,), alloc.resolve_dtype(dt), dev), shape)
    raise RuntimeError(f"{op}(...) is not implemented for {layout} layout")


# ---- from data --------------------------------------------------------------------------

def _to_numpy(data):
    """NumPy array of Python data, with PyTorch's dtype inference (floats -> default dtype)."""
    if isinstance(data, Tensor):
        return data._host_array(), data.dtype
    if isinstance(data, np.ndarray):
        return data, _dtype.from_numpy_dtype(data.dtype)
    typed = None
    if isinstance(data, (list, tuple)):
        typed, tensors = _typed_leaves(data)
        if tensors:
            data = _nested_items(data)
    try:
        arr = np.asarray(data)
    except ValueError:
        _check_ragged(data, 0, _first_sizes(data))
        raise
    if arr.dtype == object or arr.dtype.kind in "US":
        _check_leaves(data)
        return arr, _dtype.int64    # ints beyond int64: _check_values refuses them
    if arr.dtype.kind == "f":
        dt = _dtype.get_default_dtype() if not isinstance(data, np.generic) else \
            _dtype.from_numpy_dtype(arr.dtype)
    elif arr.dtype.kind in "iu":
        dt = _dtype.int64 if not isinstance(data, np.generic) else \
            _dtype.from_numpy_dtype(arr.dtype)
    elif arr.dtype.kind == "b":
        dt = _dtype.bool
    elif arr.dtype.kind == "c" and not isinstance(data, np.generic):
        dt = _dtype.get_default_dtype().to_complex()
    else:
        dt = _dtype.from_numpy_dtype(arr.dtype)
    return arr, typed or dt


_PY_NUMBERS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _typed_leaves(data):
    """(dtype, whether a leaf is a tensor) of nested data. The dtype is that of data holding
    tensors or NumPy values: PyTorch promotes their dtypes with the Python numbers' inferred
    ones (``[np.float64(r)]`` is float64); False when every leaf is a Python number (one type
    test each, the common case), None when a leaf is neither a number nor a tensor."""
    for x in _flat(data):
        if type(x) not in _PY_NUMBERS:
            break
    else:
        return False, False
    dt, tensors, unknown = None, False, False
    for x in _flat(data):
        t = type(x)
        if t is builtins.float:
            d = _dtype.get_default_dtype()
        elif t is builtins.bool:
            d = _dtype.bool
        elif t is builtins.int:
            d = _dtype.int64
        elif t is builtins.complex:
            d = _dtype.get_default_dtype().to_complex()
        elif isinstance(x, Tensor):
            d, tensors = x.dtype, True
        elif isinstance(x, (np.generic, np.ndarray)) and x.dtype.kind in "biufc":
            d = _dtype.from_numpy_dtype(x.dtype)
        else:
            unknown = True
            continue
        if not unknown:
            dt = d if dt is None else _dtype.promote_types(dt, d)
    return (None if unknown else dt), tensors


def _check_leaves(data):
    """Raises PyTorch's error for the first element of nested data that is not a number;
    returns quietly when all are (the data then held ints too large for int64)."""
    for x in (_flat(data) if isinstance(data, (list, tuple)) else (data,)):
        if isinstance(x, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        if not isinstance(x, (builtins.int, builtins.float, builtins.complex, np.number,
                              np.bool_)):
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _first_sizes(data):
    """The shape PyTorch reads off nested lists: the length at each depth of the first
    elements."""
    sizes = []
    while isinstance(data, (list, tuple)):
        sizes.append(len(data))
        if not data:
            break
        data = data[0]
    return sizes


def _check_ragged(data, dim, sizes):
    """Raises PyTorch's ValueError at the first list whose length differs from ``sizes``."""
    if not isinstance(data, (list, tuple)) or dim >= len(sizes):
        return
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(data)})")
    for x in data:
        _check_ragged(x, dim + 1, sizes)


def _check_values(arr, dt):
    """PyTorch's checks of Python numbers stored into a tensor: ints beyond int64 are refused
    unless stored as floats, and values out of range for an integer dtype (NaN and inf
    included) raise "value cannot be converted to type int8 without overflow"."""
    kind = arr.dtype.kind
    if kind == "O" or (kind == "u" and arr.dtype.itemsize == 8):    # ints beyond int64
        if dt.is_floating_point:
            return np.asarray(arr, dtype=np.float64)
        if dt is not _dtype.bool or kind == "O":
            raise ValueError("Overflow when unpacking long long")
    if dt.category != 1 or kind not in "iuf" or arr.dtype == dt.np or not arr.size:
        return arr
    if arr.dtype.kind == "f" or arr.size > 64:
        cast = builtins.float if arr.dtype.kind == "f" else builtins.int
        lo, hi = cast(arr.min()), cast(arr.max())   # NaN propagates
    else:   # a few ints: Python's min/max skip NumPy's per-call cost
        flat = arr.ravel().tolist()
        lo, hi = builtins.min(flat), builtins.max(flat)
    _args.check_range(lo, dt, dt.name)
    _args.check_range(hi, dt, dt.name)
    return arr


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _nested_items(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_nested_items(x) for x in data]
    return data


def _from_array(arr, dtype, device):
    """A new tensor holding a copy of a NumPy array converted to ``dtype``."""
    src = _as_stored(arr, dtype)
    out = alloc.empty(tuple(src.shape), dtype, _dtype_device_cpu())
    return _store(out, src, device)


def _as_stored(arr, dtype):
    """``arr`` converted to the NumPy type that holds ``dtype``'s bits."""
    if dtype is _dtype.bfloat16:
        bits = np.asarray(arr, dtype=np.float32, order="C").view(np.uint32)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
        nan = np.isnan(np.asarray(arr, dtype=np.float32))
        return np.asarray(np.where(nan, 0x7FC0, rounded), dtype=np.uint16)
    if dtype.is_float8:
        return _float8.encode(arr, dtype.name)
    return np.asarray(arr, dtype=dtype.np, order="C")


def _store(out, src, device, non_blocking=False):
    """Copies the NumPy array ``src`` into the new CPU tensor ``out``, then moves it to
    ``device`` (``non_blocking``: queued on the device's stream, as a kernel filling it
    would be, without waiting for the stream)."""
    np.copyto(np.ndarray(src.shape, dtype=src.dtype, buffer=out._storage.buf), src)
    return out if device.type == "cpu" else to_device(out, device, non_blocking)


def _dtype_device_cpu():
    from .._device import CPU
    return CPU


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists, numbers, NumPy arrays, tensors)."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
            ".requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning, stacklevel=2)
    return _new_tensor(data, dtype, device, requires_grad, pin_memory)


def _new_tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``tensor`` without its warning on a tensor argument (``Tensor(data)`` has none)."""
    arr, inferred = _to_numpy(data)
    dt = alloc.resolve_dtype(dtype, inferred) if dtype is not None else inferred
    if not isinstance(data, (Tensor, np.ndarray)):     # Python data: PyTorch checks values
        arr = _check_values(arr, dt)
    dev = alloc.resolve_device(device)
    return _finish(_pinned(_from_array(arr, dt, dev), pin_memory), requires_grad)


def _pinned(t, pin_memory):
    """``t`` in pinned host memory when the factory was given ``pin_memory=True``."""
    return t.pin_memory() if pin_memory else t


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor, sharing memory when it already is one (or a NumPy array) of the
    right dtype and device."""
    dev = alloc.resolve_device(device) if device is not None else None
    if isinstance(data, Tensor):
        return data.to(device=dev, dtype=dtype) if (dev or dtype) else data
    if isinstance(data, np.ndarray) and data.dtype in _dtype._FROM_NP and (
            dev is None or dev.type == "cpu"):
        t = from_numpy(data) if all(s >= 0 for s in data.strides) else tensor(data)
        return t if dtype is None else t.to(dtype)
    return tensor(data, dtype=dtype, device=dev)



def from_numpy(ndarray):
    """A CPU tensor sharing memory with a NumPy array."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {_type_name(ndarray)})")
    dt = _dtype._FROM_NP.get(ndarray.dtype) or _dtype.from_numpy_dtype(ndarray.dtype)
    if not ndarray.flags.writeable:
        import warnings
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior. You may want to copy the array to protect its data "
                      "or make it writable before converting it to a tensor.", UserWarning,
                      stacklevel=2)
    strides, itemsize = ndarray.strides, ndarray.itemsize
    # element strides kept by byte strides: a data set's items share one layout
    stride = _NP_STRIDES.get((strides, itemsize))
    if stride is None:
        if any(s < 0 for s in strides):
            raise ValueError(
                "At least one stride in the given numpy array is negative, and tensors with "
                "negative strides are not currently supported. (You can probably work around "
                "this by making a copy of your array  with array.copy().) ")
        if any(s % itemsize for s in strides):
            raise ValueError("given numpy array strides not a multiple of the element byte "
                             "size. Copy the numpy array to reallocate the memory.")
        stride = alloc.remember(_NP_STRIDES, (strides, itemsize),
                                tuple([s // itemsize for s in strides]))
    storage, offset = cpu_from_array(ndarray)
    return _make(storage, ndarray.shape, stride, offset, dt)


_NP_STRIDES = {}


def _type_name(obj):
    """A type's name as PyTorch's messages spell it (``numpy.float32``, ``list``)."""
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _rebuild(arr, dtype_name, device, requires_grad):
    t = tensor(arr, dtype=_dtype._by_name(dtype_name), device=device)
    return t.requires_grad_(requires_grad) if requires_grad else t


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    _dense("scalar_tensor", layout)
    return _full((), _args.scalar("scalar_tensor", "s", s, 1), alloc.resolve_dtype(dtype),
                 device, requires_grad, pin_memory=pin_memory)


# ---- factories ----------------------------------------------------------------------------

def empty(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, out=None, **size_kw):
    """An uninitialised tensor of the given size."""
    shape = _size(size, "empty", size_kw)
    if layout is not None:
        sparse = _dense("empty", layout, shape, dtype, device)
        if sparse is not None:
            return _finish(sparse, requires_grad)
    if out is not None:
        from .views import resize_
        return resize_(out, shape)
    dev = alloc.resolve_device(device)
    if pin_memory and dev.type == "cpu":
        from ..cuda import _runtime
        n = alloc.numel(shape)
        dt = alloc.resolve_dtype(dtype)
        t = _make(_runtime.pinned_storage(n * dt.itemsize), shape,
                  alloc.contiguous_strides(shape), 0, dt)
    else:
        t = _pinned(alloc.empty(shape, alloc.resolve_dtype(dtype), dev), pin_memory)
    if memory_format is not None and memory_format is not _memory_format.contiguous_format:
        t._stride = _format_strides("empty", shape, memory_format)  # a permutation: same size
    return _finish(_determinism.fill_uninitialized(t), requires_grad)


def _format_strides(op, shape, fmt):
    _memory_format.check(op, fmt)
    if fmt is _memory_format.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    return _memory_format.format_strides(op, shape, fmt)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given sizes and strides (in elements)."""
    _dense("empty_strided", layout)
    size = _args.sizes("empty_strided", (_tuple_arg("empty_strided", "size", size, 1),))
    stride = _args.int_list("empty_strided", "stride",
                            (_tuple_arg("empty_strided", "stride", stride, 2),))
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    dt = alloc.resolve_dtype(dtype)
    nbytes = _args.storage_nbytes(size, dt.itemsize, stride)
    st = alloc.storage(nbytes, alloc.resolve_device(device))
    return _finish(_determinism.fill_uninitialized(_make(st, size, stride, 0, dt)),
                   requires_grad, pin_memory=pin_memory)


def _tuple_arg(op, name, value, pos):
    """``value``, which PyTorch declares ``int[]`` with no single-int form: a lone number
    raises its TypeError."""
    if isinstance(value, (tuple, list)):
        return value
    raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be tuple of ints, not "
                    f"{type(value).__name__}")


def full(size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, out=None):
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given."""
    _dense("full", layout)
    shape = _size(size if isinstance(size, (tuple, list)) else _tuple_arg("full", "size", size, 1),
                  "full")
    value = _args.scalar("full", "fill_value", fill_value, 2)
    if dtype is None:
        dtype = _dtype.default_for_category(_dtype.scalar_category(value))
    return _full(shape, value, alloc.resolve_dtype(dtype), device, requires_grad, out,
                 pin_memory=pin_memory)


def _full(shape, value, dt, device, requires_grad, out=None, like=None, fmt=None,
          pin_memory=False):
    """A tensor of ``shape`` filled with the Python number ``value``, after PyTorch's
    range check of the value for ``dt``; laid out like tensor ``like`` in memory format
    ``fmt`` when given (the ``*_like`` factories)."""
    value = _args.check_fill(value, dt, alloc.numel(shape))
    if value.__class__ is builtins.int and value > _args.INT64_MAX:
        value = builtins.float(value)   # a uint64 Scalar into a floating dtype
    if like is None or (fmt is None and like.is_contiguous()):
        t = alloc.empty(shape, dt, alloc.resolve_device(device))
    else:
        t = _memory_format.empty_like(like, dt, alloc.resolve_device(device), fmt)
    alloc.backend(t._storage.device).copy.fill(t, value)
    return _finish(t, requires_grad, out, pin_memory)


def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          out=None, **size_kw):
    """A tensor of zeros."""
    shape = _size(size, "zeros", size_kw)
    if layout is not None:
        sparse = _dense("zeros", layout, shape, dtype, device)
        if sparse is not None:
            return _finish(sparse, requires_grad)
    return _full(shape, 0, alloc.resolve_dtype(_out_dtype(dtype, out)), device, requires_grad,
                 out, pin_memory=pin_memory)


def ones(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
         out=None, **size_kw):
    """A tensor of ones."""
    _dense("ones", layout)
    return _full(_size(size, "ones", size_kw), 1, alloc.resolve_dtype(_out_dtype(dtype, out)),
                 device, requires_grad, out, pin_memory=pin_memory)


def _out_dtype(dtype, out):
    """The dtype of a factory call: the given one, else that of ``out=``, else None."""
    if dtype is not None or out is None:
        return dtype
    return out.dtype


def _like(input, dtype, device):
    return (alloc.resolve_dtype(dtype, input.dtype),
            input._storage.device if device is None else alloc.resolve_device(device))


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               pin_memory=False, memory_format=None):
    """An uninitialised tensor of input's size, in input's layout (preserve_format) unless
    ``memory_format`` says otherwise."""
    _dense("empty_like", layout)
    dt, dev = _like(input, dtype, device)
    t = _memory_format.empty_like(input, dt, dev, memory_format)
    return _finish(_determinism.fill_uninitialized(t), requires_grad, pin_memory=pin_memory)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, memory_format=None):
    _dense("full_like", layout)
    dt, dev = _like(input, dtype, device)
    value = _args.scalar("full_like", "fill_value", fill_value, 2)
    return _fill_like(input, value, dt, dev, requires_grad, memory_format, pin_memory)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               pin_memory=False, memory_format=None):
    _dense("zeros_like", layout)
    dt, dev = _like(input, dtype, device)
    return _fill_like(input, 0, dt, dev, requires_grad, memory_format, pin_memory)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, memory_format=None):
    _dense("ones_like", layout)
    dt, dev = _like(input, dtype, device)
    return _fill_like(input, 1, dt, dev, requires_grad, memory_format, pin_memory)


def _fill_like(input, value, dt, dev, requires_grad, fmt, pin_memory=False):
    return _full(input._shape, value, dt, dev, requires_grad, like=input, fmt=fmt,
                 pin_memory=pin_memory)


def new_empty(self, *size, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, **size_kw):
    return empty(_size(size, "new_empty", size_kw), dtype=dtype or self.dtype, layout=layout,
                 device=device or self.device, requires_grad=requires_grad,
                 pin_memory=pin_memory)


def new_zeros(self, *size, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, **size_kw):
    _dense("new_zeros", layout)
    return _full(_size(size, "new_zeros", size_kw), 0, alloc.resolve_dtype(dtype, self.dtype),
                 device or self.device, requires_grad, pin_memory=pin_memory)


def new_ones(self, *size, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, **size_kw):
    _dense("new_ones", layout)
    return _full(_size(size, "new_ones", size_kw), 1, alloc.resolve_dtype(dtype, self.dtype),
                 device or self.device, requires_grad, pin_memory=pin_memory)


def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    _dense("new_full", layout)
    shape = _size((_tuple_arg("new_full", "size", size, 1),), "new_full")
    return _full(shape, _args.scalar("new_full", "fill_value", fill_value, 2),
                 alloc.resolve_dtype(dtype, self.dtype), device or self.device, requires_grad,
                 pin_memory=pin_memory)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


def _range_dtype(values, dtype):
    if dtype is not None:
        dt = alloc.resolve_dtype(dtype)
    elif any(v.__class__ is builtins.float for v in values):
        dt = _dtype.get_default_dtype()
    else:
        dt = _dtype.int64
    return dt


def _not_for_bool(op, dt):
    if dt is _dtype.bool:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for 'Bool'")


def _fmt(v):
    """A number as C++ streams print it in PyTorch's messages: 0, 0.5, nan, 1e+20."""
    return f"{v:g}" if v.__class__ is builtins.float else str(v)


def _range_bounds(start, end, step):
    """PyTorch's checks of arange/range bounds, on the numbers as given."""
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_fmt(start)} -> {_fmt(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _range_acc(dt, *values):
    """The numbers arange/range accumulate in: floats for floating dtypes, else ints
    truncated towards zero and range-checked for int64."""
    if dt.is_floating_point:
        return tuple(builtins.float(v) for v in values)
    return tuple(builtins.int(_args.check_range(v, _dtype.int64)) for v in values)


def _wrap64(v):
    """``v`` wrapped to int64 as C++ arithmetic leaves it."""
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def _range_tensor(n, first, inc, dt, device):
    """The 1-d tensor ``first + i * inc`` for i < n, computed in float64 or (wrapping)
    int64 like PyTorch's kernels and cast to ``dt``."""
    if not 0 <= n <= _args.INT64_MAX:
        raise RuntimeError("invalid size, possible overflow?")
    n = builtins.int(n)
    out = alloc.empty((n,), dt, _dtype_device_cpu())    # before NumPy's temporaries of that size
    acc = np.float64 if dt.is_floating_point else np.int64
    arr = acc(first) + np.arange(n, dtype=acc) * acc(inc)
    # queued like PyTorch's arange kernel: a model's position ids each step do not wait
    # for the previous step's kernels
    return _store(out, _as_stored(arr, dt), alloc.resolve_device(device), True)


def arange(start, end=None, step=1, *, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False, out=None):
    """Values from start (inclusive) to end (exclusive) spaced by step."""
    _dense("arange", layout)
    if end is None:
        start, end = 0, _args.scalar("arange", "end", start, 1)
    else:
        start = _args.scalar("arange", "start", start, 1)
        end = _args.scalar("arange", "end", end, 2)
    step = _args.scalar("arange", "step", step, 3)
    dt = _range_dtype((start, end, step), _out_dtype(dtype, out))
    _not_for_bool("arange", dt)
    _range_bounds(start, end, step)
    if dt is _dtype.int64:
        # PyTorch counts in int64 arithmetic, overflow included (its answer for the
        # widest ranges), dividing with C's truncation
        xs, xe, xst = _range_acc(dt, start, end, step)
        if xst == 0:
            raise ValueError("step must be nonzero")
        num = _wrap64(_wrap64(_wrap64(xe - xs) + xst) - (1 if xst > 0 else -1))
        n = builtins.abs(num) // builtins.abs(xst) * (1 if (num < 0) == (xst < 0) else -1)
    else:
        d = (builtins.float(end) - builtins.float(start)) / builtins.float(step)
        n = math.ceil(d) if math.isfinite(d) else d
        if not 0 <= n <= _args.INT64_MAX:
            raise RuntimeError("invalid size, possible overflow?")
        xs, xst = _range_acc(dt, start, step)
    return _finish(_range_tensor(n, xs, xst, dt, device), requires_grad, out, pin_memory)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, out=None):
    """Deprecated inclusive range (PyTorch's ``torch.range``)."""
    _dense("range", layout)
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    start, end = _args.scalar("range", "start", start, 1), _args.scalar("range", "end", end, 2)
    step = _args.scalar("range", "step", step, 3)
    dt = alloc.resolve_dtype(_out_dtype(dtype, out))
    _not_for_bool("range", dt)
    _range_bounds(start, end, step)
    xs, xe, xst = _range_acc(dt, start, end, step)
    if xst == 0:    # a fractional step truncated for an integer dtype (PyTorch divides by it)
        raise RuntimeError("step must be nonzero")
    if dt.is_floating_point:
        q = (xe - xs) / xst
        n = builtins.int(q) + 1 if math.isfinite(q) else q
    else:
        n = (xe - xs) // xst + 1
    return _finish(_range_tensor(n, xs, xst, dt, device), requires_grad, out, pin_memory)


def linspace(start, end, steps, *, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, out=None):
    """``steps`` values evenly spaced from start to end inclusive."""
    _dense("linspace", layout)
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v._shape:
            raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, "
                               f"but got {name} with {len(v._shape)} dimension(s).")
    start = _args.scalar("linspace", "start", start, 1)
    end = _args.scalar("linspace", "end", end, 2)
    steps = _args.to_int("linspace", "steps", steps, 3)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = alloc.resolve_dtype(_out_dtype(dtype, out))
    _not_for_bool("linspace", dt)
    if not dt.is_floating_point:    # PyTorch converts the bounds to the dtype first
        start = builtins.int(_args.check_range(start, dt))
        end = builtins.int(_args.check_range(end, dt))
    _args.storage_nbytes((steps,), dt.itemsize)
    arr = np.full(steps, builtins.float(start))
    if steps > 1:  # PyTorch fills the second half backwards from `end` for symmetry
        step = (builtins.float(end) - builtins.float(start)) / (steps - 1)
        half = steps // 2
        idx = np.arange(steps)
        with np.errstate(invalid="ignore", over="ignore"):
            arr = np.where(idx < half, start + step * idx, end - step * (steps - 1 - idx))
    if not dt.is_floating_point:
        arr = np.trunc(arr)
    return _finish(_from_array(arr, dt, alloc.resolve_device(device)), requires_grad, out,
                   pin_memory)


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False, out=None):
    """``base ** linspace(start, end, steps)``."""
    _dense("logspace", layout)
    start = _args.scalar("logspace", "start", start, 1)
    end = _args.scalar("logspace", "end", end, 2)
    steps = _args.to_int("logspace", "steps", steps, 3)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    base = _args.scalar("logspace", "base", base, 4)
    dt = alloc.resolve_dtype(_out_dtype(dtype, out))
    _not_for_bool("logspace", dt)
    if dt.is_complex:
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for '{dt.scalar_name}'")
    _args.storage_nbytes((steps,), dt.itemsize)
    # PyTorch's kernel: the bounds and their difference in the dtype (integers truncate),
    # the exponents and powers in double precision
    if not dt.is_floating_point:    # (-1 for uint8 wraps, as the C++ conversion does)
        start, end = (builtins.int(np.array(builtins.int(_args.check_range(v, dt)))
                                   .astype(dt.np)) for v in (start, end))
        diff = end - start
    else:
        start, end = _in_dtype([start, end], dt)
        diff = _in_dtype([end - start], dt)[0]
    idx = np.arange(steps, dtype=np.float64)
    step = diff / (steps - 1) if steps > 1 else 0.0
    lin = np.where(idx < steps // 2, start + step * idx, end - step * (steps - 1 - idx))
    if steps == 1:
        lin = np.array([start], np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.power(builtins.float(base), lin)
        if not dt.is_floating_point:
            # the C++ cast from double: truncation; out of range (x86) gives the lowest
            # value of int64, or of int32 whose low bits the narrower types keep
            arr = np.trunc(arr)
            lim = 2.0 ** (63 if dt is _dtype.int64 else 31)
            arr = np.where((arr >= -lim) & (arr < lim), arr, -lim).astype(np.int64)
        res = _from_array(arr, dt, alloc.resolve_device(device))
    return _finish(res, requires_grad, out, pin_memory)


def _in_dtype(values, dt):
    """Python floats rounded to the floating dtype ``dt``."""
    if dt is _dtype.float64:
        return [builtins.float(v) for v in values]
    return _from_array(np.array(values, np.float64), dt, _dtype_device_cpu()).tolist()


def eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False, out=None):
    """A 2-d tensor with ones on the diagonal."""
    _dense("eye", layout)
    n = _args.to_int("eye", "n", n, 1)
    m = n if m is None else _args.to_int("eye", "m", m, 2)
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}" if n < 0 else
                           f"m must be greater or equal to 0, got {m}")
    _args.numel((n, m))
    t = zeros(n, m, dtype=_out_dtype(dtype, out), device=device)
    k = builtins.min(n, m)
    if k:
        from .views import diagonal
        diagonal(t).fill_(1)
    return _finish(t, requires_grad, out, pin_memory)


# ---- conversion -------------------------------------------------------------------------

def _parse_to(args, kwargs):
    dev, dt, copy = kwargs.pop("device", None), kwargs.pop("dtype", None), kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    fmt = _memory_format.check("to", kwargs.pop("memory_format", None))
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _dtype.dtype):
            dt = a
        elif isinstance(a, (str, _device_cls)):
            dev = a
        elif isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, builtins.bool):
            non_blocking = a
        elif isinstance(a, builtins.int):
            dev = _device_cls("cuda", a)
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    return dev, dt, non_blocking, copy, fmt


def to(self, *args, **kwargs):
    """Converts dtype and/or device; returns self when nothing changes (unless copy=True).
    The result keeps self's layout (``memory_format=preserve_format``) unless another
    memory format is asked for."""
    if not kwargs and len(args) == 1 and args[0].__class__ is _dtype.dtype:
        # the common x.to(dtype) / x.float(): a dtype change on the same device
        dt = args[0]
        return self if dt is self.dtype else _pointwise.convert(self, dt, self._storage.device,
                                                                True)
    dev, dt, non_blocking, copy, fmt = _parse_to(args, kwargs) if kwargs else \
        _parse_to(args, {})
    dev = self._storage.device if dev is None else alloc.resolve_device(dev)
    dt = self.dtype if dt is None else alloc.resolve_dtype(dt)
    keep = fmt is None or fmt is _memory_format.preserve_format
    # PyTorch's rule for returning self: the format asked for is the one its strides
    # suggest (a size-1 channel dim counts as contiguous, so such a tensor is restrided)
    if dev is self._storage.device and dt is self.dtype and not copy and (
            keep or _memory_format.suggest(self) is fmt):
        return self
    out = self
    if dev is not self._storage.device:
        out = to_device(out, dev, non_blocking)
    if not keep and (out is self or _memory_format.suggest(out) is not fmt):
        res = _memory_format.empty_like(out, dt, dev, fmt, "to")
        alloc.backend(dev).copy.copy(res, out, out._stride)
        return res
    if dt is not out.dtype:
        out = _pointwise.convert(out, dt, dev, True)
    elif copy and out is self:
        out = out.clone()
    return out


def to_device(x, device, non_blocking=False):
    """A copy of ``x`` on another device (same dtype, contiguous)."""
    if x._storage.device is device:
        return x
    if "meta" in (device.type, x._storage.device.type):
        if device.type != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return alloc.empty(x._shape, x.dtype, device)
    from .. import cuda
    return cuda.transfer(x, device, non_blocking)


def view_dtype(self, dtype):
    """Reinterprets the bytes as another dtype of the same size."""
    if dtype.itemsize != self.dtype.itemsize:
        if self.dim() == 0 or self._stride[-1] != 1:
            raise RuntimeError("self.stride(-1) must be 1 to view " + str(self.dtype) + " as " +
                               str(dtype) + " (different element sizes)")
        ratio_num, ratio_den = self.dtype.itemsize, dtype.itemsize
        last = self._shape[-1] * ratio_num
        if last % ratio_den:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio_den // ratio_num} to "
                               f"view {self.dtype} as {dtype} (different element sizes), but got "
                               f"{self._shape[-1]}")
        shape = self._shape[:-1] + (last // ratio_den,)
        stride = tuple(s * ratio_num // ratio_den for s in self._stride[:-1]) + (1,)
        return _make(self._storage, shape, stride, self._offset * ratio_num // ratio_den, dtype)
    return _make(self._storage, self._shape, self._stride, self._offset, dtype)
