"""Tensor ops composed from recorded framework ops (autograd goes through them): finite
differences (diff, gradient, trapezoid), covariance, distances and products (cov, corrcoef,
cdist, dist, addr, inner, cross, vander), combinations, gcd/lcm, frexp and fill."""
import itertools
import warnings

import framework as fw

from .. import _dtype, return_types
from .._tensor import Tensor, _wrap_dim
from .pointwise import require_tensor, type_name

frexp_type = getattr(return_types, "frexp", None) or return_types._structseq(
    "frexp", ("mantissa", "exponent"))
return_types.frexp = frexp_type


def write_out(op, res, out):
    """``res`` copied into the ``out=`` tensor (resized when its shape differs)."""
    if out is None:
        return res
    require_tensor(op, out, "out")
    if not _dtype.can_cast(res.dtype, out.dtype):
        raise RuntimeError(f"result type {type_name(res.dtype)} can't be cast to the desired "
                           f"output type {type_name(out.dtype)}")
    if tuple(out.shape) != tuple(res.shape):
        out.resize_(res.shape)
    # a recorded copy: in-place variants (addr_ is addr(..., out=self)) keep their history
    out.copy_(res)
    return out


def _floating(t):
    """``t`` itself when floating, else converted to the default dtype (PyTorch's rule for
    ops that only compute in floating point)."""
    return t if t.dtype.category >= 2 else t.to(_dtype.get_default_dtype())


def _step(x, dim):
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) if n else x, x.narrow(dim, 0, n - 1) if n else x


# ---- finite differences -----------------------------------------------------------------

def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The n-th forward difference along ``dim`` (``prepend``/``append`` joined first);
    bool inputs use logical xor."""
    require_tensor("diff", input, "input")
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.dim(), "diff")
    parts = [input]
    for name, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            t = fw.tensor(t, device=input.device)
        if t.dim() == 0:
            shape = list(input.shape)
            shape[d] = 1
            t = t.expand(shape)
        if t.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        for i in range(input.dim()):
            if i != d and t.shape[i] != input.shape[i]:
                raise RuntimeError(
                    f"diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({i}) = "
                    f"{input.shape[i]}, but got tensor.size({i}) = {t.shape[i]}")
        parts.insert(0 if name == "prepend" else len(parts), t)
    x = fw.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[d] == 0:
            break
        hi, lo = _step(x, d)
        x = fw.logical_xor(hi, lo) if x.dtype is _dtype.bool else hi - lo
    if n == 0 or x is input:
        x = x.clone() if out is not None else x
    return write_out("diff", x, out)


def _interior(f, d, hl, hr):
    """Second-order central differences on (possibly uneven) spacings hl, hr."""
    n = f.shape[d]
    a, b, c = f.narrow(d, 0, n - 2), f.narrow(d, 1, n - 2), f.narrow(d, 2, n - 2)
    return (hl * hl * c - hr * hr * a + (hr * hr - hl * hl) * b) / (hl * hr * (hl + hr))


def _along(v, d, nd):
    shape = [1] * nd
    shape[d] = -1
    return v.reshape(shape)


def _gradient_dim(f, d, h, edge_order):
    """The gradient of ``f`` along ``d``; ``h``: a number or a 1-d tensor of coordinates."""
    n, nd = f.shape[d], f.dim()

    def at(i):
        return f.narrow(d, i, 1)
    if not isinstance(h, Tensor):
        # even spacing: the short formulas (fewer kernels than the general ones below)
        mid = (f.narrow(d, 2, n - 2) - f.narrow(d, 0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (at(1) - at(0)) / h, (at(n - 1) - at(n - 2)) / h
        else:
            first = (at(1) * 4 - at(0) * 3 - at(2)) / (2 * h)
            last = (at(n - 1) * 3 - at(n - 2) * 4 + at(n - 3)) / (2 * h)
        return fw.cat([first, mid, last], d)
    dx = _along(h[1:] - h[:-1], d, nd)
    hl, hr = dx.narrow(d, 0, n - 2), dx.narrow(d, 1, n - 2)
    mid = _interior(f, d, hl, hr)

    def dxi(i):
        return dx.narrow(d, i, 1)
    if edge_order == 1:
        first = (at(1) - at(0)) / dxi(0)
        last = (at(n - 1) - at(n - 2)) / dxi(n - 2)
    else:
        h1, h2 = dxi(0), dxi(1)
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * at(0) + (h1 + h2) / (h1 * h2) * at(1)
                 - h1 / (h2 * (h1 + h2)) * at(2))
        h1, h2 = dxi(n - 3), dxi(n - 2)
        last = (h2 / (h1 * (h1 + h2)) * at(n - 3) - (h1 + h2) / (h1 * h2) * at(n - 2)
                + (2 * h2 + h1) / (h2 * (h1 + h2)) * at(n - 1))
    return fw.cat([first, mid, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates the gradient of a function sampled in ``input`` along each of ``dim`` with
    central differences inside and one-sided ones of order ``edge_order`` at the edges;
    ``spacing``: a scalar, a scalar per dim, or a coordinate tensor per dim."""
    require_tensor("gradient", input, "input")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if spacing is None:     # PyTorch's overloads take None for unit spacing
        spacing = 1
    nd = input.dim()
    if dim is None:
        dims = list(range(nd))
    elif isinstance(dim, int):
        dims = [_wrap_dim(dim, nd, "gradient")]
    else:
        dims = [_wrap_dim(x, nd, "gradient") for x in dim]
        for i, x in enumerate(dims):
            if x in dims[:i]:
                raise RuntimeError(f"dim {x} appears multiple times in the list of dims")
    if input.dtype is _dtype.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if isinstance(spacing, (list, tuple)):
        spacings = list(spacing)
        if dim is None and len(spacings) != nd:
            raise RuntimeError(
                f"torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {nd}', since dim argument was not given, but "
                f"got a list of length {len(spacings)}")
        if len(spacings) != len(dims):
            raise RuntimeError(
                f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                f"and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacings)} and a dim argument of length {len(dims)}.")
    elif isinstance(spacing, Tensor) and spacing.dim() > 0:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or a "
                           "list")
    else:
        spacings = [spacing.item() if isinstance(spacing, Tensor) else spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = _floating(input)
    res = []
    for d, h in zip(dims, spacings):
        if isinstance(h, Tensor):
            if h.dim() != 1:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same "
                                   f"device and 1-dimensional, but got a tensor with "
                                   f"{h.dim()} dimensions")
            if h.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor in spacing to have "
                                   f"the same size as the input along dim {d}, but got "
                                   f"{h.shape[0]} and {input.shape[d]}")
            h = h.to(f.device)
        res.append(_gradient_dim(f, d, h, edge_order))
    return tuple(res)


def _trapezoid_check(y):
    require_tensor("trapezoid", y, "y")
    if y.dtype is _dtype.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not "
                           "supported")


def _trapezoid_terms(name, y, x, dx, dim):
    """(dim, the per-interval areas along dim) of the trapezoidal rule."""
    _trapezoid_check(y)
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, y.dim(), name)
    yf = _floating(y)
    n = y.shape[d]
    hi, lo = (yf.narrow(d, 1, n - 1), yf.narrow(d, 0, n - 1)) if n else (yf, yf)
    if x is None:
        width = 1 if dx is None else dx
        return d, (hi + lo) * (width / 2)
    if x.dtype is _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `x`, but bool is not "
                           f"supported")
    if x.dim() == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        w = _along(x[1:] - x[:-1], d, y.dim()) if n else x.reshape([1] * y.dim())
    else:
        xd = _wrap_dim(dim, x.dim(), name)
        m = x.shape[xd]
        w = x.narrow(xd, 1, m - 1) - x.narrow(xd, 0, m - 1) if m else x
    return d, (hi + lo) * w / 2


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: sample points ``x`` or uniform spacing ``dx``."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments: both x "
                        "and dx were given")
    d, terms = _trapezoid_terms("trapezoid", y, x, dx, dim)
    return terms.sum(d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along ``dim`` (one fewer element than ``y``)."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of "
                        "arguments: both x and dx were given")
    d, terms = _trapezoid_terms("cumulative_trapezoid", y, x, dx, dim)
    return terms.cumsum(d)


# ---- covariance -------------------------------------------------------------------------

def _weights(name, w, kind, n_obs, device):
    if w is None:
        return None
    require_tensor("cov", w, name)
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if kind == "integral" and w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} "
                           f"with {type_name(w.dtype)} dtype")
    if kind == "floating" and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got "
                           f"{name} with {type_name(w.dtype)} dtype")
    if w.numel() != n_obs:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n_obs}")
    if n_obs and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w.to(device)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    columns), with frequency and observation weights."""
    require_tensor("cov", input, "input")
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype is _dtype.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n_obs = x.shape[1]
    fweights = _weights("fweights", fweights, "integral", n_obs, input.device)
    aw = _weights("aweights", aweights, "floating", n_obs, input.device)
    w = fweights if aw is None else aw if fweights is None else fweights * aw
    x = _floating(x) if w is None or not w.dtype.is_floating_point else x
    if w is None:
        w_sum = n_obs
        avg = x.mean(1) if n_obs else x.sum(1) / 0
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if aw is None or correction == 0:
        norm = w_sum - correction
    else:
        # numpy's (and PyTorch's) unbiased weighting with observation weights
        norm = w_sum - correction * (w * aw).sum() / w_sum
    if bool(fw.as_tensor(norm <= 0).all()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    xm = x - avg.unsqueeze(1)
    c = xm.matmul((xm * w if w is not None else xm).mH)
    return (c / norm).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    require_tensor("corrcoef", input, "input")
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c.clamp(-1, 1)


# ---- distances and products ---------------------------------------------------------------

def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between each row of ``x1`` and each row of ``x2`` (batched)."""
    require_tensor("cdist", x1, "x1")
    require_tensor("cdist", x2, "x2")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{type_name(t.dtype)}")
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x1.dtype)} but found "
                           f"{type_name(x2.dtype)}")
    if x1.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f'"cdist" not implemented for \'{type_name(x1.dtype)}\'')
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes and compute_mode is not None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    batch = fw.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    a = x1.expand(*batch, *x1.shape[-2:])
    b = x2.expand(*batch, *x2.shape[-2:])
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode in (None, modes[0]) and (r1 > 25 or r2 > 25)))
    if use_mm:
        # |a|^2 + |b|^2 - 2 a.b, clamped: PyTorch's matrix-multiply path for large inputs
        aa = (a * a).sum(-1, keepdim=True)
        bb = (b * b).sum(-1, keepdim=True)
        d2 = aa - 2 * a.matmul(b.mT) + bb.mT
        return d2.clamp_min(0).sqrt()
    diffs = a.unsqueeze(-2) - b.unsqueeze(-3)
    return fw.linalg.vector_norm(diffs, p, dim=-1)


def dist(input, other, p=2):
    """The p-norm of ``input - other`` (broadcast)."""
    require_tensor("dist", input, "input")
    require_tensor("dist", other, "other")
    for t in (input, other):
        if t.dtype.category < 2:
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex "
                               f"tensor as input. Got {type_name(t.dtype)}")
    return fw.linalg.vector_norm(input - other, p)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``; with ``beta == 0`` input is ignored
    (its NaN and inf too)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        require_tensor("addr", v, name)
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    require_tensor("addr", input, "input")
    shape = (vec1.shape[0], vec2.shape[0])
    fw.broadcast_shapes(tuple(input.shape), shape)
    if input.dtype is _dtype.bool and vec1.dtype is _dtype.bool and vec2.dtype is _dtype.bool:
        prod = vec1.unsqueeze(1).logical_and(vec2.unsqueeze(0))
        prod = prod if alpha else prod.logical_and(False)
        res = prod if not beta else prod.logical_or(input)
        return write_out("addr", res.expand(shape).clone(), out)
    if any(not t.dtype.is_floating_point for t in (input, vec1, vec2)):
        for name, s in (("beta", beta), ("alpha", alpha)):
            if isinstance(s, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be "
                                   f"a floating point number.")
    prod = fw.outer(vec1, vec2)
    prod = prod if alpha == 1 else prod * alpha
    if beta == 0:
        res = prod.to(fw.result_type(input, prod)).expand(shape).clone()
    else:
        res = prod + (input if beta == 1 else input * beta)
    return write_out("addr", res, out)


def inner(input, other, *, out=None):
    """Dot products over the last dims (a scalar operand multiplies)."""
    require_tensor("inner", input, "input")
    require_tensor("inner", other, "other")
    if input.dim() == 0 or other.dim() == 0:
        return write_out("inner", input * other, out)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    res = fw.tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1]))
    return write_out("inner", res, out)


def cross(input, other, dim=None, *, out=None):
    """Cross products of the 3-vectors along ``dim`` (by default the first dim of size 3,
    as PyTorch's deprecated default), broadcasting the other dims."""
    require_tensor("cross", input, "input")
    require_tensor("cross", other, "other")
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = fw.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    if dim is None:
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use "
                      "torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning,
                      stacklevel=2)
        d = dims[0]
    else:
        d = _wrap_dim(dim, len(shape), "cross")
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                           f"{type_name(other.dtype)}")
    a, b = input.expand(shape), other.expand(shape)
    res = a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)
    return write_out("cross", res, out)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-d ``x``: columns ``x ** (N-1) ... x ** 0`` (reversed
    when ``increasing``); integer and bool inputs give int64."""
    require_tensor("vander", x, "x")
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = x.dtype if x.dtype.is_floating_point else _dtype.int64
    xc = x.to(dt)
    if n == 0:
        return fw.empty(x.shape[0], 0, dtype=dt, device=x.device)
    cols = [fw.ones(x.shape[0], 1, dtype=dt, device=x.device)]
    if n > 1:
        cols.append(xc.unsqueeze(1).expand(x.shape[0], n - 1))
    res = fw.cat(cols, 1).cumprod(1)
    return res if increasing else res.flip(1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of 1-d ``input`` as rows (as
    itertools.combinations / combinations_with_replacement)."""
    require_tensor("combinations", input, "input")
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return fw.empty(0, dtype=input.dtype, device=input.device)
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = list(gen(range(input.shape[0]), r))
    index = fw.tensor(idx, dtype=_dtype.int64, device=input.device).reshape(-1)
    return input.index_select(0, index).reshape(len(idx), r)


# ---- integer and float decompositions ------------------------------------------------------

def _int_pair(op, input, other):
    require_tensor(op, input, "input")
    if not isinstance(other, Tensor):
        other = fw.tensor(other, device=input.device)
    dt = fw.result_type(input, other)
    if dt.is_floating_point or dt is _dtype.bool:
        dev = "cuda" if input.device.type == "cuda" else "cpu"
        raise NotImplementedError(f'"{op}_{dev}" not implemented for \'{type_name(dt)}\'')
    return input.to(dt), other.to(dt)


def _gcd(a, b):
    """Euclid's algorithm elementwise: (a, b) -> (b, a mod b) where b != 0, until every
    b is 0; a pair already done stays put (a mod 1 keeps its b at 0)."""
    a, b = a.abs(), b.abs()
    shape = fw.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    a, b = a.expand(shape), b.expand(shape)
    while a.numel():
        # a few rounds per host check: each check waits for the device
        for _ in range(4):
            done = b == 0
            a, b = fw.where(done, a, b), fw.remainder(a, b + done.to(b.dtype))
        if not bool(b.any()):
            break
    return a.contiguous()


def gcd(input, other, *, out=None):
    """The elementwise greatest common divisor (non-negative; gcd(0, 0) = 0)."""
    with fw.no_grad():
        a, b = _int_pair("gcd", input, other)
        return write_out("gcd", _gcd(a, b), out)


def lcm(input, other, *, out=None):
    """The elementwise least common multiple (non-negative; 0 when either is 0)."""
    with fw.no_grad():
        a, b = _int_pair("lcm", input, other)
        g = _gcd(a, b)
        safe = fw.where(g == 0, fw.ones_like(g), g)
        res = fw.where(g == 0, fw.zeros_like(g), (fw.div(a, safe, rounding_mode="trunc")
                                                  * b).abs())
        return write_out("lcm", res, out)


def _scale(x, e):
    """``x * 2 ** -e`` exactly, in two halves so that no power of two leaves float64's
    range (subnormal inputs have exponents down to -1073)."""
    half = (e / 2).trunc()
    return (x * fw.exp2(-half)) * fw.exp2(-(e - half))


def frexp(input, *, out=None):
    """Splits ``input`` into mantissa in (-1, -0.5] U [0.5, 1) (same dtype) and int32
    exponent with ``input = mantissa * 2 ** exponent``; 0, inf and NaN keep exponent 0."""
    require_tensor("frexp", input, "input")
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.to(_dtype.float64)
    with fw.no_grad():
        ax = x.abs()
        ok = fw.isfinite(x) & (x != 0)
        safe = fw.where(ok, ax, fw.ones_like(ax))
        e = safe.log2().floor() + 1
        # log2 can be off by one next to powers of two: settle on 0.5 <= |m| < 1 exactly
        m = _scale(safe, e)
        e = e + (m >= 1).to(e.dtype) - (m < 0.5).to(e.dtype)
        e = fw.where(ok, e, fw.zeros_like(e))
    mant = fw.where(ok, _scale(x, e), x).to(input.dtype)
    res = frexp_type(mant, e.to(_dtype.int32))
    if out is not None:
        write_out("frexp", res[0], out[0])
        write_out("frexp", res[1], out[1])
        return frexp_type(out[0], out[1])
    return res


def fill(input, value):
    """A new tensor shaped like ``input`` holding ``value`` (a number or 0-d tensor)."""
    require_tensor("fill", input, "input")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        return value.to(input.dtype).to(input.device).expand(input.shape).clone()
    return fw.full_like(input, value)
