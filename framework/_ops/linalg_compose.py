"""Products composed from the batched GEMM of framework._ops.linalg: trace, kron,
tensordot, linalg.vecdot, linalg.multi_dot (cheapest order), linalg.matrix_power and
chain_matmul."""
import builtins

from .._tensor import Tensor, _wrap_dim
from . import alloc, args as _args, views
from .linalg import _check_tensor, _copy_out, _cpp, _device, _gemm, _no_bool
from .pointwise import broadcast_shapes, type_name

def sum_last(x, k, dtype=None):
    """Sums the last ``k`` dims of ``x`` with the GEMM kernel (x @ ones), in ``dtype``."""
    dtype = dtype or x.dtype
    dev = x._storage.device
    lead = x._shape[:len(x._shape) - k]
    r = alloc.numel(x._shape[len(x._shape) - k:])
    if x.dtype is not dtype:
        x = _convert(x, dtype)
    rows = views.reshape(x, lead + (1, r))
    ones = alloc.empty((r, 1), dtype, dev)
    alloc.backend(dev).copy.fill(ones, 1)
    res = alloc.empty(lead + (1, 1), dtype, dev)
    _gemm(res, rows, ones)
    return views.reshape(res, lead)


def _convert(x, dtype):
    res = alloc.empty(x._shape, dtype, x._storage.device)
    alloc.backend(x._storage.device).copy.copy(res, x, x._stride)
    return res


def trace(input):
    """Sum of the main diagonal of a 2-d tensor (integers sum in int64)."""
    _check_tensor("trace", input, 1, "input")
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    _no_bool("trace", input.dtype)
    from .. import _dtype
    dt = _dtype.int64 if input.dtype.category == 1 else input.dtype
    return sum_last(views.diagonal(input), 1, dt)


def kron(input, other, *, out=None):
    """Kronecker product: blocks ``input[i] * other`` laid out over the dims of input."""
    _check_tensor("kron", input, 1, "input")
    _check_tensor("kron", other, 2, "other")
    nd = max(input.dim(), other.dim())
    sa = (1,) * (nd - input.dim()) + input._shape
    sb = (1,) * (nd - other.dim()) + other._shape
    # a -> (a0, 1, a1, 1, ...), b -> (1, b0, 1, b1, ...); their product interleaves blocks
    a = views.reshape(input, tuple(x for n in sa for x in (n, 1)))
    b = views.reshape(other, tuple(x for n in sb for x in (1, n)))
    from .pointwise import binary
    prod = binary("kron", "mul", a, b, None, "default")
    return _copy_out(views.reshape(prod, tuple(p * q for p, q in zip(sa, sb))), out)


def tensordot(a, b, dims=2, out=None):
    """Contracts ``dims`` (an int: the last dims of a with the first of b; or two lists of
    dims) of ``a`` and ``b``; the result has a's free dims then b's."""
    _check_tensor("tensordot", a, 1, "a")
    _check_tensor("tensordot", b, 2, "b")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, builtins.int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, builtins.int) else list(da)
        db = [db] if isinstance(db, builtins.int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da = [_wrap_dim(d, a.dim()) for d in da]
    db = [_wrap_dim(d, b.dim()) for d in db]
    for x, y in zip(da, db):
        # a size-1 contracted dim broadcasts: the other side's dim is summed first
        if b._shape[y] == 1 and a._shape[x] != 1:
            a = a.sum(x, keepdim=True, dtype=a.dtype)
        elif a._shape[x] == 1 and b._shape[y] != 1:
            b = b.sum(y, keepdim=True, dtype=b.dtype)
        elif a._shape[x] != b._shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a._shape[x]} in dim {x} and second has size {b._shape[y]} "
                               f"in dim {y}")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    _no_bool("addmm_impl_cpu_", a.dtype)
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = alloc.numel(tuple(a._shape[d] for d in da))
    m = alloc.numel(tuple(a._shape[d] for d in fa))
    n = alloc.numel(tuple(b._shape[d] for d in fb))
    ma = views.reshape(views.permute(a, *(fa + da)), m, k)
    mb = views.reshape(views.permute(b, *(db + fb)), k, n)
    dev = _device("tensordot", (a, b))
    res = _gemm(alloc.empty((ma._shape[0], mb._shape[1]), a.dtype, dev), ma, mb)
    shape = tuple(a._shape[d] for d in fa) + tuple(b._shape[d] for d in fb)
    return _copy_out(views.reshape(res, shape), out)


def vecdot(x, y, *, dim=-1, out=None):
    """Dot products of the vectors along ``dim`` of broadcast ``x`` and ``y``."""
    _check_tensor("linalg_vecdot", x, 1, "x")
    _check_tensor("linalg_vecdot", y, 2, "y")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {type_name(x.dtype)} and y of type {type_name(y.dtype)} "
                           f"instead")
    if x.dtype.category < 2:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {type_name(x.dtype)}")
    if x._shape[-1:] != y._shape[-1:] and 1 not in x._shape[-1:] + y._shape[-1:]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x._shape[-1]}] and src "
                           f"[{y._shape[-1]}] to have the same number of elements, but got "
                           f"{x._shape[-1]} and {y._shape[-1]} elements respectively")
    shape = broadcast_shapes(x._shape, y._shape)
    d = _wrap_dim(dim, len(shape))
    if x.dtype.is_complex:      # PyTorch's vecdot conjugates x
        from .complex_ops import conj
        x = conj(x)
    xb = views.movedim(views.expand(x, *shape), d, -1)
    yb = views.movedim(views.expand(y, *shape), d, -1)
    dev = _device("linalg.vecdot", (x, y))
    lead = xb._shape[:-1]
    res = _gemm(alloc.empty(lead + (1, 1), x.dtype, dev), views.unsqueeze(xb, -2),
                views.unsqueeze(yb, -1))
    return _copy_out(views.reshape(res, lead), out)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first may be a row vector and the last a
    column vector, given as 1-d tensors); the order is chosen to minimise the work."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        _check_tensor("linalg_multi_dot", t, 1, "tensors")
        where = "first" if i == 0 else "last" if i == len(ts) - 1 else None
        if where and t.dim() not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got "
                               f"{t.dim()}D")
        if not where and t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
        if t.dtype is not ts[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_cpp(ts[0].dtype)} and tensor {i} {_cpp(t.dtype)}")
    first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    mats = [views.unsqueeze(ts[0], 0) if first_vec else ts[0]] + ts[1:-1] + \
        [views.unsqueeze(ts[-1], 1) if last_vec else ts[-1]]
    for i in range(len(mats) - 1):
        if mats[i]._shape[1] != mats[i + 1]._shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(ts[i]._shape)} and {list(ts[i + 1]._shape)} cannot be "
                               f"multiplied")
    res = _chain(mats, _chain_order(mats), 0, len(mats) - 1)
    if first_vec:
        res = views.squeeze(res, 0)
    if last_vec:
        res = views.squeeze(res, -1)
    return _copy_out(res, out)


def _chain_order(mats):
    """split[i][j]: where the cheapest parenthesisation of mats[i..j] splits (classic
    dynamic programme over the matrix dims)."""
    dims = [m._shape[0] for m in mats] + [mats[-1]._shape[1]]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    a, b = _chain(mats, split, i, k), _chain(mats, split, k + 1, j)
    _no_bool("addmm_impl_cpu_", a.dtype)
    return _gemm(alloc.empty((a._shape[0], b._shape[1]), a.dtype, a._storage.device), a, b)


def matrix_power(A, n, *, out=None):
    """A^n for square matrices (batched) by repeated squaring; n = 0 gives the identity and
    n < 0 the power of the inverse."""
    _check_tensor("linalg_matrix_power", A, 1, "A")
    n = _args.to_int("linalg_matrix_power", "n", n, 2)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A._shape[-2]} by {A._shape[-1]} matrices")
    if n < 0:
        from .linalg_lapack import inv
        A, n = inv(A), -n
    dev = A._storage.device
    if n == 0:
        res = alloc.empty(A._shape, A.dtype, dev)
        alloc.backend(dev).copy.fill(res, 0)
        alloc.backend(dev).copy.fill(views.diagonal(res, 0, -2, -1), 1)
        return _copy_out(res, out)
    _no_bool("bmm", A.dtype)
    res, base = None, A
    while n:
        if n & 1:
            res = base if res is None else _gemm(alloc.empty(A._shape, A.dtype, dev), res, base)
        n >>= 1
        if n:
            base = _gemm(alloc.empty(A._shape, A.dtype, dev), base, base)
    if res is A:
        res = views.clone(A)
    return _copy_out(res, out)


def chain_matmul(*matrices, out=None):
    """Deprecated PyTorch name of :func:`framework.linalg.multi_dot` for 2-d matrices."""
    if len(matrices) == 1:
        return views.clone(matrices[0])
    return multi_dot(matrices, out=out)
