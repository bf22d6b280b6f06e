"""gather and the scatter family along one dim (scatter, scatter_add, scatter_reduce) and
take_along_dim.

gather: ``out[i][j][k] = input[i][index[i][j][k]][k]`` for dim=1; scatter writes the other
way, ``self[i][index[i][j][k]][k] op= src[i][j][k]``. The kernels loop over index's shape
with self's stride along dim set to 0 and add ``index * stride(dim)``; for scatter the dim
is moved innermost so that duplicate indices always fall on one thread.
"""
import builtins
import warnings

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from . import alloc, views
from .args import same_device, to_int
from .overlap import check_any, check_internal, check_partial
from .pointwise import require_tensor, check_out, type_name

_index_dtypes = (_dtype.int64, _dtype.int32)
_REDUCE_WARNED = []


def _nd(t):
    """PyTorch's ensure_nonempty: a 0-d tensor counts as 1-d in gather/scatter."""
    return builtins.max(t.dim(), 1)


def _shape1(t):
    return t._shape if t.dim() else (1,)


def _stride1(t):
    return t._stride if t.dim() else (1,)


def _kernels(t):
    return alloc.backend(t._storage.device).index


def _check_index(op, input, dim, index, src=None, out=None):
    """The wrapped dim; checks index's dtype and that input, index, src and out (None
    skipped) share a device."""
    require_tensor(op, index, "index")
    # PyTorch returns before checking the dtype of an empty index
    if index.dtype not in _index_dtypes and index.numel():
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    dev = input._storage.device     # inline tests: this is on every gather's path
    if index._storage.device is not dev or (src is not None and src._storage.device is not dev) \
            or (out is not None and out._storage.device is not dev):
        same_device(op, input, index, src, out)
    if dim.__class__ is not builtins.int:   # a 0-d integer tensor is an int here
        dim = to_int(op, "dim", dim)
    return _wrap_dim(dim, _nd(input))


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Values of ``input`` along ``dim`` at ``index``; the result has index's shape."""
    d = _check_index("gather", input, dim, index, None, out)
    if index.numel() and _nd(index) != _nd(input):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    ishape, sshape = _shape1(index), _shape1(input)
    if index.numel():
        for i in range(len(ishape)):
            if i != d and ishape[i] > sshape[i]:
                raise RuntimeError(f"Size does not match at dimension {i} expected index "
                                   f"{list(index._shape)} to be no larger than self "
                                   f"{list(input._shape)} apart from dimension {d}")
    if out is None:
        res = alloc.empty(index._shape, input.dtype, input._storage.device)
    else:
        _check_out_dtype(input, out)
        # PyTorch refuses an out that shares any memory with self, or part of it with index
        if 0 in out._stride:
            check_internal(out)
        check_any(out, input)
        check_partial(out, index)
        res = check_out("gather", out, index._shape, input.dtype, False)
    if not index.numel():
        return res
    sstride = list(_stride1(input))
    sd, size = sstride[d], sshape[d]
    sstride[d] = 0
    _kernels(input).gather(res, _stride1(res), input, sstride, index, _stride1(index), ishape, d,
                           sd, size)
    return res


def _scatter_checks(op, input, d, index, src):
    if index.numel() == 0:
        return
    if _nd(index) != _nd(input):
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    if src is not None and _nd(src) != _nd(input):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ishape, sshape = _shape1(index), _shape1(input)
    bad_self = any(ishape[i] > sshape[i] for i in range(len(ishape)) if i != d)
    bad_src = src is not None and any(ishape[i] > _shape1(src)[i] for i in range(len(ishape)))
    if bad_self or bad_src:
        msg = (f"Expected index {list(index._shape)} to be no larger than self "
               f"{list(input._shape)} apart from dimension {d}")
        if src is not None:
            msg += f" and to be no larger size than src {list(src._shape)}"
        raise RuntimeError(msg)


def _check_out_dtype(input, out):
    if out.dtype is not input.dtype:
        from .masked import _CPP_NAMES
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_NAMES[input.dtype]}, but "
                           f"got {_CPP_NAMES[out.dtype]} instead")


def _target(op, input, out):
    if out is None:
        return views.clone(input)
    require_tensor(op, out, "out")
    _check_out_dtype(input, out)
    check_out(op, out, input._shape, input.dtype, out is input)
    if out is not input:
        views.copy_(out, input)
    return out


def _scatter_kernel(reduce, res, d, index, src):
    """Runs the scatter kernel into ``res`` (dim ``d``) over index's shape; ``src`` is a
    tensor of res's dtype (a 0-d one is broadcast)."""
    if index.numel() == 0:
        return
    ishape = list(_shape1(index))
    nd = len(ishape)
    rstride = list(_stride1(res))
    sd, size = rstride[d], _shape1(res)[d]
    rstride[d] = 0
    istride = list(_stride1(index))
    sstride = list(_stride1(src)) if src.dim() else [0] * nd
    order = [i for i in range(nd) if i != d] + [d]   # dim innermost: no write races
    _kernels(res).scatter(reduce, res, [rstride[i] for i in order], index,
                          [istride[i] for i in order], src, [sstride[i] for i in order],
                          [ishape[i] for i in order], d, sd, size)


def _value_tensor(value, dtype, device):
    t = alloc.empty((), dtype, device)
    alloc.backend(device).copy.fill(t, value)
    return t


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """Writes ``src`` (a tensor, or a number ``value``) into a copy of input at ``index``
    along ``dim``; ``reduce='add'|'multiply'`` combines instead of overwriting."""
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    d = _check_index("scatter", input, dim, index, src, out)
    if src is not None and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if src is not None and not _REDUCE_WARNED:
            # PyTorch warns once per process (TORCH_WARN_ONCE)
            _REDUCE_WARNED.append(True)
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning)
    _scatter_checks("scatter", input, d, index, src)
    res = _target("scatter", input, out)
    if src is None:
        if isinstance(value, Tensor):
            value = value.item()
        src = _value_tensor(value, input.dtype, input._storage.device)
    elif src._storage is res._storage:
        src = views.clone(src)
    _scatter_kernel(reduce, res, d, index, src)
    return res


def scatter_add(input, dim, index, src, *, out=None):
    """Adds ``src`` into a copy of input at ``index`` along ``dim`` (duplicates add up)."""
    require_tensor("scatter_add", src, "src")
    d = _check_index("scatter_add", input, dim, index, src, out)
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _scatter_checks("scatter_add", input, d, index, src)
    res = _target("scatter_add", input, out)
    if src._storage is res._storage:
        src = views.clone(src)
    _scatter_kernel("add", res, d, index, src)
    return res


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype is _dtype.bool:
        return reduce == "amin"
    if dtype.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    info = _dtype.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Reduces ``src`` into a copy of input at ``index`` along ``dim`` with ``reduce`` in
    sum, prod, mean, amax, amin; include_self=False leaves input's values out of the
    reduction wherever something is scattered."""
    require_tensor("scatter_reduce", src, "src")
    d = _check_index("scatter_reduce", input, dim, index, src, out)
    # PyTorch still takes the old names "max" and "min" for amax and amin
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if reduce == "mean" and input.dtype is _dtype.bool:
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented "
                                  "for 'Bool'")
    _scatter_checks("scatter_reduce", input, d, index, src)
    res = _target("scatter_reduce", input, out)
    if src._storage is res._storage:
        src = views.clone(src)
    device = input._storage.device
    if not include_self:
        _scatter_kernel(None, res, d, index, _value_tensor(_identity(reduce, input.dtype),
                                                            input.dtype, device))
    _scatter_kernel("sum" if reduce == "mean" else reduce, res, d, index, src)
    if reduce == "mean":
        count = alloc.empty(res._shape, _dtype.int64, device)
        alloc.backend(device).copy.fill(count, 1 if include_self else 0)
        _scatter_kernel("add", count, d, index, _value_tensor(1, _dtype.int64, device))
        _kernels(res).divide_count(res, count, count._stride)
    return res


def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of input at ``indices`` along ``dim`` (broadcasting the other dims), or of
    the flattened input when dim is None."""
    require_tensor("take_along_dim", indices, "indices")
    if indices.dtype is not _dtype.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{type_name(indices.dtype)}")
    same_device("take_along_dim", input, indices, out)
    if dim is None:
        flat = views.contiguous(input).reshape(-1)
        return gather(flat, 0, indices.reshape(-1), out=out)
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    from .pointwise import broadcast_shapes
    d = _wrap_dim(to_int("take_along_dim", "dim", dim), _nd(input))
    if input.dim() == 0:
        return gather(input, d, indices, out=out)
    sizes = list(input._shape)
    sizes[d] = indices._shape[d]
    shape = broadcast_shapes(tuple(sizes), indices._shape)
    if input._shape[d] and indices.numel():
        # PyTorch takes the indices modulo the dim's size (so -1 is the last entry)
        from .arith import remainder
        indices = remainder(indices, input._shape[d])
    idx = views.expand(indices, shape)
    sizes = list(shape)
    sizes[d] = input._shape[d]
    return gather(views.expand(input, sizes), d, idx, out=out)
