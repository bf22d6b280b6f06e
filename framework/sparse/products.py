"""Sparse products with sparse results (``smm``, ``hspmm``, ``sspaddmm``,
``sparse.sampled_addmm``) and ``zeros_like``/``empty_like`` of a sparse tensor.

A COO matrix times a dense one is a dense product over the stored rows; the sparse
results keep every column of each row that has a stored entry (PyTorch's layout, zeros
included). ``smm``, ``hspmm`` and ``sspaddmm`` have no derivative in PyTorch either;
``sampled_addmm`` is written with differentiable ops on the values.
"""
import framework

from .. import _dtype
from .._tensor import Tensor
from .base import SparseTensor, sparse_coo, sparse_csr
from .coo import SparseCooTensor
from .csr import SparseCsrTensor


def _layout_name(t):
    if not isinstance(t, SparseTensor):
        return "Strided"
    return "SparseCsr" if t.layout is sparse_csr else "Sparse"


def _backend(t):
    if isinstance(t, SparseTensor):
        return t._backend_name()
    return "CUDA" if t.device.type == "cuda" else "CPU"


def _no_kernel(op, t):
    return NotImplementedError(f"Could not run 'aten::{op}' with arguments from the "
                               f"'{_backend(t)}' backend. This could be because the operator "
                               "doesn't exist for this backend.")


def _check_product(op, mat1, mat2):
    """PyTorch's checks of a COO matrix ``mat1`` times a dense matrix ``mat2``."""
    if mat1.dim() != 2:
        raise RuntimeError(f"{op}: Argument #2: matrices expected, got {mat1.dim()}D tensor")
    if mat2.dim() != 2:
        raise RuntimeError(f"{op}: Argument #3: matrices expected, got {mat2.dim()}D tensor")
    if mat1.dense_dim():
        raise RuntimeError(f"{op}: Argument #2: scalar values expected, got "
                           f"{mat1.dense_dim()}D values")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"{op}: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                           f"{mat2.shape[0]}")
    if mat2.dtype is not mat1.dtype:
        raise RuntimeError(f"expected scalar type {mat1.dtype.scalar_name} but found "
                           f"{mat2.dtype.scalar_name}")


def _row_products(mat1, mat2, alpha):
    """The rows of ``mat1`` that hold entries (sorted) and ``alpha * (mat1 @ mat2)`` at
    those rows."""
    from .ops import _spmm
    with framework.no_grad():
        s = mat1.detach().coalesce()
        i = s._indices()
        rows = framework.unique(i[0], sorted=True) if i.shape[1] else i[0]
        prod = _spmm(s, mat2.detach()).index_select(0, rows)
        return rows, prod * alpha if alpha != 1 else prod


def _expand_rows(rows, prod):
    """COO indices and values of the full rows ``rows`` of ``prod`` (every column)."""
    p = prod.shape[1]
    cols = framework.arange(p, device=rows.device).repeat(rows.shape[0])
    return framework.stack([rows.repeat_interleave(p), cols]), prod.reshape(-1)


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> Tensor

    ``beta * input + alpha * (mat1 @ mat2)`` for COO ``input`` and ``mat1`` and a dense
    ``mat2``; the result is a COO tensor holding ``input``'s entries and then every column
    of each row of ``mat1`` that has a stored entry (not coalesced)."""
    if not isinstance(mat1, SparseTensor) or mat1.layout is not sparse_coo:
        if isinstance(mat1, SparseTensor):
            raise _no_kernel("sspaddmm.out", mat1)
        raise RuntimeError(f"sspaddmm: expected 'mat1' to have sparse layout, got 'mat1' "
                           f"with layout {_layout_name(mat1)}")
    if isinstance(mat2, SparseTensor):
        raise RuntimeError(f"sspaddmm: expected 'mat2' to have strided layout, got 'mat2' "
                           f"with layout {_layout_name(mat2)}")
    if not isinstance(input, SparseCooTensor):
        raise RuntimeError(f"sspaddmm: expected 'input' to have sparse layout, got 'input' "
                           f"with layout {_layout_name(input)}")
    _check_product("sspaddmm", mat1, mat2)
    for d, n in enumerate((mat1.shape[0], mat2.shape[1])):
        if input.dim() != 2 or input.shape[d] != n:
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {d} size {n}, got "
                               f"{input.shape[d] if input.dim() > d else None}")
    if input.dtype is not mat1.dtype:
        raise RuntimeError(f"dtype of values ({mat1.dtype.scalar_name}) must match dtype of "
                           f"sparse tensor ({input.dtype.scalar_name})")
    if out is not None:
        raise RuntimeError("sspaddmm: out= is not supported")
    rows, prod = _row_products(mat1, mat2, alpha)
    idx, vals = _expand_rows(rows, prod)
    with framework.no_grad():
        i0, v0 = input._i, input._v.detach()
        v0 = v0 * beta if beta != 1 else v0
        return SparseCooTensor._wrap(framework.cat([i0, idx], 1), framework.cat([v0, vals]),
                                     tuple(input.shape), False)


def smm(input, mat):
    """smm(input, mat) -> Tensor

    The product of COO matrix ``input`` and dense matrix ``mat`` as a COO tensor."""
    if isinstance(input, SparseCooTensor) and input.dim() == 2 and isinstance(mat, Tensor) \
            and mat.dim() == 2:
        empty = SparseCooTensor._wrap(
            framework.zeros((2, 0), dtype=_dtype.int64, device=input.device),
            framework.zeros((0,), dtype=input.dtype, device=input.device),
            (input.shape[0], mat.shape[1]), True)
    elif not isinstance(input, SparseTensor) and not isinstance(mat, SparseTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    else:
        empty = input     # the checks of sspaddmm raise PyTorch's error
    return sspaddmm(empty, input, mat, beta=0)


def hspmm(mat1, mat2, *, out=None):
    """hspmm(mat1, mat2, *, out=None) -> Tensor

    The product of COO matrix ``mat1`` and dense matrix ``mat2`` as a hybrid COO tensor:
    one sparse dim (the rows of ``mat1`` that hold entries) and dense rows."""
    if not isinstance(mat1, SparseCooTensor):
        raise _no_kernel("hspmm", mat1)
    if isinstance(mat2, SparseTensor):
        raise RuntimeError("addmm_sparse_dense: expected strided result tensor, got tensor "
                           "with layout Sparse")
    _check_product("hspmm", mat1, mat2)
    if out is not None:
        raise RuntimeError("hspmm: out= is not supported")
    rows, prod = _row_products(mat1, mat2, 1)
    return SparseCooTensor._wrap(rows.unsqueeze(0), prod, (mat1.shape[0], mat2.shape[1]),
                                 False)


def sampled_addmm(input, mat1, mat2, *, beta=1., alpha=1., out=None):
    """sampled_addmm(input, mat1, mat2, *, beta=1., alpha=1., out=None) -> Tensor

    ``beta * input + alpha * (mat1 @ mat2)`` computed only at the entries stored in the
    CSR matrix ``input``; the result has ``input``'s sparsity pattern."""
    if not isinstance(input, SparseCsrTensor):
        raise _no_kernel("sparse_sampled_addmm", input)
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if isinstance(m, SparseTensor):
            raise RuntimeError(f"sampled_addmm: Expected {name} to have strided layout, but "
                               f"got {_layout_name(m)}")
        if m.dim() < 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a matrix, got "
                               f"{m.dim()}-D tensor")
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError("sampled_addmm: batched inputs are not supported (2-D CSR only)")
    if mat2.dtype is not mat1.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and mat2 to have the same dtype, "
                           f"but got {mat1.dtype.scalar_name} and {mat2.dtype.scalar_name}")
    if mat1.dtype is not input.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and self to have the same dtype, "
                           f"but got {mat1.dtype.scalar_name} and {input.dtype.scalar_name}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if input.shape[0] != mat1.shape[0]:
        raise RuntimeError("sampled_addmm: self.shape[-2] must match mat1.shape[-2]")
    if input.shape[1] != mat2.shape[1]:
        raise RuntimeError("sampled_addmm: self.shape[-1] must match mat2.shape[-1]")
    if input.dtype.category < 2 or input.dtype in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"sparse_sampled_addmm: Expected self to be a floating-point or "
                           f"complex tensor, but got {input.dtype.scalar_name}")
    if out is not None:
        raise RuntimeError("sampled_addmm: out= is not supported")
    rows, cols = input._rows(), input._col
    # one dot product per stored entry: row of mat1 with column of mat2 (differentiable)
    dots = (mat1.index_select(0, rows) * mat2.t().index_select(0, cols)).sum(1)
    values = input._v * beta + dots * alpha if beta != 0 else dots * alpha
    return SparseCsrTensor._wrap(input._crow, cols, values, tuple(input.shape))


def like(name, input, dtype=None, layout=None, device=None, requires_grad=False,
         memory_format=None):
    """``zeros_like``/``empty_like`` of a sparse tensor: an empty tensor of its layout
    (no stored entries), or a dense one for ``layout=framework.strided``."""
    dtype = input.dtype if dtype is None else dtype
    device = input.device if device is None else framework.device(device)
    if layout is framework.strided:
        fn = framework.zeros if name == "zeros_like" else framework.empty
        return fn(tuple(input.shape), dtype=dtype, device=device, requires_grad=requires_grad)
    layout = input.layout if layout is None else layout
    if layout is input.layout and layout is not sparse_coo:
        from .compressed import empty_like
        out = empty_like(input, dtype, device)
    elif layout is sparse_csr:
        out = SparseCsrTensor._wrap(
            framework.zeros((input.shape[0] + 1,), dtype=_dtype.int64, device=device),
            framework.zeros((0,), dtype=_dtype.int64, device=device),
            framework.zeros((0,), dtype=dtype, device=device), tuple(input.shape))
    elif layout is sparse_coo:
        nsp = input.sparse_dim()
        out = SparseCooTensor._wrap(
            framework.zeros((nsp, 0), dtype=_dtype.int64, device=device),
            framework.zeros((0,) + tuple(input.shape[nsp:]), dtype=dtype, device=device),
            tuple(input.shape), True)
    else:
        raise RuntimeError(f"{name}: layout {layout!r} is not supported")
    return out.requires_grad_(True) if requires_grad else out
