"""Ops on sparse tensors: matrix products with a dense operand, sums, element-wise
arithmetic. Each is written with dense framework ops over the indices and values (gather
rows, multiply, index_add), so it runs on every device and autograd derives it."""
import numbers

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from .autograd import gradient_at, needs_grad
from .base import SparseTensor, sparse_coo
from .coo import SparseCooTensor, linear_index


def _coo(t, other=None, first=True):
    """A sparse operand in COO form (the compressed layouts are converted, after PyTorch's
    checks of their product with a strided ``other``)."""
    if t.layout is sparse_coo:
        return t
    if other is not None:
        from .compressed import check_mm
        check_mm(t, other) if first else check_mm(other, t)
    return t.to_sparse_coo()


def _check_mm(op, s, d):
    if s.sparse_dim() != 2 or s.dense_dim() != 0 or s.dim() != 2:
        raise RuntimeError(f"{op}: expected first two dims to be sparse (indices has size "
                           f"{s.sparse_dim()} at first dim), and no dense dims (values has "
                           f"{s.dense_dim() + 1} dims)" if s.dim() == 2 else
                           f"{op}: 2D tensor expected, got {s.dim()}D tensor")
    if d.dim() != 2:
        raise RuntimeError(f"{op}: 2D tensor expected, got {d.dim()}D tensor")
    if d.shape[0] != s.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s.shape[1]}, "
                           f"got {d.shape[0]}")
    if d.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype.scalar_name} but found "
                           f"{d.dtype.scalar_name}")
    if d.device != s.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {s.device} and {d.device}!")


def _spmm(s, d):
    """COO matrix ``s`` times dense matrix ``d``: each stored entry scales a row of ``d``,
    and index_add sums the scaled rows into the output rows."""
    import framework
    i, v = s._parts()
    out = framework.zeros((s.shape[0], d.shape[1]), dtype=d.dtype, device=d.device)
    if i.shape[1] == 0:
        return out
    rows = d.index_select(0, i[1]) * v.unsqueeze(1)
    return out.index_add(0, i[0], rows)


class _DenseGradMm(Function):
    """``mm`` of a COO matrix that requires grad: PyTorch's ``torch.mm``/``matmul`` give it
    a dense gradient (``torch.sparse.mm`` gives a sparse one)."""

    @staticmethod
    def forward(ctx, s, d):
        ctx.s, ctx.d = s.detach(), d.detach()
        return _spmm(ctx.s, ctx.d)

    @staticmethod
    def backward(ctx, grad):
        gs = grad.mm(ctx.d.t()) if ctx.needs_input_grad[0] else None
        gd = _spmm(ctx.s.t(), grad) if ctx.needs_input_grad[1] else None
        return gs, gd


def mm(mat1, mat2, reduce="sum"):
    """mm(mat1, mat2, reduce="sum") -> Tensor

    Matrix product of a sparse COO or CSR matrix ``mat1`` and a dense matrix ``mat2``
    (dense result). Differentiable in both; the gradient of a sparse ``mat1`` is sparse,
    with ``mat1``'s (coalesced) sparsity pattern. A CSR ``mat1`` also takes ``reduce`` in
    "mean", "amax" ("max"), "amin" ("min"): the products of a row's stored entries are
    reduced that way instead of summed (an empty row gives zeros)."""
    if reduce != "sum":
        return _mm_reduce(mat1, mat2, reduce)
    if isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
        return sparse_sparse_mm(mat1, mat2)
    if not isinstance(mat1, SparseTensor):
        return dense_sparse_mm(mat1, mat2)
    s = _coo(mat1, mat2)
    _check_mm("mm", s, mat2)
    return _spmm(s, mat2)


def _mm_reduce(mat1, mat2, reduce):
    if not isinstance(mat1, SparseTensor) or not mat1.is_sparse_csr:
        backend = "Sparse" if isinstance(mat1, SparseTensor) else ""
        where = "CUDA" if mat1.device.type == "cuda" else "CPU"
        raise NotImplementedError(f"Could not run 'aten::_sparse_mm_reduce_impl' with "
                                  f"arguments from the '{backend}{where}' backend. This "
                                  "could be because the operator doesn't exist for this "
                                  "backend.")
    red = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if red not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if red == "prod":
        raise RuntimeError("sparse_mm_reduce: reduce type of prod has not been enabled.")
    s = mat1.to_sparse_coo()
    _check_mm("mm", s, mat2)
    i, v = s._parts()
    rows = mat2.index_select(0, i[1]) * v.unsqueeze(1)
    out = mat2.new_zeros((s.shape[0], mat2.shape[1]))
    index = i[0].unsqueeze(1).expand(-1, mat2.shape[1])
    return out.scatter_reduce(0, index, rows, red, include_self=False)


def dense_mm(mat1, mat2):
    """``torch.mm``'s rule with a sparse operand: a sparse ``mat1`` that requires grad gets a
    dense gradient."""
    if isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
        return sparse_sparse_mm(mat1, mat2)
    if not isinstance(mat1, SparseTensor):
        return dense_sparse_mm(mat1, mat2)
    s = _coo(mat1, mat2)
    _check_mm("mm", s, mat2)
    if needs_grad(s):
        return _DenseGradMm.apply(s, mat2)
    return _spmm(s, mat2)


def dense_sparse_mm(d, s):
    """Dense ``d`` times sparse ``s``: ``(s^T d^T)^T``."""
    st = _coo(s, d, first=False)
    if d.dim() != 2:
        raise RuntimeError(f"mm: 2D tensor expected, got {d.dim()}D tensor")
    if d.shape[1] != st.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d.shape[0]}x"
                           f"{d.shape[1]} and {st.shape[0]}x{st.shape[1]})")
    return dense_mm(st.t(), d.t()).t()


def sparse_sparse_mm(a, b):
    """Sparse times sparse, a sparse COO result: every pair of entries ``a[r, k]``,
    ``b[k, c]`` with the same ``k`` is joined (via ``b``'s rows sorted by ``k``) and the
    products are summed by coalescing."""
    import framework
    a = _coo(a)
    b = _coo(b)
    if a.dim() != 2 or b.dim() != 2 or a.dense_dim() or b.dense_dim():
        raise RuntimeError("sparse @ sparse: 2D sparse matrices without dense dims expected")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
    shape = (a.shape[0], b.shape[1])
    ai, av = a._parts()
    b = b.coalesce()
    bi, bv = b._parts()
    if ai.shape[1] == 0 or bi.shape[1] == 0:
        empty = ai.new_zeros((2, 0))
        return SparseCooTensor.make(empty, av.new_zeros((0,)), shape, True)
    # b is coalesced, so its entries are sorted by row: row k spans [start[k], end[k])
    start = framework.searchsorted(bi[0], ai[1])
    end = framework.searchsorted(bi[0], ai[1], right=True)
    counts = end - start
    total = int(counts.sum())
    if total == 0:
        return SparseCooTensor.make(ai.new_zeros((2, 0)), av.new_zeros((0,)), shape, True)
    pair_a = framework.repeat_interleave(
        framework.arange(ai.shape[1], device=ai.device), counts, output_size=total)
    first = counts.cumsum(0) - counts
    offset = framework.arange(total, device=ai.device) - first.index_select(0, pair_a)
    pair_b = start.index_select(0, pair_a) + offset
    idx = framework.stack((ai[0].index_select(0, pair_a), bi[1].index_select(0, pair_b)))
    vals = av.index_select(0, pair_a) * bv.index_select(0, pair_b)
    return SparseCooTensor.make(idx, vals, shape, False).coalesce()


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """addmm(mat, mat1, mat2, *, beta=1., alpha=1.) -> Tensor

    ``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` and dense ``mat2``."""
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return prod + (mat if beta == 1 else mat * beta)


def matmul(input, other):
    """``input @ other`` with a sparse operand: sparse x dense (matrix or vector) and
    dense x sparse give dense results, sparse x sparse a sparse one."""
    if isinstance(input, SparseTensor) and not isinstance(other, SparseTensor) \
            and other.dim() == 1:
        if input.layout is not sparse_coo and input.dim() == 2 and \
                other.shape[0] != input.shape[1]:
            raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                               f"({input.shape[0]}x{input.shape[1]}), vec ({other.shape[0]})")
        return dense_mm(input, other.unsqueeze(1)).squeeze(1)
    return dense_mm(input, other)


def sparse_sum(input, dim=None, dtype=None):
    """sum(input, dim=None, dtype=None) -> Tensor

    Sums a COO tensor over ``dim`` (all dims when omitted: a dense 0-d tensor). Summing
    all sparse dims gives a dense tensor, summing some of them a coalesced sparse one."""
    s = _coo(input)
    i, v = s._parts()
    if dtype is not None:
        v = v.to(dtype)
    if dim is None:
        return v.sum()
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    n, nsp = s.dim(), s.sparse_dim()
    wrapped = sorted({_wrap_dim(d, n) for d in dims})
    if len(wrapped) != len(dims):
        raise RuntimeError("sparse.sum: dim list has duplicates")
    dense_dims = [d - nsp + 1 for d in wrapped if d >= nsp]
    if dense_dims:
        v = v.sum(dense_dims)
    keep = [d for d in range(nsp) if d not in wrapped]
    if not keep:
        return v.sum(0)
    shape = tuple(s.shape[d] for d in range(n) if d not in wrapped)
    return SparseCooTensor.make(i[keep], v, shape, False).coalesce()


# ---- element-wise arithmetic ------------------------------------------------------------

def _scalar(x):
    return isinstance(x, numbers.Number) or (isinstance(x, Tensor) and
                                             not isinstance(x, SparseTensor) and x.dim() == 0)


def add(self, other, *, alpha=1):
    """sparse + sparse (sparse), as PyTorch; sparse + dense is refused."""
    if not isinstance(other, SparseTensor):
        if isinstance(other, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        raise TypeError(f"add(): argument 'other' must be Tensor, not {type(other).__name__}")
    other = _coo(other)
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(self.shape)} while other has size "
                           f"{list(other.shape)} (FYI: dense-sparse addition does not "
                           "currently support broadcasting)")
    if self.sparse_dim() != other.sparse_dim():
        raise RuntimeError(f"add: expected 'self' and 'other' to have same sparse dimensions, "
                           f"but got {self.sparse_dim()} and {other.sparse_dim()}")
    if (self._i is other._i and self._coalesced == other._coalesced
            and (self._coalesced or not (needs_grad(self) or needs_grad(other)))):
        # one sparsity pattern (the gradients of one tensor): add the values
        v2 = other._dvalues()
        v1, v2 = _promote(self._dvalues(), v2 if alpha == 1 else v2 * alpha)
        return SparseCooTensor.make(self._i, v1 + v2, self.shape, self._coalesced)
    import framework
    i1, v1 = self._parts()
    i2, v2 = other._parts()
    if alpha != 1:
        v2 = v2 * alpha
    v1, v2 = _promote(v1, v2)
    out = SparseCooTensor.make(framework.cat((i1, i2), 1), framework.cat((v1, v2)),
                               self.shape, False)
    return out.coalesce() if self._coalesced and other._coalesced else out


def _promote(a, b):
    import framework
    dt = framework.promote_types(a.dtype, b.dtype)
    return a.to(dt), b.to(dt)


def sub(self, other, *, alpha=1):
    if isinstance(other, Tensor) and not isinstance(other, SparseTensor):
        # PyTorch's text (sub is add with -alpha there too)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    return add(self, other, alpha=-alpha)


def mul(self, other):
    """sparse * scalar, sparse * dense (same shape) and sparse * sparse (the coalesced
    intersection) give sparse results."""
    if _scalar(other):
        i, v = self._parts()
        return SparseCooTensor.make(i, v * other, self.shape, self._coalesced)
    if not isinstance(other, Tensor):
        raise TypeError(f"mul(): argument 'other' must be Tensor, not {type(other).__name__}")
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError(f"mul: expected 'self' and 'other' to have same sizes, but "
                           f"{list(self.shape)} != {list(other.shape)}")
    import framework
    a = self.coalesce()
    i, v = a._parts()
    if isinstance(other, SparseTensor):
        b = _coo(other).coalesce()
        bi, bv = b._parts()
        sizes = tuple(self.shape[:a.sparse_dim()])
        keys, want = linear_index(bi, sizes), linear_index(i, sizes)
        if keys.numel() == 0 or want.numel() == 0:
            return SparseCooTensor.make(i[:, :0], v[:0] * bv[:0], self.shape, True)
        pos = framework.searchsorted(keys, want).clamp_(max=keys.numel() - 1)
        found = (keys.index_select(0, pos) == want).nonzero().squeeze(1)
        vals = v.index_select(0, found) * bv.index_select(0, pos.index_select(0, found))
        return SparseCooTensor.make(i.index_select(1, found), vals, self.shape, True)
    return SparseCooTensor.make(i, v * gradient_at(other, i, tuple(self.shape)),
                                self.shape, True)


def div(self, other, *, rounding_mode=None):
    if not _scalar(other):
        raise RuntimeError("div(sparse, tensor): only division by a scalar is supported")
    i, v = self._parts()
    return SparseCooTensor.make(i, v.div(other, rounding_mode=rounding_mode), self.shape,
                                self._coalesced)


def neg(self):
    i, v = self._parts()
    return SparseCooTensor.make(i, -v, self.shape, self._coalesced)


def _zero_preserving(name):
    def op(self):
        i, v = self._parts()
        return SparseCooTensor.make(i, getattr(v, name)(), self.shape, self._coalesced)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{name} of the stored values (zero maps to zero)."
    return op


def radd(self, other):
    """dense + sparse: a dense result."""
    if isinstance(other, Tensor):
        return other + self.to_dense()
    raise TypeError(f"add(): argument 'other' must be Tensor, not {type(other).__name__}")


def rsub(self, other):
    if isinstance(other, Tensor):
        return other - self.to_dense()
    raise TypeError(f"sub(): argument 'other' must be Tensor, not {type(other).__name__}")


def sum_method(self, dim=None, keepdim=False, dtype=None):
    if keepdim:
        raise RuntimeError("sum: keepdim=True is not supported for sparse tensors")
    return sparse_sum(self, dim, dtype)


def _assign(self, other):
    """Makes ``self`` hold ``other``'s indices and values (the in-place ops)."""
    self._i, self._v, self._coalesced = other._i, other._v.detach(), other._coalesced
    self._storage.version += 1
    return self


def add_(self, other, *, alpha=1):
    """In-place sparse + sparse (gradient accumulation into a sparse ``.grad``)."""
    if not isinstance(other, SparseTensor) and isinstance(other, Tensor):
        raise RuntimeError("add_(sparse, dense) is not supported. Use add_(dense, sparse) "
                           "instead.")
    return _assign(self, add(self.detach(), other.detach(), alpha=alpha))


def mul_(self, other):
    return _assign(self, mul(self.detach(), other))


def zero_(self):
    """Removes every stored entry (nnz becomes 0)."""
    return _assign(self, SparseCooTensor._wrap(self._i[:, :0], self._v[:0], self.shape, True))


def install_coo_methods(cls):
    """Sets the arithmetic and products above as methods of the COO class."""
    cls.add, cls.sub, cls.mul, cls.div, cls.neg = add, sub, mul, div, neg
    cls.__neg__ = neg
    cls.true_divide = cls.__truediv__ = div
    cls.multiply, cls.subtract, cls.negative = mul, sub, neg
    cls.__radd__, cls.__rsub__ = radd, rsub
    cls.add_, cls.mul_, cls.zero_ = add_, mul_, zero_
    cls.__iadd__, cls.__imul__ = add_, mul_
    cls.__rmul__ = lambda self, other: mul(self, other)
    for name in ("abs", "sqrt", "sin", "tanh", "relu", "sign", "expm1", "log1p", "square",
                 "asin", "atan", "sinh", "trunc", "floor", "ceil", "frac", "round", "sgn"):
        setattr(cls, name, _zero_preserving(name))
    install_product_methods(cls)
    cls.sum = sum_method


def install_product_methods(cls):
    cls.mm = dense_mm
    cls.matmul = matmul
    cls.mv = lambda self, vec: matmul(self, vec)
    cls.__rmatmul__ = lambda self, other: matmul(other, self)
