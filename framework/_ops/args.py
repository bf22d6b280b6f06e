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

from .. import _dtype, _float8
from .._tensor import Tensor

INT64_MAX = (1 << 63) - 1
_int = builtins.int
_bool = builtins.bool
_complex = builtins.complex


def _type_name(x):
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


def to_int(op, name, value, pos=None):
    """``value`` as a Python int, for an argument PyTorch declares ``int``: ints, NumPy
    integers and integer 0-d tensors pass; floats, strings and bools raise TypeError.
    (PyTorch takes a bool where it takes an int only by accident: we refuse it as its
    size parser does.)"""
    if value.__class__ is _int:
        if not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise ValueError("Overflow when unpacking long long")    # PyTorch's parser's
        return value
    if isinstance(value, (_bool, np.bool_)) or not _is_index(value):
        where = f"argument '{name}'{_at(pos)}"
        raise TypeError(f"{op + '(): ' if op else ''}{where} must be int, not "
                        f"{_type_name(value)}")
    v = _int(value.item()) if isinstance(value, Tensor) else operator.index(value)
    if not -INT64_MAX - 1 <= v <= INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return v


def invalid_combination(op, values, overloads):
    """PyTorch's TypeError for an op with several signatures (``overloads``, as text) none
    of which takes ``values``."""
    got = ", ".join(_type_name(v) for v in values)
    listed = "".join(f"\n * ({o})" for o in overloads)
    return TypeError(f"{op}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:{listed}")


def _at(pos):
    return "" if pos is None else f" (position {pos})"


def int_list(op, name, args, pos=None):
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
            raise TypeError(f"{op}(): argument '{name}'{_at(pos)} must be tuple of ints, but "
                            f"found element of type {_type_name(a)} at pos {i}")
        out.append(operator.index(a))
    for i, v in enumerate(out):
        if not -INT64_MAX - 1 <= v <= INT64_MAX:    # PyTorch's parser's words
            raise TypeError(f"{op}(): argument '{name}' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long\"")
    return tuple(out)


def int_tuple(op, name, value, pos=None):
    """A tuple of ints from one argument PyTorch declares ``int[]`` with no varargs form
    (``as_strided``'s size and stride): a tuple, list or Size of integers."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{op}(): argument '{name}'{_at(pos)} must be tuple of ints, not "
                        f"{_type_name(value)}")
    return int_list(op, name, (value,), pos)


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
        n = itemsize
        for s in shape:     # not numel(): PyTorch reports this overflow as the storage's
            n *= s
    else:
        if any(s < 0 for s in strides) or any(s < 0 for s in shape):
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} "
                               f"and strides={list(strides)}")
        n = (1 + builtins.sum((d - 1) * s for d, s in zip(shape, strides))) * itemsize \
            if all(shape) else 0
    if n > INT64_MAX:
        what = f"sizes={list(shape)}" + ("" if strides is None else
                                         f" and strides={list(strides)}")
        raise RuntimeError(f"Storage size calculation overflowed with {what}")
    return n


def check_geometry(size, stride, offset, itemsize, storage_nbytes_, negative_strides=False):
    """Raises PyTorch's error unless every element of the view (size, stride, offset) lies
    inside a storage of ``storage_nbytes_`` bytes; the checks and their order are those of
    PyTorch's setStorage/computeStorageNbytes. Python ints do not overflow, so the
    arithmetic is exact; a span beyond int64 is refused as PyTorch's uint64 math does.
    ``negative_strides``: accept them when every element still lies inside (``set_``, by
    which Triton's interpreter rebuilds internal views such as flip's)."""
    span, count = offset + 1, 1
    for n, s in zip(size, stride):      # the common case first: one loop, no error
        if n <= 0 or s < 0:
            break
        span += (n - 1) * s
        count *= n
    else:
        if offset >= 0 and span * itemsize <= storage_nbytes_ and count <= INT64_MAX:
            return
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if negative_strides and any(s < 0 for s in stride) and all(n > 0 for n in size):
        low = offset + builtins.sum((n - 1) * s for n, s in zip(size, stride) if s < 0)
        high = offset + builtins.sum((n - 1) * s for n, s in zip(size, stride) if s > 0)
        if low < 0 or (high + 1) * itemsize > storage_nbytes_:    # PyTorch's text for them
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} "
                               f"and strides={list(stride)}")
        numel(size)
        return
    span = offset + 1
    overflow = empty = False
    for n, s in zip(size, stride):
        if n == 0:
            empty = True
            break
        # PyTorch multiplies (n - 1) * s as uint64: a negative factor times a nonzero one
        # overflows
        if (n < 1 or s < 0) and (n != 1 and s != 0):
            overflow = True
        span += (n - 1) * s
    if not empty and (overflow or span * itemsize > INT64_MAX):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if any(n < 0 for n in size):    # PyTorch lets some through; no kernel could use them
        raise RuntimeError("numel: integer multiplication overflow")
    numel(size)
    need = span * itemsize
    if not empty and need > storage_nbytes_:
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


# ---- scalars ----------------------------------------------------------------------------

_UINT64_END = 1 << 64
_INFS = (float("inf"), float("-inf"))
# C++ type names PyTorch prints when a Scalar does not fit a dtype (c10::checked_convert)
_CNAME = {_dtype.uint8: "uint8_t", _dtype.int8: "int8_t", _dtype.int16: "int16_t",
          _dtype.int32: "int", _dtype.int64: "int64_t", _dtype.float16: "c10::Half",
          _dtype.bfloat16: "c10::BFloat16", _dtype.float32: "float", _dtype.float64: "double"}
_LIMITS = {d: (_int(np.iinfo(d.np).min), _int(np.iinfo(d.np).max)) for d in
           (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)}
_LIMITS.update({_dtype.float16: (-65504.0, 65504.0),
                _dtype.bfloat16: (-3.3895313892515355e38, 3.3895313892515355e38),
                _dtype.float32: (-3.4028234663852886e38, 3.4028234663852886e38),
                _dtype.float64: (-1.7976931348623157e308, 1.7976931348623157e308)})


def check_fill(value, dtype, numel):
    """``check_range`` as PyTorch applies it to a fill of ``numel`` elements: a one-element
    fill of a 16- or 8-bit float converts the value unchecked (``t[i] = v`` and 0-d fills
    included), and float8 values are checked against the format's range."""
    if numel == 1 and dtype.is_floating_point and dtype.itemsize < 4 \
            and value.__class__ is not _complex:
        return value
    value = check_range(value, dtype)
    if dtype.is_float8 and not _float8.fits(value, dtype.name):
        raise RuntimeError(f"value cannot be converted to type c10::{dtype.scalar_name} "
                           f"without overflow")
    return value


def scalar(op, name, value, pos=None):
    """``value`` as a Python number, for an argument PyTorch declares ``Number``/``Scalar``:
    bool, int, float, complex, NumPy scalars and 0-d tensors pass; str, None, other objects and
    tensors with dimensions raise PyTorch's TypeError. A NumPy integer becomes an int and
    a NumPy float or bool a float, as PyTorch's Scalar takes them; an int outside
    [-2**63, 2**64) raises PyTorch's OverflowError."""
    c = value.__class__
    if c is float or c is _bool:
        return value
    if c is _int or (isinstance(value, _int) and not isinstance(value, _bool)):
        if not -INT64_MAX - 1 <= value < _UINT64_END:
            raise OverflowError("int too big to convert" if value > 0 else
                                "can't convert negative int to unsigned")
        return _int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, np.integer):
        return _int(value)
    if isinstance(value, (np.floating, np.bool_)):
        return float(value)
    if isinstance(value, (_complex, np.complexfloating)):
        return _complex(value)
    if isinstance(value, Tensor) and not value._shape:
        return value.item()
    raise TypeError(f"{op}(): argument '{name}'{_at(pos)} must be Number, not "
                    f"{_type_name(value)}")


def check_range(value, dtype, type_name=None):
    """Raises PyTorch's "value cannot be converted to type int8_t without overflow" unless
    the number ``value`` fits ``dtype`` (c10::checked_convert): NaN and inf fit only
    floating dtypes, finite values must lie within the dtype's range, and negative ints
    down to -255 wrap into uint8 as in PyTorch. ``type_name`` replaces the C++ type name
    (``tensor()`` prints ``int8``). A complex number fits a real dtype only with a zero
    imaginary part. Returns ``value`` (a complex number's real part for a real dtype)."""
    if value.__class__ is _complex and not dtype.is_complex:
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type "
                               f"{type_name or _CNAME.get(dtype, 'bool')} without overflow")
        value = value.real
    lim = _LIMITS.get(dtype)
    if lim is None:     # bool: every number converts
        return value
    lo, hi = lim
    if lo <= value <= hi:   # the common case (False for NaN)
        return value
    if value.__class__ is float:
        ok = dtype.is_floating_point and (value != value or value in _INFS)
    else:
        ok = dtype is _dtype.uint8 and -hi <= value <= hi    # wraps like C
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {type_name or _CNAME[dtype]} "
                           f"without overflow")
    return value
