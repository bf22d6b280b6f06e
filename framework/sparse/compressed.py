"""Sparse compressed tensors beyond 2-D CSR: PyTorch's ``sparse_csc``, ``sparse_bsr`` and
``sparse_bsc`` layouts, and CSR with batch or dense dims.

A compressed tensor of shape ``(*batch, M, N, *dense)`` holds three dense tensors:
``compressed_indices`` ``(*batch, ncompressed + 1)``, ``plain_indices`` ``(*batch, nnz)`` and
``values`` ``(*batch, nnz, *dense)`` (``(*batch, nnz, bh, bw, *dense)`` for the block layouts).
Row layouts (CSR, BSR) compress the rows and store column indices; column layouts (CSC,
BSC) compress the columns and store row indices; block layouts index blocks of
``blocksize = (bh, bw)`` elements. Every batch holds the same nnz. The entries of one
compressed index are sorted by plain index.

Conversions go through per-entry coordinates (batch, compressed, plain) built with dense
framework ops, so they run on every device and the values keep their autograd graph: the
tensor is a view of its values, as ``SparseCsrTensor`` is. A plain 2-D CSR matrix is a
``SparseCsrTensor`` (the class the COO ops know); the others are ``SparseCompressedTensor``.
"""
import math

from .. import _dtype
from .base import (SparseTensor, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr,
                   sparse_repr)
from .coo import SparseCooTensor, _to_args, unravel
from .csr import SparseCsrTensor

ROW = (sparse_csr, sparse_bsr)
BLOCK = (sparse_bsr, sparse_bsc)
COMPRESSED = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
NAMES = {sparse_csr: ("crow_indices", "col_indices"), sparse_bsr: ("crow_indices", "col_indices"),
         sparse_csc: ("ccol_indices", "row_indices"), sparse_bsc: ("ccol_indices", "row_indices")}
BACKEND = {sparse_coo: "Sparse", sparse_csr: "SparseCsr", sparse_csc: "SparseCsc",
           sparse_bsr: "SparseBsr", sparse_bsc: "SparseBsc"}


def layout_name(t):
    """PyTorch's name of ``t``'s layout in error texts (Strided, Sparse, SparseCsr, ...)."""
    return BACKEND.get(t.layout, "Strided") if isinstance(t, SparseTensor) else "Strided"


def parts(t):
    """(compressed indices, plain indices, values) of a compressed tensor."""
    if isinstance(t, SparseCsrTensor):
        return t._crow, t._col, t._v
    return t._ci, t._pi, t._v


def make(layout, ci, pi, values, shape):
    """A compressed tensor over the given parts (no checks); a 2-D CSR matrix without dense
    dims is a ``SparseCsrTensor``."""
    shape = tuple(shape)
    if layout is sparse_csr and ci.dim() == 1 and values.dim() == 1:
        return SparseCsrTensor._wrap(ci, pi, values, shape)
    return _CLASSES[layout]._wrap(ci, pi, values, shape)


class SparseCompressedTensor(SparseTensor):
    """A sparse tensor in CSC, BSR or BSC layout, or CSR with batch or dense dims."""

    __slots__ = ("_ci", "_pi", "_v")

    @classmethod
    def _wrap(cls, ci, pi, values, shape):
        t = object.__new__(cls)
        t._init(shape, values.dtype, values.device)
        t._ci, t._pi, t._v = ci, pi, values
        # the values' graph is the tensor's (a view of them)
        t._requires_grad = values._requires_grad
        return t

    @property
    def grad_fn(self):
        return None

    # ---- components ----------------------------------------------------------------------
    def _nnz(self):
        return self._pi.shape[-1]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return self._v.dim() - self._ci.dim() - (2 if self._layout in BLOCK else 0)

    def values(self):
        return self._v

    def _index(self, name):
        if name not in NAMES[self._layout]:
            kind = "row" if name in ("crow_indices", "col_indices") else "column"
            raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but "
                               f"got {self._backend}")
        ci, pi, _ = parts(self)
        return ci if name in ("crow_indices", "ccol_indices") else pi

    def crow_indices(self):
        return self._index("crow_indices")

    def col_indices(self):
        return self._index("col_indices")

    def ccol_indices(self):
        return self._index("ccol_indices")

    def row_indices(self):
        return self._index("row_indices")

    def indices(self):
        raise RuntimeError(f"indices expected sparse coordinate tensor layout but got "
                           f"{self._backend}")

    _indices = indices

    def _values(self):
        raise NotImplementedError(f"Could not run 'aten::_values' with arguments from the "
                                  f"'{self._backend_name()}' backend.")

    # ---- conversions ---------------------------------------------------------------------
    def to_dense(self, dtype=None, *, masked_grad=None):
        """A strided tensor with this tensor's elements."""
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
        return compressed_to_dense(self)

    def to(self, *args, **kwargs):
        """A copy with another dtype and/or device (self if nothing changes)."""
        dtype, device = _to_args(self, args, kwargs)
        if (dtype is None or dtype is self.dtype) and (device is None or device == self.device):
            return self
        ci, pi, v = self._ci, self._pi, self._v
        if device is not None:
            ci, pi, v = ci.to(device), pi.to(device), v.to(device)
        if dtype is not None:
            v = v.to(dtype)
        return make(self._layout, ci, pi, v, self._shape)

    def float(self, memory_format=None):
        return self.to(_dtype.float32)

    def double(self, memory_format=None):
        return self.to(_dtype.float64)

    def detach(self):
        return make(self._layout, self._ci, self._pi, self._v.detach(), self._shape)

    @property
    def data(self):
        return self.detach()

    def clone(self, *, memory_format=None):
        return make(self._layout, self._ci.clone(), self._pi.clone(), self._v.clone(),
                    self._shape)

    def __repr__(self):
        a, b = NAMES[self._layout]
        return sparse_repr(self, ((a, self._ci), (b, self._pi), ("values", self._v.detach())))

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._layout.name, self._ci, self._pi, self._v.detach(),
                           tuple(self._shape)))

    def __neg__(self):
        return make(self._layout, self._ci, self._pi, -self._v, self._shape)

    neg = __neg__

    def mul(self, other):
        """The tensor times a scalar (same layout and indices)."""
        from .ops import _scalar
        if not _scalar(other):
            raise RuntimeError(f"mul({self._layout.name}, tensor): only a scalar factor is "
                               "supported")
        return make(self._layout, self._ci, self._pi, self._v * other, self._shape)

    __rmul__ = mul

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        """The sum of all elements (a 0-d strided tensor)."""
        if dim is not None:
            raise RuntimeError(f"sum: a dim is not supported for layout {self._layout!r}")
        v = self._v if dtype is None else self._v.to(dtype)
        return v.sum()


def _rebuild(layout_name, ci, pi, values, shape):
    """Unpickles a compressed tensor."""
    return make(_BY_NAME[layout_name], ci, pi, values, shape)


def _subclass(name, layout, backend):
    return type(name, (SparseCompressedTensor,),
                {"__slots__": (), "_layout": layout, "_backend": backend,
                 "__doc__": f"A sparse tensor in {layout!r} layout."})


SparseCscTensor = _subclass("SparseCscTensor", sparse_csc, "SparseCsc")
SparseBsrTensor = _subclass("SparseBsrTensor", sparse_bsr, "SparseBsr")
SparseBscTensor = _subclass("SparseBscTensor", sparse_bsc, "SparseBsc")
SparseCsrHybridTensor = _subclass("SparseCsrHybridTensor", sparse_csr, "SparseCsr")
_CLASSES = {sparse_csr: SparseCsrHybridTensor, sparse_csc: SparseCscTensor,
            sparse_bsr: SparseBsrTensor, sparse_bsc: SparseBscTensor}
_BY_NAME = {lay.name: lay for lay in COMPRESSED}


def check_mm(mat1, mat2):
    """PyTorch's checks of the product of two matrices, one of them compressed."""
    if mat1.dim() != 2 or mat2.dim() != 2:
        return      # the COO product's checks name the bad operand
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {mat1.dtype.scalar_name} but found "
                           f"{mat2.dtype.scalar_name}")


# ---- geometry ----------------------------------------------------------------------------

def _geometry(t):
    """(batch shape, nbatch, blocksize, dense shape) of a compressed tensor."""
    ci, _, v = parts(t)
    batch = tuple(ci.shape[:-1])
    block = tuple(v.shape[len(batch) + 1:len(batch) + 3]) if t.layout in BLOCK else (1, 1)
    dense = tuple(t.shape[len(batch) + 2:])
    return batch, math.prod(batch), block, dense


def _coords(t):
    """Per stored entry (all batches, in storage order): batch, compressed and plain index,
    and the values as (entries, bh, bw, *dense) blocks (1 x 1 for CSR/CSC)."""
    import framework
    ci, pi, v = parts(t)
    batch, nb, block, dense = _geometry(t)
    nnz = pi.shape[-1]
    ncomp = ci.shape[-1] - 1
    counts = (ci[..., 1:] - ci[..., :-1]).reshape(-1)
    total = nb * nnz
    comp = framework.arange(ncomp, device=ci.device).repeat(nb).repeat_interleave(
        counts, output_size=total)
    bidx = framework.arange(nb, device=ci.device).repeat_interleave(nnz)
    blocks = v.reshape((total,) + block + dense)
    return bidx, comp, pi.reshape(-1).to(_dtype.int64), blocks


def _from_coords(layout, bidx, comp, plain, blocks, batch, ncomp, shape, index_dtype=None):
    """A compressed tensor from entries sorted by (batch, compressed, plain index); each
    batch holds the same number of them."""
    import framework
    nb = math.prod(batch)
    total = plain.shape[0]
    nnz = total // nb if nb else 0
    key = bidx * ncomp + comp
    counts = framework.bincount(key, minlength=nb * ncomp).reshape(nb, ncomp) \
        if total else framework.zeros((nb, ncomp), dtype=_dtype.int64, device=plain.device)
    ci = framework.cat((counts.new_zeros((nb, 1)), counts.cumsum(1)), 1)
    ci = ci.reshape(batch + (ncomp + 1,))
    pi = plain.reshape(batch + (nnz,))
    if index_dtype is not None and index_dtype is not _dtype.int64:
        ci, pi = ci.to(index_dtype), pi.to(index_dtype)
    if layout not in BLOCK:
        blocks = blocks.reshape((total,) + tuple(blocks.shape[3:]))
    values = blocks.reshape(batch + (nnz,) + tuple(blocks.shape[1:]))
    return make(layout, ci, pi, values, shape)


def _blocksize_arg(blocksize, op):
    try:
        bs = tuple(int(b) for b in blocksize)
    except TypeError:
        bs = (blocksize,)
    if len(bs) != 2:
        raise RuntimeError(f"{op}: blocksize needs to be a tuple of size 2, but got {len(bs)}")
    if bs[0] <= 0 or bs[1] <= 0:
        raise RuntimeError(f"{op}: blocksize needs to be positive, but got {list(bs)}")
    return bs


# ---- dense <-> compressed ----------------------------------------------------------------

def _blocked(x, layout, nb, block, dense):
    """Strided ``x`` viewed as (batch, compressed, plain, bh, bw, *dense) blocks."""
    bh, bw = block
    nbd = x.dim() - 2 - len(dense)
    m, k = x.shape[nbd], x.shape[nbd + 1]
    xb = x.reshape((nb, m // bh, bh, k // bw, bw) + dense)
    xb = xb.permute((0, 1, 3, 2, 4) + tuple(range(5, 5 + len(dense))))
    return xb if layout in ROW else xb.transpose(1, 2)


def empty_like(t, dtype, device):
    """A compressed tensor of ``t``'s layout, shape and blocksize with no stored entries."""
    import framework
    batch, _, block, dense = _geometry(t)
    ci = parts(t)[0]
    zeros = framework.zeros
    return make(t.layout, zeros(batch + (ci.shape[-1],), dtype=ci.dtype, device=device),
                zeros(batch + (0,), dtype=ci.dtype, device=device),
                zeros(batch + (0,) + (block if t.layout in BLOCK else ()) + dense, dtype=dtype,
                      device=device), tuple(t.shape))


def sparse_mask(x, mask):
    """Strided ``x`` read at the entries (blocks) stored in compressed ``mask``: a tensor
    with ``mask``'s indices (differentiable in ``x``)."""
    batch, nb, block, dense = _geometry(mask)
    bidx, comp, plain, _ = _coords(mask)
    blocks = _blocked(x, mask.layout, nb, block, dense)[bidx, comp, plain]
    ci, pi, v = parts(mask)
    return make(mask.layout, ci, pi, blocks.reshape(tuple(v.shape)), tuple(x.shape))


def dense_to_compressed(x, layout, blocksize=None, dense_dim=None):
    """``x`` (strided) in a compressed layout: its elements (blocks for BSR/BSC) that are
    not all zero over the dense dims; the dims before the last two sparse ones (and
    ``dense_dim`` dense ones) are batch dims."""
    import framework
    name = BACKEND[layout].lower().replace("sparse", "sparse_")
    op = f"dense_to_{name}"
    n = x.dim()
    if n < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got -2)")
    dense_dim = 0 if dense_dim is None else int(dense_dim)
    if not 0 <= dense_dim <= n - 2:
        raise RuntimeError(f"{op}: dense_dim argument must be in [0,{n - 2}] range, but "
                           f"{dense_dim} is given")
    nbd = n - 2 - dense_dim
    batch = tuple(x.shape[:nbd])
    nb = math.prod(batch)
    if nb == 0:
        raise RuntimeError(f"to_{name}: Expected product of batch dimensions to be non-zero.")
    m, k = x.shape[nbd], x.shape[nbd + 1]
    dense = tuple(x.shape[nbd + 2:])
    bh, bw = _blocksize_arg(blocksize, op) if layout in BLOCK else (1, 1)
    if m % bh or k % bw:
        raise RuntimeError(f"{op}: tensor sparse size ({m},{k}) must be divisible by given "
                           f"blocksize ({bh},{bw})")
    xb = _blocked(x, layout, nb, (bh, bw), dense)
    ncomp, nplain = xb.shape[1], xb.shape[2]
    nz = (xb.detach() != 0).reshape(nb, ncomp, nplain, bh * bw * math.prod(dense)).any(-1)
    if nb > 1:
        per_batch = nz.reshape(nb, -1).sum(1)
        if bool((per_batch != per_batch[0]).any()):
            raise RuntimeError("Expect the same number of specified elements per batch.")
    bidx, comp, plain = nz.nonzero().unbind(1)   # row-major: sorted as the layout wants
    blocks = xb[bidx, comp, plain]
    return _from_coords(layout, bidx, comp, plain, blocks, batch, ncomp, tuple(x.shape))


def compressed_to_dense(t):
    """The strided tensor of a compressed one (differentiable in the values)."""
    import framework
    batch, nb, (bh, bw), dense = _geometry(t)
    ci, pi, v = parts(t)
    ncomp = ci.shape[-1] - 1
    nbd = len(batch)
    m, k = t.shape[nbd], t.shape[nbd + 1]
    row = t.layout in ROW
    nplain = (k // bw) if row else (m // bh)
    out = framework.zeros((nb, ncomp, nplain, bh, bw) + dense, dtype=t.dtype, device=t.device)
    bidx, comp, plain, blocks = _coords(t)
    if plain.shape[0]:
        where = (bidx, comp, plain)
        out = out.index_put_(where, blocks) if t.dtype is _dtype.bool else \
            out.index_put(where, blocks, accumulate=True)
    if not row:
        out = out.transpose(1, 2)
    out = out.permute((0, 1, 3, 2, 4) + tuple(range(5, 5 + len(dense))))
    return out.reshape(tuple(t.shape))


# ---- sparse <-> compressed ---------------------------------------------------------------

def compressed_to_coo(t, sparse_dim=None):
    """A compressed tensor as COO: batch and sparse dims become sparse dims; a block
    becomes its bh * bw elements (zeros included). The entries keep the storage order (a
    CSC's by column: not coalesced, as PyTorch's)."""
    import framework
    if sparse_dim is not None and sparse_dim != t.dim() - t.dense_dim():
        raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {layout_name(t)} to "
                           f"Sparse with sparse_dim argument !={t.dim() - t.dense_dim()} is "
                           "not supported")
    batch, nb, (bh, bw), dense = _geometry(t)
    bidx, comp, plain, blocks = _coords(t)
    row, col = (comp, plain) if t.layout in ROW else (plain, comp)
    row, col = row * bh, col * bw
    if t.layout in BLOCK:
        ii = framework.arange(bh, device=row.device).repeat_interleave(bw)
        jj = framework.arange(bw, device=row.device).repeat(bh)
        row = (row.unsqueeze(1) + ii).reshape(-1)
        col = (col.unsqueeze(1) + jj).reshape(-1)
        bidx = bidx.repeat_interleave(bh * bw)
    values = blocks.reshape((-1,) + dense)
    idx = [row, col]
    if batch:
        idx = list(unravel(bidx, batch).unbind(0)) + idx
    idx = framework.stack(idx) if idx[0].numel() else \
        framework.zeros((len(idx), 0), dtype=_dtype.int64, device=row.device)
    coalesced = t.layout is sparse_csr or (t.layout is sparse_bsr and (bh, bw) == (1, 1))
    return SparseCooTensor.make(idx, values, tuple(t.shape), coalesced)


def coo_to_compressed(s, layout, blocksize=None, dense_dim=None, op=None):
    """A COO tensor with two sparse dims (dense dims allowed) in a compressed layout."""
    import framework
    name = BACKEND[layout]
    op = op or f"coo_to_{name.lower().replace('sparse', 'sparse_')}"
    if s.sparse_dim() != 2:
        raise RuntimeError(f"{op}: conversion from Sparse to {name} for input tensors with "
                           "sparse_dim()!=2 is not supported")
    for arg, value in (("blocksize", None if layout in BLOCK else blocksize),
                       ("dense_dim", dense_dim)):
        if value is not None:
            raise RuntimeError(f"{op}: conversion from Sparse to {name} with {arg} argument "
                               "given is not supported")
    if layout in BLOCK:
        return compressed_to_block(coo_to_compressed(s, sparse_csr), layout, blocksize)
    c = s.coalesce()
    i, v = c._parts()
    comp, plain = (i[0], i[1]) if layout is sparse_csr else (i[1], i[0])
    ncomp = s.shape[0] if layout is sparse_csr else s.shape[1]
    if layout is sparse_csc and comp.numel() > 1:
        order = framework.argsort(comp * s.shape[0] + plain, stable=True)
        comp, plain, v = comp[order], plain[order], v.index_select(0, order)
    blocks = v.reshape((v.shape[0], 1, 1) + tuple(v.shape[1:]))
    return _from_coords(layout, framework.zeros_like(comp), comp, plain, blocks, (), ncomp,
                        tuple(s.shape))


def _reorder(t, layout):
    """CSR <-> CSC and BSR <-> BSC: the same entries sorted by the other index (a block
    keeps its orientation)."""
    import framework
    batch, nb, (bh, bw), dense = _geometry(t)
    nbd = len(batch)
    m, k = t.shape[nbd], t.shape[nbd + 1]
    bidx, comp, plain, blocks = _coords(t)
    ncomp = (m // bh) if layout in ROW else (k // bw)
    nplain = (k // bw) if layout in ROW else (m // bh)
    comp, plain = plain, comp
    if comp.numel() > 1:
        order = framework.argsort((bidx * ncomp + comp) * nplain + plain, stable=True)
        bidx, comp, plain = bidx[order], comp[order], plain[order]
        blocks = blocks.index_select(0, order)
    ci = parts(t)[0]
    return _from_coords(layout, bidx, comp, plain, blocks, batch, ncomp, tuple(t.shape),
                        ci.dtype)


def compressed_to_block(t, layout, blocksize):
    """CSR or CSC (without batch dims) as BSR or BSC: every block holding a stored element
    is stored, filled from the elements (the others in it are zero)."""
    import framework
    op = f"sparse_compressed_to_{BACKEND[layout].lower().replace('sparse', 'sparse_')}"
    bh, bw = _blocksize_arg(blocksize, op)
    if t.dim() - t.dense_dim() > 2:
        raise RuntimeError(f"{op}: conversion from {layout_name(t)} to {BACKEND[layout]} for "
                           "batched inputs is not supported")
    m, k = t.shape[0], t.shape[1]
    if m % bh or k % bw:
        raise RuntimeError(f"{op}: tensor sparse size ({m},{k}) must be divisible by given "
                           f"blocksize ({bh},{bw})")
    _, _, _, dense = _geometry(t)
    _, comp, plain, elems = _coords(t)
    row, col = (comp, plain) if t.layout in ROW else (plain, comp)
    mb, kb = m // bh, k // bw
    brow, bcol = row.div(bh, rounding_mode="floor"), col.div(bw, rounding_mode="floor")
    key = brow * kb + bcol if layout in ROW else bcol * mb + brow
    uniq, inverse = framework.unique(key, sorted=True, return_inverse=True)
    blocks = framework.zeros((uniq.shape[0], bh, bw) + dense, dtype=t.dtype, device=t.device)
    if row.numel():
        blocks = blocks.index_put((inverse, row - brow * bh, col - bcol * bw),
                                  elems.reshape((-1,) + dense), accumulate=True)
    ncomp, nplain = (mb, kb) if layout in ROW else (kb, mb)
    comp = uniq.div(nplain, rounding_mode="floor")
    return _from_coords(layout, framework.zeros_like(comp), comp, uniq - comp * nplain,
                        blocks, (), ncomp, tuple(t.shape))
