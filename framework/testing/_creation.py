"""``make_tensor``: torch.testing's random test tensors, drawn from the framework's generator."""
import collections.abc
import math
import warnings

import framework as _fw
from .. import _dtype as _dt   # module-level tables: whatever order framework imports in

__all__ = ["make_tensor"]

_INTEGRAL_TYPES = (_dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64)
_FLOATING_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_COMPLEX_TYPES = (_dt.complex64, _dt.complex128)
_BOOLEAN_OR_INTEGRAL_TYPES = (_dt.bool, *_INTEGRAL_TYPES)
_FLOATING_OR_COMPLEX_TYPES = (*_FLOATING_TYPES, *_COMPLEX_TYPES)


def _uniform_(t, low, high):
    # uniform_ needs high - low to be representable: halve the range, then double the draw
    if high - low >= _fw.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _low_high(dtype, low, high, *, lowest, highest, default_low, default_high):
    """The [low, high) range to draw from: defaults filled in, checked, clamped to the
    dtype's range (and made integral for bool and integer dtypes)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low!r} and high={high!r}")
    if low == high and dtype in _FLOATING_OR_COMPLEX_TYPES:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. "
                      "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        # low is ceiled to stay inside the range; high too, as randint's bound is exclusive
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    r"""A tensor of ``shape``, ``dtype`` and ``device`` filled with values drawn uniformly
    from ``[low, high)``, as ``torch.testing.make_tensor``.

    Defaults: bool [0, 2), unsigned integers [0, 10), signed integers [-9, 10), floating
    and complex [-9, 9); given bounds outside the dtype's finite range are clamped to it.
    ``noncontiguous`` returns a strided view (ignored under two elements), exclusive with
    ``memory_format``; ``exclude_zero`` replaces zeros by 1 (bool, integers) or the dtype's
    ``finfo.tiny``.

    Raises:
        ValueError: ``requires_grad=True`` for a bool or integer dtype, ``low >= high``,
            a NaN bound, or both ``noncontiguous`` and ``memory_format``.
        TypeError: a dtype this function does not support.
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)

    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous!r} and "
                         f"memory_format={memory_format!r}")
    if requires_grad and dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype!r}")

    numel = 1
    for size in shape:
        numel *= size
    noncontiguous = noncontiguous and numel > 1
    if noncontiguous:
        # twice the last dim, so the view below skips real (distinct) values
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is _fw.bool:
        low, high = _low_high(dtype, low, high, lowest=0, highest=2, default_low=0,
                              default_high=2)
        result = _fw.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL_TYPES:
        info = _fw.iinfo(dtype)
        # randint's bounds are int64: it cannot reach int64's max
        low, high = _low_high(dtype, low, high, lowest=info.min,
                              highest=info.max + (1 if dtype is not _fw.int64 else 0),
                              default_low=-9, default_high=10)
        result = _fw.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX_TYPES:
        info = _fw.finfo(dtype)
        low, high = _low_high(dtype, low, high, lowest=info.min, highest=info.max,
                              default_low=-9, default_high=9)
        result = _fw.empty(shape, device=device, dtype=dtype)
        _uniform_(_fw.view_as_real(result) if dtype in _COMPLEX_TYPES else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")

    if noncontiguous:
        result = result[..., 1::2]   # offset by one to also catch offset bugs
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)

    if exclude_zero:
        zero = result == 0
        if dtype in _COMPLEX_TYPES:
            # a zero becomes tiny + 0j (torch's assignment); written through the real part
            _fw.view_as_real(result).select(-1, 0)[zero] = _fw.finfo(dtype).tiny
        else:
            result[zero] = 1 if dtype in _BOOLEAN_OR_INTEGRAL_TYPES else _fw.finfo(dtype).tiny

    if dtype in _FLOATING_OR_COMPLEX_TYPES:
        result.requires_grad = requires_grad
    return result
