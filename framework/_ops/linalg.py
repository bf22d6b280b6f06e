"""Matrix products: matmul, mm, bmm, mv, dot, vdot, outer, addmm, addmv, addbmm, baddbmm,
einsum, tensordot, kron, trace.

Every product ends in one batched strided GEMM kernel, ``backend(device).linalg.matmul``:
``out[..., M, N] = beta * out + alpha * a[..., M, K] @ b[..., K, N]`` with any strides
(broadcast batch dims have stride 0), so transposed and sliced inputs are never copied
here. Shape checks and error messages follow PyTorch's.
"""
import builtins

from .._tensor import Tensor, _wrap_dim
from . import alloc
from .pointwise import broadcast_shapes, check_out, expand_strides, type_name
from . import views

_T = Tensor

# C++ type names PyTorch prints in some dtype errors ("float != double").
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}


def _cpp(dtype):
    return _CPP_NAMES[dtype.name]


def _check_tensor(op, x, pos, name):
    if not isinstance(x, _T):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _device(op, tensors):
    dev = tensors[0]._storage.device
    for t in tensors[1:]:
        if t._storage.device is not dev:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {t._storage.device}! (when "
                               f"checking argument for argument mat2 in method {op})")
    return dev


def _no_bool(kernel, dtype):
    if dtype.category == 0:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _result(out, shape, dtype, device, inplace=False):
    """The tensor the kernel writes: a new one, or ``out`` (PyTorch requires its dtype)."""
    if out is None:
        return alloc.empty(shape, dtype, device)
    if isinstance(out, _T) and out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp(dtype)}, but got "
                           f"{_cpp(out.dtype)} instead")
    return check_out("matmul", out, shape, dtype, inplace)


def _gemm(res, a, b, c=None, beta=0, alpha=1):
    """res[..., M, N] = beta * c + alpha * a @ b, batch dims of a, b, c broadcast to res's.

    ``c`` (broadcastable to res) is copied into res first unless beta == 0, in which case
    it is not read at all (as PyTorch's addmm: NaNs in it do not propagate)."""
    dev = res._storage.device
    if beta != 0 and c is not None:
        alloc.backend(dev).copy.copy(res, c, expand_strides(c, res._shape))
    else:
        beta = 0
    batch = res._shape[:-2]
    sa = expand_strides(a, batch + a._shape[-2:])
    sb = expand_strides(b, batch + b._shape[-2:])
    if res.numel():
        alloc.backend(dev).linalg.matmul(res, a, sa, b, sb, beta, alpha)
    return res


def _check_scalars(dtype, beta, alpha):
    # PyTorch accepts float alpha/beta for integer tensors here and truncates them
    return (builtins.float(beta), builtins.float(alpha)) if dtype.category == 2 else \
        (builtins.int(beta), builtins.int(alpha))


def _product(op, dtype, device, shape, a, b, c, beta, alpha, out):
    beta, alpha = _check_scalars(dtype, beta, alpha)
    res = _result(out, shape, dtype, device, out is not None and out is c)
    return _gemm(res, a, b, c, beta, alpha)


# ---- 2-d and batched products ---------------------------------------------------------

def _mm_checks(a, b, kernel):
    if a.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if b.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x"
                           f"{a._shape[1]} and {b._shape[0]}x{b._shape[1]})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_cpp(a.dtype)} != {_cpp(b.dtype)}")
    _no_bool(kernel, a.dtype)


def _mm_fast(a, b, c=None, beta=0, alpha=1):
    """beta * c + alpha * (a @ b) for tensors of one non-bool dtype on one device with equal
    batch dims and matching inner dims (c: None, or a float tensor of the result's shape or
    a row), else None: then the caller's checked path handles (and reports) the case.
    Small products are dominated by Python overhead, hence this short path."""
    if a.__class__ is not _T or b.__class__ is not _T:
        return None
    sa, sb = a._shape, b._shape
    dt = a.dtype
    if len(sa) != len(sb) or len(sa) < 2 or sa[-1] != sb[-2] or sa[:-2] != sb[:-2] or \
            dt is not b.dtype or not dt.category:
        return None
    dev = a._storage.device
    if b._storage.device is not dev:
        return None
    shape = sa[:-1] + sb[-1:]
    if c is not None:
        if c.__class__ is not _T or c.dtype is not dt or dt.category != 2 or \
                c._storage.device is not dev or (c._shape != shape and c._shape != shape[-1:]):
            return None
    res = alloc.empty(shape, dt, dev)
    if res.numel():
        kernels = alloc.backend(dev)
        if c is not None and beta != 0:
            kernels.copy.copy(res, c, expand_strides(c, shape))
        else:
            beta = 0
        kernels.linalg.matmul(res, a, a._stride, b, b._stride, beta, alpha)
    return res


def mm(input, mat2, *, out=None):
    """Matrix product of ``input`` (n x m) and ``mat2`` (m x p): an n x p tensor."""
    if out is None and input.__class__ is _T and input.dim() == 2:
        res = _mm_fast(input, mat2)
        if res is not None:
            return res
    _check_tensor("mm", input, 1, "input")
    _check_tensor("mm", mat2, 2, "mat2")
    _mm_checks(input, mat2, "addmm_impl_cpu_")
    dev = _device("mm", (input, mat2))
    return _product("mm", input.dtype, dev, (input._shape[0], mat2._shape[1]), input, mat2,
                    None, 0, 1, out)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2); ``input`` broadcasts to the n x p result."""
    if out is None and mat1.__class__ is _T and mat1.dim() == 2:
        res = _mm_fast(mat1, mat2, input, beta, alpha)
        if res is not None:
            return res
    for i, (x, n) in enumerate(((input, "input"), (mat1, "mat1"), (mat2, "mat2"))):
        _check_tensor("addmm", x, i + 1, n)
    if mat1.dim() != 2:
        raise RuntimeError("mat1 must be a matrix, got " + f"{mat1.dim()}-D tensor")
    if mat2.dim() != 2:
        raise RuntimeError("mat2 must be a matrix, got " + f"{mat2.dim()}-D tensor")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{type_name(input.dtype)} and {type_name(mat2.dtype)}")
    _mm_checks(mat1, mat2, "addmm_impl_cpu_")
    shape = (mat1._shape[0], mat2._shape[1])
    _expand_check(input, shape)
    dev = _device("addmm", (input, mat1, mat2))
    return _product("addmm", mat1.dtype, dev, shape, mat1, mat2, input, beta, alpha, out)


def _expand_check(x, shape):
    """PyTorch's error when ``x`` cannot be expanded to ``shape``."""
    if len(x._shape) > len(shape):
        raise RuntimeError(f"The expanded size of the tensor ({shape[0]}) must match the "
                           f"existing size ({x._shape[0]}) at non-singleton dimension 0.  "
                           f"Target sizes: {list(shape)}.  Tensor sizes: {list(x._shape)}")
    off = len(shape) - len(x._shape)
    for i, n in enumerate(x._shape):
        if n != 1 and n != shape[off + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[off + i]}) must match "
                               f"the existing size ({n}) at non-singleton dimension {off + i}.  "
                               f"Target sizes: {list(shape)}.  Tensor sizes: {list(x._shape)}")


def _bmm_checks(b1, b2, kernel="bmm"):
    if b1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b2._shape[0] != b1._shape[0] or b2._shape[1] != b1._shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b1._shape[0]}, {b1._shape[2]}] but got: [{b2._shape[0]}, "
                           f"{b2._shape[1]}].")
    if b1.dtype is not b2.dtype:
        raise RuntimeError(f"expected scalar type {type_name(b1.dtype)} but found "
                           f"{type_name(b2.dtype)}")
    _no_bool(kernel, b1.dtype)


def bmm(input, mat2, *, out=None):
    """Batched matrix product of (b x n x m) and (b x m x p) tensors: b x n x p."""
    if out is None and input.__class__ is _T and input.dim() == 3:
        res = _mm_fast(input, mat2)
        if res is not None:
            return res
    _check_tensor("bmm", input, 1, "input")
    _check_tensor("bmm", mat2, 2, "mat2")
    _bmm_checks(input, mat2)
    dev = _device("bmm", (input, mat2))
    shape = (input._shape[0], input._shape[1], mat2._shape[2])
    return _product("bmm", input.dtype, dev, shape, input, mat2, None, 0, 1, out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * bmm(batch1, batch2); ``input`` broadcasts to b x n x p."""
    for i, (x, n) in enumerate(((input, "input"), (batch1, "batch1"), (batch2, "batch2"))):
        _check_tensor("baddbmm", x, i + 1, n)
    if input.dtype is not batch1.dtype and batch1.dtype is batch2.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(input.dtype)}, "
                           f"batch1: {_cpp(batch1.dtype)}, batch2: {_cpp(batch2.dtype)}")
    _bmm_checks(batch1, batch2, "baddbmm")
    shape = (batch1._shape[0], batch1._shape[1], batch2._shape[2])
    _expand_check(input, shape)
    dev = _device("baddbmm", (input, batch1, batch2))
    return _product("baddbmm", batch1.dtype, dev, shape, batch1, batch2, input, beta, alpha,
                    out)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_i batch1[i] @ batch2[i]: the batch is contracted too."""
    for i, (x, n) in enumerate(((input, "input"), (batch1, "batch1"), (batch2, "batch2"))):
        _check_tensor("addbmm", x, i + 1, n)
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1._shape[0] != batch2._shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1._shape[0]} and {batch2._shape[0]}")
    if input.dtype is not batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{type_name(input.dtype)} and {type_name(batch2.dtype)}")
    # sum_i A_i @ B_i = [A_0 .. A_b-1] (n x b*m) @ [B_0; ..; B_b-1] (b*m x p)
    bs, n, m = batch1._shape
    p = batch2._shape[2]
    a = views.reshape(views.permute(batch1, 1, 0, 2), n, bs * m)
    b = views.reshape(batch2, bs * m, p)
    _mm_checks(a, b, "addmm_impl_cpu_")
    _expand_check(input, (n, p))
    dev = _device("addbmm", (input, batch1, batch2))
    return _product("addbmm", a.dtype, dev, (n, p), a, b, input, beta, alpha, out)


# ---- vectors --------------------------------------------------------------------------

def _mv_checks(in_dim, in_len, in_dtype, mat, vec):
    """addmv's checks; mv reports a 1-d placeholder input of mat's rows and vec's dtype."""
    if mat.dim() != 2 or vec.dim() != 1 or in_dim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {in_dim}, {mat.dim()}, "
                           f"{vec.dim()}")
    if mat._shape[1] != vec._shape[0] or in_len not in (1, mat._shape[0]):
        raise RuntimeError(f"size mismatch, got input ({in_len}), mat ({mat._shape[0]}x"
                           f"{mat._shape[1]}), vec ({vec._shape[0]})")
    if not in_dtype is mat.dtype is vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{type_name(in_dtype)}, {type_name(mat.dtype)}, and "
                           f"{type_name(vec.dtype)}")
    _no_bool("addmv_impl_cpu", mat.dtype)


def _mv(input, mat, vec, beta, alpha, out):
    dev = _device("addmv", (mat, vec) if input is None else (input, mat, vec))
    beta, alpha = _check_scalars(mat.dtype, beta, alpha)
    n = mat._shape[0]
    res = _result(out, (n,), mat.dtype, dev, out is not None and out is input)
    col = views.unsqueeze(res, 1)     # (n, 1) view: the kernel writes through it
    c = views.unsqueeze(input, -1) if input is not None and input.dim() == 1 else input
    _gemm(col, mat, views.unsqueeze(vec, 1), c, beta, alpha)
    return res


def mv(input, vec, *, out=None):
    """Matrix-vector product of ``input`` (n x m) and ``vec`` (m): a vector of n."""
    _check_tensor("mv", input, 1, "input")
    _check_tensor("mv", vec, 2, "vec")
    rows = input._shape[0] if input.dim() else 1
    _mv_checks(1, rows, vec.dtype, input, vec)
    return _mv(None, input, vec, 0, 1, out)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    for i, (x, n) in enumerate(((input, "input"), (mat, "mat"), (vec, "vec"))):
        _check_tensor("addmv", x, i + 1, n)
    _mv_checks(input.dim(), input._shape[0] if input.dim() else 1, input.dtype, mat, vec)
    return _mv(input, mat, vec, beta, alpha, out)


def _dot_checks(input, other, kernel):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D "
                           f"tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{type_name(input.dtype)} and {type_name(other.dtype)}")
    n, m = input._shape[0], other._shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           f"respectively")
    _no_bool(kernel, input.dtype)


def dot(input, other, *, out=None):
    """Inner product of two 1-d tensors of the same size and dtype (a 0-d tensor)."""
    _check_tensor("dot", input, 1, "input")
    _check_tensor("dot", other, 2, "other")
    _dot_checks(input, other, "dot")
    dev = _device("dot", (input, other))
    res = _result(out, (), input.dtype, dev)
    mat = views.as_strided(res, (1, 1), (1, 1))
    _gemm(mat, views.unsqueeze(input, 0), views.unsqueeze(other, 1))
    return res


def vdot(input, other, *, out=None):
    """Inner product of two 1-d tensors (conjugating the first; real dtypes only here)."""
    _check_tensor("vdot", input, 1, "input")
    _check_tensor("vdot", other, 2, "other")
    return dot(input, other, out=out)


def outer(input, vec2, *, out=None):
    """Outer product of two 1-d tensors: result[i, j] = input[i] * vec2[j] (promoting)."""
    _check_tensor("outer", input, 1, "input")
    _check_tensor("outer", vec2, 2, "vec2")
    for x, name in ((input, "self"), (vec2, "vec2")):
        if x.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {x.dim()}-D")
    from .pointwise import binary
    return binary("outer", "mul", views.unsqueeze(input, 1), views.unsqueeze(vec2, 0), out,
                  "default")


# ---- matmul ---------------------------------------------------------------------------

def matmul(input, other, *, out=None):
    """Matrix product with PyTorch's rules: 1-d x 1-d is a dot product, 2-d x 1-d a
    matrix-vector product, a 1-d first argument gets a leading 1 (removed afterwards), a
    1-d second argument a trailing 1, and batch dims (all but the last two) broadcast."""
    if out is None:
        res = _mm_fast(input, other)
        if res is not None:
            return res
    _check_tensor("matmul", input, 1, "input")
    _check_tensor("matmul", other, 2, "other")
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other, out=out)
    if da == 2 and db == 1:
        return mv(input, other, out=out)
    if da == 1 and db == 2:
        _mm_checks(views.unsqueeze(input, 0), other, "addmm_impl_cpu_")
        res = mm(views.unsqueeze(input, 0), other)
        return _copy_out(views.squeeze(res, 0), out)
    if da == 2 and db == 2:
        return mm(input, other, out=out)
    if _should_fold(input, other):
        # PyTorch folds the batch of the larger operand into matrix rows and calls mm/mv:
        # check (and fail) as those would; the kernel folds such batches itself
        if da < db:
            return _copy_out(_fold_transposed(input, other), out)
        return _folded(input, other, out)
    a = views.unsqueeze(input, 0) if da == 1 else input
    b = views.unsqueeze(other, -1) if db == 1 else other
    batch = _broadcast_batch(a._shape[:-2], b._shape[:-2])
    m, k = a._shape[-2:]
    k2, n = b._shape[-2:]
    if k != k2:
        nb = alloc.numel(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{nb}, {k}] but got: [{nb}, {k2}].")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {type_name(a.dtype)} but found "
                           f"{type_name(b.dtype)}")
    _no_bool("bmm", a.dtype)
    dev = _device("matmul", (a, b))
    shape = batch + (m, n)
    if da > 1 and db > 1:
        return _product("matmul", a.dtype, dev, shape, a, b, None, 0, 1, out)
    res = _gemm(alloc.empty(shape, a.dtype, dev), a, b)
    return _copy_out(views.squeeze(res, -2 if da == 1 else -1), out)


def _folded(a, b, out):
    """matmul of an N-d ``a`` (N >= 3, batch foldable into rows) and a 1-d or 2-d ``b``."""
    rows, k = alloc.numel(a._shape[:-1]), a._shape[-1]
    if b.dim() == 2:
        if k != b._shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                               f"{b._shape[0]}x{b._shape[1]})")
        if a.dtype is not b.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_cpp(a.dtype)} != {_cpp(b.dtype)}")
        _no_bool("addmm_impl_cpu_", a.dtype)
        shape = a._shape[:-1] + (b._shape[1],)
    else:
        if k != b._shape[0]:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec "
                               f"({b._shape[0]})")
        if a.dtype is not b.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{type_name(b.dtype)}, {type_name(a.dtype)}, and "
                               f"{type_name(b.dtype)}")
        _no_bool("addmv_impl_cpu", a.dtype)
        shape = a._shape[:-1]
    res = _result(out, shape, a.dtype, _device("matmul", (a, b)))
    if b.dim() == 2:
        return _gemm(res, a, b)
    _gemm(views.unsqueeze(res, -1), a, views.unsqueeze(b, -1))
    return res


def _fold_transposed(a, b):
    """matmul of a 1-d ``a`` and an N-d ``b`` when PyTorch folds b.mT (empty tensors)."""
    t1 = b.mT
    rows = views.reshape(t1, alloc.numel(t1._shape[:-1]), t1._shape[-1])
    return views.reshape(mv(rows, a), t1._shape[:-1])


def _should_fold(a, b):
    """Whether PyTorch's matmul folds the batch of the larger operand into matrix rows (an
    N-d tensor, N >= 3, times a 1-d or 2-d one, when that needs no copy)."""
    t1 = a if a.dim() >= b.dim() else b.mT
    small = b.dim() if a.dim() >= b.dim() else a.dim()
    if t1.dim() < 3 or small > 2 or a.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, stride = t1._shape, t1._stride
    return all(stride[i] == stride[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _broadcast_batch(sa, sb):
    """Broadcast of two batch shapes; like PyTorch's, the error names the last bad dim."""
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + tuple(sa), (1,) * (nd - len(sb)) + tuple(sb)
    for d in range(nd - 1, -1, -1):
        if sa[d] != sb[d] and sa[d] != 1 and sb[d] != 1:
            raise RuntimeError(f"The size of tensor a ({sa[d]}) must match the size of tensor "
                               f"b ({sb[d]}) at non-singleton dimension {d}")
    return tuple(y if x == 1 else x for x, y in zip(sa, sb))


def _copy_out(res, out):
    if out is None:
        return res
    target = _result(out, res._shape, res.dtype, res._storage.device)
    alloc.backend(target._storage.device).copy.copy(target, res, res._stride)
    return target


# ---- trace, kron, tensordot -------------------------------------------------------------

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
    if isinstance(dims, _T):
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
        if a._shape[x] != b._shape[y]:
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
    shape = broadcast_shapes(x._shape, y._shape)
    d = _wrap_dim(dim, len(shape))
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
