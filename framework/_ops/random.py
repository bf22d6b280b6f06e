"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, multinomial, the
``*_like`` factories and the in-place samplers (uniform_, normal_, random_, bernoulli_,
exponential_, geometric_, log_normal_, cauchy_).

Each op takes ``n`` Philox counters from its generator (``generator=`` or the default one
of the output's device; see framework/random.py), one per output element (multinomial:
one per draw, or per category without replacement), so a call's numbers depend only on the
generator state, and successive calls never overlap.
"""
import math
import warnings

import numpy as np

from .. import _dtype
from .. import random as _random
from .._tensor import Tensor
from . import alloc, overlap
from .complex_views import as_real
from . import args as _args
from .creation import _finish, _size, _tuple_arg
from .pointwise import (require_tensor, broadcast_shapes, check_out, common_device,
                        expand_strides, type_name)

UNIFORM, NORMAL, EXPONENTIAL, CAUCHY, LOG_NORMAL, GEOMETRIC = 0, 1, 2, 3, 4, 5
_MASK = (1 << 64) - 1
_MISSING = object()

# C++ type names PyTorch prints in range errors
_CNAME = {_dtype.bool: "bool", _dtype.uint8: "unsigned char", _dtype.int8: "signed char",
          _dtype.int16: "short", _dtype.int32: "int", _dtype.int64: "long",
          _dtype.float16: "c10::Half", _dtype.bfloat16: "c10::BFloat16", _dtype.float32: "float",
          _dtype.float64: "double"}
# randperm's largest n for a floating dtype (its integers stay exact) and how PyTorch says it
_PERM_LIMIT = {_dtype.float16: (2049, "2049"), _dtype.float32: ((1 << 24) + 1, "2^24+1"),
               _dtype.float64: ((1 << 53) + 1, "2^53+1")}
# largest integer each floating dtype holds exactly (2 ** mantissa digits)
_FLOAT_DIGITS = {_dtype.float16: 11, _dtype.bfloat16: 8, _dtype.float32: 24, _dtype.float64: 53}


def _fmt(v):
    """A number as C++ streams print a double (PyTorch's messages): 1.5, -1, 0."""
    return f"{float(v):g}"


def _kernels(t):
    return alloc.backend(t._storage.device).random


def _take(generator, device, n):
    """Reserves n counters of the generator for ``device``; returns (seed, offset)."""
    if device.type == "meta":   # nothing is drawn for a tensor without data (as PyTorch)
        return 0, 0
    return _random.resolve(generator, device)._take(n)


def _fill(t, kind, a, b, generator):
    seed, offset = _take(generator, t._storage.device, t.numel())
    if t.numel():
        _kernels(t).random_fill(t, seed, offset, kind, a, b)
    return t


def _need_float(kernel, dt, complex_ok=False):
    if not (dt.is_floating_point or complex_ok and dt.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(dt)}'")


def _fill_any(t, kind, a, b, generator):
    """``_fill`` of a floating or complex ``t`` (UNIFORM or NORMAL). A complex number takes
    one draw per part; a normal part has variance b**2 / 2, so that E|z - a|^2 = b**2 (as
    PyTorch's complex ``randn`` and ``normal_``)."""
    if not t.dtype.is_complex:
        return _fill(t, kind, a, b, generator)
    _fill(as_real(t), kind, a, b * math.sqrt(0.5) if kind == NORMAL else b, generator)
    return t


def _fill_standard(t, kind, generator):
    """Fills a floating or complex ``t`` from U[0, 1) or N(0, 1)."""
    _need_float("check_uniform_bounds" if kind == UNIFORM else "normal_kernel_cpu", t.dtype,
                complex_ok=True)
    return _fill_any(t, kind, 0.0, 1.0, generator)


def _factory_out(op, size, out, dtype, device, default=None, size_kw=None):
    """The tensor a factory writes into: ``out`` (resized) or a new one."""
    shape = _size(size, op, size_kw)
    if out is not None:
        require_tensor(op, out, "out")
        dt = out.dtype if dtype is None else alloc.resolve_dtype(dtype)
        return check_out(op, out, shape, dt, False)
    return alloc.empty(shape, alloc.resolve_dtype(dtype, default), alloc.resolve_device(device))


def _like(input, dtype, device):
    return alloc.empty(input._shape, alloc.resolve_dtype(dtype, input.dtype),
                       input._storage.device if device is None else alloc.resolve_device(device))


def _inplace(t):
    t._storage.version += 1
    return t


def _target(t):
    """Refuses an in-place random fill of a tensor whose elements share memory."""
    if 0 in t._stride:
        overlap.check_internal(t)
    return t


# ---- uniform and normal factories -------------------------------------------------------

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, **size_kw):
    """A tensor of numbers drawn uniformly from [0, 1)."""
    t = _factory_out("rand", size, out, dtype, device, size_kw=size_kw)
    return _finish(_fill_standard(t, UNIFORM, generator), requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, **size_kw):
    """A tensor of numbers drawn from the standard normal distribution."""
    t = _factory_out("randn", size, out, dtype, device, size_kw=size_kw)
    return _finish(_fill_standard(t, NORMAL, generator), requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    """``rand`` with the shape (and by default dtype and device) of ``input``."""
    t = _like(input, dtype, device)
    return _finish(_fill_standard(t, UNIFORM, generator), requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    """``randn`` with the shape (and by default dtype and device) of ``input``."""
    t = _like(input, dtype, device)
    return _finish(_fill_standard(t, NORMAL, generator), requires_grad)


# ---- integers ---------------------------------------------------------------------------

def _max_of(dt):
    if dt is _dtype.bool:
        return 1
    if dt.is_floating_point:
        return 1 << _FLOAT_DIGITS[dt]
    return _dtype.iinfo(dt).max


def _bounds(dt):
    if dt.is_floating_point:
        return -(1 << _FLOAT_DIGITS[dt]), 1 << _FLOAT_DIGITS[dt]
    if dt is _dtype.bool:
        return 0, 1
    info = _dtype.iinfo(dt)
    return info.min, info.max


def _random_range(t, low, high, generator):
    """Fills t with integers in [low, high), after PyTorch's range checks."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    lo, hi = _bounds(t.dtype)
    for what, v in (("from", low), ("to - 1", high - 1)):
        if lo <= v <= hi:
            continue
        if t.dtype in (_dtype.float32, _dtype.float64):
            digits = _FLOAT_DIGITS[t.dtype]
            warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                          f"limitations {_CNAME[t.dtype]} can support discrete uniform "
                          f"distribution only within this range.", UserWarning, stacklevel=3)
        else:
            raise RuntimeError(f"{what} is out of bounds for {_CNAME[t.dtype]}")
    seed, offset = _take(generator, t._storage.device, t.numel())
    if t.numel():
        _kernels(t).random_int(t, seed, offset, low, (high - low) & _MASK)
    return t


def _randint_args(low, high, size):
    """PyTorch's randint overloads: (high, size) and (low, high, size)."""
    high_pos = 2
    if size is None and isinstance(high, (tuple, list)):
        size, high, low, high_pos = high, low, 0, 1
    elif size is not None and high is None:
        high, low, high_pos = low, 0, 1
    if size is None:
        if high is None:
            raise TypeError(f"randint() received an invalid combination of arguments - got "
                            f"({type(low).__name__}), but expected one of: (int high, tuple of "
                            f"ints size) or (int low, int high, tuple of ints size)")
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(high).__name__}")
    return _int_bound("low", low, 1), _int_bound("high", high, high_pos), size


def _int_bound(name, v, pos):
    """A randint bound as an int (PyTorch's ValueError for ints beyond int64)."""
    if v.__class__ is int and not -(1 << 63) <= v < 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    return _args.to_int("randint", name, v, pos)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    """Integers drawn uniformly from [low, high); ``randint(high, size)`` starts at 0."""
    low, high, size = _randint_args(low, high, size)
    t = _factory_out("randint", size if isinstance(size, (tuple, list)) else (size,), out,
                     dtype, device, default=_dtype.int64)
    return _finish(_random_range(t, low, high, generator), requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    """``randint`` with the shape (and by default dtype and device) of ``input``."""
    if high is None:
        high, low = low, 0
    t = _like(input, dtype, device)
    return _finish(_random_range(t, _int_bound("low", low, 2), _int_bound("high", high, 3),
                                 generator), requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of the integers 0 .. n-1."""
    n = _args.to_int("randperm", "n", n, 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    t = _factory_out("randperm", (n,), out, dtype, device, default=_dtype.int64)
    if t.dtype is _dtype.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if not t.dtype.is_floating_point and n - 1 > _dtype.iinfo(t.dtype).max:
        ctype = {_dtype.uint8: "uint8_t", _dtype.int8: "int8_t", _dtype.int16: "int16_t",
                 _dtype.int32: "int32_t"}[t.dtype]
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
    if t.dtype in _PERM_LIMIT and n > _PERM_LIMIT[t.dtype][0]:
        raise RuntimeError(f"n cannot be greater than {_PERM_LIMIT[t.dtype][1]} for "
                           f"{type_name(t.dtype)} type.")
    seed, offset = _take(generator, t._storage.device, n)
    dst = t if t.is_contiguous() else alloc.empty((n,), t.dtype, t._storage.device)
    _kernels(t).randperm(dst, seed, offset)
    if dst is not t:
        alloc.backend(t._storage.device).copy.copy(t, dst, dst._stride)
    return _finish(t, requires_grad)


# ---- normal -----------------------------------------------------------------------------

def _check_std(std):
    if not std >= 0:    # NaN too
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Numbers drawn from normal distributions: ``normal(mean, std, size)`` with numbers, or
    element-wise means and standard deviations from tensors (broadcast together)."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected one "
                            f"of: (Tensor mean, Tensor std), (Tensor mean, float std), "
                            f"(float mean, Tensor std), "
                            f"(float mean, float std, tuple of ints size)")
        mean, std = _args.scalar("normal", "mean", mean, 1), _args.scalar("normal", "std", std, 2)
        _check_std(std)
        t = _factory_out("normal", (_tuple_arg("normal", "size", size, 3),), out, dtype, device)
        _need_float("normal_kernel_cpu", t.dtype, complex_ok=True)
        return _finish(_fill_any(t, NORMAL, mean, std, generator), requires_grad)
    if size is not None:
        raise TypeError("normal() received an invalid combination of arguments: size is only "
                        "accepted with a float mean and std")
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    if st:
        if std.numel() and not (std._host_array() >= 0).all():    # NaN too
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(std)
    if st and std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    dt = _dtype.promote_types(mean.dtype, std.dtype) if mt and st else tensors[0].dtype
    _need_float("normal_kernel_cpu", dt, complex_ok=True)
    shape = broadcast_shapes(*(x._shape for x in tensors))
    dev = common_device("normal", tensors)
    t = check_out("normal", out, shape, dt, False) if out is not None else \
        alloc.empty(shape, dt, dev)
    _fill_any(t, NORMAL, 0.0, 1.0, generator)
    from .dispatcher import function  # mean + std * z, as PyTorch computes it
    function("mul")(t, std, out=t)
    function("add")(t, mean, out=t)
    return t


# ---- bernoulli and multinomial --------------------------------------------------------

_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_p_tensor(p):
    arr = p._host_array()
    if arr.size and not ((arr >= 0) & (arr <= 1)).all():
        raise RuntimeError(_P_RANGE)


def _check_p(p):
    p = _args.scalar("bernoulli_", "p", p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")


def _bernoulli_into(t, p, generator):
    seed, offset = _take(generator, t._storage.device, t.numel())
    if not t.numel():
        return t
    if isinstance(p, Tensor):
        if p._storage.device is not t._storage.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {t.device} and {p.device}!")
        _need_float("bernoulli_tensor_cpu_p_", p.dtype)
        _kernels(t).bernoulli_tensor(t, p, expand_strides(p, t._shape), seed, offset)
    else:
        _kernels(t).bernoulli_scalar(t, seed, offset, p)
    return t


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0 or 1 for each element: 1 with probability ``input[i]`` (or ``p``)."""
    if p is None:
        _need_float("bernoulli_tensor_cpu_p_", input.dtype)
        _check_p_tensor(input)
    else:
        _check_p(p)
    t = alloc.empty(input._shape, input.dtype, input._storage.device) if out is None else \
        check_out("bernoulli", out, input._shape, out.dtype, False)
    return _bernoulli_into(t, input if p is None else p, generator)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills self with 0 or 1, 1 with probability ``p`` (a number or a tensor broadcast to
    self's shape)."""
    if isinstance(p, Tensor):
        if broadcast_shapes(self._shape, p._shape) != self._shape:
            raise RuntimeError(f"expand(torch.{type_name(p.dtype)}Tensor{{{list(p._shape)}}}, "
                               f"size={list(self._shape)}): the number of sizes provided "
                               f"({len(self._shape)}) must be greater or equal to the number "
                               f"of dimensions in the tensor ({len(p._shape)})")
        _check_p_tensor(p)
    else:
        _check_p(p)
    return _inplace(_bernoulli_into(_target(self), p, generator))


def _check_distribution(input):
    """PyTorch's checks of the weights, done here so that every device makes them."""
    w = np.asarray(input._host_array(), dtype=np.float64).reshape(-1, input._shape[-1])
    if not w.size:
        return
    if not (np.isfinite(w) & (w >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not (w.sum(1) > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Samples category indices from each row of ``input`` (non-negative weights, 1-d or
    2-d), with or without replacement. Returns int64 of shape (..., num_samples)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{type_name(input.dtype)}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n = _args.to_int("multinomial", "num_samples", num_samples, 2)
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cats = input._shape[-1]
    if not replacement and n > cats:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if cats > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    _check_distribution(input)
    probs = input if input.dim() == 2 else \
        Tensor._make(input._storage, (1, cats), (0, input._stride[0]), input._offset, input.dtype)
    rows = probs._shape[0]
    dev = input._storage.device
    res = alloc.empty((rows, n), _dtype.int64, dev)
    seed, offset = _take(generator, dev, rows * (n if replacement else cats))
    if rows:
        _kernels(input).multinomial(res, probs, n, replacement, seed, offset)
    shape = (rows, n) if input.dim() == 2 else (n,)
    res = Tensor._make(res._storage, shape, alloc.contiguous_strides(shape), 0, _dtype.int64)
    if out is None:
        return res
    target = check_out("multinomial", out, shape, _dtype.int64, False)
    alloc.backend(target._storage.device).copy.copy(target, res, res._stride)
    return target


# ---- in-place samplers ------------------------------------------------------------------

def uniform_(self, from_=0, to=1, *, generator=None):
    """Fills self with numbers drawn uniformly from [from, to)."""
    _need_float("check_uniform_bounds", self.dtype, complex_ok=True)
    from_, to = _args.scalar("uniform_", "from", from_), _args.scalar("uniform_", "to", to)
    real = self.dtype.to_real()   # a complex tensor: both parts from [from, to)
    lo, hi = -_dtype.finfo(real).max, _dtype.finfo(real).max
    for name, v in (("from", from_), ("to", to)):
        if not lo <= v <= hi:
            raise RuntimeError(f"{name} is out of bounds for {_CNAME[real]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(from_)} > to={_fmt(to)}")
    if to - from_ > hi:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{type_name(real)}>::max(), but found to={_fmt(to)} and "
                           f"from={_fmt(from_)} which result in to-from to exceed the limit")
    return _inplace(_fill_any(_target(self), UNIFORM, from_, float(to) - float(from_),
                              generator))


def normal_(self, mean=0, std=1, *, generator=None):
    """Fills self with numbers drawn from N(mean, std**2)."""
    _need_float("normal_kernel_cpu", self.dtype, complex_ok=True)
    _check_std(std)
    return _inplace(_fill_any(_target(self), NORMAL, mean, std, generator))


def random_(self, from_=None, to=_MISSING, *, generator=None):
    """Fills self with integers: ``random_()`` over [0, the dtype's largest exact integer],
    ``random_(to)`` over [0, to), ``random_(from, to)`` over [from, to) (to=None: up to the
    dtype's largest)."""
    if from_ is not None:
        from_ = _args.to_int("random_", "from", from_)
    if to is not _MISSING and to is not None:
        to = _args.to_int("random_", "to", to)
    if to is _MISSING:
        low, high = (0, _max_of(self.dtype) + 1) if from_ is None else (0, from_)
    else:
        low = 0 if from_ is None else from_
        high = _max_of(self.dtype) + 1 if to is None else to
    return _inplace(_random_range(_target(self), low, high, generator))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills self with numbers drawn from the exponential distribution of rate ``lambd``."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{type_name(self.dtype)}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    return _inplace(_fill(_target(self), EXPONENTIAL, 0.0, 1.0 / lambd, generator))


def geometric_(self, p, *, generator=None):
    """Fills self with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    if self.dtype is _dtype.bool:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    return _inplace(_fill(_target(self), GEOMETRIC, 0.0, 1.0 / math.log1p(-p), generator))


def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fills self with exp(N(mean, std**2))."""
    _need_float("log_normal_cpu", self.dtype)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    return _inplace(_fill(_target(self), LOG_NORMAL, mean, std, generator))


def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fills self with numbers drawn from the Cauchy distribution."""
    if not self.dtype.is_floating_point:
        cname = {_dtype.int64: "long int", _dtype.int16: "short int"}.get(self.dtype,
                                                                            _CNAME[self.dtype])
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {cname}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    return _inplace(_fill(_target(self), CAUCHY, median, sigma, generator))
