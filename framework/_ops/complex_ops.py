"""Complex pointwise ops, computed on the real and imaginary parts with the real ops.

pointwise.py sends every unary, binary and ternary op whose compute dtype is complex here
(``unary``/``binary``/``ternary`` below, called with the same arguments). An operand is
taken as a pair (re, im) of real tensors: a complex tensor as its two strided part views
(complex_views.part, no copy), a real tensor or a number with a zero imaginary part, as
PyTorch promotes them (so ``inf * 0`` gives the NaNs PyTorch gives). The formulas then run
the real kernels of the device (Triton on ``cuda``, native on the CPU) on those parts,
several launches per complex op, and write the two parts of a new result. Results are
always computed into a fresh tensor, so ``z.mul_(w)`` and ``out=`` that alias an input
read every input before anything is written.

Kernels PyTorch does not run on complex dtypes raise its error; the ops of the "complex"
section of ops.yaml (conj, angle, polar, complex, ...) are at the end.
"""
import builtins
import math

from .. import _dtype
from .._tensor import Tensor
from . import alloc
from . import pointwise as pw
from .complex_views import as_real, part

_T = Tensor
_bool = _dtype.bool


# ---- real building blocks (real tensors; run inside the recorded complex op) -------------

def _un(kernel, x, out=None, promote="same"):
    if out is not None and x._shape != out._shape:
        return _copy_to(pw.unary(kernel, kernel, x, None, promote), out)
    return pw.unary(kernel, kernel, x, out, promote)


def _bin(kernel, x, y, out=None, p0=0.0, promote="default"):
    if out is not None and pw.broadcast_shapes(_shape_of(x), _shape_of(y)) != out._shape:
        # a part that is a 0-d zero (of a real operand) would leave out's shape smaller
        return _copy_to(pw.binary(kernel, kernel, x, y, None, promote, p0), out)
    return pw.binary(kernel, kernel, x, y, out, promote, p0)


def _copy_to(src, out):
    """Copies ``src`` into ``out``, broadcasting it to out's shape."""
    alloc.backend(out._storage.device).copy.copy(out, src, pw.expand_strides(src, out._shape))
    return out


def _add(x, y, out=None):
    return _bin("add", x, y, out, 1.0)


def _sub(x, y, out=None):
    return _bin("sub", x, y, out, 1.0)


def _mul(x, y, out=None):
    return _bin("mul", x, y, out)


def _div(x, y, out=None):
    return _bin("div", x, y, out)


def _cmp(kernel, x, y, out=None):
    return _bin(kernel, x, y, out, promote="compare")


def _where(cond, x, y, out=None, dt=None):
    dt = dt or (x.dtype if isinstance(x, _T) else y.dtype)
    if out is not None and pw.broadcast_shapes(
            cond._shape, _shape_of(x), _shape_of(y)) != out._shape:
        return _copy_to(pw.ternary("where", "where", cond, x, y, None, (_bool, dt, dt)), out)
    return pw.ternary("where", "where", cond, x, y, out, (_bool, dt, dt))


def _shape_of(x):
    return x._shape if isinstance(x, _T) else ()


def _split(x, cdt, device):
    """Operand ``x`` (tensor or number) as (re, im) real tensors of cdt's part dtype."""
    if isinstance(x, _T) and not x.dtype.is_complex:
        rdt = cdt.to_real()
        return pw.as_operand(x, rdt, device), pw.scalar_tensor(0.0, rdt, device)
    x = pw.as_operand(x, cdt, device)
    return part(x, 0), part(x, 1)


def _parts(t):
    """The (re, im) part views of complex ``t`` (targets to write a result into)."""
    return part(t, 0), part(t, 1)


def _target(op, out, shape, dtype, device, inputs, inplace=False):
    """(tensor to compute into, tensor to copy it to afterwards or None): a fresh result,
    also when ``out`` shares memory with an input (the formulas write a part at a time)."""
    if out is None:
        return alloc.empty(shape, dtype, device), None
    res, target = pw._output(op, out, shape, dtype, device, inplace, inputs)
    if any(isinstance(t, _T) and t._storage is res._storage for t in inputs):
        return alloc.empty(shape, dtype, device), res if target is None else target
    return res, target


# ---- complex arithmetic on (re, im) pairs; ``out``: a pair of part views, or None --------

def _pair(out):
    return out if out is not None else (None, None)


def cmul(x, y, out=None):
    """(a + bi)(c + di) = (ac - bd) + (ad + bc)i."""
    (a, b), (c, d), (o0, o1) = x, y, _pair(out)
    return _sub(_mul(a, c), _mul(b, d), o0), _add(_mul(a, d), _mul(b, c), o1)


def cdiv(x, y, out=None):
    """(a + bi) / (c + di) by Smith's algorithm, as PyTorch's (NumPy's) complex division:
    scaled by the larger of |c|, |d| so that no square overflows; a zero divisor gives
    a/0 + (b/0)i (infinities or NaNs)."""
    (a, b), (c, d), (o0, o1) = x, y, _pair(out)
    ac, ad = _un("abs", c), _un("abs", d)
    big_c = _cmp("ge", ac, ad)
    rat = _where(big_c, _div(d, c), _div(c, d))
    scl = _un("reciprocal", _where(big_c, _add(c, _mul(d, rat)), _add(d, _mul(c, rat))))
    re = _mul(_where(big_c, _add(a, _mul(b, rat)), _add(_mul(a, rat), b)), scl)
    im = _mul(_where(big_c, _sub(b, _mul(a, rat)), _sub(_mul(b, rat), a)), scl)
    zero = _bin("logical_and", _cmp("eq", ac, 0.0), _cmp("eq", ad, 0.0), promote="compare")
    return _where(zero, _div(a, ac), re, o0), _where(zero, _div(b, ad), im, o1)


def cexp(x, out=None):
    """e^a (cos b + i sin b); a zero imaginary part stays zero (exp(inf + 0i) = inf + 0i)."""
    (a, b), (o0, o1) = x, _pair(out)
    ea = _un("exp", a)
    return (_mul(ea, _un("cos", b), o0),
            _where(_cmp("eq", b, 0.0), b, _mul(ea, _un("sin", b)), o1))


def clog(x, out=None):
    """log|z| + i angle(z)."""
    (a, b), (o0, o1) = x, _pair(out)
    return _un("log", _bin("hypot", a, b), o0), _bin("atan2", b, a, o1)


def csqrt(x, out=None):
    """The principal square root, without cancellation: t = sqrt((|a| + |z|) / 2), then
    (t, b / 2t) for a >= 0 and (|b| / 2t, t with b's sign) for a < 0."""
    (a, b), (o0, o1) = x, _pair(out)
    t = _un("sqrt", _mul(_add(_un("abs", a), _bin("hypot", a, b)), 0.5))
    u = _where(_cmp("eq", t, 0.0), b, _div(b, _mul(t, 2.0)))
    pos = _cmp("ge", a, 0.0)
    return (_where(pos, t, _un("abs", u), o0),
            _where(pos, u, _bin("copysign", t, b), o1))


def ctanh(x, out=None):
    """tanh(a + bi) by Kahan's formula: with t = tan b, s = sinh a, beta = 1 + t^2,
    rho = sqrt(1 + s^2): (beta rho s + i t) / (1 + beta s^2); for |a| > 20 it is
    sign(a) + 0i to working precision (and the formula would overflow)."""
    (a, b), (o0, o1) = x, _pair(out)
    t, s = _un("tan", b), _un("sinh", a)
    beta = _add(_mul(t, t), 1.0)
    s2 = _mul(s, s)
    den = _add(_mul(beta, s2), 1.0)
    re = _div(_mul(_mul(beta, _un("sqrt", _add(s2, 1.0))), s), den)
    im = _div(t, den)
    big = _cmp("gt", _un("abs", a), 20.0)
    return (_where(big, _bin("copysign", 1.0, a), re, o0),
            _where(big, _mul(b, 0.0), im, o1))


def _times_i(x):
    return _un("neg", x[1]), x[0]


def _scale(x, s, out=None):
    (a, b), (o0, o1) = x, _pair(out)
    return _mul(a, s, o0), _mul(b, s, o1)


def _into(x, out):
    """Copies pair ``x`` into the part views ``out`` (None: returns x)."""
    if out is None:
        return x
    for src, dst in zip(x, out):
        _copy_to(src, dst)
    return out


def _unit(like):
    """The pair 1 + 0i as 0-d tensors of ``like``'s dtype and device."""
    return (pw.scalar_tensor(1.0, like.dtype, like._storage.device),
            pw.scalar_tensor(0.0, like.dtype, like._storage.device))


def crecip(x, out=None):
    """1 / z: PyTorch divides 1 + 0i by z."""
    return cdiv(_unit(x[0]), x, out)


def _sin(x, out=None):
    (a, b), (o0, o1) = x, _pair(out)
    return (_mul(_un("sin", a), _un("cosh", b), o0), _mul(_un("cos", a), _un("sinh", b), o1))


def _cos(x, out=None):
    (a, b), (o0, o1) = x, _pair(out)
    return (_mul(_un("cos", a), _un("cosh", b), o0),
            _un("neg", _mul(_un("sin", a), _un("sinh", b)), o1))


def _sinh(x, out=None):
    (a, b), (o0, o1) = x, _pair(out)
    return (_mul(_un("sinh", a), _un("cos", b), o0), _mul(_un("cosh", a), _un("sin", b), o1))


def _cosh(x, out=None):
    (a, b), (o0, o1) = x, _pair(out)
    return (_mul(_un("cosh", a), _un("cos", b), o0), _mul(_un("sinh", a), _un("sin", b), o1))


def _tan(x, out=None):
    """tan z = -i tanh(iz)."""
    p, q = ctanh(_times_i(x))
    return _into((q, _un("neg", p)), out)


def _expm1(x, out=None):
    """expm1(a) cos b - 2 sin^2(b / 2) + i e^a sin b: accurate for small z."""
    (a, b), (o0, o1) = x, _pair(out)
    h = _un("sin", _mul(b, 0.5))
    re = _sub(_mul(_un("expm1", a), _un("cos", b)), _mul(_mul(h, h), 2.0), o0)
    return re, _mul(_un("exp", a), _un("sin", b), o1)


def _log1p(x, out=None):
    """log(1 + z): 0.5 log1p(2a + a^2 + b^2) + i atan2(b, 1 + a), accurate for small z."""
    (a, b), (o0, o1) = x, _pair(out)
    r = _add(_mul(a, 2.0), _add(_mul(a, a), _mul(b, b)))
    return _mul(_un("log1p", r), 0.5, o0), _bin("atan2", b, _add(a, 1.0), o1)


def _sigmoid(x, out=None):
    """1 / (1 + e^-z)."""
    e = cexp((_un("neg", x[0]), _un("neg", x[1])))
    return cdiv(_unit(x[0]), (_add(e[0], 1.0), e[1]), out)


def _sgn(x, out=None):
    """z / |z|, and 0 for 0."""
    (a, b), (o0, o1) = x, _pair(out)
    r = _bin("hypot", a, b)
    zero = _cmp("eq", r, 0.0)
    return _where(zero, 0.0, _div(a, r), o0), _where(zero, 0.0, _div(b, r), o1)


_LN2, _LN10 = math.log(2.0), math.log(10.0)

# unary kernel -> formula on (re, im) pairs writing a complex result
_UNARY = {
    "neg": lambda x, out: _scale(x, -1.0, out),
    "reciprocal": crecip,
    "exp": cexp,
    "exp2": lambda x, out: cexp(_scale(x, _LN2), out),
    "expm1": _expm1,
    "log": clog,
    "log2": lambda x, out: _scale(clog(x), 1.0 / _LN2, out),
    "log10": lambda x, out: _scale(clog(x), 1.0 / _LN10, out),
    "log1p": _log1p,
    "sqrt": csqrt,
    "rsqrt": lambda x, out: crecip(csqrt(x), out),
    "sin": _sin,
    "cos": _cos,
    "tan": _tan,
    "sinh": _sinh,
    "cosh": _cosh,
    "tanh": ctanh,
    "sigmoid": _sigmoid,
    "sign": _sgn,           # reached by sgn only (sign raises PyTorch's error below)
}

# unary kernels with a real or bool result: formula(x, out) over the pair
_UNARY_REAL = {
    "abs": lambda x, out: _bin("hypot", x[0], x[1], out),
    "isnan": lambda x, out: _bin("logical_or", _un("isnan", x[0], promote="bool"),
                                 _un("isnan", x[1], promote="bool"), out, promote="compare"),
    "isinf": lambda x, out: _bin("logical_or", _un("isinf", x[0], promote="bool"),
                                 _un("isinf", x[1], promote="bool"), out, promote="compare"),
    "isfinite": lambda x, out: _bin("logical_and", _un("isfinite", x[0], promote="bool"),
                                    _un("isfinite", x[1], promote="bool"), out,
                                    promote="compare"),
    "logical_not": lambda x, out: _bin("logical_and", _cmp("eq", x[0], 0.0),
                                       _cmp("eq", x[1], 0.0), out, promote="compare"),
}


# ---- PyTorch's errors for what it does not compute on complex dtypes --------------------

_NO_COMPLEX_OP = {
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "fmax": (RuntimeError, "fmax not implemented for complex tensors."),
    "fmin": (RuntimeError, "fmin not implemented for complex tensors."),
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support "
                                  "complex numbers. Please use torch.sgn instead."),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    "isposinf": (RuntimeError, "isposinf does not support complex inputs."),
    "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
    "deg2rad": (RuntimeError, "deg2rad is not supported for complex tensors."),
    "rad2deg": (RuntimeError, "rad2deg is not supported for complex tensors."),
    "heaviside": (RuntimeError, "heaviside is not yet implemented for complex tensors."),
}
_NO_COMPLEX_KERNEL = {
    "clamp": (NotImplementedError, "clamp is not supported for complex types"),
    "relu": (NotImplementedError, "clamp is not supported for complex types"),
}
# PyTorch's CPU kernel names where they are not "<kernel>_cpu"
_CPU_NAMES = {"erf": "erf_vml_cpu", "erfc": "erfc_vml_cpu", "erfinv": "erfinv_vml_cpu",
              "lgamma": "lgamma_vml_cpu", "digamma": "digamma", "i0": "i0_vml_cpu",
              "round": "round_vml_cpu", "round_decimals": "round_cpu",
              "gelu": "GeluKernelImpl", "gelu_tanh": "GeluKernelImpl"}


def unsupported(op, kernel, dtype):
    """PyTorch's error for an op or kernel it does not run on the complex ``dtype``."""
    exc, msg = _NO_COMPLEX_OP.get(op) or _NO_COMPLEX_KERNEL.get(kernel) or (
        NotImplementedError, f'"{_CPU_NAMES.get(kernel, kernel + "_cpu")}" not implemented '
                             f"for '{dtype.scalar_name}'")
    return exc(msg)


# ---- the entry points from pointwise.py ------------------------------------------------

def unary(op, kernel, x, out, promote, p0=0.0, p1=0.0, p2=0.0):
    """pointwise.unary of a complex tensor."""
    device = x._storage.device
    if op in _NO_COMPLEX_OP:
        raise unsupported(op, kernel, x.dtype)
    if kernel == "nan_to_num":   # the parts independently, as PyTorch
        res, target = _target(op, out, x._shape, x.dtype, device, (x,), out is x)
        pw.unary(op, kernel, as_real(x), as_real(res), "same", p0, p1, p2)
        return pw._finish(res, target)
    fn = _UNARY_REAL.get(kernel)
    if fn is not None:
        if kernel == "abs" and out is x:
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return fn(_parts(x), out)
    fn = _UNARY.get(kernel)
    if fn is None:
        raise unsupported(op, kernel, x.dtype)
    res, target = _target(op, out, x._shape, x.dtype, device, (x,), out is x)
    fn(_parts(x), _parts(res))
    return pw._finish(res, target)


def binary(op, kernel, a, b, out, cdt, rdt, device, p0=0.0, p1=0.0, p2=0.0):
    """pointwise.binary with complex compute dtype ``cdt`` (result ``rdt``: cdt, or bool
    for comparisons); ``a``/``b`` tensors or numbers as the caller gave them."""
    if op in _NO_COMPLEX_OP:
        raise unsupported(op, kernel, cdt)
    fn = _BINARY.get(kernel)
    if fn is None:
        raise unsupported(op, kernel, cdt)
    x, y = _split(a, cdt, device), _split(b, cdt, device)
    if rdt is _bool:
        return fn(x, y, out, p0, p1, p2)
    shape = pw.broadcast_shapes(_shape_of(a), _shape_of(b))
    res, target = _target(op, out, shape, rdt, device, (a, b), out is a)
    if kernel == "pow" and not isinstance(b, _T):
        _pow_scalar(x, b, res)
    else:
        fn(x, y, _parts(res), p0)
    return pw._finish(res, target)


def _add_alpha(x, y, out, alpha, sign=1.0):
    """x + sign * alpha * y (alpha a real or complex number)."""
    alpha = builtins.complex(alpha) * sign
    if alpha.imag == 0:
        y = _scale(y, alpha.real) if alpha.real != 1.0 else y
    else:
        dev = y[0]._storage.device
        y = cmul(y, (pw.scalar_tensor(alpha.real, y[0].dtype, dev),
                     pw.scalar_tensor(alpha.imag, y[0].dtype, dev)))
    (a, b), (c, d), (o0, o1) = x, y, _pair(out)
    return _add(a, c, o0), _add(b, d, o1)


def _eq(x, y, out, *params):
    return _bin("logical_and", _cmp("eq", x[0], y[0]), _cmp("eq", x[1], y[1]), out,
                promote="compare")


def _ne(x, y, out, *params):
    return _bin("logical_or", _cmp("ne", x[0], y[0]), _cmp("ne", x[1], y[1]), out,
                promote="compare")


def _nonzero(x):
    return _bin("logical_or", _cmp("ne", x[0], 0.0), _cmp("ne", x[1], 0.0), promote="compare")


def _logical(kernel):
    def fn(x, y, out, *params):
        return _bin(kernel, _nonzero(x), _nonzero(y), out, promote="compare")
    return fn


def _pow(x, y, out=None, p0=0.0):
    """z ** w = exp(w log z); 0 ** w is 0 for Re(w) > 0."""
    r = cexp(cmul(y, clog(x)))
    zero = _bin("logical_and", _eq(x, (0.0, 0.0), None), _cmp("gt", y[0], 0.0),
                promote="compare")
    o0, o1 = _pair(out)
    return _where(zero, 0.0, r[0], o0), _where(zero, 0.0, r[1], o1)


def _pow_scalar(x, w, res):
    """z ** w for a number ``w``, with PyTorch's shortcuts (its pow_tensor_scalar kernel):
    0 gives ones, 1 a copy, 2 and 3 products, -2 1 / (z z), 0.5 sqrt, -0.5 rsqrt, -1 the
    reciprocal; other exponents exp(w log z)."""
    w = builtins.complex(w)
    out = _parts(res)
    if w == 0:
        alloc.backend(res._storage.device).copy.fill(res, 1.0)
    elif w == 1:
        _into(x, out)
    elif w == 2:
        cmul(x, x, out)
    elif w == 3:
        cmul(cmul(x, x), x, out)
    elif w == -2:
        crecip(cmul(x, x), out)
    elif w == 0.5:
        csqrt(x, out)
    elif w == -0.5:
        crecip(csqrt(x), out)
    elif w == -1:
        crecip(x, out)
    else:
        dt, dev = x[0].dtype, x[0]._storage.device
        _pow(x, (pw.scalar_tensor(w.real, dt, dev), pw.scalar_tensor(w.imag, dt, dev)), out)


def _lerp_scalar(x, y, out, w):
    """x + w (y - x) for a number w (PyTorch's lerp with a scalar weight)."""
    return _add_alpha(x, _add_alpha(y, x, None, -1.0), out, w)


def _isclose(x, y, out, rtol, atol, equal_nan):
    """|x - y| <= atol + rtol * |y| (complex moduli), or equal; with ``equal_nan`` NaN
    (in either part) is close to NaN."""
    diff = _bin("hypot", _sub(x[0], y[0]), _sub(x[1], y[1]))
    tol = _add(_mul(_bin("hypot", y[0], y[1]), rtol), atol)
    close = _bin("logical_and", _un("isfinite", diff, promote="bool"), _cmp("le", diff, tol),
                 promote="compare")
    if not equal_nan:
        return _bin("logical_or", close, _eq(x, y, None), out, promote="compare")
    close = _bin("logical_or", close, _eq(x, y, None), promote="compare")
    nan = _UNARY_REAL["isnan"]
    both = _bin("logical_and", nan(x, None), nan(y, None), promote="compare")
    return _bin("logical_or", close, both, out, promote="compare")


_BINARY = {
    "add": lambda x, y, out, p0: _add_alpha(x, y, out, p0),
    "sub": lambda x, y, out, p0: _add_alpha(x, y, out, p0, -1.0),
    "mul": lambda x, y, out, p0: cmul(x, y, out),
    "div": lambda x, y, out, p0: cdiv(x, y, out),
    "pow": _pow,
    "eq": _eq,
    "ne": _ne,
    "logical_and": _logical("logical_and"),
    "logical_or": _logical("logical_or"),
    "logical_xor": _logical("logical_xor"),
    "lerp": _lerp_scalar,
    "isclose": _isclose,
}


def ternary(op, kernel, a, b, c, out, dtypes, p0=0.0):
    """pointwise.ternary with a complex result: where, lerp with a weight tensor, addcmul
    and addcdiv (value ``p0``)."""
    if kernel not in ("where", "lerp", "addcmul", "addcdiv"):
        raise unsupported(op, kernel, dtypes[2])
    cdt = dtypes[2]
    tensors = [t for t in (a, b, c) if isinstance(t, _T)]
    device = pw.common_device(op, tensors)
    shape = pw.broadcast_shapes(*(_shape_of(t) for t in (a, b, c)))
    res, target = _target(op, out, shape, cdt, device, (a, b, c), out is a)
    if kernel == "where":   # one launch on the real views: the condition gets a unit dim
        cond = pw.as_operand(a, _bool, device)
        cond = _T._make(cond._storage, cond._shape + (1,), cond._stride + (0,), cond._offset,
                        _bool)
        x, y = pw.as_operand(b, cdt, device), pw.as_operand(c, cdt, device)
        _where(cond, as_real(x), as_real(y), as_real(res))
        return pw._finish(res, target)
    x, y, z = (_split(t, cdt, device) for t in (a, b, c))
    o = _parts(res)
    if kernel == "lerp":
        _add_alpha(x, cmul(z, _add_alpha(y, x, None, -1.0)), o, 1)
    elif kernel == "addcmul":
        _add_alpha(x, cmul(y, z), o, p0)
    else:
        _add_alpha(x, cdiv(y, z), o, p0)
    return pw._finish(res, target)


# ---- the ops of the "complex" section of ops.yaml ---------------------------------------

def conj(input):
    """The complex conjugate (a new tensor here: no lazy conjugate bit); a real tensor
    itself."""
    if not input.dtype.is_complex:
        return input
    from . import dispatcher
    return dispatcher.function("conj_physical")(input)   # the recorded op


_SIGNS = {}


def conj_physical(input, *, out=None):
    """The complex conjugate, computed (for a real tensor: a copy, or ``out`` itself)."""
    pw.require_tensor("conj_physical", input, "input", 1)
    dt, device = input.dtype, input._storage.device
    if not dt.is_complex:
        if out is input:
            return out
        from .arith import _clone_into
        return _clone_into("conj_physical", input, out)
    key = (dt, device)
    signs = _SIGNS.get(key)
    if signs is None:     # (1, -1): one multiply of the real view conjugates
        signs = alloc.empty((2,), dt.to_real(), device)
        alloc.backend(device).copy.fill(signs[0], 1.0)
        alloc.backend(device).copy.fill(signs[1], -1.0)
        alloc.remember_filled(_SIGNS, key, signs)
    res, target = _target("conj_physical", out, input._shape, dt, device, (input,),
                          out is input)
    _mul(as_real(input), signs, as_real(res))
    return pw._finish(res, target)


def resolve_conj(input):
    """``input`` itself: conjugation is never lazy here."""
    return input


def resolve_neg(input):
    """``input`` itself: negation is never lazy here."""
    return input


def is_conj(input):
    """False: conj() computes the conjugate, no tensor carries a conjugate bit."""
    return False


def is_neg(input):
    """False: no tensor carries a negative bit."""
    return False


def angle(input, *, out=None):
    """The argument of each element in radians (atan2(imag, real)); for real inputs pi
    where negative, else 0 (NaN stays NaN); integers give the default float dtype."""
    pw.require_tensor("angle", input, "input", 1)
    if input.dtype.is_complex:
        return _bin("atan2", part(input, 1), part(input, 0), out)
    x = input
    if x.dtype.category < 2:
        x = pw.convert(x, _dtype.get_default_dtype(), x._storage.device)
    pi = _where(_cmp("lt", x, 0.0), math.pi, 0.0, dt=x.dtype)
    return _where(_un("isnan", x, promote="bool"), x, pi, out)


def _check_float_pair(a, b):
    for t in (a, b):
        if not t.dtype.is_floating_point or t.dtype is _dtype.bfloat16:
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                               f"got {a.dtype.scalar_name} and {b.dtype.scalar_name}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.scalar_name} but got "
                           f"scalar type {b.dtype.scalar_name} for second argument")
    if a.dtype is _dtype.float16:
        raise NotImplementedError("complex32 (complex from Half parts) is not supported here")


def _complex_result(op, a, b, out):
    pw.require_tensor(op, a, "abs" if op == "polar" else "real", 1)
    pw.require_tensor(op, b, "angle" if op == "polar" else "imag", 2)
    _check_float_pair(a, b)
    device = pw.common_device(op, (a, b))
    shape = pw.broadcast_shapes(a._shape, b._shape)
    return _target(op, out, shape, a.dtype.to_complex(), device, (a, b))


def polar(abs, angle, *, out=None):
    """The complex tensor abs * (cos(angle) + i sin(angle))."""
    res, target = _complex_result("polar", abs, angle, out)
    re, im = _parts(res)
    _mul(abs, _un("cos", angle), re)
    _mul(abs, _un("sin", angle), im)
    return pw._finish(res, target)


def complex(real, imag, *, out=None):
    """The complex tensor real + i imag (broadcast)."""
    res, target = _complex_result("complex", real, imag, out)
    _into((real, imag), _parts(res))
    return pw._finish(res, target)


def isreal(input):
    """Whether each element is real: a zero imaginary part (every element of a real
    tensor)."""
    pw.require_tensor("isreal", input, "input", 1)
    if not input.dtype.is_complex:
        from .arith import isreal as all_true
        return all_true(input)
    return _cmp("eq", part(input, 1), 0.0)
