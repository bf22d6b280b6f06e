"""framework.sparse: sparse COO, CSR, CSC, BSR and BSC tensors (PyTorch's ``torch.sparse``).

A sparse tensor is a ``framework.Tensor`` whose elements are mostly zero and stored as
indices and values (ordinary dense tensors on the tensor's device). Dense ops refuse it
with PyTorch's NotImplementedError; the ops here, the methods of the sparse classes and
the free functions that ``SparseTensor.__torch_function__`` routes to them work on it:
conversions, coalescing, sums, element-wise arithmetic and products with dense matrices,
all differentiable.
"""
from .._tensor import Tensor
from .base import SparseTensor, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr
from .coo import SparseCooTensor, dense_to_sparse, sparse_coo_tensor
from .csr import SparseCsrTensor
from .compressed import SparseCompressedTensor
from .constructors import (sparse_bsc_tensor, sparse_bsr_tensor, sparse_compressed_tensor,
                           sparse_csc_tensor, sparse_csr_tensor)
from .gradcheck import as_sparse_gradcheck
from . import compressed, conversions
from . import ops
from . import dispatch  # noqa: F401  (SparseTensor.__torch_function__)
from .ops import addmm, mm, sparse_sum as sum  # noqa: A001
from .spdiags import spdiags
from .products import sampled_addmm
from . import products
from . import legacy
from . import shape_ops

__all__ = ["addmm", "mm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants",
           "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
           "sparse_bsc_tensor", "sparse_compressed_tensor", "spdiags", "sampled_addmm",
           "as_sparse_gradcheck"]

ops.install_coo_methods(SparseCooTensor)
shape_ops.install(SparseCooTensor)
globals().update(legacy.make("cpu", "framework.sparse"))   # FloatTensor, LongTensor, ...
ops.install_product_methods(SparseCsrTensor)
SparseCooTensor.smm, SparseCooTensor.sspaddmm = products.smm, products.sspaddmm
conversions.install()


def softmax(input, dim, *, dtype=None):
    """softmax(input, dim, *, dtype=None) -> Tensor

    Softmax of a COO tensor along ``dim`` over its stored entries only (unstored entries
    count as minus infinity, so they stay zero); the result has the input's indices."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax(input, dim, *, dtype=None) -> Tensor

    Log of :func:`softmax`, over the stored entries only."""
    return _softmax(input, dim, dtype, log=True)


def _softmax(input, dim, dtype, log):
    import framework
    from .._tensor import _wrap_dim
    s = (input.to_sparse_coo() if input.is_sparse_csr else input).coalesce()
    d = _wrap_dim(dim, s.dim())
    i, v = s._parts()
    if dtype is not None:
        v = v.to(dtype)
    nsp = s.sparse_dim()
    if d >= nsp:    # along a dense dim: the dense op on the values
        fn = framework.log_softmax if log else framework.softmax
        return SparseCooTensor.make(i, fn(v, d - nsp + 1), s.shape, True)
    if i.shape[1] == 0:
        return SparseCooTensor.make(i, v, s.shape, True)
    # the entries sharing all sparse indices but ``d`` form one group
    rest = [k for k in range(nsp) if k != d]
    sizes = [s.shape[k] for k in rest]
    from .coo import linear_index
    key = linear_index(i[rest], sizes) if rest else i[0].new_zeros(i.shape[1])
    _, group = framework.unique(key, return_inverse=True)
    n = int(group.max()) + 1
    gshape = (n,) + tuple(v.shape[1:])
    gidx = group.reshape((-1,) + (1,) * (v.dim() - 1)).expand(v.shape)
    vmax = v.detach().new_full(gshape, float("-inf")).scatter_reduce(
        0, gidx, v.detach(), "amax")
    shifted = v - vmax.index_select(0, group)
    e = shifted.exp()
    total = e.new_zeros(gshape).index_add(0, group, e)
    out = shifted - total.log().index_select(0, group) if log else \
        e / total.index_select(0, group)
    return SparseCooTensor.make(i, out, s.shape, True)


class check_sparse_tensor_invariants:
    """A context manager (and decorator) that turns the checks of sparse tensor invariants
    on while it is active (``is_enabled``/``enable``/``disable`` set the default)."""

    _enabled = False

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved = None

    def __enter__(self):
        self.saved = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


# ---- Tensor methods and framework.* functions -------------------------------------------

def _sparse_mask(self, mask):
    """A sparse tensor with this dense tensor's values at the indices of ``mask`` (whose
    values are ignored); it has ``mask``'s indices and layout."""
    if not isinstance(mask, SparseTensor):
        backend = "CUDA" if self.device.type == "cuda" else "CPU"
        raise NotImplementedError(f"Could not run 'aten::sparse_mask' with arguments from "
                                  f"the '{backend}' backend.")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    if mask.layout is not sparse_coo:
        return compressed.sparse_mask(self, mask)
    i = mask._indices()
    values = self[tuple(i.unbind(0))]   # differentiable w.r.t. self
    return SparseCooTensor.make(i, values, tuple(self.shape), mask.is_coalesced())


def _spmm(input, mat2):
    """spmm(input, mat2) -> Tensor: sparse matrix times dense matrix (``framework.mm``)."""
    return ops.dense_mm(input, mat2)


def install(module):
    """Adds the sparse constructors, layouts and Tensor methods to ``framework``. Free
    functions given a sparse operand (``framework.mm``, ``framework.add(dense, sparse)``)
    reach it through ``SparseTensor.__torch_function__`` (``dispatch``)."""
    for name in ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc",
                 "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
                 "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor"):
        setattr(module, name, globals()[name])
    module.spmm = _spmm
    module.smm, module.hspmm, module.sspaddmm = products.smm, products.hspmm, products.sspaddmm
    Tensor.to_sparse_coo = dense_to_sparse
    Tensor.sparse_mask = _sparse_mask
