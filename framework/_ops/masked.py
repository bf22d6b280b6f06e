"""Masked ops (masked_fill, masked_select, masked_scatter), nonzero / argwhere / the
one-argument where, and the triangle ops (tril, triu, tril_indices, triu_indices)."""
from .. import _dtype
from .._tensor import Tensor
from .._float8_ops import refuse
from . import alloc, views
from . import index as _index
from .args import check_range, invalid_combination, same_device, scalar, to_int
from .overlap import check_internal
from .pointwise import require_tensor, broadcast_shapes, check_out, expand_strides, type_name

_bool = _dtype.bool
# the C++ type names PyTorch prints for a non-bool mask
_CPP_NAMES = {_dtype.bool: "bool", _dtype.uint8: "unsigned char", _dtype.int8: "signed char",
              _dtype.int16: "short int", _dtype.int32: "int", _dtype.int64: "long int",
              _dtype.float16: "c10::Half", _dtype.bfloat16: "c10::BFloat16",
              _dtype.float32: "float", _dtype.float64: "double"}


def _kernels(t):
    return alloc.backend(t._storage.device).index


def _check_tensor(op, name, x):
    require_tensor(op, x, name)


# ---- masked_fill --------------------------------------------------------------------------

def _fill_value(op, input, mask, value):
    """value as a number that fits input's dtype; a 0-d value tensor may be on the cpu for
    a cuda input."""
    if not isinstance(value, Tensor):
        try:
            value = scalar(op, "value", value)
        except TypeError:
            raise invalid_combination(op, (mask, value), ("Tensor mask, Tensor value",
                                                          "Tensor mask, Number value")) from None
        return check_range(value, input.dtype)
    if value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.dim()} dimension(s).")
    if value._storage.device is not input._storage.device and \
            input._storage.device.type == "cpu":
        raise RuntimeError("masked_fill_: Expected inputs to be on same device")
    return check_range(value.item(), input.dtype)


def masked_fill_(input, mask, value):
    """Fills the elements of input where ``mask`` (bool, broadcastable) is True."""
    _check_tensor("masked_fill_", "mask", mask)
    if mask.dtype is not _bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_NAMES[mask.dtype]}")
    if mask._storage.device is not input._storage.device:
        raise RuntimeError(f"expected self and mask to be on the same device, but got mask on "
                           f"{mask._storage.device} and self on {input._storage.device}")
    value = _fill_value("masked_fill_", input, mask, value)
    shape = broadcast_shapes(input._shape, mask._shape)
    if shape != input._shape:
        raise RuntimeError(f"output with shape {list(input._shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    if input.dtype.is_float8:   # PyTorch's masked_fill kernels have no float8 case
        raise refuse("masked_fill", input.dtype, input._storage.device.type)
    input._storage.version += 1
    if input.numel():
        strides = expand_strides(mask, input._shape)
        if input.dtype.is_complex:      # each part a real fill (complex_views.part)
            from .complex_views import part
            value = complex(value)
            for k, v in enumerate((value.real, value.imag)):
                _kernels(input).masked_fill(part(input, k), mask, strides, v)
            return input
        _kernels(input).masked_fill(input, mask, strides, value)
    return input


def masked_fill(input, mask, value):
    """A copy of input with ``value`` where ``mask`` is True (both broadcast)."""
    _check_tensor("masked_fill", "mask", mask)
    value = _fill_value("masked_fill", input, mask, value)
    shape = broadcast_shapes(mask._shape, input._shape)   # PyTorch's order (mask is "a")
    res = views.clone(views.expand(input, shape))
    return masked_fill_(res, mask, value)


# ---- masked_select / masked_scatter ------------------------------------------------------

def masked_select(input, mask, *, out=None):
    """The 1-d tensor of input's elements where ``mask`` is True (both broadcast)."""
    _check_tensor("masked_select", "mask", mask)
    if mask.dtype is not _bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(mask._shape, input._shape)   # PyTorch's order (mask is "a")
    if mask._storage.device is not input._storage.device or out is not None:
        same_device("masked_select", input, mask, out)
    if input._storage.device.type == "meta":   # the result's size depends on data
        raise alloc.meta_unsupported("aten::masked_select")
    res = _index.masked_select_values(input, expand_strides(input, shape), mask,
                                      expand_strides(mask, shape), shape)
    if out is None:
        return res
    check_out("masked_select", out, res._shape, res.dtype, False)
    return views.copy_(out, res)


def masked_scatter_(input, mask, source):
    """Copies the first elements of ``source`` (row-major) into input where ``mask`` is
    True."""
    _check_tensor("masked_scatter_", "mask", mask)
    _check_tensor("masked_scatter_", "source", source)
    if mask.dtype is not _bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {type_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{type_name(input.dtype)} and {type_name(source.dtype)}")
    if input.dtype.is_float8:   # PyTorch's masked_scatter kernels have no float8 case
        raise refuse("masked_scatter", input.dtype, input._storage.device.type)
    dev = input._storage.device
    if mask._storage.device is not dev or source._storage.device is not dev:
        same_device("masked_scatter_", input, mask, source)
    if 0 in input._stride:      # the only cheap sign of elements sharing memory
        check_internal(input)
    shape = broadcast_shapes(input._shape, mask._shape)
    if shape != input._shape:
        raise RuntimeError(f"output with shape {list(input._shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    input._storage.version += 1
    x = input if input.dim() else views._view(input, (1,), (1,), input._offset)
    m = views.expand(mask, input._shape)
    if not input.dim():
        m = views._view(m, (1,), (1,), m._offset)
    r, adv = _index._prepare(x, (m,))
    plan = _index._plan(r, adv)
    n = plan.B[0]
    if source.numel() < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if n:
        src = views.contiguous(source)
        flat = views._view(src, (n,), (1,), src._offset)
        _index._put(plan, flat, False, "masked_scatter_")
    return input


def masked_scatter(input, mask, source):
    """Out-of-place masked_scatter_ (input and mask broadcast)."""
    _check_tensor("masked_scatter", "mask", mask)
    shape = broadcast_shapes(mask._shape, input._shape)   # PyTorch's order (mask is "a")
    return masked_scatter_(views.clone(views.expand(input, shape)), mask, source)


# ---- nonzero ----------------------------------------------------------------------------

def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the nonzero elements: an (n, input.dim()) int64 tensor, or with
    as_tuple=True one 1-d tensor per dim (a 0-d input counts as 1-d there)."""
    _check_tensor("nonzero", "input", input)
    if as_tuple:
        x = input if input.dim() else views._view(input, (1,), (1,), input._offset)
        nz = _index.nonzero_tensor(x)
        return tuple(views._view(nz, (nz._shape[0],), (nz._shape[1],), nz._offset + j)
                     for j in range(nz._shape[1]))
    res = _index.nonzero_tensor(input)
    if out is None:
        return res
    check_out("nonzero", out, res._shape, res.dtype, False)
    return views.copy_(out, res)


def argwhere(input):
    """Indices of the nonzero elements as an (n, input.dim()) tensor."""
    return nonzero(input)


def where_condition(condition):
    """``torch.where(condition)``: the same as nonzero(condition, as_tuple=True)."""
    return nonzero(condition, as_tuple=True)


# ---- triangles ---------------------------------------------------------------------------

def _tri(op, input, diagonal, out, upper):
    _check_tensor(op, "input", input)
    if input.dim() < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    if out is None:
        res = alloc.empty(input._shape, input.dtype, input._storage.device)
    else:
        res = check_out(op, out, input._shape, input.dtype, out is input)
        if res.dtype is not input.dtype:
            tmp = _tri(op, input, diagonal, None, upper)
            return views.copy_(res, tmp)
        if res is not input and res._storage is input._storage:
            input = views.clone(input)
    if res.numel():
        _kernels(input).tri(res, input, int(diagonal), upper)
    return res


def tril(input, diagonal=0, *, out=None):
    """The lower triangle of the last two dims (elements with col - row <= diagonal)."""
    return _tri("tril", input, diagonal, out, False)


def triu(input, diagonal=0, *, out=None):
    """The upper triangle of the last two dims (elements with col - row >= diagonal)."""
    return _tri("triu", input, diagonal, out, True)


def tril_(self, diagonal=0):
    return _tri("tril", self, diagonal, self, False)


def triu_(self, diagonal=0):
    return _tri("triu", self, diagonal, self, True)


def _tri_indices(op, row, col, offset, dtype, device, upper):
    row, col = to_int(op, "row", row, 1), to_int(op, "col", col, 2)
    offset = to_int(op, "offset", offset, 3)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = _dtype.int64 if dtype is None else alloc.resolve_dtype(dtype)
    if dtype not in (_dtype.int64, _dtype.int32):
        raise NotImplementedError(f"\"{op}\" not implemented for '{type_name(dtype)}'")
    device = alloc.resolve_device(device)
    k = alloc.backend(device).index
    n = k.tri_indices_count(row, col, offset, upper)
    res = alloc.empty((2, n), _dtype.int64, device)
    if n:
        k.tri_indices(res, row, col, offset, upper)
    if dtype is not _dtype.int64:
        from .pointwise import convert
        res = convert(res, dtype, device)
    return res


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, n) coordinates of the lower triangle of a row x col matrix, row-major."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, n) coordinates of the upper triangle of a row x col matrix, row-major."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, True)
