"""Top-level ATen spellings torch exposes beside the op table: removed linear-algebra
functions (raising torch's errors), deprecated aliases and thin wrappers over the
nn.functional implementations."""

from . import _dtype
from ._tensor import _wrap_dim

__all__ = ["eig", "lstsq", "matrix_rank", "solve", "symeig", "ger", "addmv_",
           "conj_physical_", "embedding_renorm_", "norm_except_dim", "grid_sampler",
           "affine_grid_generator", "unsafe_split_with_sizes", "slice_inverse", "hash_tensor",
           "triplet_margin_loss", "is_distributed"]


def _fw():
    import framework
    return framework


# -- functions removed in 1.9: torch keeps the names to say what replaces them ---------------

_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_EIG = (f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or "
        "`cdouble` rather than real tensors mimicking complex tensors.\n\n"
        "L, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\n"
        "and\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")
_LSTSQ = (f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
          "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
          "decomposition in the returned tuple (although it returns other information about "
          "the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
          "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
          "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
          "residuals are in the field 'residuals' of the returned named tuple.\n\n"
          "The unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
          "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_MATRIX_RANK = (f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. "
                "The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
                "'hermitian'.")
_SOLVE = (f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
          "`torch.linalg.solve` has its arguments reversed and does not return the LU "
          "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used "
          "with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should "
          "be replaced with:\nX = torch.linalg.solve(A, B)")
_SYMEIG = (f"{_REMOVED} The default behavior has changed from using the upper triangular "
           "portion of the matrix by default to using the lower triangular portion.\n\n"
           "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
           "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
           "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
           "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def eig(input, eigenvectors=False, *, out=None):
    """Removed: use :func:`linalg.eig` or :func:`linalg.eigvals`."""
    raise RuntimeError(_EIG)


def lstsq(input, A, *, out=None):
    """Removed: use :func:`linalg.lstsq` (arguments reversed)."""
    raise RuntimeError(_LSTSQ)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed: use :func:`linalg.matrix_rank`."""
    raise RuntimeError(_MATRIX_RANK)


def solve(input, A, *, out=None):
    """Removed: use :func:`linalg.solve` (arguments reversed)."""
    raise RuntimeError(_SOLVE)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed: use :func:`linalg.eigh` or :func:`linalg.eigvalsh`."""
    raise RuntimeError(_SYMEIG)


# -- aliases and in-place spellings ----------------------------------------------------------

def ger(input, vec2, *, out=None):
    """Alias of :func:`outer` (deprecated)."""
    return _fw().outer(input, vec2, out=out)


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    """In-place :func:`addmv`."""
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def conj_physical_(input):
    """In-place :func:`conj_physical`."""
    return input.conj_physical_()


def is_distributed(input):
    """Always False: no tensor is distributed in the ATen sense."""
    return False


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """:func:`split_with_sizes` whose pieces are not tracked as views of ``input``."""
    return tuple(p.clone() for p in input.split_with_sizes(split_sizes, dim))


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """Inverse of ``slice``: ``input`` (a slice of ``src``) viewed with ``src``'s sizes,
    strides and offset, so that it covers all of ``src``'s elements."""
    return input.as_strided(src.shape, src.stride(), src.storage_offset())


# -- nn spellings ----------------------------------------------------------------------------

def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescales in place the rows of ``input`` named in ``indices`` whose ``norm_type``-norm
    exceeds ``max_norm``; returns ``input``."""
    from .nn.functional.sparse import _renorm_
    _renorm_(input, indices, max_norm, norm_type)
    return input


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dimension but ``dim`` (size 1 in all the others);
    ``dim=-1``: the norm over all of ``v``."""
    fw = _fw()
    if dim == -1:
        return fw.linalg.vector_norm(v, pow)
    dim = _wrap_dim(dim, v.dim())
    others = tuple(d for d in range(v.dim()) if d != dim)
    return fw.linalg.vector_norm(v, pow, others, keepdim=True)


_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """:func:`nn.functional.grid_sample` with ATen's int modes (interpolation: 0 bilinear,
    1 nearest, 2 bicubic; padding: 0 zeros, 1 border, 2 reflection)."""
    from .nn import functional as F
    if interpolation_mode not in _GRID_MODES:
        raise RuntimeError(f"grid_sampler(): invalid interpolation_mode {interpolation_mode}")
    if padding_mode not in _GRID_PADDING:
        raise RuntimeError(f"grid_sampler(): invalid padding_mode {padding_mode}")
    return F.grid_sample(input, grid, _GRID_MODES[interpolation_mode],
                         _GRID_PADDING[padding_mode], bool(align_corners))


def affine_grid_generator(theta, size, align_corners):
    """:func:`nn.functional.affine_grid` with ``align_corners`` required."""
    from .nn import functional as F
    return F.affine_grid(theta, list(size), bool(align_corners))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    """:func:`nn.functional.triplet_margin_loss` with ATen's int ``reduction`` (as torch's
    binding, the default reads as 0: no reduction)."""
    from .nn import functional as F
    from ._aten_aliases import _reduction
    return F.triplet_margin_loss(anchor, positive, negative, margin=margin, p=p, eps=eps,
                                 swap=swap,
                                 reduction=_reduction("triplet_margin_loss", reduction, 8))


# -- hash_tensor -----------------------------------------------------------------------------

def hash_tensor(input, dim=(), *, keepdim=False, mode=0, out=None):
    """Hash of the elements of ``input`` (over ``dim``; all dimensions when ``dim`` is empty):
    each element upcast to its 64-bit float or integer type, bitcast to 64 bits and reduced
    by xor. The framework has no uint64: the bits come back in an int64 tensor."""
    fw = _fw()
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if isinstance(dim, int):
        dim = (dim,)
    dims = tuple(sorted({_wrap_dim(d, input.dim()) for d in dim})) or tuple(range(input.dim()))
    if not dim and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    for d in dims:
        if input.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    if input.is_floating_point():
        bits = input.to(_dtype.float64).view(_dtype.int64)
    else:
        bits = input.to(_dtype.int64)
    kept = tuple(d for d in range(input.dim()) if d not in dims)
    x = bits.permute(kept + dims).reshape([input.shape[d] for d in kept] + [-1])
    while x.shape[-1] > 1:   # a tree of xors: log2(n) elementwise passes
        half = x.shape[-1] // 2
        folded = fw.bitwise_xor(x[..., :half], x[..., half:2 * half])
        x = fw.cat([folded, x[..., 2 * half:]], -1) if x.shape[-1] % 2 else folded
    result = x.reshape([input.shape[d] for d in kept])
    if keepdim:
        result = result.reshape([1 if d in dims else input.shape[d] for d in range(input.dim())])
    if out is not None:
        return out.copy_(result)
    return result


# -- Tensor methods --------------------------------------------------------------------------

def _storage_type(self):
    """The legacy storage class of this tensor's dtype and device (``FloatStorage``, ...)."""
    fw = _fw()
    from ._typed_storage import _LEGACY_NAMES
    where = fw.cuda if self.device.type == "cuda" else fw
    return getattr(where, _LEGACY_NAMES[self.dtype] + "Storage")


def _module_load(self, other, assign=False):
    """How ``other`` (a state-dict value) is turned into the value swapped into ``self`` by
    ``load_state_dict`` when swapping: ``other.detach()`` if ``assign`` else
    ``self.copy_(other).detach()``."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def install(tensor_cls):
    """Sets the Tensor methods of this module's functions."""
    tensor_cls.eig = eig
    tensor_cls.lstsq = lstsq
    tensor_cls.solve = solve
    tensor_cls.symeig = symeig
    tensor_cls.ger = ger
    tensor_cls.unsafe_split_with_sizes = unsafe_split_with_sizes
    tensor_cls.hash_tensor = hash_tensor
    tensor_cls.is_distributed = is_distributed
    tensor_cls.storage_type = _storage_type
    tensor_cls.module_load = _module_load
    from . import _sparse_accessors
    _sparse_accessors.install(tensor_cls)
