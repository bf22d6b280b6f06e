"""Reductions: sum, mean, prod, max/min (with indices), var/std, norm, logsumexp, all/any,
count_nonzero over all dims or any set of dims, with PyTorch's dtype rules and errors.

Each op turns its input into two loop nests for the backend's ``reduction.reduce`` kernel:
the kept dims (one output element each) and the reduced dims, both as (shape, strides) of
the input as it lies in memory. No contiguous copy is made: the kernel walks the strides.
Dims are ordered by decreasing stride so that the innermost loops touch adjacent memory,
except for index-returning ops, whose reduced dims keep their logical order (the index of
the first occurrence is defined in that order).

Names such as ``sum`` and ``max`` are PyTorch's; the builtins are reached as ``builtins.*``.
"""
import builtins
import math
import warnings

from .. import _dtype, return_types
from .._tensor import Tensor, _wrap_dim
from . import alloc, complex_products
from .pointwise import cpp_type_name, require_tensor, binary, check_out, convert, type_name

_T = Tensor
_int64 = _dtype.int64
_bool = _dtype.bool

# C++ type names that PyTorch's "Expected out tensor to have dtype ..." messages use


# ---- shared machinery -----------------------------------------------------------------

def _check_input(op, x):
    require_tensor(op, x, "input", 1)
    return x


def _dim_list(x, dim):
    """The dims to reduce, sorted; None or an empty list means all (PyTorch's rules, with
    its errors for out-of-range and repeated dims). A 0-d tensor accepts dim 0 and -1."""
    nd = x.dim()
    if dim is None:
        return list(range(nd))
    dims = list(dim) if isinstance(dim, (tuple, list)) else [dim]
    if not dims:
        return list(range(nd))
    seen = set()
    for d in dims:
        w = _wrap_dim(d, nd)     # ints only (TypeError otherwise), as PyTorch
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return sorted(seen) if nd else []


def _out_shape(x, dims, keepdim):
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(x._shape))
    return tuple(n for d, n in enumerate(x._shape) if d not in dims)


_GEOMETRY = {}


def _geometry(x, dims, keepdim, out0, out1, logical=False):
    """(kept shape, kept input strides, out0 strides, out1 strides, reduced shape, reduced
    input strides) for the kernel; see the module docstring for the dim order. Memoized by
    layout: a program reduces the same few layouts again and again."""
    key = (x._shape, x._stride, tuple(dims), keepdim,
           out0._stride if out0 is not None else None,
           out1._stride if out1 is not None else None, logical)
    g = _GEOMETRY.get(key)
    if g is None:
        g = alloc.remember(_GEOMETRY, key,
                           _make_geometry(x, dims, keepdim, out0, out1, logical))
    return g


def _make_geometry(x, dims, keepdim, out0, out1, logical):
    shape, st = x._shape, x._stride
    # (input stride, size, out0 stride, out1 stride) per kept dim
    kept = []
    if len(dims) < len(shape):
        s0 = out0._stride if out0 is not None else None
        s1 = out1._stride if out1 is not None else None
        i = 0
        for d in range(len(shape)):
            if d in dims:
                continue
            j = d if keepdim else i
            kept.append((st[d], shape[d], s0[j] if s0 else 0, s1[j] if s1 else 0))
            i += 1
        if len(kept) > 1:
            kept.sort(key=_by_stride)
    red = [(st[d], shape[d]) for d in dims]
    if len(red) > 1 and not logical:
        red.sort(key=_by_stride)
    return (tuple(k[1] for k in kept), tuple(k[0] for k in kept), tuple(k[2] for k in kept),
            tuple(k[3] for k in kept), tuple(r[1] for r in red), tuple(r[0] for r in red))


def _by_stride(item):
    return -builtins.abs(item[0])


def _launch(kernel, x, dims, keepdim, out0, out1=None, p0=0.0, p1=0.0, logical=False):
    if x.dtype.is_complex:      # sum/mean/prod/var reduce the parts (complex_products.py)
        if kernel not in ("all", "any", "count_nonzero"):
            raise complex_products.unsupported_reduction(kernel, x.dtype)
        x = binary(kernel, "ne", x, 0, None, "compare")
    geom = _geometry(x, dims, keepdim, out0, out1, logical)
    alloc.backend(x._storage.device).reduction.reduce(kernel, x, out0, out1, geom, p0, p1)


def _target(op, out, shape, dtype, input, exact=False):
    """The tensor a result of ``dtype`` ends in: ``out`` (checked against ``input`` for
    memory overlap, resized) or a new one on ``input``'s device."""
    if out is None:
        return alloc.empty(shape, dtype, input._storage.device)
    if exact and out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_type_name(dtype)}, but got "
                           f"{cpp_type_name(out.dtype)} instead")
    return check_out(op, out, shape, dtype, False, (input,))


def _reduce(op, kernel, x, dims, keepdim, kernel_dtype, result, p0=0.0, p1=0.0):
    """Runs ``kernel`` (which writes ``kernel_dtype``) into tensor ``result``, through a
    temporary when the dtypes differ."""
    if x.dtype.is_complex and kernel in complex_products.REDUCTIONS:
        return complex_products.reduce(op, kernel, x, dims, keepdim, result)
    if result.dtype is kernel_dtype:
        _launch(kernel, x, dims, keepdim, result, None, p0, p1)
        return result
    tmp = alloc.empty(result._shape, kernel_dtype, x._storage.device)
    _launch(kernel, x, dims, keepdim, tmp, None, p0, p1)
    alloc.backend(x._storage.device).copy.copy(result, tmp, tmp._stride)
    return result


def _wide(dt):
    """The dtype sum/prod produce: int64 for integers and bool, else the input dtype."""
    return _int64 if dt.category < 2 else dt


def _sum_like(op, kernel, input, dim, keepdim, dtype, out):
    x = _check_input(op, input)
    if dtype is None and out is not None:
        dtype = out.dtype      # PyTorch reduces in the dtype of out=
    elif dtype is not None and out is not None and out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_type_name(dtype)}, but got "
                           f"{cpp_type_name(out.dtype)} instead")
    device = x._storage.device
    if dtype is not None and x.dtype is not dtype:
        x = convert(x, dtype, device)
    dims = _dim_list(x, dim)
    shape = _out_shape(x, dims, keepdim)
    kdt = _wide(x.dtype)
    res = _target(op, out, shape, dtype or kdt, input)
    if kernel == "nansum" and x.dtype.category < 2:
        kernel = "sum"         # integers have no NaN
    return _reduce(op, kernel, x, dims, keepdim, kdt, res)


# ---- sums and products ----------------------------------------------------------------

def sum_rounded(x, dims, dtype):
    """``x.sum(dims).to(dtype)`` for a 16-bit float ``x`` and a wider ``dtype``, in one
    reduction (the sums rounded to x's dtype, then stored as ``dtype``): the gradient of
    a float32 bias under autocast. Internal: no autograd, no checks."""
    res = alloc.empty(_out_shape(x, dims, False), dtype, x._storage.device)
    _launch("sum_rounded", x, dims, False, res)
    return res


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum of the elements over ``dim`` (all dims if None). Integers and bool sum to int64."""
    return _sum_like("sum", "sum", input, dim, keepdim, dtype, out)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero."""
    return _sum_like("nansum", "nansum", input, dim, keepdim, dtype, out)


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product of the elements over ``dim`` (all if None). Integers and bool give int64."""
    return _sum_like("prod", "prod", input, dim, keepdim, dtype, out)


def _float_input(op, x, dtype):
    if dtype is None:
        if x.dtype.category < 2:
            raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be "
                               f"either a floating point or complex dtype. Got: "
                               f"{type_name(x.dtype)}")
        return x
    if dtype.category < 2:
        raise RuntimeError(f"{op}(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {type_name(dtype)}")
    return x if x.dtype is dtype else convert(x, dtype, x._storage.device)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the elements over ``dim``; floating point inputs (or ``dtype``) only."""
    x = _float_input("mean", _check_input("mean", input), dtype)
    dims = _dim_list(x, dim)
    shape = _out_shape(x, dims, keepdim)
    res = _target("mean", out, shape, x.dtype, input)
    return _reduce("mean", "mean", x, dims, keepdim, x.dtype, res)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the non-NaN elements: nansum / count of non-NaN."""
    x = _check_input("nanmean", input)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {type_name(x.dtype)}")
    if dtype is not None and x.dtype is not dtype:
        x = convert(x, dtype, x._storage.device)
    total = nansum(x, dim, keepdim)
    count = count_nonzero(binary("nanmean", "eq", x, x, None, "compare"), _dim_list(x, dim))
    if keepdim:
        count = count.reshape(total._shape)
    return binary("nanmean", "div", total, count, out, "float")


def count_nonzero(input, dim=None):
    """Number of non-zero elements over ``dim`` (int64)."""
    x = _check_input("count_nonzero", input)
    dims = _dim_list(x, dim)
    res = alloc.empty(_out_shape(x, dims, False), _int64, x._storage.device)
    return _reduce("count_nonzero", "count_nonzero", x, dims, False, _int64, res)


# ---- max and min ----------------------------------------------------------------------

def _nonempty(op, x, dim, specified, name=None, as_given=False):
    """Ops without an identity (max, argmax, ...) refuse empty reductions; the message names
    the dim wrapped, or as the user wrote it (amax/amin, like PyTorch)."""
    if not specified and x.numel() == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")
    if dim is None or not x.dim():
        return
    for d in (dim if isinstance(dim, (tuple, list)) else [dim]):
        w = _wrap_dim(d, x.dim())
        if x._shape[w] == 0:
            raise IndexError(f"{name or op + '()'}: Expected reduction dim {d if as_given else w} "
                             f"to have non-zero size.")


def _amax_like(op, kernel, input, dim, keepdim, out):
    x = _check_input(op, input)
    dims = _dim_list(x, dim)
    _nonempty(op, x, dim, dim is not None and (hasattr(dim, "__index__") or len(dim)),
              as_given=op in ("amax", "amin"))
    shape = _out_shape(x, dims, keepdim)
    if out is not None and out.dtype is not x.dtype:
        raise RuntimeError(f"Expected the dtype for input and out to match, but got "
                           f"{type_name(x.dtype)} for input's dtype and {type_name(out.dtype)} "
                           f"for out's dtype.")
    res = _target(op, out, shape, x.dtype, input)
    return _reduce(op, kernel, x, dims, keepdim, x.dtype, res)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (all dims if empty); NaN propagates."""
    return _amax_like("amax", "amax", input, dim, keepdim, out)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over ``dim`` (all dims if empty); NaN propagates."""
    return _amax_like("amin", "amin", input, dim, keepdim, out)


def _max_min(op, input, dim, keepdim, out):
    x = _check_input(op, input)
    if x.dtype.is_complex and not isinstance(dim, _T):
        if dim is None:
            raise NotImplementedError(f'"{op}_all" not implemented for '
                                      f"'{x.dtype.scalar_name}'")
        raise RuntimeError(f"{op}(): does not support complex input")
    if isinstance(dim, _T):                     # max(a, b): elementwise
        if op == "max":
            return binary("max", "maximum", x, dim, out, "default")
        from . import dispatcher
        if "minimum" not in dispatcher.ops():
            raise NotImplementedError("min(input, other): the minimum op is not available yet")
        return dispatcher.function("minimum")(x, dim, out=out)
    if dim is None:
        if x.numel() == 0:
            _nonempty(op, x, None, False)
        return _amax_like(op, "amax" if op == "max" else "amin", x, None, False, out)
    if not hasattr(dim, "__index__"):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    dims = _dim_list(x, dim)
    _nonempty(op, x, dim, True)
    shape = _out_shape(x, dims, keepdim)
    values, indices = (None, None) if out is None else out
    if values is not None and values.dtype is not x.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_type_name(x.dtype)}, but got "
                           f"{cpp_type_name(values.dtype)} instead")
    values = _target(op, values, shape, x.dtype, input)
    indices = _target(op, indices, shape, _int64, input, exact=True)
    _launch("argmax" if op == "max" else "argmin", x, dims, keepdim, values, indices,
            logical=True)
    return getattr(return_types, op)(values, indices)


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """Maximum of all elements; with ``dim``: (values, indices) along it (first occurrence,
    NaN propagates); with a tensor (``max(a, b)`` or ``other=b``): elementwise maximum."""
    return _max_min("max", input, _other_or_dim("max", dim, other), keepdim, out)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    """Minimum of all elements; with ``dim``: (values, indices); with a tensor: minimum."""
    return _max_min("min", input, _other_or_dim("min", dim, other), keepdim, out)


def _other_or_dim(op, dim, other):
    if other is None:
        return dim
    if dim is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: both dim and "
                        "other")
    if not isinstance(other, _T):
        raise TypeError(f"{op}(): argument 'other' must be Tensor, not {type(other).__name__}")
    return other


def _argmax_like(op, input, dim, keepdim, out):
    x = _check_input(op, input)
    if x.dtype is _bool:
        raise RuntimeError(f"{op}(): does not support bool input")
    if dim is None:
        if x.numel() == 0:
            raise IndexError(f"{op}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        dims = list(range(x.dim()))
        shape = (1,) * x.dim() if keepdim else ()
    else:
        if not hasattr(dim, "__index__"):
            raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
        dims = _dim_list(x, dim)
        _nonempty(op, x, dim, True)
        shape = _out_shape(x, dims, keepdim)
    res = _target(op, out, shape, _int64, input, exact=True)
    _launch(op, x, dims, keepdim, None, res, logical=True)
    return res


def argmax(input, dim=None, keepdim=False, *, out=None):
    """Index of the maximum (first occurrence; a NaN counts as the maximum). With dim=None
    the index is into the flattened tensor."""
    return _argmax_like("argmax", input, dim, keepdim, out)


def argmin(input, dim=None, keepdim=False, *, out=None):
    """Index of the minimum (first occurrence; a NaN counts as the minimum)."""
    return _argmax_like("argmin", input, dim, keepdim, out)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """(min, max) over ``dim`` (all dims if None) in one pass."""
    x = _check_input("aminmax", input)
    dims = _dim_list(x, dim)
    if x.numel() == 0 and (dim is None or x.dim() == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    _nonempty("aminmax", x, dim, True, name="aminmax")
    shape = _out_shape(x, dims, keepdim)
    lo, hi = (None, None) if out is None else out
    lo = _target("aminmax", lo, shape, x.dtype, input, exact=True)
    hi = _target("aminmax", hi, shape, x.dtype, input, exact=True)
    _launch("aminmax", x, dims, keepdim, lo, hi)
    return return_types.aminmax(lo, hi)


# ---- variance and standard deviation --------------------------------------------------

def _var_args(op, input, dim, unbiased, correction):
    x = _check_input(op, input)
    if isinstance(dim, builtins.bool):          # var(x, False): the unbiased overload
        dim, unbiased = None, dim
    if x.dtype.category < 2:
        name = op if op.endswith("_mean") else "std and var"
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: only one of "
                        f"\"unbiased\" or \"correction\" may be given")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return x, _dim_list(x, dim), builtins.float(correction)


def _var(op, input, dim, unbiased, keepdim, correction, out, take_sqrt, with_mean):
    x, dims, corr = _var_args(op, input, dim, unbiased, correction)
    shape = _out_shape(x, dims, keepdim)
    device = x._storage.device
    n = 1
    for d in dims:
        n *= x._shape[d]
    if n - corr <= 0 and alloc.numel(shape):
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less "
                      f"than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    if x.dtype.is_complex:
        return complex_products.var(op, x, dims, keepdim, corr, out, take_sqrt, with_mean)
    res = _target(op, out, shape, x.dtype, input)
    m = alloc.empty(shape, x.dtype, device) if with_mean else None
    kres = res if res.dtype is x.dtype else alloc.empty(shape, x.dtype, device)
    _launch("var", x, dims, keepdim, kres, m, corr, 1.0 if take_sqrt else 0.0)
    if kres is not res:
        alloc.backend(device).copy.copy(res, kres, kres._stride)
    return (res, m) if with_mean else res


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False``
    means 0): sum((x - mean)^2) / max(0, N - correction)."""
    return _var("var", input, dim, unbiased, keepdim, correction, out, False, False)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation: the square root of :func:`var`."""
    return _var("std", input, dim, unbiased, keepdim, correction, out, True, False)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over ``dim`` in one call."""
    return _var("var_mean", input, dim, unbiased, keepdim, correction, None, False, True)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over ``dim`` in one call."""
    return _var("std_mean", input, dim, unbiased, keepdim, correction, None, True, True)


# ---- norms, logsumexp, all/any --------------------------------------------------------

def empty_norm_error(name, x, dim):
    """PyTorch's error for a norm without identity (inf, negative) over an empty dim: it
    names the first such dim as given, or the tensor when no dim is."""
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty "
                           f"tensor because the operation does not have an identity")
    for d in (dim if isinstance(dim, (list, tuple)) else (dim,)):
        if x._shape[_wrap_dim(d, x.dim())] == 0:
            # (sic: PyTorch's message has no space before "because")
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on the "
                               f"dimension {d}because this dimension is empty and the "
                               f"operation does not have an identity")


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector p-norm over ``dim`` (all dims if None): p = 'fro' or 2, 1, inf, -inf, 0 (number
    of non-zeros) or any float: sum(|x|^p)^(1/p); p = 'nuc': the nuclear norm of matrices."""
    x = _check_input("norm", input)
    if isinstance(p, str):
        if p == "nuc":      # the nuclear norm of matrices (dims: the last two, or a pair)
            from .linalg_lapack import matrix_norm
            return matrix_norm(x, "nuc", (-2, -1) if dim is None else dim, keepdim,
                               dtype=dtype, out=out)
        if p != "fro":
            raise RuntimeError(f"norm(): p={p!r} is not a valid norm; use 'fro', 'nuc' or a "
                               "number")
        p = 2.0
    p = 2.0 if p is None else builtins.float(p)
    if x.dtype.is_complex:      # the norm of the moduli (a real result)
        x, dtype = _moduli(x, dtype)
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {type_name(dtype)}")
        if x.dtype.is_floating_point and x.dtype is not dtype:
            x = convert(x, dtype, x._storage.device)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {type_name(x.dtype)}")
    dims = _dim_list(x, dim)
    if math.isinf(p) and builtins.any(x._shape[d] == 0 for d in dims):
        empty_norm_error("inf" if p > 0 else "-inf", x, dim)
    shape = _out_shape(x, dims, keepdim)
    res = _target("norm", out, shape, x.dtype, input)
    return _reduce("norm", "norm", x, dims, keepdim, x.dtype, res, p)


def _moduli(x, dtype):
    """|x| of complex ``x`` (converted to complex ``dtype`` first) and the real dtype that
    replaces ``dtype``, for the norms."""
    if dtype is not None:
        if not dtype.is_complex:
            raise RuntimeError(f"linalg.vector_norm: dtype should be complex for complex "
                               f"inputs, but got {type_name(dtype)}")
        x, dtype = convert(x, dtype, x._storage.device), dtype.to_real()
    from .pointwise import unary
    return unary("norm", "abs", x, None, "same"), dtype


def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(x))) over ``dim``, computed stably (max subtracted first). Integer and
    bool inputs give the default float dtype."""
    x = _check_input("logsumexp", input)
    if x.dtype.is_complex:
        return complex_products.logsumexp(x, _dim_list(x, dim), keepdim, out)
    if not x.dtype.is_floating_point:
        x = convert(x, _dtype.get_default_dtype(), x._storage.device)
    dims = _dim_list(x, dim)
    shape = _out_shape(x, dims, keepdim)
    res = _target("logsumexp", out, shape, x.dtype, input)
    return _reduce("logsumexp", "logsumexp", x, dims, keepdim, x.dtype, res)


def _all_any(op, input, dim, keepdim, out):
    x = _check_input(op, input)
    if x.dtype.is_float8:   # no float8 reduction kernels: reduce x != 0
        from .pointwise import binary
        x = binary("ne", "ne", x, 0, None, "compare")
    rdt = _dtype.uint8 if x.dtype is _dtype.uint8 else _bool
    if out is not None and out.dtype is not rdt:
        raise RuntimeError(f"{op} only supports bool tensor for result, got: "
                           f"{type_name(out.dtype)}")
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dims = []              # PyTorch: an explicit empty dim list reduces nothing here
    else:
        dims = _dim_list(x, dim)
    shape = _out_shape(x, dims, keepdim)
    res = _target(op, out, shape, rdt, input)
    _launch(op, x, dims, keepdim, res)
    return res


def all(input, dim=None, keepdim=False, *, out=None):
    """Whether all elements over ``dim`` are non-zero (bool; uint8 for uint8 input)."""
    return _all_any("all", input, dim, keepdim, out)


def any(input, dim=None, keepdim=False, *, out=None):
    """Whether any element over ``dim`` is non-zero (bool; uint8 for uint8 input)."""
    return _all_any("any", input, dim, keepdim, out)


def sum_to_size(self, *size):
    """Sums this tensor down to ``size`` (which must broadcast to its shape): the reverse
    of ``expand``. Built from ``sum`` so that autograd goes through it."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    size = tuple(int(s) for s in size)
    if not size:        # PyTorch's sum_to: a 0-d target is the full sum (bool -> int64)
        return self.sum()
    shape = self._shape
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s != 1 and s != n for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(str(s) for s in size)}}} is not expandable to "
                           f"size {{{', '.join(str(s) for s in shape)}}}.")
    if shape == size:
        return self
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    r = self.sum(dims, keepdim=True) if dims else self
    return r.reshape(size) if r._shape != size else r
