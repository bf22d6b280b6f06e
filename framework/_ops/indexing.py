"""``Tensor.__getitem__`` / ``__setitem__``: basic indexing (ints, slices, None, Ellipsis)
as views; tensors and bool masks go to advanced indexing (framework._ops.index)."""
import builtins
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import views

_basic_types = (builtins.int, slice, type(None), type(Ellipsis))


def _is_mask(i):
    return isinstance(i, Tensor) and i.dtype.category < 2 and i.dtype.itemsize == 1 and \
        not i.dtype.is_signed


def _sequence_as_tuple(index):
    """PyTorch's (NumPy's old) rule: a short list holding a slice, None, Ellipsis, a tensor
    or a sequence is a tuple of indices (deprecated), not one index."""
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return any(isinstance(i, (Tensor, list, tuple, slice)) or i is None or i is Ellipsis
               for i in index)


def _normalize(index):
    if _sequence_as_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of "
                      "x[seq].", UserWarning, stacklevel=3)
        index = tuple(index)
    # NumPy arrays index like tensors (a bool array is a mask over its dims)
    if isinstance(index, np.ndarray):
        return _from_numpy(index)
    if isinstance(index, tuple) and any(isinstance(i, np.ndarray) for i in index):
        return tuple(_from_numpy(i) if isinstance(i, np.ndarray) else i for i in index)
    return index


def _from_numpy(arr):
    from .creation import tensor
    return tensor(arr)


def _expand_index(t, index):
    if not isinstance(index, tuple):
        index = (index,)
    n_ell = builtins.sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in index if i is not None and i is not Ellipsis and not
                        _is_mask(i) and not isinstance(i, builtins.bool))
    used += builtins.sum(i.dim() for i in index if _is_mask(i))
    if used > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    if n_ell:
        k = next(j for j, i in enumerate(index) if i is Ellipsis)
        index = index[:k] + (slice(None),) * (t.dim() - used) + index[k + 1:]
    return index


def _is_basic(index):
    if isinstance(index, tuple):
        return all(isinstance(i, _basic_types) and not isinstance(i, builtins.bool) for i in index)
    return isinstance(index, _basic_types) and not isinstance(index, builtins.bool)


def slice_params(sl, size, stride):
    """(element offset, length, stride) of slicing a dim of ``size`` and ``stride``; steps
    must be positive, as in PyTorch."""
    step = 1 if sl.step is None else builtins.int(sl.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(sl.start, sl.stop, 1).indices(size)
    n = builtins.max(0, (stop - start + step - 1) // step)
    return (start * stride if n else 0), n, stride * step


def _ints_and_slices(index, ndim):
    """Whether a tuple index is plain ints and slices, no more than ``ndim``: it needs no
    expansion or count check."""
    if len(index) > ndim:
        return False
    for i in index:
        c = i.__class__
        if c is not builtins.int and c is not slice:
            return False
    return True


def basic_view(t, index):
    """The view selected by a tuple of ints, slices, None and Ellipsis."""
    if not (index.__class__ is tuple and _ints_and_slices(index, len(t._shape))):
        index = _expand_index(t, index)
    shape, stride, off = [], [], t._offset
    d = 0
    for i in index:
        if i is None:
            shape.append(1)
            stride.append(1)  # any stride is valid for a size-1 dim
            continue
        if isinstance(i, slice):
            start, n, st = slice_params(i, t._shape[d], t._stride[d])
            off += start
            shape.append(n)
            stride.append(st)
            d += 1
            continue
        size = t._shape[d]
        i = builtins.int(i)
        if not -size <= i < size:
            raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
        off += (i + size if i < 0 else i) * t._stride[d]
        d += 1
    shape.extend(t._shape[d:])
    stride.extend(t._stride[d:])
    return views._view(t, shape, stride, off)


_index_module = []


def _advanced():
    """framework._ops.index, imported on first use (it imports this module's users)."""
    if not _index_module:
        from . import index
        _index_module.append(index)
    return _index_module[0]


_row_index_dtypes = (_dtype.int64, _dtype.int32)


def _check_not_0d(t, c):
    """PyTorch's errors for ``t[i]`` and ``t[a:b]`` on a 0-d tensor."""
    if not t._shape and c is builtins.int:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if not t._shape and c is slice:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def getitem(t, index):
    c = index.__class__
    if (c is builtins.int or c is slice) and t._shape:   # t[i], t[a:b]: the common cases
        return basic_view(t, (index,))
    _check_not_0d(t, c)
    if c is tuple and _ints_and_slices(index, len(t._shape)):
        return basic_view(t, index)
    if c is Tensor and index.dtype in _row_index_dtypes and index._shape and t._shape \
            and index._storage.device is t._storage.device:
        return _advanced().getitem(t, index)    # t[idx]: rows picked by an integer tensor
    index = _normalize(index)
    if _is_basic(index):
        return basic_view(t, index)
    advanced = _advanced()
    return advanced.getitem(t, _expand_index(t, index))


def _check_value(t, value):
    if not isinstance(value, (Tensor, builtins.int, builtins.float, builtins.bool, complex,
                              np.number, np.bool_)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {t.type()}")


def _expanded_value(value, shape):
    """value broadcast to the shape it is assigned to, as PyTorch's copy_to (leading 1s
    dropped first, then expand: a mismatch raises expand's error)."""
    i = 0
    while i < value.dim() and value._shape[i] == 1:
        i += 1
    if i:
        value = views._view(value, value._shape[i:], value._stride[i:], value._offset)
    return views.expand(value, shape)


def setitem(t, index, value):
    _check_value(t, value)
    _check_not_0d(t, index.__class__)
    index = _normalize(index)
    if _is_basic(index):
        target = basic_view(t, index)
        if isinstance(value, Tensor):
            if value._shape != target._shape and value.dim():
                value = _expanded_value(value, target._shape)
            views.copy_(target, value)
        else:
            views.assign_(target, value)
        return
    advanced = _advanced()
    if isinstance(index, builtins.bool):
        advanced.setitem_bool(t, index, value)
        return
    advanced.setitem(t, _expand_index(t, index), value)
