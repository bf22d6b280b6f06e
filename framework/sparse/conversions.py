"""``to_sparse(layout=, blocksize=, dense_dim=)``, ``to_sparse_csr``/``csc``/``bsr``/``bsc``
and ``t``/``transpose`` across the layouts, with PyTorch's rules for which conversion takes
which argument; ``install`` attaches them to the tensor classes. The conversions themselves
live in ``compressed``."""
from .._tensor import Tensor, _wrap_dim
from . import compressed as C
from .base import SparseTensor, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr
from .coo import SparseCooTensor, dense_to_sparse
from .csr import SparseCsrTensor

_OTHER = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc,
          sparse_bsc: sparse_bsr}


def _op_name(layout):
    return C.BACKEND[layout].lower().replace("sparse", "sparse_")


def convert(t, layout, blocksize=None, dense_dim=None, op="to_sparse"):
    """``t`` (strided or sparse) in ``layout`` (self when it is already in it)."""
    src = C.layout_name(t)
    dst = C.BACKEND[layout]
    block = layout in C.BLOCK
    if not isinstance(t, SparseTensor):
        if blocksize is not None and not block:
            raise RuntimeError(f"dense_to_sparse: conversion from Strided to {dst} with "
                               "blocksize argument given is not supported")
        if blocksize is None and block:
            raise RuntimeError(f"dense_to_sparse: conversion from Strided to {dst} without "
                               "blocksize argument given is not supported")
        if layout is sparse_coo:
            return dense_to_sparse(t, None if dense_dim is None else t.dim() - dense_dim)
        return C.dense_to_compressed(t, layout, blocksize, dense_dim)
    if layout is sparse_coo:
        if t.layout is sparse_coo:
            return t
        for name, arg in (("blocksize", blocksize), ("dense_dim", dense_dim)):
            if arg is not None:
                raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {src} to "
                                   f"Sparse with {name} argument given is not supported")
        return C.compressed_to_coo(t)
    if t.layout is sparse_coo:
        return C.coo_to_compressed(t, layout, blocksize, dense_dim,
                                   "sparse_coo_to_sparse" if op == "to_sparse" else None)
    if t.layout is layout and not block:
        for name, arg in (("blocksize", blocksize), ("dense_dim", dense_dim)):
            if arg is not None:
                raise RuntimeError(f"{op}: conversion from {src} to {dst} with {name} "
                                   "argument given is not supported")
        return t
    conv = f"sparse_compressed_to_{_op_name(layout)}"
    if dense_dim is not None:
        raise RuntimeError(f"{conv}: conversion from {src} to {dst} with dense_dim argument "
                           "given is not supported")
    if not block:
        if t.layout in C.BLOCK:
            raise RuntimeError(f"{conv}: expected SparseCsr or SparseCsc layout but got {src}")
        return C._reorder(t, layout)
    if blocksize is None:
        raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {src} to {dst} "
                           "without blocksize argument given is not supported")
    if t.layout not in C.BLOCK:
        return C.compressed_to_block(t, layout, blocksize)
    have = list(C._geometry(t)[2])
    want = list(C._blocksize_arg(blocksize, conv))
    if have != want:
        where = op if t.layout is layout else conv
        raise RuntimeError(f"{where}: conversion from {src} to {dst} with blocksize changed "
                           f"from {have} to {want} is not supported")
    return t if t.layout is layout else C._reorder(t, layout)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """to_sparse(sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None) -> Tensor

    A sparse copy of this tensor in ``layout`` (COO when None; self when it already has
    that layout and blocksize). ``sparse_dim`` is COO's number of sparse dims."""
    if sparse_dim is not None:
        if layout is not None or blocksize is not None or dense_dim is not None:
            # PyTorch's two overloads: to_sparse(sparse_dim) and to_sparse(*, layout, ...)
            raise TypeError("to_sparse() takes 0 positional arguments but 1 was given")
        if isinstance(self, SparseCooTensor):
            if sparse_dim != self.sparse_dim():
                raise RuntimeError("to_sparse: conversion from Sparse to Sparse with "
                                   "sparse_dim argument !=self.sparse_dim() is not supported")
            return self
        if isinstance(self, SparseTensor):
            return C.compressed_to_coo(self, sparse_dim)
        return dense_to_sparse(self, sparse_dim)
    return convert(self, sparse_coo if layout is None else layout, blocksize, dense_dim)


def to_sparse_csr(self, dense_dim=None):
    """to_sparse_csr(dense_dim=None) -> Tensor: the tensor in CSR layout (batch dims before
    the two sparse ones, ``dense_dim`` dense ones after them)."""
    return convert(self, sparse_csr, None, dense_dim, "to_sparse_csr")


def to_sparse_csc(self, dense_dim=None):
    """to_sparse_csc(dense_dim=None) -> Tensor: the tensor in CSC layout."""
    return convert(self, sparse_csc, None, dense_dim, "to_sparse_csc")


def to_sparse_bsr(self, blocksize, dense_dim=None):
    """to_sparse_bsr(blocksize, dense_dim=None) -> Tensor: the tensor in BSR layout with
    blocks of ``blocksize`` (which must divide the two sparse dims)."""
    return convert(self, sparse_bsr, blocksize, dense_dim, "to_sparse_bsr")


def to_sparse_bsc(self, blocksize, dense_dim=None):
    """to_sparse_bsc(blocksize, dense_dim=None) -> Tensor: the tensor in BSC layout."""
    return convert(self, sparse_bsc, blocksize, dense_dim, "to_sparse_bsc")


def to_sparse_coo(self):
    return convert(self, sparse_coo)


# ---- transposes ----------------------------------------------------------------------

def transpose(self, dim0, dim1):
    """Swaps two dims of the same kind: the two sparse dims (CSR <-> CSC, BSR <-> BSC on
    the same indices, blocks transposed), two batch dims or two dense dims."""
    n = self.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    if d0 == d1:
        return self
    ci, pi, v = C.parts(self)
    nbd = ci.dim() - 1
    kinds = ["Batch" if d < nbd else "Sparse" if d < nbd + 2 else "Dense" for d in (d0, d1)]
    if kinds[0] != kinds[1]:
        raise RuntimeError(f"transpose(): can only transpose dimensions of the same type "
                           f"(Batch, Sparse, Dense), got {d0}({kinds[0]}) and {d1}({kinds[1]})")
    shape = list(self.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    block = self.layout in C.BLOCK
    if kinds[0] == "Sparse":
        if block:
            v = v.transpose(nbd + 1, nbd + 2)
        return C.make(_OTHER[self.layout], ci, pi, v, shape)
    if kinds[0] == "Batch":
        return C.make(self.layout, ci.transpose(d0, d1), pi.transpose(d0, d1),
                      v.transpose(d0, d1), shape)
    shift = 1 - 2 + (2 if block else 0)   # a dense dim's place in the values
    return C.make(self.layout, ci, pi, v.transpose(d0 + shift, d1 + shift), shape)


def t(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    return transpose(self, 0, 1)


def _mT(self):
    return transpose(self, -2, -1)


def install():
    """Attaches the conversions to strided tensors and to every sparse class."""
    from . import ops
    Tensor.to_sparse = to_sparse
    Tensor.to_sparse_csr = to_sparse_csr
    for cls in (Tensor, SparseCooTensor, SparseCsrTensor, C.SparseCompressedTensor):
        cls.to_sparse_csc = to_sparse_csc
        cls.to_sparse_bsr = to_sparse_bsr
        cls.to_sparse_bsc = to_sparse_bsc
    for cls in (SparseCooTensor, SparseCsrTensor, C.SparseCompressedTensor):
        cls.to_sparse = to_sparse
        cls.to_sparse_csr = to_sparse_csr
    C.SparseCompressedTensor.to_sparse_coo = to_sparse_coo
    for cls in (SparseCsrTensor, C.SparseCompressedTensor):
        cls.transpose, cls.t = transpose, t
        cls.T = property(t)
        cls.mT = property(_mT)
    for name in ("ccol_indices", "row_indices", "_index", "sum"):
        setattr(SparseCsrTensor, name, getattr(C.SparseCompressedTensor, name))
    ops.install_product_methods(C.SparseCompressedTensor)
