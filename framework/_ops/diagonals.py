"""Shaping ops that build new layouts: diag, diag_embed, diagflat, block_diag (zeros plus
a strided copy into a diagonal or block view), meshgrid (expanded views) and
cartesian_prod. Like ``shape.py`` they are compositions of views and copies."""
import builtins
import warnings

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from . import alloc, args
from .pointwise import common_device
from .shape import block, copy_into, promote, result
from .views import _view, reshape
from .views import diagonal as _diag_view

_make = Tensor._make


# ---- diagonals --------------------------------------------------------------------------

def _zeros(shape, dtype, device):
    res = alloc.empty(tuple(shape), dtype, device)
    if alloc.numel(res._shape):
        alloc.backend(device).copy.fill(res, 0)
    return res


def diag(input, diagonal=0, *, out=None):
    """1-d input: the square matrix with ``input`` on diagonal ``diagonal`` (zeros
    elsewhere). 2-d input: that diagonal as a 1-d tensor."""
    diagonal = args.to_int("diag", "diagonal", diagonal, 2)
    nd = len(input._shape)
    if nd not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    device = input._storage.device
    if nd == 2:
        src = _diag_view(input, diagonal, 0, 1)
        res = result("diag", out, src._shape, input.dtype, device, (input,))
        copy_into(res, src)
        return res
    m = input._shape[0] + builtins.abs(diagonal)
    res = result("diag", out, (m, m), input.dtype, device, (input,))
    alloc.backend(device).copy.fill(res, 0)
    copy_into(_diag_view(res, diagonal, 0, 1), input)
    return res


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) diagonals at ``offset`` hold the last dim of
    ``input``; zeros elsewhere."""
    offset = args.to_int("diag_embed", "offset", offset, 2)
    nd = len(input._shape) + 1
    d1, d2 = _wrap_dim(dim1, nd, "diag_embed"), _wrap_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = input._shape[-1] + builtins.abs(offset)
    shape = list(input._shape[:-1])
    lo, hi = min(d1, d2), max(d1, d2)
    shape.insert(lo, m)
    shape.insert(hi, m)
    res = _zeros(shape, input.dtype, input._storage.device)
    copy_into(_diag_view(res, offset, d1, d2), input)
    return res


def diagflat(input, offset=0):
    """The 2-d tensor with the flattened ``input`` on diagonal ``offset``."""
    offset = args.to_int("diagflat", "offset", offset, 2)
    return diag(reshape(input, (-1,)), offset)


def block_diag(*tensors):
    """The block diagonal matrix of the inputs (0-d -> 1x1, 1-d (n) -> 1xn); dtypes are
    promoted."""
    ts = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if len(t._shape) > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {len(t._shape)} dimensions")
        ts.append(reshape(t, (1, t.numel())) if len(t._shape) < 2 else t)
    if not ts:
        return _zeros((1, 0), _dtype.get_default_dtype(), alloc.default_device())
    dtype = promote(ts)
    device = common_device("block_diag", ts)
    rows = builtins.sum(t._shape[0] for t in ts)
    cols = builtins.sum(t._shape[1] for t in ts)
    res = _zeros((rows, cols), dtype, device)
    r = c = 0
    for t in ts:
        copy_into(block(res, (r, c), t._shape), t)
        r += t._shape[0]
        c += t._shape[1]
    return res


# ---- grids ------------------------------------------------------------------------------

_warned = []


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-d/1-d tensors, as expanded views. ``indexing='ij'`` gives
    shape (n0, n1, ...); ``'xy'`` swaps the first two dims. Without ``indexing`` it is
    'ij' and PyTorch's one-time warning is given."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        # through the public op, whose autograd wrapper sees tensors, not one list
        import framework
        return framework.meshgrid(*tensors[0], indexing=indexing)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if len(t._shape) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got a tensor of shape {list(t._shape)}")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t._storage.device is not tensors[0]._storage.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing is None:
        if not _warned:
            _warned.append(True)
            warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                          "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    elif indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    k = len(tensors)
    pos = list(range(k))
    if indexing == "xy" and k >= 2:
        pos[0], pos[1] = 1, 0
    shape = [1] * k
    for i, t in enumerate(tensors):
        shape[pos[i]] = t.numel()
    shape = tuple(shape)
    grids = []
    for i, t in enumerate(tensors):
        stride = [0] * k
        stride[pos[i]] = t._stride[0] if t._shape else 0
        grids.append(_view(t, shape, stride, t._offset))
    return tuple(grids)


def cartesian_prod(*tensors):
    """The cartesian product of 1-d tensors as rows of a (N, len(tensors)) tensor (one
    tensor in: that tensor)."""
    for t in tensors:
        if isinstance(t, Tensor) and len(t._shape) != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._shape)}")
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    k = len(grids)
    shape = grids[0]._shape
    res = alloc.empty((alloc.numel(shape), k), grids[0].dtype, grids[0]._storage.device)
    col_stride = tuple(s * k for s in alloc.contiguous_strides(shape))
    for i, g in enumerate(grids):
        copy_into(_make(res._storage, shape, col_stride, i, res.dtype), g)
    return res
