"""Small top-level ops composed of existing framework ops: ``ravel``, ``unravel_index``,
``renorm``, the deprecated ``cholesky`` and ``triangular_solve``, ``constant_pad_nd``,
``unsafe_chunk``, ``unsafe_split``, ``split_with_sizes``, ``empty_permuted``,
``Tensor.new_empty_strided`` and ``Tensor.__rdiv__``. Autograd comes from the ops they are
made of."""
import framework as _fw
from ..return_types import _structseq

triangular_solve_result = _structseq("triangular_solve", ("solution", "cloned_coefficient"))


def ravel(input):
    """The elements of ``input`` as a contiguous 1-D tensor (a view when it can be one)."""
    return input.reshape(-1)


def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of the flat ``indices``, as a tuple of
    int64 tensors (one per dimension)."""
    if not isinstance(indices, _fw.Tensor):
        raise TypeError(f"unravel_index: expected 'indices' to be a Tensor, but got "
                        f"{type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype == _fw.bool:
        raise TypeError(f"unravel_index: expected 'indices' to be integer dtype, but got "
                        f"{indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for s in shape:
        if not isinstance(s, int):
            raise TypeError(f"unravel_index: expected 'shape' sequence to only contain ints, "
                            f"but got {type(s).__name__}")
    if any(s < 0 for s in shape):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, but got {shape}")
    coefs, acc = [], 1
    for s in reversed(shape):
        coefs.append(acc)
        acc *= s
    coefs.reverse()
    dev = indices.device
    flat = indices.to(_fw.int64).unsqueeze(-1)
    out = _fw.floor_divide(flat, _fw.tensor(coefs, dtype=_fw.int64, device=dev))
    out = _fw.remainder(out, _fw.tensor(list(shape), dtype=_fw.int64, device=dev))
    return out.unbind(-1)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice of ``input`` along ``dim`` whose ``p``-norm exceeds ``maxnorm``, scaled
    down to norm ``maxnorm``."""
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"renorm\" not implemented for '{input.dtype.scalar_name}'")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"renorm: expected a floating point input, got {input.dtype}")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p={p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    nd = input.dim()
    if nd <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"renorm: Dimension out of range (expected to be in range of "
                         f"[{-nd}, {nd - 1}], but got {dim})")
    others = [i for i in range(nd) if i != d]
    norm = _fw.linalg.vector_norm(input, p, others, True)
    factor = _fw.where(norm > maxnorm, maxnorm / (norm + 1e-7), _fw.ones_like(norm))
    result = input * factor
    if out is not None:
        return out.copy_(result)
    return result


def renorm_(self, p, dim, maxnorm):
    """In-place version of :func:`renorm`."""
    return self.copy_(renorm(self, p, dim, maxnorm))


def cholesky(input, upper=False, *, out=None):
    """The Cholesky factor of a symmetric positive-definite matrix (lower, or upper with
    ``upper=True``); deprecated in PyTorch for :func:`framework.linalg.cholesky`."""
    return _fw.linalg.cholesky(input, upper=upper, out=out)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *,
                     out=None):
    """The solution X of ``A X = input`` (``A^T X = input`` with ``transpose``) for a
    triangular ``A``, and a copy of ``A`` (broadcast over the batch)."""
    if input.dim() < 2 or A.dim() < 2:
        raise RuntimeError(f"triangular_solve: The input tensor b and A must have at least 2 "
                           f"dimensions, got shapes {tuple(input.shape)} and {tuple(A.shape)}")
    batch = _fw.broadcast_shapes(tuple(input.shape[:-2]), tuple(A.shape[:-2]))
    Ab = A.expand(*batch, *A.shape[-2:])
    M = Ab.mT if transpose else Ab
    x = _fw.linalg.solve_triangular(M, input.expand(*batch, *input.shape[-2:]),
                                    upper=upper != bool(transpose), unitriangular=unitriangular)
    res = triangular_solve_result(x, Ab.clone())
    if out is not None:
        out[0].copy_(res[0])
        out[1].copy_(res[1])
        return triangular_solve_result(*out)
    return res


def constant_pad_nd(input, pad, value=0):
    """``input`` padded with ``value``: ``pad`` lists (before, after) pairs from the last
    dimension backwards; negative amounts crop."""
    return _fw.nn.functional.pad(input, list(pad), mode="constant", value=value)


def unsafe_chunk(input, chunks, dim=0):
    """:func:`framework.chunk` (PyTorch's version without the views' aliasing checks)."""
    return tuple(_fw.chunk(input, chunks, dim))


def unsafe_split(input, split_size, dim=0):
    """:func:`framework.split` with an int size (without the views' aliasing checks)."""
    return tuple(_fw.split(input, split_size, dim))


def split_with_sizes(input, split_sizes, dim=0):
    """``input`` split along ``dim`` into views of the given sizes (which must add up)."""
    sizes = [int(s) for s in split_sizes]
    n = input.shape[dim]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                           f"(input tensor's size at dimension {dim}), but got "
                           f"split_sizes={sizes}")
    return _fw.split(input, sizes, dim)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialized tensor of ``size`` whose memory is laid out in the dimension order
    ``physical_layout`` (outermost first)."""
    size = tuple(size)
    perm = tuple(physical_layout)
    if sorted(perm) != list(range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout {list(perm)} is not a "
                           f"permutation of the {len(size)} dimensions of size {list(size)}")
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    t = _fw.empty([size[p] for p in perm], dtype=dtype, device=device)
    return t.permute(*inv).requires_grad_(bool(requires_grad))


def new_empty_strided(input, size, stride, *, dtype=None, layout=None, device=None,
                      pin_memory=False, requires_grad=False):
    """An uninitialized tensor of ``size`` and ``stride`` with ``input``'s dtype and device
    unless given."""
    t = _fw.empty_strided(tuple(size), tuple(stride),
                          dtype=input.dtype if dtype is None else dtype,
                          device=input.device if device is None else device)
    return t.requires_grad_(bool(requires_grad))


def rdiv(input, other):
    """``other / input`` as ``input.reciprocal() * other`` (PyTorch's ``Tensor.__rdiv__``)."""
    return input.reciprocal() * other


def is_nonzero(input):
    """Whether a one-element tensor is not zero (``bool(t)`` with PyTorch's errors)."""
    n = input.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input, other):
    """Whether two tensors have the same shape."""
    if not isinstance(other, _fw.Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    return tuple(input.shape) == tuple(other.shape)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal (elements with all indices equal) of a tensor of at least 2
    dims, all of one length above 2, with ``fill_value``; a tall matrix with ``wrap``
    starts again N + 1 rows down (NumPy's and PyTorch's rule)."""
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(s != shape[0] for s in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    # the positions in row-major order, marked on a mask: masked_fill_ then writes any
    # layout and records the gradient
    height, width = shape[0], shape[1]
    mask = _fw.zeros(shape, dtype=_fw.bool, device=self.device)
    step = sum(mask.stride())
    n = min(height, width)
    mask.as_strided((n,), (step,)).fill_(True)
    if wrap and len(shape) == 2 and height > width + 1:
        count = (self.numel() + width) // (width + 1) - n
        mask.as_strided((count,), (step,), width * (width + 1)).fill_(True)
    return self.masked_fill_(mask, fill_value)


def new(self, *args, device=None):
    """The legacy constructor ``Tensor.new``: ``t.new(2, 3)`` (uninitialized, of t's dtype
    and device), ``t.new(data)`` (a copy of a sequence), ``t.new(other)`` (other itself,
    which must match t's dtype and device), ``t.new()`` (no elements)."""
    dev = self.device if device is None else _fw.device(device)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, _fw.Tensor):
            if data.dtype is not self.dtype or data.device != dev:
                raise TypeError(f"new(): expected a tensor of dtype {self.dtype} on {dev}, got "
                                f"one of dtype {data.dtype} on {data.device}")
            return data.detach()
        if isinstance(data, _fw.Size):
            return _fw.empty(tuple(data), dtype=self.dtype, device=dev)
        if isinstance(data, (float, complex, bool)) or not hasattr(data, "__len__"):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return _fw.tensor(data, dtype=self.dtype, device=dev)
    if not all(isinstance(a, int) for a in args):
        raise TypeError(f"new(): expected sizes as ints, got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    return _fw.empty(args if args else (0,), dtype=self.dtype, device=dev)
