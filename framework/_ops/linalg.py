"""Matrix products: matmul, mm, bmm, mv, dot, vdot, outer, addmm, addmv, addbmm, baddbmm
(einsum.py and linalg_compose.py build further products on the same kernel).

Every product ends in one batched strided GEMM kernel, ``backend(device).linalg.matmul``:
``out[..., M, N] = beta * C + alpha * a[..., M, K] @ b[..., K, N]`` with any strides
(broadcast dims have stride 0), C being addmm's input (bias) read by the kernel itself,
so transposed and sliced inputs and broadcast biases are never copied here. Shape checks
and error messages follow PyTorch's.
"""
import builtins

from .._tensor import Tensor
from . import alloc, complex_products, overlap
from .pointwise import require_tensor, check_out, expand_strides, type_name
from . import views

_T = Tensor

# C++ type names PyTorch prints in some dtype errors ("float != double").
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _cpp(dtype):
    return _CPP_NAMES[dtype.name]


def _check_tensor(op, x, pos, name):
    require_tensor(op, x, name, pos)


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
    if isinstance(out, _T) and 0 in out._stride:
        overlap.check_internal(out)
    return check_out("matmul", out, shape, dtype, inplace)


def _gemm(res, a, b, c=None, beta=0, alpha=1):
    """res[..., M, N] = beta * c + alpha * a @ b, batch dims of a, b, c broadcast to res's.

    ``c`` (broadcastable to res) is read by the GEMM's epilogue unless beta == 0, in which
    case it is not read at all (as PyTorch's addmm: NaNs in it do not propagate)."""
    if res.dtype.is_complex:
        return complex_products.gemm(res, a, b, c, beta, alpha)
    kernels = alloc.backend(res._storage.device)
    sc = None
    if beta == 0 or c is None:
        c, beta = None, 0
    else:
        sc = expand_strides(c, res._shape)
        if c._storage is res._storage and (c._offset != res._offset
                                           or tuple(sc) != tuple(res._stride)):
            # c overlaps res other than as res itself: the tiles would read what others
            # wrote, so it goes into res first (res itself is read in place by the kernel)
            kernels.copy.copy(res, c, sc)
            c, sc = None, None
    batch = res._shape[:-2]
    sa = expand_strides(a, batch + a._shape[-2:])
    sb = expand_strides(b, batch + b._shape[-2:])
    if res.numel():
        kernels.linalg.matmul(res, a, sa, b, sb, beta, alpha, c, sc)
    return res


def _check_scalars(dtype, beta, alpha):
    # PyTorch accepts float alpha/beta for integer tensors here and truncates them
    if dtype.category == 3:
        return builtins.complex(beta), builtins.complex(alpha)
    return (builtins.float(beta), builtins.float(alpha)) if dtype.category == 2 else \
        (builtins.int(beta), builtins.int(alpha))


def _product(op, dtype, device, shape, a, b, c, beta, alpha, out):
    beta, alpha = _check_scalars(dtype, beta, alpha)
    res = _result(out, shape, dtype, device, out is not None and out is c)
    if out is not None and (res._storage is a._storage or res._storage is b._storage):
        # the GEMM reads a and b while it writes res: compute apart, then copy (as PyTorch)
        tmp = _gemm(alloc.empty(shape, dtype, device), a, b, c, beta, alpha)
        alloc.backend(device).copy.copy(res, tmp, tmp._stride)
        return res
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
            dt is not b.dtype or not dt.category or dt.category == 3:
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
        if c is None or beta == 0:
            c, beta = None, 0  # c is not read (NaNs in it do not propagate)
        # c (a new res cannot overlap it) is read in the GEMM's epilogue: no copy launch
        alloc.backend(dev).linalg.matmul(res, a, a._stride, b, b._stride, beta, alpha, c,
                                         None if c is None else expand_strides(c, shape))
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


def dot(input, tensor, *, out=None):
    """Inner product of two 1-d tensors of the same size and dtype (a 0-d tensor)."""
    other = tensor
    _check_tensor("dot", input, 1, "input")
    _check_tensor("dot", other, 2, "tensor")
    _dot_checks(input, other, "dot")
    dev = _device("dot", (input, other))
    res = _result(out, (), input.dtype, dev)
    mat = views.as_strided(res, (1, 1), (1, 1))
    _gemm(mat, views.unsqueeze(input, 0), views.unsqueeze(other, 1))
    return res


def vdot(input, other, *, out=None):
    """Inner product of two 1-d tensors, conjugating the first."""
    _check_tensor("vdot", input, 1, "input")
    _check_tensor("vdot", other, 2, "other")
    if input.dtype.is_complex:
        from .complex_ops import conj
        input = conj(input)
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
