"""Advanced indexing (``t[idx]`` and ``t[idx] = v`` with tensors, lists and bool masks),
index_put, and the index ops along one dim: index_select, index_add, index_copy,
index_fill, take and put.

How an index is applied (PyTorch's rules): ints, slices, None and Python bools are applied
first as a view ``r``; every tensor index is then an int64 tensor on one dim of ``r`` (a
k-dim bool mask becomes k of them through nonzero). The index tensors broadcast together
to a shape B. If the indexed dims are adjacent, B takes their place in the result;
otherwise B goes first. The kernel sees element offsets: ``off[p] = sum_k index_k[p] *
r.stride(dim_k)`` (bounds-checked in C++), so each result element is
``r[base(o) + off[p]]`` with o over the non-indexed dims of r.
"""
import builtins
import warnings

import numpy as np

from .. import _determinism, _dtype
from .._tensor import Tensor, _wrap_dim
from .._float8_ops import refuse
from . import alloc, views
from .args import check_range, same_device, scalar, to_int
from .indexing import slice_params
from .overlap import check_internal
from .pointwise import require_tensor, broadcast_shapes, expand_strides, type_name

_int64 = _dtype.int64
_int_index_dtypes = (_dtype.int64, _dtype.int32)
_select_dtypes = (_dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)
_mask_dtypes = (_dtype.bool, _dtype.uint8)


_backends = {}


def _kernels(t):
    """The index kernels of t's device (looked up once per device type)."""
    kind = t._storage.device.type
    k = _backends.get(kind)
    if k is None:
        k = _backends[kind] = alloc.backend(t._storage.device).index
    return k


def _as_long(t):
    """An int64 version of an integer index tensor (no copy when it already is)."""
    if t.dtype is _int64:
        return t
    out = alloc.empty(t._shape, _int64, t._storage.device)
    alloc.backend(t._storage.device).copy.copy(out, t, t._stride)
    return out


def _to_tensor(obj, device):
    """A list / tuple / range / NumPy array index as a tensor (int64 for ints, bool for
    bools)."""
    from .creation import tensor
    if isinstance(obj, (np.ndarray, range)):
        obj = list(obj) if isinstance(obj, range) else obj.tolist()
    if isinstance(obj, (list, tuple)) and len(obj) == 0:
        return alloc.empty((0,), _int64, device)
    t = tensor(obj, device=device)
    if t.dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return t


def nonzero_tensor(x):
    """(n, x.dim()) int64 coordinates of the nonzero elements of x, row-major."""
    k = _kernels(x)
    n = k.nonzero_count(x)
    out = alloc.empty((n, x.dim()), _int64, x._storage.device)
    if n:
        k.nonzero(x, out)
    return out


def _mask_indices(mask):
    """The int64 index tensors (one per dim, views of one nonzero result) of a bool mask."""
    if mask.dtype is _dtype.uint8:
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning)
    nz = nonzero_tensor(mask)
    n, k = nz._shape
    return [views._view(nz, (n,), (k,), nz._offset + j) for j in range(k)]


def _is_int(i):
    return isinstance(i, (builtins.int, np.integer)) and \
        not isinstance(i, (builtins.bool, np.bool_))


def _index_on(i, device, put):
    """Index tensor ``i`` on ``device``. As PyTorch: reading takes indices on the cpu or on
    the indexed tensor's device (``cuda_t[cpu_idx]``), writing (index_put_) moves any."""
    if not put and i._storage.device.type != "cpu":
        raise RuntimeError(f"indices should be either on cpu or on the same device as the "
                           f"indexed tensor ({device})")
    from .pointwise import convert
    return convert(i, i.dtype, device)


def _prepare(t, index, kinds=None, put=False):
    """Applies the basic part of ``index`` (ints, slices, None, bools) as a view ``r`` and
    returns (r, {dim of r: int64 index tensor}). ``index`` has Ellipsis expanded. ``kinds``
    (a list) receives "mask" or "long" for each tensor index, in order; ``put``: the
    index is written through (index tensors on any device are moved to t's)."""
    if kinds is None:
        kinds = []
    if not isinstance(index, tuple):
        index = (index,)
    device = t._storage.device
    shape, stride, off = [], [], t._offset
    adv = {}
    masks = []          # (dim of r, mask) checked once r is complete
    d = 0               # next dim of t
    for i in index:
        if isinstance(i, (list, tuple, range, np.ndarray)):
            i = _to_tensor(i, device)
        elif isinstance(i, Tensor) and i._storage.device is not device:
            i = _index_on(i, device, put)
        if isinstance(i, Tensor) and i.dim() == 0 and i.dtype in _select_dtypes:
            i = builtins.int(i.item())
        if isinstance(i, Tensor) and i.dim() == 0 and i.dtype in _mask_dtypes:
            i = builtins.bool(i.item())
        if i is None:
            shape.append(1)
            stride.append(1)
        elif isinstance(i, (builtins.bool, np.bool_)):
            shape.append(1)
            stride.append(1)
            adv[len(shape) - 1] = _bool_index(builtins.bool(i), device)
            kinds.append("long")
        elif _is_int(i):
            if d >= t.dim():
                raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
            size, i = t._shape[d], builtins.int(i)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {len(shape)} "
                                 f"with size {size}")
            off += (i + size if i < 0 else i) * t._stride[d]
            d += 1
        elif isinstance(i, slice):
            if d >= t.dim():
                raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
            start, n, st = slice_params(i, t._shape[d], t._stride[d])
            off += start
            shape.append(n)
            stride.append(st)
            d += 1
        elif isinstance(i, Tensor):
            if i.dtype in _mask_dtypes:
                k = i.dim()
                if d + k > t.dim():
                    raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
                masks.append((len(shape), i))
                kinds.append("mask")
                shape.extend(t._shape[d:d + k])
                stride.extend(t._stride[d:d + k])
                d += k
            elif i.dtype in _int_index_dtypes:
                if d >= t.dim():
                    raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
                adv[len(shape)] = _as_long(i)
                kinds.append("long")
                shape.append(t._shape[d])
                stride.append(t._stride[d])
                d += 1
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
        elif isinstance(i, str):    # PyTorch tries it as the data of an index tensor
            raise TypeError("new(): invalid data type 'str'")
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             "byte Variables are valid indices (got "
                             f"{type(i).__name__})")
    shape.extend(t._shape[d:])
    stride.extend(t._stride[d:])
    r = views._view(t, shape, stride, off)
    for pos, mask in masks:
        for j, n in enumerate(mask._shape):
            if shape[pos + j] != n:
                raise IndexError(f"The shape of the mask {list(mask._shape)} at index {j} does "
                                 f"not match the shape of the indexed tensor {list(shape)} at "
                                 f"index {pos + j}")
        for j, idx in enumerate(_mask_indices(mask)):
            adv[pos + j] = idx
    return r, adv


def _bool_index(value, device):
    t = alloc.empty((1 if value else 0,), _int64, device)
    if value:
        alloc.backend(device).copy.fill(t, 0)
    return t


class _Plan:
    """Where an advanced index reads/writes: r, offsets over B, and the result layout."""
    __slots__ = ("r", "outer", "B", "offsets", "out_shape", "pos")


def _plan(r, adv, style=None, prefix="", allow_negative=True):
    dims = sorted(adv)
    tensors = [adv[d] for d in dims]
    try:
        B = tensors[0]._shape if len(tensors) == 1 else \
            broadcast_shapes(*(x._shape for x in tensors))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(x._shape)) for x in tensors)) from None
    k = _kernels(r)
    offsets = alloc.empty(B, _int64, r._storage.device)
    if offsets.numel():
        k.index_offsets(offsets, B, [(x, expand_strides(x, B)) for x in tensors],
                        [r._shape[d] for d in dims], [r._stride[d] for d in dims], dims,
                        allow_negative, k.STYLE_DIM if style is None else style, prefix)
    p = _Plan()
    p.r, p.B, p.offsets = r, B, offsets
    p.outer = [d for d in range(r.dim()) if d not in adv]
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    p.pos = dims[0] if adjacent else 0
    rest = [r._shape[d] for d in p.outer]
    p.out_shape = tuple(rest[:p.pos]) + B + tuple(rest[p.pos:])
    return p


def _split_strides(plan, strides):
    """(outer strides, strides over B) of a tensor laid out like the result."""
    nb = len(plan.B)
    outer = tuple(strides[:plan.pos]) + tuple(strides[plan.pos + nb:])
    return outer, tuple(strides[plan.pos:plan.pos + nb])


def _even_step(shape, strides):
    """The one stride between consecutive row-major positions of ``shape`` when there is
    one (dims of size 1 ignored), else None."""
    step = None
    inner = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if step is None:
            step = st
        elif st != step * inner:
            return None
        inner *= n
    return 0 if step is None else step


def _run(plan, mode, y, y_strides, alpha=1):
    """Runs the index kernel between plan.r (indexed) and y (laid out like the result)."""
    r = plan.r
    k = _kernels(r)
    y_outer, y_b = _split_strides(plan, y_strides)
    y_off = _even_step(plan.B, y_b)
    if y_off is None:
        y_off = alloc.empty(plan.B, _int64, r._storage.device)
        k.linear_offsets(y_off, plan.B, y_b)
    if r.dtype.is_complex:
        return _run_complex(plan, mode, y, y_outer, y_off, alpha)
    k.index_loop(mode, r, [r._stride[d] for d in plan.outer], plan.offsets, y, y_outer, y_off,
                 [r._shape[d] for d in plan.outer], alpha)


def _run_complex(plan, mode, y, y_outer, y_off, alpha):
    """_run on the real views of complex tensors (complex_views.as_real): offsets and
    strides counted in parts, the (real, imag) pair one more outer dim."""
    from .complex_views import as_real
    from .pointwise import binary
    if isinstance(alpha, complex):
        raise NotImplementedError("index_add with a complex alpha is not supported")
    r = plan.r
    twice = [2 * s for s in (r._stride[d] for d in plan.outer)]
    y_off = 2 * y_off if isinstance(y_off, int) else binary("index", "mul", y_off, 2, None,
                                                            "default")
    _kernels(r).index_loop(mode, as_real(r), twice + [1],
                           binary("index", "mul", plan.offsets, 2, None, "default"),
                           as_real(y), [2 * s for s in y_outer] + [1], y_off,
                           [r._shape[d] for d in plan.outer] + [2], alpha)


def _gather(plan, out=None):
    if out is None:
        out = alloc.empty(plan.out_shape, plan.r.dtype, plan.r._storage.device)
    if out.numel():
        _run(plan, _kernels(out).GATHER, out, out._stride)
    return out


def _leading_mask(t, index):
    """The bool mask of an index made of one mask over t's leading dims followed by full
    slices (``t[mask]``, ``t[mask, ...]``), else None. These take the masked kernels."""
    if not index or not isinstance(index[0], Tensor) or index[0].dtype is not _dtype.bool:
        return None
    m = index[0]
    if m.dim() == 0 or m._shape != t._shape[:m.dim()] or m._storage.device is not \
            t._storage.device:
        return None
    for i in index[1:]:
        if not (isinstance(i, slice) and i == _full):
            return None
    return m


_full = slice(None)


def masked_select_values(x, x_strides, mask, mask_strides, shape):
    """The 1-d tensor of x's elements where mask, both given at ``shape`` by strides."""
    k = _kernels(x)
    n = k.mask_count(mask, mask_strides, shape)
    out = alloc.empty((n,), x.dtype, x._storage.device)
    if n:
        k.masked_select(out, x, x_strides, mask, mask_strides, shape)
    return out


def getitem(t, index):
    """``t[index]`` for an index with tensors, lists or bools (a copy, PyTorch's layout)."""
    if index.__class__ is Tensor:    # t[idx] with an integer idx (indexing.getitem checked)
        return _gather(_plan(t, {0: _as_long(index)}))
    m = _leading_mask(t, index)
    if m is not None and m.dim() == t.dim():
        return masked_select_values(t, t._stride, m, m._stride, t._shape)
    r, adv = _prepare(t, index)
    if not adv:
        return r
    return _gather(_plan(r, adv))


def _value_strides(op, value, shape):
    """Strides of ``value`` broadcast to ``shape`` (leading 1s of value dropped first)."""
    vshape, vstride = value._shape, value._stride
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape, vstride = vshape[1:], vstride[1:]
    ok = len(vshape) <= len(shape)
    if ok:
        try:
            ok = broadcast_shapes(vshape, shape) == tuple(shape)
        except RuntimeError:
            ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value._shape)} cannot "
                           f"be broadcast to indexing result of shape {list(shape)}")
    v = Tensor._make(value._storage, vshape, vstride, value._offset, value.dtype)
    return expand_strides(v, tuple(shape))


def _put(plan, value, accumulate, op="index_put_", alpha=1):
    """Writes ``value`` (a tensor of r's dtype, broadcastable to the result) through plan."""
    r = plan.r
    strides = _value_strides(op, value, plan.out_shape)
    if value._storage.device is not r._storage.device:     # after the shape check, as PyTorch
        same_device(op, r, value)
    if not alloc.numel(plan.out_shape):
        return
    if value._storage is r._storage:
        value = views.clone(value)
        strides = _value_strides(op, value, plan.out_shape)
    k = _kernels(r)
    _run(plan, k.ACCUMULATE if accumulate else k.PUT, value, strides, alpha)


def _value_tensor(t, value):
    """A Python number as a 0-d tensor of t's dtype and device."""
    out = alloc.empty((), t.dtype, t._storage.device)
    alloc.backend(t._storage.device).copy.fill(out, value)
    return out


def _index_put(t, index, value, accumulate):
    """PyTorch's index_put_: a tensor value must have t's dtype, except that a one-element
    value with a single bool mask index is a masked fill (and converts)."""
    if not accumulate and (not isinstance(value, Tensor) or value.numel() == 1):
        m = _leading_mask(t, index)
        if m is not None:   # PyTorch turns this into masked_fill_ too
            if t.dtype.is_float8:
                raise refuse("masked_fill", t.dtype, t._storage.device.type)
            if isinstance(value, Tensor):
                value = value.item()
            t._storage.version += 1
            _kernels(t).masked_fill(t, m, m._stride + (0,) * (t.dim() - m.dim()), value)
            return
    kinds = []
    r, adv = _prepare(t, index, kinds, put=True)
    t._storage.version += 1
    if not adv:     # only ints, slices, None: a copy into the view (converts)
        if accumulate:
            from .pointwise import add
            add(r, value, out=r)
        elif isinstance(value, Tensor):
            views.copy_(r, value)
        else:
            views.assign_(r, value)
        return
    if isinstance(value, Tensor) and value.dtype is not t.dtype:
        if not accumulate and kinds == ["mask"] and value.numel() == 1:
            value = value.item()
        else:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {type_name(t.dtype)} for the destination and "
                               f"{type_name(value.dtype)} for the source.")
    if not isinstance(value, Tensor):
        value = _value_tensor(t, value)
    elif value._storage.device is not t._storage.device and not value.dim():
        from .pointwise import convert      # a 0-d value may be on another device
        value = convert(value, t.dtype, t._storage.device)
    _put(_plan(r, adv), value, accumulate)


def setitem(t, index, value):
    """``t[index] = value`` (numbers convert to t's dtype, tensors follow index_put_)."""
    _index_put(t, index, value, False)


def setitem_bool(t, flag, value):
    """``t[True] = v`` copies (and converts) v into t with a new leading dim;
    ``t[False] = v`` does nothing, as in PyTorch."""
    if not flag:
        return
    if isinstance(value, Tensor):
        views.copy_(views.unsqueeze(t, 0), value)
    else:
        views.assign_(t, value)


# ---- index_put ------------------------------------------------------------------------

def _put_index(input, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    if len(indices) > input.dim() and not (input.dim() == 0 and len(indices) == 1):
        raise IndexError(f"too many indices for tensor of dimension {input.dim()} (got "
                         f"{len(indices)})")
    return tuple(slice(None) if i is None else i for i in indices)


def index_put_(input, indices, values, accumulate=False):
    """Puts ``values`` into ``input`` at ``indices`` (a tuple of index tensors, None for a
    full dim); with accumulate=True duplicate indices all add up."""
    require_tensor("index_put", values, "values")
    _index_put(input, _put_index(input, indices), values, accumulate)
    return input


def index_put(input, indices, values, accumulate=False):
    """Out-of-place index_put_."""
    return index_put_(views.clone(input), indices, values, accumulate)


# ---- ops along one dim ----------------------------------------------------------------

def _check_index_vector(op, index, err=IndexError, dtype_msg=None):
    require_tensor(op, index, "index")
    if index.dtype not in _int_index_dtypes:
        raise RuntimeError(dtype_msg or f"{op}(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise err(f"{op}(): Index is supposed to be a vector")


def _dim_plan(input, dim, index, style, prefix="", allow_negative=False):
    """The plan of ``input[(:,)*dim, index]`` for a vector (or 0-d) index; a 0-d input is
    treated as 1-d."""
    r = input if input.dim() else views._view(input, (1,), (1,), input._offset)
    d = _wrap_dim(dim, builtins.max(input.dim(), 1))
    idx = _as_long(index)
    if idx.dim() == 0:
        idx = views._view(idx, (1,), (1,), idx._offset)
    return _plan(r, {d: idx}, style, prefix, allow_negative), d


def index_select(input, dim, index, *, out=None):
    """Selects the entries of ``input`` along ``dim`` at ``index`` (a 1-d int tensor)."""
    _check_index_vector("index_select", index)
    if dim.__class__ is not builtins.int:   # a 0-d integer tensor is an int here
        dim = to_int("index_select", "dim", dim)
    if index._storage.device is not input._storage.device or out is not None:
        same_device("index_select", input, index, out)
    k = _kernels(input)
    # PyTorch's CPU kernel has its own path (and error) along dim 1
    nd = len(input._shape)
    style = k.STYLE_DATA if nd > 1 and (dim == 1 or dim == 1 - nd) else k.STYLE_SELF
    plan, _ = _dim_plan(input, dim, index, style)
    shape = plan.out_shape if input.dim() else ()
    if out is not None:
        from .pointwise import check_out
        if out.dtype is not input.dtype:
            raise RuntimeError(f"index_select(): self and result must have the same scalar "
                               f"type. Got self: {type_name(input.dtype)} and result: "
                               f"{type_name(out.dtype)}")
        if out._storage is input._storage or out._storage is index._storage:
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")
        check_out("index_select", out, shape, input.dtype, False)
        if out.is_contiguous():
            _gather(plan, Tensor._make(out._storage, plan.out_shape, out._stride or (1,),
                                       out._offset, out.dtype))
            return out
        res = _gather(plan)
        if not shape:
            res = views._view(res, (), (), res._offset)
        return views.copy_(out, res)
    res = _gather(plan)
    return res if input.dim() else views._view(res, (), (), res._offset)


def _check_source(op, input, dim, index, source):
    dev = input._storage.device
    if index._storage.device is not dev or source._storage.device is not dev:
        same_device(op, input, index, source)
    d = _wrap_dim(dim, builtins.max(input.dim(), 1))
    n = index.numel()
    ok = source.dim() == input.dim() and all(
        source._shape[i] == input._shape[i] for i in range(input.dim()) if i != d)
    if not ok:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input._shape)} "
                           f"source.shape = {list(source._shape)}")
    sn = source._shape[d] if source.dim() else 1
    if sn != n and op == "index_add_":
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({sn}), for dim: {dim}")
    if sn != n:
        raise IndexError(f"{op}(): Number of indices ({n}) should be equal to source.size(dim) "
                         f"({sn})")


def _target(op, input, out):
    """The tensor an index op writes into: out (checked; the caller fills it with input
    once the indices are checked) or a clone of input."""
    if out is None:
        return views.clone(input)
    from .pointwise import check_out
    check_out(op, out, input._shape, input.dtype, False)
    return out


def _fill_target(out, input):
    """Copies input into an out= target, once the indices passed their checks."""
    if out is not None and out is not input:
        views.copy_(out, input)


def _source_as_result(plan, source):
    """source viewed in the result layout of plan (a 0-d source becomes 1 element)."""
    if source.dim() == 0:
        return views._view(source, (1,) * len(plan.out_shape), (0,) * len(plan.out_shape),
                           source._offset)
    return source


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """input with ``alpha * source`` added at ``index`` along ``dim`` (duplicates add up)."""
    _check_index_vector("index_add", index, dtype_msg=f"index_add_(): Expected dtype "
                        f"int32/int64 for index but got: {type_name(index.dtype)}")
    dim = to_int("index_add", "dim", dim)
    require_tensor("index_add", source, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({type_name(input.dtype)}) and source "
                           f"({type_name(source.dtype)}) must have the same scalar type")
    _check_source("index_add_", input, dim, index, source)
    if isinstance(alpha, builtins.float) and input.dtype.category < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    res = _target("index_add", input, out)
    k = _kernels(res)
    d = _wrap_dim(dim, builtins.max(input.dim(), 1))
    # PyTorch's CPU kernel takes its scatter_add path, whose error is a RuntimeError naming
    # the dim, for int64 indices along the first or last of several dims with alpha 1
    runtime = input.dim() > 1 and d in (0, input.dim() - 1) and index.dtype is _int64 and \
        alpha == 1
    plan, _ = _dim_plan(res, dim, index, k.STYLE_RUNTIME if runtime else k.STYLE_SELF)
    _fill_target(out, input)
    _put(plan, _source_as_result(plan, source), True, "index_add_", alpha)
    return res


def index_copy(input, dim, index, source, *, out=None):
    """input with the slices of ``source`` copied to positions ``index`` along ``dim``."""
    _check_long("index_copy_", index)
    _check_index_vector("index_copy_", index)
    dim = to_int("index_copy", "dim", dim)
    require_tensor("index_copy", source, "source")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {type_name(input.dtype)} and (source) "
                           f"{type_name(source.dtype)}")
    _check_source("index_copy_", input, dim, index, source)
    res = _target("index_copy", input, out)
    k = _kernels(res)
    plan, _ = _dim_plan(res, dim, index, k.STYLE_PREFIX, "index_copy_(): ")
    _fill_target(out, input)
    _put(plan, _source_as_result(plan, source), False, "index_copy_")
    return res


def index_fill_(input, dim, index, value):
    """Fills the entries of ``input`` at ``index`` along ``dim`` with ``value``."""
    require_tensor("index_fill_", index, "index")
    dim = to_int("index_fill_", "dim", dim)
    if index.dtype is not _int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index._storage.device is not input._storage.device:
        same_device("index_fill_", input, index)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
    value = check_range(scalar("index_fill_", "value", value), input.dtype)
    input._storage.version += 1
    if index.numel() == 0 or input.numel() == 0:
        return input
    plan, _ = _dim_plan(input, dim, index, _kernels(input).STYLE_DIM, allow_negative=True)
    _put(plan, _value_tensor(input, value), False, "index_fill_")
    return input


def index_fill(input, dim, index, value):
    """Out-of-place index_fill_."""
    return index_fill_(views.clone(input), dim, index, value)


def _take_plan(input, index):
    """The plan of input viewed as 1-d (any layout, no copy) indexed by ``index``."""
    p = _Plan()
    p.r, p.B, p.outer, p.pos = input, index._shape, [], 0
    p.out_shape = index._shape
    p.offsets = alloc.empty(index._shape, _int64, input._storage.device)
    if index.numel():
        if input.numel() == 0:
            raise IndexError("take(): tried to take from an empty tensor")
        _kernels(input).take_offsets(p.offsets, index, input)
    return p


def _check_long(op, index):
    require_tensor(op, index, "index")
    if index.dtype is not _int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got "
                           f"{type_name(index.dtype)}")


def take(input, index, *, out=None):
    """input viewed as 1-d, read at ``index``; the result has index's shape."""
    _check_long("take", index)
    if index._storage.device is not input._storage.device or out is not None:
        same_device("take", input, index, out)
    plan = _take_plan(input, index)
    if out is None:
        return _gather(plan)
    from .pointwise import check_out
    check_out("take", out, index._shape, input.dtype, False)
    if out.is_contiguous() and out.dtype is input.dtype:
        return _gather(plan, out)
    views.copy_(out, _gather(plan))
    return out


def put_(input, index, source, accumulate=False):
    """Writes ``source`` into input viewed as 1-d at ``index`` (accumulate adds up)."""
    _check_long("put_", index)
    require_tensor("put_", source, "source")
    dev = input._storage.device
    if index._storage.device is not dev or source._storage.device is not dev:
        same_device("put_", input, index, source)
    if 0 in input._stride:      # the only cheap sign of elements sharing memory
        check_internal(input)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {type_name(input.dtype)} and source.dtype = "
                           f"{type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    if not accumulate:
        _determinism.alert_not_deterministic("put_")
    input._storage.version += 1
    if index.numel() == 0:
        return input
    if input.numel() == 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    plan = _take_plan(input, index)
    _put(plan, views.contiguous(source).reshape(index._shape), accumulate, "put_")
    return input


def put(input, index, source, accumulate=False):
    """Out-of-place put_."""
    return put_(views.clone(input), index, source, accumulate)
