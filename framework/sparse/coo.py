"""Sparse COO tensors (PyTorch's ``torch.sparse_coo`` layout).

A COO tensor of ``sparse_dim`` sparse and ``dense_dim`` dense dims holds ``_i`` (int64,
sparse_dim x nnz) and ``_v`` (nnz x the dense dims): element ``_i[:, k]`` is ``_v[k]``,
and repeated indices add up. Coalescing sorts the indices and sums the repeats; it is done
with framework ops (unique, index_add_), so it runs on every device.
"""
from .. import _dtype
from .._device import device as _device
from .._tensor import Tensor
from .autograd import Coalesce, SparseCooTensorWithDimsAndTensors, Values, needs_grad
from .base import SparseTensor, shape_of, sparse_coo, sparse_repr


def linear_index(indices, sizes):
    """Row-major positions of the index columns in a tensor of shape ``sizes``."""
    if indices.shape[0] == 1:
        return indices[0]
    stride, strides = 1, []
    for s in reversed(sizes):
        strides.append(stride)
        stride *= s
    w = indices.new_tensor(strides[::-1]).unsqueeze(1)
    return (indices * w).sum(0)


def unravel(lin, sizes):
    """The inverse of :func:`linear_index`: a sparse_dim x n index tensor."""
    if len(sizes) == 1:
        return lin.unsqueeze(0)
    rows, rest = [], lin
    for s in reversed(sizes):
        rows.append(rest.remainder(s))
        rest = rest.div(s, rounding_mode="floor")
    import framework
    return framework.stack(rows[::-1])


class SparseCooTensor(SparseTensor):
    """A sparse tensor in COO layout (indices and values)."""

    __slots__ = ("_i", "_v", "_coalesced")
    _layout = sparse_coo

    @classmethod
    def _wrap(cls, indices, values, shape, coalesced=False):
        """A COO tensor over ``indices`` and ``values`` as they are (no checks)."""
        t = object.__new__(cls)
        t._init(shape, values.dtype, values.device)
        t._i, t._v = indices, values
        t._coalesced = bool(coalesced)
        return t

    @staticmethod
    def make(indices, values, shape, coalesced=False):
        """A COO tensor whose values may carry a gradient (the construction node)."""
        if needs_grad(values):
            return SparseCooTensorWithDimsAndTensors.apply(values, indices, tuple(shape),
                                                           coalesced)
        return SparseCooTensor._wrap(indices, values, tuple(shape), coalesced)

    # ---- components ----------------------------------------------------------------------
    def _nnz(self):
        return self._i.shape[1]

    def sparse_dim(self):
        return self._i.shape[0]

    def dense_dim(self):
        return self._v.dim() - 1

    def _indices(self):
        return self._i

    def _values(self):
        return self._v.detach()

    def indices(self):
        """The indices of a coalesced COO tensor (sparse_dim x nnz, int64)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._i

    def values(self):
        """The values of a coalesced COO tensor (differentiable)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._dvalues()

    def _dvalues(self):
        """The values, carrying this tensor's gradient when it needs one."""
        if needs_grad(self):
            return Values.apply(self)
        return self._v

    def _parts(self):
        """(indices, values) for an op that needs gradients: coalesced first when the
        tensor requires grad, so that a sparse gradient never repeats an index."""
        t = self
        if needs_grad(t) and not t._coalesced:
            t = t.coalesce()
        return t._i, t._dvalues()

    def is_coalesced(self):
        return self._coalesced

    def _coalesced_(self, coalesced):
        self._coalesced = bool(coalesced)
        return self

    def coalesce(self):
        """A coalesced copy: indices sorted and unique, repeated entries summed (self if it
        is already coalesced)."""
        if self._coalesced:
            return self
        if needs_grad(self):
            return Coalesce.apply(self)
        return self._coalesce_nograd()

    def _coalesce_nograd(self):
        i, v = self._i, self._v
        if i.shape[1] < 2:
            return SparseCooTensor._wrap(i, v, self._shape, True)
        sizes = self._shape[:i.shape[0]]
        import framework
        uniq, inverse = framework.unique(linear_index(i, sizes), sorted=True,
                                         return_inverse=True)
        vals = v.new_zeros((uniq.shape[0],) + tuple(v.shape[1:]))
        vals.index_add_(0, inverse, v)
        return SparseCooTensor._wrap(unravel(uniq, sizes), vals, self._shape, True)

    # ---- conversions ---------------------------------------------------------------------
    def to_dense(self, dtype=None, *, masked_grad=None):
        """A strided tensor with this tensor's elements (repeated indices summed)."""
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        i, v = self._parts()
        import framework
        out = framework.zeros(self._shape, dtype=self.dtype, device=self.device)
        if i.shape[1] == 0:
            return out
        if self.dtype is _dtype.bool:
            return out.index_put_(tuple(i.unbind(0)), v)
        return out.index_put(tuple(i.unbind(0)), v, accumulate=True)

    def to_sparse_coo(self):
        return self

    def to(self, *args, **kwargs):
        """A copy with another dtype and/or device (self if nothing changes)."""
        dtype, device = _to_args(self, args, kwargs)
        if (dtype is None or dtype is self.dtype) and (device is None or device == self.device):
            return self
        i, v = self._parts()
        if device is not None:
            i, v = i.to(device), v.to(device)
        if dtype is not None:
            v = v.to(dtype)
        return SparseCooTensor.make(i, v, self._shape, self._coalesced)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            where = "framework.cuda.sparse." if self.is_cuda else "framework.sparse."
            return where + self.dtype.scalar_name + "Tensor"
        return self.to(dtype)

    for _n, _d in (("float", _dtype.float32), ("double", _dtype.float64),
                   ("half", _dtype.float16), ("bfloat16", _dtype.bfloat16),
                   ("long", _dtype.int64), ("int", _dtype.int32), ("short", _dtype.int16),
                   ("char", _dtype.int8), ("byte", _dtype.uint8), ("bool", _dtype.bool)):
        locals()[_n] = (lambda d: lambda self, memory_format=None: self.to(d))(_d)
    del _n, _d

    def type_as(self, other):
        return self.to(other.dtype)

    def detach(self):
        return SparseCooTensor._wrap(self._i, self._v, self._shape, self._coalesced)

    def detach_(self):
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        return self.detach()

    def clone(self, *, memory_format=None):
        i, v = self._parts()
        return SparseCooTensor.make(i.clone(), v.clone(), self._shape, self._coalesced)

    def __repr__(self):
        return sparse_repr(self, (("indices", self._i), ("values", self._v)))

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._i, self._v.detach(), tuple(self._shape), self._coalesced,
                           self._requires_grad))

    __str__ = __repr__

    # ---- shape ---------------------------------------------------------------------------
    def transpose(self, dim0, dim1):
        """Swaps two sparse dims (a copy of the indices; the values are shared)."""
        from .._tensor import _wrap_dim
        n = self.dim()
        d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        nsp = self.sparse_dim()
        if d0 == d1:
            return self
        if d0 >= nsp or d1 >= nsp:
            raise RuntimeError("transpose(): can't transpose dense dimensions of a sparse "
                               "tensor")
        i, v = self._parts()
        order = list(range(nsp))
        order[d0], order[d1] = d1, d0
        shape = list(self._shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        return SparseCooTensor.make(i[order], v, tuple(shape), False)

    def t(self):
        if self.dim() > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.dim()}D")
        return self if self.dim() < 2 else self.transpose(0, 1)

    @property
    def T(self):
        return self.t()

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def index_select(self, dim, index):
        """The entries whose index along ``dim`` is in ``index``, renumbered by their
        position there (an entry picked twice appears twice; uncoalesced result)."""
        import framework
        from .._tensor import _wrap_dim
        d = _wrap_dim(dim, self.dim())
        if not isinstance(index, Tensor) or index.dim() != 1 or index.is_sparse or \
                index.dtype not in (framework.int64, framework.int32):
            raise IndexError("index_select() argument index must be 1-D strided "
                             "(non-sparse) long-tensor.")
        size = self._shape[d]
        if index.numel() and (int(index.min()) < -size or int(index.max()) >= size):
            bad = int(index.max()) if int(index.max()) >= size else int(index.min())
            raise IndexError(f"index_select(): index contains {bad} that is out of range "
                             f"for tensor of size {list(self._shape)} at dimension {d}")
        index = index.long() % max(size, 1)
        i, v = self._parts()
        nsp = i.shape[0]
        shape = list(self._shape)
        shape[d] = index.numel()
        if d >= nsp:
            return SparseCooTensor.make(i, v.index_select(d - nsp + 1, index), tuple(shape),
                                        self._coalesced)
        # (position in index, entry) pairs, in the order of index
        pos, entry = (i[d].unsqueeze(0) == index.unsqueeze(1)).nonzero(as_tuple=True)
        new_i = i.index_select(1, entry)
        new_i[d] = pos
        return SparseCooTensor.make(new_i, v.index_select(0, entry), tuple(shape), False)

    def narrow_copy(self, dim, start, length):
        """The entries with ``start <= index < start + length`` along ``dim``, shifted to
        start at 0."""
        from .._tensor import _wrap_dim
        d = _wrap_dim(dim, self.dim())
        size = self._shape[d]
        # no wrapping of a negative start here: PyTorch's sparse kernel rejects it
        if start < 0 or length < 0 or start + length > size:
            raise RuntimeError("Invalid range to narrow. range(start, start+length) must be "
                               f"a subset of range(0, {size}).")
        i, v = self._parts()
        nsp = i.shape[0]
        shape = list(self._shape)
        shape[d] = length
        if d >= nsp:
            return SparseCooTensor.make(i.clone(), v.narrow(d - nsp + 1, start, length)
                                        .clone(), tuple(shape), self._coalesced)
        keep = ((i[d] >= start) & (i[d] < start + length)).nonzero().view(-1)
        new_i = i.index_select(1, keep)
        new_i[d] -= start
        return SparseCooTensor.make(new_i, v.index_select(0, keep), tuple(shape),
                                    self._coalesced)


def _rebuild(indices, values, shape, coalesced, requires_grad):
    """Unpickles a COO tensor."""
    return SparseCooTensor._wrap(indices, values, shape, coalesced).requires_grad_(
        requires_grad)


def _to_args(t, args, kwargs):
    """(dtype, device) from ``to``'s overloads: to(dtype), to(device, dtype), to(other)."""
    from .._dtype import dtype as dtype_cls
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    for a in args:
        if isinstance(a, dtype_cls):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device, int)) and not isinstance(a, bool):
            device = a
    if device is not None:
        device = _device(device) if not isinstance(device, _device) else device
        if device.type == "cuda" and device.index is None:
            from .. import cuda
            device = _device("cuda", cuda.current_device())
    return dtype, device


def _values_tensor(values, dtype, device):
    """The constructors' ``values`` as a tensor of ``dtype`` on ``device`` (when given)."""
    import framework
    if device is not None and not isinstance(device, _device):
        device = _device(device)
    if not isinstance(values, Tensor):
        return framework.tensor(values, dtype=dtype, device=device)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None and values.device != device:
        values = values.to(device)
    return values


def _as_index_tensor(indices, device):
    import framework
    if not isinstance(indices, Tensor):
        indices = framework.tensor(indices, device=device)
    elif device is not None and indices.device != device:
        indices = indices.to(device)
    if indices.dtype is not _dtype.int64:
        indices = indices.to(_dtype.int64)
    return indices


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
    requires_grad=False, check_invariants=None, is_coalesced=None) -> Tensor

    Constructs a sparse tensor in COO format with the given values at the given indices
    (``indices``: sparse_dim x nnz). ``size`` is inferred from the indices when omitted.
    Repeated indices are allowed (their values add up) unless ``is_coalesced=True``."""
    values = _values_tensor(values, dtype, device)
    indices = _as_index_tensor(indices, values.device)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        values = values.reshape(1)
    nnz, nsp = indices.shape[1], indices.shape[0]
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0]}")
    dense = tuple(values.shape[1:])
    if size is None:
        if nnz:
            sparse_sizes = tuple(int(m) + 1 for m in indices.amax(1).tolist())
        else:
            sparse_sizes = (0,) * nsp
        size = sparse_sizes + dense
    else:
        size = shape_of(size, "sparse_coo_tensor")
        if len(size) != nsp + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {nsp}, dense_dim = "
                               f"{len(dense)}")
        if tuple(size[nsp:]) != dense:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *size[nsp:]]}, "
                               f"got {list(values.shape)}")
    from . import check_sparse_tensor_invariants
    if check_invariants or (check_invariants is None
                            and check_sparse_tensor_invariants.is_enabled()):
        check_indices(indices, size)
    if requires_grad and values.dtype.category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz < 2
    out = SparseCooTensor.make(indices, values, size, coalesced)
    if requires_grad:
        out.requires_grad_(True)
    return out


def check_indices(indices, size):
    """PyTorch's invariant check: no negative index, none past its dim's size."""
    if indices.shape[1] == 0:
        return
    lo, hi = indices.amin(1).tolist(), indices.amax(1).tolist()
    for d, (a, b) in enumerate(zip(lo, hi)):
        if a < 0:
            raise RuntimeError(f"found negative index {a} for dim {d}")
        if b >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {b}")


def dense_to_sparse(x, sparse_dim=None):
    """``x`` (strided) as a coalesced COO tensor over its first ``sparse_dim`` dims: the
    entries (or rows of the dense dims) that are not all zero."""
    n = x.dim()
    if sparse_dim is None:
        sparse_dim = n
    if not 0 <= sparse_dim <= n:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] range, "
                           f"but {sparse_dim} is given")
    if sparse_dim == 0:
        import framework
        idx = framework.zeros((0, 1), dtype=_dtype.int64, device=x.device)
        return SparseCooTensor.make(idx, x.unsqueeze(0), tuple(x.shape), True)
    nz = x.detach() != 0
    if sparse_dim < n:
        nz = nz.reshape(tuple(x.shape[:sparse_dim]) + (-1,)).any(-1)
    idx = nz.nonzero().t().contiguous()   # row-major order: already coalesced
    vals = x[tuple(idx.unbind(0))]
    return SparseCooTensor.make(idx, vals, tuple(x.shape), True)
