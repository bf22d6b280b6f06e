"""torch.masked's reductions and normalizations on plain (strided) tensors with a ``mask=``.

Each op replaces the masked-out elements by the identity of its reduction (0 for sums, 1 for
products, -inf for max-like ops and logsumexp, +inf for min-like ops, NaN for the median)
and runs the ordinary op, as torch.masked does; so a fully masked-out row gives the
identity (or NaN where there is none: mean, median, var, std, softmax). Composed of framework
ops: autograd, both devices and dtype rules come from them. (masked.py holds masked_fill,
masked_scatter and masked_select, which are not these.)
"""
import math

import framework as _fw

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def _canonical_dim(dim, ndim, op):
    """dim as a sorted tuple of non-negative dims; None and () mean every dim."""
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    n = max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d < -n or d >= n:
            raise IndexError(f"masked.{op}: Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {d})")
        if d % n in dims:
            raise RuntimeError(f"masked.{op}: dim={d} appears multiple times in the list of dims")
        dims.append(d % n)
    return tuple(sorted(dims))


def _input_mask(input, mask, op):
    """The mask as a bool tensor of input's shape (broadcast, never downcast)."""
    if not isinstance(mask, _fw.Tensor):
        mask = _fw.tensor(mask, device=input.device)
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError(f"masked.{op}: _input_mask expected broadcastable mask (got mask "
                             f"dimensionality higher than of the input): mask shape "
                             f"{tuple(mask.shape)}, input shape {tuple(input.shape)}")
        mask = _fw.broadcast_to(mask, input.shape)
    return mask.to(_fw.bool)


def _identity(kind, dtype, op):
    if kind == "zero":
        return 0
    if kind == "one":
        return 1
    if kind == "nan":
        return math.nan
    low = kind == "-inf"
    if dtype.is_floating_point:
        return -math.inf if low else math.inf
    if dtype == _fw.bool or not (dtype.is_signed or dtype == _fw.uint8):
        raise NotImplementedError(f"masked.{op}: identity of {op} on {dtype} input")
    info = _fw.iinfo(dtype)
    return info.min if low else info.max


def _combine(input, mask, kind, op):
    """input with its masked-out elements replaced by the identity ``kind``."""
    if mask is None:
        return input
    fill = _fw.tensor(_identity(kind, input.dtype, op), dtype=input.dtype, device=input.device)
    return _fw.where(_input_mask(input, mask, op), input, fill)


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return _fw.int64 if str(input.dtype).rpartition(".")[2] in _SMALL_INTS else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the elements of ``input`` along ``dim`` where ``mask`` is True."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.dim(), "sum")
    return _fw.sum(_combine(input, mask, "zero", "sum"), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the elements of ``input`` along ``dim`` where ``mask`` is True."""
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.dim(), "prod")
    result = _combine(input, mask, "one", "prod").to(dtype)
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along ``dim``; masked-out elements count as 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim(), "cumsum")[0]
    return _fw.cumsum(_combine(input, mask, "zero", "cumsum"), d, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along ``dim``; masked-out elements count as 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim(), "cumprod")[0]
    return _fw.cumprod(_combine(input, mask, "one", "cumprod"), d, dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Maximum along ``dim`` of the elements where ``mask`` is True (-inf where none is)."""
    dtype = input.dtype if dtype is None else dtype
    x = _combine(input, mask, "-inf", "amax")
    return _fw.amax(x, _canonical_dim(dim, x.dim(), "amax"), bool(keepdim)).to(dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Minimum along ``dim`` of the elements where ``mask`` is True (inf where none is)."""
    dtype = input.dtype if dtype is None else dtype
    x = _combine(input, mask, "+inf", "amin")
    return _fw.amin(x, _canonical_dim(dim, x.dim(), "amin"), bool(keepdim)).to(dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the maximum along ``dim`` among the elements where ``mask`` is True."""
    dtype = input.dtype if dtype is None else dtype
    return _fw.argmax(_combine(input, mask, "-inf", "argmax"), dim, bool(keepdim)).to(dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the minimum along ``dim`` among the elements where ``mask`` is True."""
    dtype = input.dtype if dtype is None else dtype
    return _fw.argmin(_combine(input, mask, "+inf", "argmin"), dim, bool(keepdim)).to(dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean along ``dim`` of the elements where ``mask`` is True (NaN where none is)."""
    source = "Optional" if dtype is not None else "Input"
    dtype = input.dtype if dtype is None else dtype
    if dtype.category < 2:
        raise ValueError(f"masked.mean(): Could not infer output dtype. {source} dtype must be "
                         f"either a floating point or complex dtype. Got: {dtype}")
    if mask is None:
        count = sum(_fw.ones(input.shape, dtype=_fw.int64, device=input.device), dim,
                    keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask, "mean")
        count = sum(inmask, dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median along ``dim`` of the elements where ``mask`` is True (NaN where none is)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim(), "median")[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(_fw.float32)
    out = _fw.nanmedian(_combine(input, mask, "nan", "median"), d, keepdim).values
    if is_float:
        return out
    if bool(out.isnan().any()):
        raise ValueError("masked.median: masked median expects no fully masked out rows if "
                         "dtype is not floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp(input))) along ``dim`` over the elements where ``mask`` is True."""
    _no_complex("logsumexp", input)
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.dim(), "logsumexp")
    return _fw.logsumexp(_combine(input, mask, "-inf", "logsumexp"), dims,
                         keepdim=keepdim).to(dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """logaddexp of ``input`` and ``other``, each masked out (as -inf) by its own mask."""
    dtype = input.dtype if dtype is None else dtype
    a = _combine(input, input_mask, "-inf", "logaddexp")
    b = _combine(other, other_mask, "-inf", "logaddexp")
    return _fw.logaddexp(a, b).to(dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector norm of order ``ord`` along ``dim`` of the elements where ``mask`` is True."""
    dtype = input.dtype if dtype is None else dtype
    if mask is not None and ord == -math.inf and not input.dtype.is_floating_point:
        raise RuntimeError(f"masked.norm: ord=-inf needs a floating point input, got "
                           f"{input.dtype}")
    x = _combine(input, mask, "+inf" if ord == -math.inf else "zero", "norm")
    dims = _canonical_dim(dim, input.dim(), "norm")
    return _fw.linalg.vector_norm(x, ord, dims, bool(keepdim), dtype=dtype)


def _no_complex(op, input):
    if input.dtype.is_complex:
        raise NotImplementedError(f"masked.{op}: not implemented for "
                                  f"'{input.dtype.scalar_name}' input")


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, sqrt):
    _no_complex("std" if sqrt else "var", input)
    if unbiased is not None and correction is not None:
        raise RuntimeError("masked.var: only one of unbiased and correction may be given")
    corr = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _fw.float32
    compute = dtype if dtype.is_floating_point else _fw.float32
    ones = _fw.ones(input.shape, dtype=_fw.int64, device=input.device)
    inmask = None if mask is None else _input_mask(input, mask, "var")
    count = sum(ones if inmask is None else inmask, dim, keepdim=True)
    mean_ = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask) / count
    x = input - mean_
    total = sum(x * x, dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        count = _fw.clamp_min(count.to(compute) - corr, 0)
    out = (total / count).to(dtype)
    return out.sqrt() if sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Variance along ``dim`` of the elements where ``mask`` is True (NaN where none is)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Standard deviation along ``dim`` of the elements where ``mask`` is True."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    """Softmax along ``dim`` over the elements where ``mask`` is True (masked-out: 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim(), "softmax")[0]
    return _fw.nn.functional.softmax(_combine(input, mask, "-inf", "softmax"), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Log-softmax along ``dim`` over the elements where ``mask`` is True."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim(), "log_softmax")[0]
    return _fw.nn.functional.log_softmax(_combine(input, mask, "-inf", "log_softmax"), d,
                                         dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """Softmin along ``dim`` over the elements where ``mask`` is True (masked-out: 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.dim(), "softmin")[0]
    return _fw.nn.functional.softmin(_combine(input, mask, "+inf", "softmin"), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """``input`` divided by its masked ``ord``-norm along ``dim`` (at least ``eps``)."""
    dtype = input.dtype if dtype is None else dtype
    x = _combine(input, mask, "zero", "normalize")
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return x / _fw.clamp_min(nrm, eps)
