"""``framework.sparse.spdiags``: a sparse matrix from its diagonals (PyTorch's, SciPy's
``dia_matrix`` convention)."""
import numpy as np

from .. import _dtype
from .base import sparse_coo, sparse_csc, sparse_csr
from .coo import sparse_coo_tensor


def spdiags(diagonals, offsets, shape, layout=None):
    """spdiags(diagonals, offsets, shape, layout=None) -> Tensor

    A sparse 2-D tensor of ``shape`` whose diagonal ``offsets[i]`` (0 the main one, > 0
    above it, < 0 below it) holds row ``i`` of ``diagonals``: element ``(r, r + offsets[i])``
    is ``diagonals[i, r + offsets[i]]``, so a diagonal is indexed by column. Elements that
    fall outside the matrix are dropped. ``layout``: ``sparse_coo`` (default, uncoalesced),
    or ``sparse_csr``."""
    if layout not in (None, sparse_coo, sparse_csr, sparse_csc):
        raise RuntimeError("Only output layouts (Sparse, SparseCsc, SparseCsr) are "
                           f"supported, got {_layout_name(layout)}")
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    if offsets.dim() > 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if diagonals.dim() > 2:
        raise RuntimeError("Diagonals must be vector or matrix")
    if offsets.dtype is not _dtype.int64:
        raise RuntimeError(f"Offset Tensor must have dtype Long but got "
                           f"{offsets.dtype.scalar_name}")
    offs = np.atleast_1d(np.asarray(offsets.detach().cpu().numpy(), dtype=np.int64))
    diags = diagonals if diagonals.dim() == 2 else diagonals.reshape(1, -1)
    if len(np.unique(offs)) != len(offs):
        raise RuntimeError("Offset tensor contains duplicate values")
    if diags.shape[0] != len(offs):
        raise RuntimeError(f"Number of diagonals ({diags.shape[0]}) does not match the "
                           f"number of offsets ({len(offs)})")
    rows_out, cols_out = int(shape[0]), int(shape[1])
    which, rows, cols = [], [], []
    for i, off in enumerate(offs.tolist()):
        # the diagonal's columns that lie inside the matrix and inside ``diagonals``' row
        first, last = max(0, off), min(cols_out, rows_out + off, diags.shape[1])
        if last > first:
            c = np.arange(first, last, dtype=np.int64)
            which.append(np.full(c.shape, i, dtype=np.int64))
            rows.append(c - off)
            cols.append(c)
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
    which, rows, cols = cat(which), cat(rows), cat(cols)
    import framework as _fw
    dev = diagonals.device
    values = diags[_fw.tensor(which, device=dev), _fw.tensor(cols, device=dev)]
    indices = _fw.tensor(np.stack([rows, cols]), device=dev)
    out = sparse_coo_tensor(indices, values, (rows_out, cols_out))
    if layout is sparse_csr:
        return out.to_sparse_csr()
    if layout is sparse_csc:
        raise NotImplementedError("spdiags: the sparse_csc layout is not supported")
    return out


def _layout_name(layout):
    names = {"strided": "Strided", "sparse_bsr": "SparseBsr", "sparse_bsc": "SparseBsc"}
    text = str(layout).rsplit(".", 1)[-1]
    return names.get(text, text)
