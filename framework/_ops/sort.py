"""Sorting, selection, scans and counting: sort, argsort, msort, topk, kthvalue, median,
nanmedian, mode, cumsum, cumprod, cummax, cummin, logcumsumexp, unique,
unique_consecutive, bincount, histc, searchsorted, bucketize.

Row ops work along one dim of any strided tensor: the kernels get the strides of the other
dims ("outer") and the stride along the dim, so no copy is made. Scans and unique work on a
contiguous copy (converted to the result dtype), which they need anyway.
"""
import builtins

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from .._float8_ops import refuse
from .. import return_types
from . import alloc
from .pointwise import (require_tensor, check_out, check_overlap, convert, result_dtype,
                        type_name)
from .views import clone, contiguous, movedim, reshape

_long = _dtype.int64


# ---- helpers ------------------------------------------------------------------------------

def _check_tensor(op, x, name="input"):
    require_tensor(op, x, name, 1)


def _layout(t, d):
    """(outer strides, row stride) of ``t`` along dim ``d`` (a 0-d tensor is one row)."""
    if not t._shape:
        return (), 0
    return t._stride[:d] + t._stride[d + 1:], t._stride[d]


def _outer(t, d):
    return t._shape[:d] + t._shape[d + 1:] if t._shape else ()


def _dim_size(t, d):
    return t._shape[d] if t._shape else 1


def _reduced_shape(t, d, keepdim):
    if not t._shape:
        return ()
    return t._shape[:d] + ((1,) if keepdim else ()) + t._shape[d + 1:]


def _reduced_layout(out, d, keepdim):
    """Layout of a reduced output (one element per row)."""
    if not out._shape:
        return (), 0
    if keepdim:
        return _layout(out, d)
    return out._stride, 0


def _finish(op, result, out, inputs=None):
    """Copies ``result`` (a tensor or a tuple of tensors) into ``out`` when given; every
    output is checked against ``inputs`` for memory overlap (PyTorch's rules) first."""
    if out is None:
        return result
    if isinstance(result, Tensor):
        target = check_out(op, out, result._shape, result.dtype, False, inputs)
        alloc.backend(target._storage.device).copy.copy(target, result, result._stride)
        return target
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{op}(): argument 'out' must be tuple of {len(result)} Tensors")
    if inputs is not None:
        for t in out:
            require_tensor(op, t, "out")
            check_overlap(t, inputs)
    for t, r in zip(out, result):
        target = check_out(op, t, r._shape, r.dtype, False)
        alloc.backend(target._storage.device).copy.copy(target, r, r._stride)
    return type(result)(*out)


def _pair(x, shape):
    device = x._storage.device
    return alloc.empty(shape, x.dtype, device), alloc.empty(shape, _long, device)


def _nonzero_dim(op, x, d):
    if x._shape and x._shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


# ---- sort ---------------------------------------------------------------------------------

def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """Sorts the elements of ``input`` along ``dim``; returns (values, indices). NaN sorts
    as the largest value. The sort is always stable here (``stable`` is accepted for
    PyTorch compatibility)."""
    _check_tensor("sort", input)
    d = _wrap_dim(dim, input.dim())
    values, indices = _pair(input, input._shape)
    if input.numel():
        alloc.backend(input._storage.device).sort.sort_rows(
            _outer(input, d), _dim_size(input, d), builtins.bool(descending), input,
            _layout(input, d), values, _layout(values, d), indices, _layout(indices, d))
    return _finish("sort", return_types.sort(values, indices), out, (input,))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable=stable).indices


def msort(input, *, out=None):
    """``input`` sorted along its first dim."""
    return _finish("msort", sort(input, 0).values, out, (input,))


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices."""
    _check_tensor("topk", input)
    if input.dtype is _dtype.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _wrap_dim(dim, input.dim())
    n = _dim_size(input, d)
    k = builtins.int(k)
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    shape = input._shape[:d] + (k,) + input._shape[d + 1:] if input._shape else ()
    values, indices = _pair(input, shape)
    if values.numel():
        alloc.backend(input._storage.device).sort.topk_rows(
            _outer(input, d), n, k if input._shape else 1, builtins.bool(largest),
            builtins.bool(sorted), input,
            _layout(input, d), values, _layout(values, d), indices, _layout(indices, d))
    return _finish("topk", return_types.topk(values, indices), out, (input,))


def _select(op, input, d, keepdim, k, mode, rtype):
    shape = _reduced_shape(input, d, keepdim)
    values, indices = _pair(input, shape)
    if values.numel():
        alloc.backend(input._storage.device).sort.kth_rows(
            _outer(input, d), _dim_size(input, d), k, mode, input, _layout(input, d), values,
            _reduced_layout(values, d, keepdim), indices, _reduced_layout(indices, d, keepdim))
    return rtype(values, indices)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    _check_tensor("kthvalue", input)
    d = _wrap_dim(dim, input.dim())
    _nonzero_dim("kthvalue", input, d)
    k = builtins.int(k)
    if not 1 <= k <= _dim_size(input, d):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _finish("kthvalue", _select("kthvalue", input, d, keepdim, k - 1, 0,
                                       return_types.kthvalue), out, (input,))


def _median(op, input, dim, keepdim, out, mode, rtype):
    _check_tensor(op, input)
    if input.dtype is _dtype.bool:
        if dim is None:
            raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
        raise RuntimeError("\"median_out\" not implemented for 'Bool'")
    if dim is None:
        flat = reshape(input, -1)
        if not flat.numel():  # NaN, which integers show as their minimum (as PyTorch does)
            res = alloc.empty((), input.dtype, input._storage.device)
            fill = float("nan") if input.dtype.is_floating_point else _dtype.iinfo(input.dtype).min
            alloc.backend(res._storage.device).copy.fill(res, fill)
            return _finish(op, res, out, (input,))
        return _finish(op, _select(op, flat, 0, False, 0, mode, rtype).values, out, (input,))
    d = _wrap_dim(dim, input.dim())
    _nonzero_dim("median", input, d)  # PyTorch names median() for nanmedian too
    return _finish(op, _select(op, input, d, keepdim, 0, mode, rtype), out, (input,))


def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median of all elements, or along ``dim`` as (values, indices). A row with a
    NaN has median NaN (at the NaN's index)."""
    return _median("median", input, dim, keepdim, out, 1, return_types.median)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """Like :func:`median`, ignoring NaN values."""
    return _median("nanmedian", input, dim, keepdim, out, 2, return_types.nanmedian)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along ``dim`` (the smallest on ties) and its last index.
    NaNs count as equal to each other here; PyTorch leaves rows with NaN unspecified."""
    _check_tensor("mode", input)
    d = _wrap_dim(dim, input.dim())
    _nonzero_dim("mode", input, d)
    shape = _reduced_shape(input, d, keepdim)
    values, indices = _pair(input, shape)
    if values.numel():
        alloc.backend(input._storage.device).sort.mode_rows(
            _outer(input, d), _dim_size(input, d), input, _layout(input, d), values,
            _reduced_layout(values, d, keepdim), indices, _reduced_layout(indices, d, keepdim))
    return _finish("mode", return_types.mode(values, indices), out, (input,))


# ---- scans --------------------------------------------------------------------------------

def _scan_input(input, d, dtype):
    """``input`` as a contiguous tensor of ``dtype``, and its (outer, n, inner) sizes."""
    device = input._storage.device
    if input.dtype is not dtype or not input.is_contiguous():
        input = convert(input, dtype, device)
    shape = input._shape
    outer = alloc.numel(shape[:d])
    n = shape[d] if shape else 1
    inner = alloc.numel(shape[d + 1:])
    return input, outer, n, inner


def _scan(op, input, dim, dtype, out):
    _check_tensor(op, input)
    d = _wrap_dim(dim, input.dim())
    if dtype is None:
        dtype = _long if input.dtype.category < 2 and op != "logcumsumexp" else input.dtype
    else:
        dtype = alloc.resolve_dtype(dtype)
    x, outer, n, inner = _scan_input(input, d, dtype)
    res = alloc.empty(x._shape, dtype, x._storage.device)
    if res.numel():
        alloc.backend(x._storage.device).sort.scan(op, x, res, outer, n, inner)
    return _finish(op, res, out, (input,))


def cumsum(input, dim, *, dtype=None, out=None):
    """Cumulative sum along ``dim``; integers and bool accumulate in int64."""
    return _scan("cumsum", input, dim, dtype, out)


def cumprod(input, dim, *, dtype=None, out=None):
    """Cumulative product along ``dim``; integers and bool accumulate in int64."""
    return _scan("cumprod", input, dim, dtype, out)


def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along ``dim``, computed without overflow."""
    return _scan("logcumsumexp", input, dim, None, out)


def _cum_ext(op, is_max, input, dim, out, rtype):
    _check_tensor(op, input)
    d = _wrap_dim(dim, input.dim())
    x, outer, n, inner = _scan_input(input, d, input.dtype)
    values, indices = _pair(x, x._shape)
    if values.numel():
        alloc.backend(x._storage.device).sort.cum_ext(is_max, x, values, indices, outer, n,
                                                      inner)
    return _finish(op, rtype(values, indices), out, (input,))


def cummax(input, dim, *, out=None):
    """Running maximum along ``dim`` and the index where it was reached (NaN propagates)."""
    return _cum_ext("cummax", True, input, dim, out, return_types.cummax)


def cummin(input, dim, *, out=None):
    """Running minimum along ``dim`` and the index where it was reached (NaN propagates)."""
    return _cum_ext("cummin", False, input, dim, out, return_types.cummin)


# ---- unique -------------------------------------------------------------------------------

def _unique(op, input, do_sort, return_inverse, return_counts, dim):
    _check_tensor(op, input)
    if input.dtype.is_float8:   # the kernels compare values: no float8 case
        raise refuse("unique" if dim is None else "unique_dim", input.dtype, "")
    device = input._storage.device
    if device.type == "meta":   # the result's size depends on data
        raise alloc.meta_unsupported("aten::unique_consecutive" if op == "unique_consecutive"
                                     else "aten::_unique2" if dim is None else "aten::unique_dim")
    if dim is None:
        x = contiguous(input)
        n, m, rest = input.numel(), 1, ()
        inverse_shape = input._shape
    else:
        if not input._shape:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = _wrap_dim(dim, input.dim())
        moved = movedim(input, d, 0)
        x = contiguous(moved)
        n = _dim_size(input, d)
        rest = moved._shape[1:]
        m = alloc.numel(rest)
        inverse_shape = (n,)
        if n and not m:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
    be = alloc.backend(device).sort
    counts = alloc.empty((n,), _long, device)
    inverse = alloc.empty((n,), _long, device) if return_inverse else None
    if dim is None and do_sort:
        buf = alloc.empty((n,), input.dtype, device)
        u = be.unique_flat(x, n, buf, inverse, counts) if n else 0
        values = clone(buf[:u])
    else:
        perm, first = alloc.empty((n,), _long, device), alloc.empty((n,), _long, device)
        u = be.unique_rows(x, n, m, do_sort, perm, inverse, counts, first) if n else 0
        values = alloc.empty((u,) + rest, input.dtype, device)
        if u:
            be.gather_rows(values, x, first, u, m * input.dtype.itemsize)
    if dim is not None:
        values = contiguous(movedim(values, 0, d))
    if not (return_inverse or return_counts):
        return values
    result = (values,)
    if return_inverse:
        result += (reshape(inverse, inverse_shape),)
    if return_counts:
        result += (clone(counts[:u]),)
    return result


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements of ``input`` (or unique slices along ``dim``), sorted, optionally
    with the index of each element's group (inverse) and each group's size (counts)."""
    return _unique("unique", input, True, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses runs of equal consecutive elements (or slices along ``dim``)."""
    return _unique("unique_consecutive", input, False, return_inverse, return_counts, dim)


# ---- counting ---------------------------------------------------------------------------

_BINCOUNT_MSG = "bincount only supports 1-d non-negative integral inputs."


def bincount(input, weights=None, minlength=0):
    """The number of occurrences of each value in a 1-d non-negative integer tensor (or the
    sum of ``weights`` at them); length max(input) + 1, at least ``minlength``."""
    _check_tensor("bincount", input)
    if input._storage.device.type == "meta":
        raise alloc.meta_unsupported("aten::bincount")
    if input.dtype.category != 1:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{type_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dim() != 1:
        raise RuntimeError(_BINCOUNT_MSG)
    device = input._storage.device
    be = alloc.backend(device).sort
    lo, hi = be.int_range(input)
    if lo < 0:
        raise RuntimeError(_BINCOUNT_MSG)
    if weights is not None and (weights.dim() != 1 or weights._shape[0] != input._shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is not None:
        from .args import same_device
        same_device("bincount", input, weights)
    if weights is None:
        odt = _long
    else:
        odt = _dtype.float32 if weights.dtype is _dtype.float32 else _dtype.float64
        if weights.dtype.category == 0:
            weights = convert(weights, odt, device)
    nbins = builtins.max(hi + 1 if input._shape[0] else 0, minlength)
    res = alloc.empty((nbins,), odt, device)
    alloc.backend(device).copy.fill(res, 0)
    if input._shape[0]:
        be.bincount(input, weights, res)
    return res


def _fmt(v):
    return "%g" % v


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram of ``input`` with ``bins`` equal-width bins over [min, max] (the data's
    range when both are equal); elements outside the range are ignored."""
    _check_tensor("histc", input)
    if input.dtype.category != 2:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{type_name(input.dtype)}'")
    from .args import to_int
    bins = to_int("histc", "bins", bins)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = builtins.float(min), builtins.float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    be = alloc.backend(input._storage.device).sort
    if lo == hi and input.numel():
        lo, hi = be.float_range(input)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (abs(lo) < float("inf") and abs(hi) < float("inf")):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    res = alloc.empty((bins,), input.dtype, input._storage.device)
    be.histc(input, res, bins, lo, hi)
    return _finish("histc", res, out)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Indices where the elements of ``input`` would be inserted into the innermost dim of
    ``sorted_sequence`` to keep it sorted (first such index, or last with ``right``)."""
    op = "torch.searchsorted()"
    _check_tensor("searchsorted", sorted_sequence, "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{op}: side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{op}: side and right can't be set to opposites, got side of "
                               f"left while right was True")
        right = side == "right"
    b = sorted_sequence
    if b.dim() == 0:
        raise RuntimeError(f"{op}: boundaries tensor should have positive dimension, but got 0 "
                           f"dimension")
    device = b._storage.device
    scalar = not isinstance(input, Tensor)
    if not scalar and input._storage.device is not device:
        raise RuntimeError(f"{op}: boundaries and input value tensors should have same device "
                           f"type, but got boundaries tensor device type {device} and input "
                           f"value tensor device type {input._storage.device}")
    if sorter is not None and sorter._storage.device is not device:
        raise RuntimeError(f"{op}: sorter and boundary tensors should have same device type, "
                           f"but got sorter tensor device type {sorter._storage.device} and "
                           f"input value tensor device type {device}")
    dt = result_dtype((b, input))
    if scalar:
        v = alloc.empty((), dt, device)
        alloc.backend(device).copy.fill(v, input)
    else:
        v = input if input.dtype is dt else convert(input, dt, device)
    if b.dim() > 1 and (scalar or b._shape[:-1] != v._shape[:-1]):
        raise RuntimeError(f"{op}: boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, "
                           f"but we got boundaries tensor {list(b._shape)} and input value "
                           f"tensor {list(v._shape)}")
    if sorter is not None and sorter.dtype is not _long:
        raise RuntimeError(f"{op}: sorter must be a tensor of long dtype but got dtype "
                           f"{type_name(sorter.dtype)}")
    if sorter is not None and sorter._shape != b._shape:
        raise RuntimeError(f"{op}: boundary and sorter must have the same size, but got "
                           f"boundary tensor {list(b._shape)}and got sorter tensor "
                           f"{list(sorter._shape)}")
    if sorter is not None and sorter.numel():
        _check_sorter(op, sorter, b._shape[-1])
    if b.dtype is not dt:
        b = convert(b, dt, device)
    res = alloc.empty(v._shape, _dtype.int32 if out_int32 else _long, device)
    if res.numel():
        nd = v.dim()
        last = nd - 1 if nd else 0
        outer = v._shape[:-1]
        nv = v._shape[-1] if nd else 1
        if b.dim() == 1:
            bl = ((0,) * len(outer), b._stride[0])
            sl = ((0,) * len(outer), sorter._stride[0]) if sorter is not None else bl
        else:
            bl = _layout(b, b.dim() - 1)
            sl = _layout(sorter, b.dim() - 1) if sorter is not None else bl
        alloc.backend(device).sort.searchsorted(
            outer, b._shape[-1], nv, builtins.bool(right), b, bl, sorter, sl, v,
            _layout(v, last), res, _layout(res, last))
    return _finish("searchsorted", res, out)


def _check_sorter(op, sorter, n):
    """Raises unless every sorter value indexes the boundaries' last dim of size n: the
    kernels read the boundaries through it."""
    flat = reshape(contiguous(sorter), (-1,))
    lo, hi = alloc.backend(sorter._storage.device).sort.int_range(flat)
    if lo < 0 or hi >= n:
        raise RuntimeError(f"{op}: sorter index out of range")


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The index of the bucket of each element of ``input`` for the 1-d sorted
    ``boundaries`` (``searchsorted(boundaries, input)``)."""
    _check_tensor("bucketize", boundaries, "boundaries")
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)
