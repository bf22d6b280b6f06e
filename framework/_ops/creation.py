"""Tensor creation (tensor, empty, zeros, full, arange, linspace, eye, ...) and ``to``."""
import builtins
import math

import numpy as np

from .. import _dtype
from .._device import device as _device_cls
from .._storage import cpu_from_array
from .._tensor import Tensor
from . import alloc

_make = Tensor._make


def _size(args, op="empty"):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    for a in args:      # plain non-negative ints: the common case
        if a.__class__ is not builtins.int or a < 0:
            break
    else:
        return tuple(args)
    try:
        shape = tuple(builtins.int(a) if not isinstance(a, Tensor) else a.__index__() for a in args)
    except TypeError:
        raise TypeError(f"{op}(): argument 'size' must be tuple of ints, but found element of "
                        f"type {type(args[0]).__name__}") from None
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return shape


def _finish(t, requires_grad, out=None):
    """Applies requires_grad, or writes the result into ``out=`` (resized like PyTorch;
    ``out``'s dtype and device win when the caller gave no dtype)."""
    if out is not None:
        from .pointwise import check_out
        from .views import copy_
        target = check_out("out", out, t._shape, out.dtype, False)
        copy_(target, t)
        return target
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


# ---- from data --------------------------------------------------------------------------

def _to_numpy(data):
    """NumPy array of Python data, with PyTorch's dtype inference (floats -> default dtype)."""
    if isinstance(data, Tensor):
        return data._host_array(), data.dtype
    if isinstance(data, np.ndarray):
        return data, _dtype.from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _nested_items(data)
    arr = np.asarray(data)
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if arr.dtype.kind == "f":
        dt = _dtype.get_default_dtype() if not isinstance(data, np.generic) else \
            _dtype.from_numpy_dtype(arr.dtype)
    elif arr.dtype.kind in "iu":
        dt = _dtype.int64 if not isinstance(data, np.generic) else \
            _dtype.from_numpy_dtype(arr.dtype)
    elif arr.dtype.kind == "b":
        dt = _dtype.bool
    elif arr.dtype.kind in "US":
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    else:
        dt = _dtype.from_numpy_dtype(arr.dtype)
    return arr, dt


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
    if dtype is _dtype.bfloat16:
        bits = np.asarray(arr, dtype=np.float32, order="C").view(np.uint32)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
        nan = np.isnan(np.asarray(arr, dtype=np.float32))
        src = np.asarray(np.where(nan, 0x7FC0, rounded), dtype=np.uint16)
    else:
        src = np.asarray(arr, dtype=dtype.np, order="C")
    shape = tuple(src.shape)
    out = alloc.empty(shape, dtype, _dtype_device_cpu())
    np.copyto(np.ndarray(shape, dtype=src.dtype, buffer=out._storage.buf), src)
    if device.type != "cpu":
        out = to_device(out, device)
    return out


def _dtype_device_cpu():
    from .._device import CPU
    return CPU


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists, numbers, NumPy arrays, tensors)."""
    arr, inferred = _to_numpy(data)
    dt = alloc.resolve_dtype(dtype, inferred) if dtype is not None else inferred
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


asarray = as_tensor


def from_numpy(ndarray):
    """A CPU tensor sharing memory with a NumPy array."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt = _dtype.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if any(s % ndarray.itemsize for s in ndarray.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    storage, offset = cpu_from_array(ndarray)
    return _make(storage, tuple(ndarray.shape), tuple(s // ndarray.itemsize for s in
                                                      ndarray.strides), offset, dt)


def _rebuild(arr, dtype_name, device, requires_grad):
    t = tensor(arr, dtype=_dtype._by_name(dtype_name), device=device)
    return t.requires_grad_(requires_grad) if requires_grad else t


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), device=device,
                requires_grad=requires_grad)


# ---- factories ----------------------------------------------------------------------------

def empty(*size, dtype=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, out=None):
    """An uninitialised tensor of the given size."""
    shape = _size(size)
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
    return _finish(t, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False,
                  pin_memory=False):
    size, stride = tuple(size), tuple(stride)
    dt = alloc.resolve_dtype(dtype)
    need = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    st = alloc.storage(need * dt.itemsize, alloc.resolve_device(device))
    return _finish(_make(st, size, stride, 0, dt), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None):
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given."""
    if dtype is None:
        if isinstance(fill_value, builtins.bool):
            dtype = _dtype.bool
        elif isinstance(fill_value, builtins.int):
            dtype = _dtype.int64
        else:
            dtype = _dtype.get_default_dtype()
    t = alloc.empty(_size((size,) if isinstance(size, int) else size),
                    alloc.resolve_dtype(dtype), alloc.resolve_device(device))
    alloc.backend(t._storage.device).copy.fill(t, fill_value)
    return _finish(t, requires_grad, out)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    """A tensor of zeros."""
    return full(_size(size), 0, dtype=alloc.resolve_dtype(_out_dtype(dtype, out)), device=device,
                requires_grad=requires_grad, out=out)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    """A tensor of ones."""
    return full(_size(size), 1, dtype=alloc.resolve_dtype(_out_dtype(dtype, out)), device=device,
                requires_grad=requires_grad, out=out)


def _out_dtype(dtype, out):
    """The dtype of a factory call: the given one, else that of ``out=``, else None."""
    if dtype is not None or out is None:
        return dtype
    return out.dtype


def _like(input, dtype, device):
    return (alloc.resolve_dtype(dtype, input.dtype),
            input._storage.device if device is None else alloc.resolve_device(device))


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    dt, dev = _like(input, dtype, device)
    return _finish(alloc.empty(input._shape, dt, dev), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    dt, dev = _like(input, dtype, device)
    return full(input._shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return full_like(input, 0, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return full_like(input, 1, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return empty(_size(size), dtype=dtype or self.dtype, device=device or self.device,
                 requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return zeros(_size(size), dtype=dtype or self.dtype, device=device or self.device,
                 requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return ones(_size(size), dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


def _range_dtype(values, dtype):
    if dtype is not None:
        return alloc.resolve_dtype(dtype)
    if any(isinstance(v, builtins.float) or (isinstance(v, Tensor) and v.is_floating_point())
           for v in values):
        return _dtype.get_default_dtype()
    return _dtype.int64


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    """Values from start (inclusive) to end (exclusive) spaced by step."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    dt = _range_dtype((start, end, step), _out_dtype(dtype, out))
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.max(0, math.ceil((end - start) / step))
    # compute in float64 / int64 like PyTorch's kernel, then cast
    if dt.is_floating_point or any(isinstance(v, builtins.float) for v in vals):
        arr = start + np.arange(n, dtype=np.float64) * step
    else:
        arr = start + np.arange(n, dtype=np.int64) * step
    return _finish(_from_array(arr, dt, alloc.resolve_device(device)), requires_grad, out)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Deprecated inclusive range (PyTorch's ``torch.range``)."""
    if end is None:
        start, end = 0, start
    n = builtins.int(math.floor((end - start) / step)) + 1
    arr = start + np.arange(n, dtype=np.float64) * step
    return _finish(_from_array(arr, alloc.resolve_dtype(dtype), alloc.resolve_device(device)),
                   requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    """``steps`` values evenly spaced from start to end inclusive."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = [v.item() if isinstance(v, Tensor) else v for v in (start, end)]
    dt = alloc.resolve_dtype(_out_dtype(dtype, out))
    arr = np.linspace(start, end, steps, dtype=np.float64)
    if steps > 1:  # PyTorch fills the second half backwards from `end` for symmetry
        step = (end - start) / (steps - 1)
        half = steps // 2
        idx = np.arange(steps)
        arr = np.where(idx < half, start + step * idx, end - step * (steps - 1 - idx))
    if not dt.is_floating_point:
        arr = np.trunc(arr)
    return _finish(_from_array(arr, dt, alloc.resolve_device(device)), requires_grad, out)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False,
             out=None):
    """``base ** linspace(start, end, steps)``."""
    lin = linspace(start, end, steps, dtype=_dtype.float64)._host_array()
    arr = np.power(float(base), lin)
    return _finish(_from_array(arr, alloc.resolve_dtype(_out_dtype(dtype, out)),
                               alloc.resolve_device(device)), requires_grad, out)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    """A 2-d tensor with ones on the diagonal."""
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n}" if n < 0 else
                           f"m must be greater or equal to 0, got {m}")
    m = n if m is None else m
    t = zeros(n, m, dtype=_out_dtype(dtype, out), device=device)
    k = builtins.min(n, m)
    if k:
        from .views import diagonal
        diagonal(t).fill_(1)
    return _finish(t, requires_grad, out)


# ---- conversion -------------------------------------------------------------------------

def _parse_to(args, kwargs):
    dev, dt, copy = kwargs.pop("device", None), kwargs.pop("dtype", None), kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
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
    return dev, dt, non_blocking, copy


def to(self, *args, **kwargs):
    """Converts dtype and/or device; returns self when nothing changes (unless copy=True)."""
    dev, dt, non_blocking, copy = _parse_to(args, dict(kwargs))
    dev = self._storage.device if dev is None else alloc.resolve_device(dev)
    dt = self.dtype if dt is None else alloc.resolve_dtype(dt)
    if dev is self._storage.device and dt is self.dtype and not copy:
        return self
    out = self
    if dev is not self._storage.device:
        out = to_device(out, dev, non_blocking)
    if dt is not out.dtype:
        from .pointwise import convert
        out = convert(out, dt, dev)
    elif copy and out is self:
        out = out.clone()
    return out


def to_device(x, device, non_blocking=False):
    """A copy of ``x`` on another device (same dtype, contiguous)."""
    if x._storage.device is device:
        return x
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
