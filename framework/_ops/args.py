"""Argument checks at the user's call: the one place that parses sizes, dims, integer
arguments and Python/NumPy scalars, validates a view's geometry against its storage and
checks that an op's tensors share a device. Errors are PyTorch's (class and text).

Every op that takes a size, a dim, an int or a scalar from the user goes through here, so
that a float where an int belongs, a negative size, a size product that overflows int64,
a view reaching outside its storage or a value out of range for its dtype raises at the
call instead of crashing or returning garbage later.
"""
import builtins
import operator

import numpy as np

from .. import _dtype
from .._tensor import Tensor

INT64_MAX = (1 << 63) - 1
_int = builtins.int
_bool = builtins.bool


def _type_name(x):
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


def to_int(op, name, value, pos=None):
    """``value`` as a Python int, for an argument PyTorch declares ``int``: ints, NumPy
    integers and integer 0-d tensors pass; floats, strings and bools raise TypeError.
    (PyTorch takes a bool where it takes an int only by accident: we refuse it as its
    size parser does.)"""
    if value.__class__ is _int:
        if not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise RuntimeError(f"{op}(): argument '{name}' overflows int64: {value}")
        return value
    if isinstance(value, (_bool, np.bool_)) or not _is_index(value):
        raise TypeError(f"{op}(): argument '{name}'{_at(pos)} must be int, not "
                        f"{_type_name(value)}")
    v = operator.index(value)
    if not -INT64_MAX - 1 <= v <= INT64_MAX:
        raise RuntimeError(f"{op}(): argument '{name}' overflows int64: {v}")
    return v


def _at(pos):
    return "" if pos is None else f" (position {pos})"


def int_list(op, name, args):
    """A tuple of ints from ``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])`` (PyTorch's
    ``int[]``/``SymInt...`` arguments); any element that is not an integer raises
    PyTorch's TypeError."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)) or (
            len(args) == 1 and args[0].__class__.__name__ == "Size"):
        args = args[0]
    out = []
    for i, a in enumerate(args):
        if a.__class__ is _int:
            out.append(a)
            continue
        if isinstance(a, (_bool, np.bool_)) or not _is_index(a):
            raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, but found "
                            f"element of type {_type_name(a)} at pos {i}")
        out.append(operator.index(a))
    for v in out:
        if not -INT64_MAX - 1 <= v <= INT64_MAX:
            raise RuntimeError(f"{op}(): argument '{name}' overflows int64: {v}")
    return tuple(out)


def _is_index(a):
    if isinstance(a, Tensor):
        return not a.dtype.is_floating_point and a.dtype is not _dtype.bool and a.numel() == 1
    return hasattr(type(a), "__index__")


def sizes(op, args, name="size"):
    """A shape from size arguments: ints only, none negative, element count within int64."""
    shape = int_list(op, name, args)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    numel(shape)
    return shape


def numel(shape):
    """The element count of ``shape``, raising PyTorch's error when it overflows int64."""
    n = 1
    for s in shape:
        n *= s
    if n > INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    return n


def storage_nbytes(shape, itemsize, strides=None):
    """Bytes a tensor of ``shape`` (contiguous, or with ``strides``) spans, raising
    PyTorch's "Storage size calculation overflowed" before any allocation is tried."""
    if strides is None:
        n = numel(shape) * itemsize if all(shape) else 0
    else:
        if any(s < 0 for s in strides) or any(s < 0 for s in shape):
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} "
                               f"and strides={list(strides)}")
        n = (1 + builtins.sum((d - 1) * s for d, s in zip(shape, strides))) * itemsize \
            if all(shape) else 0
    if n > INT64_MAX or (strides is None and numel(shape) * itemsize > INT64_MAX):
        what = f"sizes={list(shape)}" + ("" if strides is None else
                                         f" and strides={list(strides)}")
        raise RuntimeError(f"Storage size calculation overflowed with {what}")
    return n


def check_geometry(size, stride, offset, itemsize, storage_nbytes_):
    """Raises unless every element of the view (size, stride, offset) lies inside a
    storage of ``storage_nbytes_`` bytes (PyTorch's setStorage checks). Python ints do not
    overflow, so the arithmetic is exact; results beyond int64 are refused."""
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    for s in stride:
        if s < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                               f"got strides: {list(stride)}")
    if not all(size):
        return
    span = 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))
    if span * itemsize > INT64_MAX or numel(size) > INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    need = (offset + span) * itemsize
    if need > storage_nbytes_:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage "
                           f"size of {need} are out of bounds for storage of size "
                           f"{storage_nbytes_}")


def same_device(op, *tensors):
    """Raises PyTorch's error unless all tensors (None skipped) are on one device."""
    dev = None
    for t in tensors:
        if t is None:
            continue
        d = t._storage.device
        if dev is None:
            dev = d
        elif d is not dev:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {d}! (when checking argument "
                               f"for {op})")
    return dev
