"""``sparse_compressed_tensor`` and ``sparse_csr/csc/bsr/bsc_tensor``: compressed tensors
from their compressed indices, plain indices and values. As PyTorch, only the dims of the
parts are always checked; the size and the indices are checked on request
(``check_invariants``)."""
import math

from .. import _dtype
from .._tensor import Tensor
from . import compressed as C
from .base import shape_of, sparse_bsc, sparse_bsr, sparse_csc, sparse_csr
from .coo import _values_tensor


def _index_tensor(indices, device):
    """Index lists become int64 tensors; int32/int64 tensors keep their dtype."""
    import framework
    if not isinstance(indices, Tensor):
        return framework.tensor(indices, dtype=_dtype.int64, device=device)
    if device is not None and indices.device != device:
        indices = indices.to(device)
    if indices.dtype not in (_dtype.int32, _dtype.int64):
        indices = indices.to(_dtype.int64)
    return indices


def _layout_arg(layout, fn):
    if layout not in C.COMPRESSED:
        got = "none" if layout is None else C.BACKEND.get(layout, "Strided")
        raise RuntimeError(f"{fn} expected sparse compressed tensor layout but got {got}")
    return layout


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
    dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False,
    check_invariants=None) -> Tensor

    Constructs a sparse tensor in compressed layout (CSR, CSC, BSR or BSC, given by
    ``layout``): the entries of compressed index ``i`` are
    ``plain_indices[..., compressed_indices[..., i]:compressed_indices[..., i + 1]]`` with
    the matching ``values``. ``size`` is inferred from the indices when omitted."""
    return _build("sparse_compressed_tensor", _layout_arg(layout, "sparse_compressed_tensor"),
                  compressed_indices, plain_indices, values, size, dtype, device,
                  requires_grad, check_invariants)


def _layout_check(fn, want, layout):
    if layout is not None and layout is not want:
        raise RuntimeError(f"{fn}: layout must be {C.BACKEND[want]} but got "
                           f"{C.BACKEND.get(layout, 'Strided')}")


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      layout=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
    device=None, pin_memory=False, requires_grad=False, check_invariants=None) -> Tensor

    Constructs a sparse tensor in CSR (Compressed Sparse Row) format: the entries of row
    ``r`` are ``col_indices[..., crow_indices[..., r]:crow_indices[..., r + 1]]``."""
    _layout_check("sparse_csr_tensor", sparse_csr, layout)
    return _build("sparse_csr_tensor", sparse_csr, crow_indices, col_indices, values, size,
                  dtype, device, requires_grad, check_invariants)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
                      layout=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
    device=None, pin_memory=False, requires_grad=False, check_invariants=None) -> Tensor

    Constructs a sparse tensor in CSC (Compressed Sparse Column) format: the entries of
    column ``c`` are ``row_indices[..., ccol_indices[..., c]:ccol_indices[..., c + 1]]``."""
    _layout_check("sparse_csc_tensor", sparse_csc, layout)
    return _build("sparse_csc_tensor", sparse_csc, ccol_indices, row_indices, values, size,
                  dtype, device, requires_grad, check_invariants)


def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      layout=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
    device=None, pin_memory=False, requires_grad=False, check_invariants=None) -> Tensor

    Constructs a sparse tensor in BSR (Block Compressed Sparse Row) format: CSR over
    blocks, whose contents are ``values[..., k, :, :]``."""
    _layout_check("sparse_bsr_tensor", sparse_bsr, layout)
    return _build("sparse_bsr_tensor", sparse_bsr, crow_indices, col_indices, values, size,
                  dtype, device, requires_grad, check_invariants)


def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
                      layout=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None,
    device=None, pin_memory=False, requires_grad=False, check_invariants=None) -> Tensor

    Constructs a sparse tensor in BSC (Block Compressed Sparse Column) format: CSC over
    blocks, whose contents are ``values[..., k, :, :]``."""
    _layout_check("sparse_bsc_tensor", sparse_bsc, layout)
    return _build("sparse_bsc_tensor", sparse_bsc, ccol_indices, row_indices, values, size,
                  dtype, device, requires_grad, check_invariants)


def _build(fn, layout, ci, pi, values, size, dtype, device, requires_grad, check):
    values = _values_tensor(values, dtype, device)
    ci = _index_tensor(ci, values.device)
    pi = _index_tensor(pi, values.device)
    ci_name, pi_name = C.NAMES[layout]
    if ci.dim() != pi.dim():
        raise RuntimeError(f"{ci_name} and {pi_name} dimensionalities must be equal but got "
                           f"{ci.dim()} and {pi.dim()}, respectively")
    nbd = ci.dim() - 1
    block = 2 if layout in C.BLOCK else 0
    if values.dim() <= nbd + block:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block "
                           f"dimensionalities (={nbd} + {block}) but got {values.dim()}")
    bh, bw = tuple(values.shape[nbd + 1:nbd + 3]) if block else (1, 1)
    dense = tuple(values.shape[nbd + 1 + block:])
    row = layout in C.ROW
    if size is None:
        ncomp = ci.shape[-1] - 1
        nplain = int(pi.max()) + 1 if pi.numel() else 0
        m, k = (ncomp, nplain) if row else (nplain, ncomp)
        size = tuple(ci.shape[:-1]) + (m * bh, k * bw) + dense
    else:
        size = shape_of(size, fn)
    from . import check_sparse_tensor_invariants
    if check or (check is None and check_sparse_tensor_invariants.is_enabled()):
        _check_invariants(layout, ci, pi, values, size, nbd, (bh, bw), len(dense))
    if requires_grad:
        if values.dtype.category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        values = values.detach().requires_grad_(True)
    return C.make(layout, ci, pi, values, size)


def _check_invariants(layout, ci, pi, values, size, nbd, block, ndense):
    """PyTorch's checks of a compressed tensor's shape and indices (``check_invariants``;
    without them PyTorch takes the parts as they are, and so do we)."""
    if len(size) != nbd + 2 + ndense:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense "
                           f"dimensionalities (={nbd} + 2 + {ndense}) but got {len(size)}")
    if layout in C.BLOCK:
        for d, (n, b) in enumerate(zip(size[nbd:nbd + 2], block)):
            if b == 0 or n % b:
                raise RuntimeError(f"tensor shape[{nbd + d}] (={n}) must be divisible with "
                                   f"blocksize[{d}] (={b}) as defined by values shape")
    ci_name, pi_name = C.NAMES[layout]
    row = layout in C.ROW
    comp_what = "rows" if row else "columns"
    ncomp_name, nplain_name = ("nrows", "ncols") if row else ("ncols", "nrows")
    m, k = size[nbd], size[nbd + 1]
    ncomp = (m // block[0]) if row else (k // block[1])
    nplain = (k // block[1]) if row else (m // block[0])
    if ci.shape[-1] != ncomp + 1:
        raise RuntimeError(f"{ci_name}.shape[-1] must be equal to the number of "
                           f"{comp_what} + 1 (={ncomp + 1}), but got {ci.shape[-1]}")
    nnz = values.shape[nbd] if values.dim() > nbd else 0
    if pi.shape[-1] != nnz:
        raise RuntimeError(f"{pi_name}.shape[-1] must be equal to nnz (={nnz}) as defined by "
                           f"values.shape[{nbd}], but got {pi.shape[-1]}")
    batch = tuple(size[:nbd])
    if tuple(ci.shape[:-1]) != batch or tuple(pi.shape[:-1]) != batch:
        raise RuntimeError(f"all batch dimensions of {ci_name} (={list(ci.shape[:-1])}), "
                           f"{pi_name} (={list(pi.shape[:-1])}), and values "
                           f"(={list(values.shape[:nbd])}) must be equal to tensor batch "
                           f"dimensions (={list(batch)})")
    nb = math.prod(batch)
    c = ci.reshape(nb, -1).tolist()
    p = pi.reshape(nb, -1).tolist()
    for cb, pb in zip(c, p):
        if cb[0] != 0:
            raise RuntimeError(f"`{ci_name}[..., 0] == 0` is not satisfied.")
        if cb[-1] != len(pb):
            raise RuntimeError(f"`{ci_name}[..., -1] == nnz` is not satisfied.")
        if any(not 0 <= b - a <= nplain for a, b in zip(cb, cb[1:])):
            raise RuntimeError(f"`0 <= {ci_name}[..., 1:] - {ci_name}[..., :-1] <= "
                               f"{nplain_name}` is not satisfied.")
        if any(not 0 <= j < nplain for j in pb):
            raise RuntimeError(f"`0 <= {pi_name} < {nplain_name}` is not satisfied.")
        for a, b in zip(cb, cb[1:]):
            seg = pb[a:b]
            if any(y <= x for x, y in zip(seg, seg[1:])):
                raise RuntimeError(
                    f"`{pi_name}[..., {ci_name}[..., i - 1]:{ci_name}[..., i]] for all i = "
                    f"1, ..., {ncomp_name} are sorted and distinct along the last dimension "
                    "values` is not satisfied.")
