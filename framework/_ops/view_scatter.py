"""The out-of-place inverses of views: slice_scatter, select_scatter, diagonal_scatter and
as_strided_scatter (a copy of ``input`` with ``src`` written into one view of it; their
gradients are formulas in ops.yaml), and index_reduce (over scatter_reduce)."""
import warnings

import framework as fw

from .. import _dtype
from .._tensor import _wrap_dim
from .pointwise import require_tensor, type_name


def _check_src(view, src):
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(view.shape)}")


def slice_key(nd, dim, start, end, step):
    """The indexing key of ``t[..., start:end:step, ...]`` at ``dim``."""
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = [slice(None)] * nd
    key[dim] = slice(start, end, step)
    return tuple(key)


def _scatter_into(op, input, src, view_of):
    require_tensor(op, input, "input")
    require_tensor(op, src, "src")
    res = input.clone()
    view = view_of(res)
    _check_src(view, src)
    view.copy_(src)
    return res


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written into ``input[..., start:end:step, ...]``."""
    require_tensor("slice_scatter", input, "input")
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, max(input.dim(), 1), "slice_scatter")
    key = slice_key(input.dim(), d, start, end, step)
    return _scatter_into("slice_scatter", input, src, lambda t: t[key])


def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written into ``input.select(dim, index)``."""
    return _scatter_into("select_scatter", input, src, lambda t: t.select(dim, index))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written into ``input.diagonal(offset, dim1,
    dim2)``."""
    return _scatter_into("diagonal_scatter", input, src,
                         lambda t: t.diagonal(offset, dim1, dim2))


def _order(t):
    """The permutation that sorts ``t``'s dims by decreasing stride (its memory order)."""
    return sorted(range(t.dim()), key=lambda i: (-t.stride(i), i))


def dense_like(t, ref):
    """A new dense tensor with ``t``'s values laid out in memory like ``ref`` (PyTorch's
    clone keeps a dense input's strides, and as_strided reads them)."""
    perm = _order(ref)
    inv = sorted(range(len(perm)), key=lambda i: perm[i])
    return t.permute(perm).clone(memory_format=fw.contiguous_format).permute(inv)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written into ``as_strided(size, stride,
    storage_offset)`` of that copy."""
    require_tensor("as_strided_scatter", input, "input")
    require_tensor("as_strided_scatter", src, "src")
    res = dense_like(input, input)
    view = res.as_strided(size, stride, 0 if storage_offset is None else storage_offset)
    _check_src(view, src)
    view.copy_(src)
    return res


def as_strided_scatter_backward(grad, input, src, size, stride, storage_offset, for_src):
    g = dense_like(grad, input)
    off = 0 if storage_offset is None else storage_offset
    if for_src:
        return g.as_strided(size, stride, off).clone(memory_format=fw.contiguous_format)
    return as_strided_scatter(g, src.new_zeros(src.shape), size, stride, storage_offset)


_warned = []


def _index_reduce_args(input, dim, index, source, reduce):
    """(input as >= 1-d, dim, index expanded to source's shape, source as >= 1-d)."""
    require_tensor("index_reduce", input, "input")
    require_tensor("index_reduce", index, "index")
    require_tensor("index_reduce", source, "source")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if not _warned:
        _warned.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=2)
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {type_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    if index.dtype not in (_dtype.int32, _dtype.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{type_name(index.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({type_name(input.dtype)}) and source "
                           f"({type_name(source.dtype)}) must have the same scalar type")
    nd = max(input.dim(), 1)
    d = _wrap_dim(dim, nd, "index_reduce")
    x = input.reshape(1) if input.dim() == 0 else input
    s = source.reshape(1) if source.dim() == 0 else source
    if source.dim() != input.dim() or any(
            i != d and a != b for i, (a, b) in enumerate(zip(x.shape, s.shape))):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")
    if index.numel() != s.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be "
                           f"equal to source.size(dim): ({s.shape[d]}), for dim: {dim}")
    n = x.shape[d]
    if index.numel() and bool(((index < 0) | (index >= n)).any()):
        raise IndexError("index out of range in self")
    idx = index.to(_dtype.int64).reshape(-1)
    shape = [1] * s.dim()
    shape[d] = -1
    return x, d, idx.reshape(shape).expand(s.shape), s


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Reduces the slices of ``source`` into the slices of ``input`` named by ``index``
    along ``dim`` with ``reduce`` (prod, mean, amax or amin); ``include_self`` counts the
    values already in ``input``."""
    x, d, full, s = _index_reduce_args(input, dim, index, source, reduce)
    res = x.scatter_reduce(d, full, s, reduce, include_self=include_self)
    res = res.reshape(input.shape)
    if out is not None:
        from .composites import write_out
        return write_out("index_reduce", res, out)
    return res


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In-place :func:`index_reduce`."""
    x, d, full, s = _index_reduce_args(self, dim, index, source, reduce)
    x.scatter_reduce_(d, full, s, reduce, include_self=include_self)
    return self
