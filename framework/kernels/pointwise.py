"""Pointwise kernels (Triton): one generic N-d strided broadcasting kernel per arity.

Each op is a small scalar ``@triton.jit`` function of its operands and the three float
parameters p0, p1, p2 (``_add(a, b, p0, p1, p2) = a + p0 * b``). ``_unary_kernel``,
``_binary_kernel`` and ``_ternary_kernel`` take that function as a ``tl.constexpr`` and
wrap it in the memory access: each program handles BLOCK elements of the flattened output
index space. The host first merges dims that are contiguous in every operand and drops
size-1 dims (like native/common.h's Nest), so most launches are 1-d; when every operand
is then contiguous (stride 1) the kernel skips the index math (CONTIG). Otherwise the
linear index is unravelled into up to MAX_DIMS coordinates and each operand's offset
comes from its own strides (0 on broadcast dims). Offsets are int64 when an index or an
offset may reach 2**31 (IDX64), int32 otherwise.

dtypes: float16 and bfloat16 operands are computed in float32 (upcast on load, rounded
once on store); float32 and float64 compute in their own type; integer and bool operands
compute in their own type where the op allows them (the same masks as the CPU kernels:
FLOAT ops raise NotImplementedError for integers, NUM ops for bool). The parameters are
passed as the bits of a float64 so that float64 ops see them exactly (a Python float
argument would be typed float32 by Triton), and cast to the compute dtype in the op like
the CPU's ``from_param`` (integers truncate).

The launchers have the signatures of framework/_cpu/pointwise.py. Tensor arguments
(out, x, a, b, c) must expose what Triton needs of a pointer argument: ``data_ptr()``
(the address of element 0 of the view) and ``dtype`` (a dtype Triton can name); the
launchers also read ``_shape``/``_stride`` (framework tensors) or ``shape``/``stride()``
(torch tensors) of ``out``; input strides are the explicit ``*_stride`` arguments, in
elements, already expanded to out's shape (0 where broadcast).

Known differences from the CPU kernels: exp/log/sin/cos/sigmoid use Triton's core math
(fast hardware approximations on a GPU for float32, a few ulp off the CPU's and worse for
large |x| in sin/cos); tanh is computed in float64 for float32 inputs from exp.
"""
import struct

import triton
import triton.language as tl

MAX_DIMS = 8
BLOCK = 1024  # elements per program: a power of two, 8 per thread at 4 warps
_INT32_LIMIT = 2**31


# ---- scalar helpers -------------------------------------------------------------------

@triton.jit
def _up(x):
    """16-bit floats compute in float32."""
    if x.dtype.is_fp16() or x.dtype.is_bf16():
        x = x.to(tl.float32)
    return x


@triton.jit
def _isnan(x):
    return x != x  # always False for integers and bool


@triton.jit
def _fdiv(a, b):
    """a / b correctly rounded: float32 `/` is an approximate division on the GPU."""
    if a.dtype == tl.float32:
        r = tl.div_rn(a, b)
    else:
        r = a / b
    return r


@triton.jit
def _tanh(x):
    """tanh from exp in float64: Taylor series near 0, where (e - 1) / (e + 1) cancels."""
    d = x.to(tl.float64)
    ad = tl.abs(d)
    e = tl.exp(-2.0 * ad)
    big = (1.0 - e) / (1.0 + e)
    z = d * d
    small = ad * (1.0 + z * (-0.3333333333333333 + z * (0.13333333333333333 + z * (
        -0.05396825396825397 + z * 0.021869488536155203))))
    r = tl.where(ad < 0.01, small, big)
    r = tl.where(d < 0, -r, r)
    return tl.where(d != d, d, r).to(x.dtype)


# ---- ops: (operands..., p0, p1, p2) -> result in the compute dtype ------------------------
# Binary

@triton.jit
def _add(a, b, p0, p1, p2):
    if a.dtype == tl.int1:
        r = a | b  # add on bool is logical or
    else:
        r = a + p0.to(a.dtype) * b
    return r


@triton.jit
def _sub(a, b, p0, p1, p2):
    return a - p0.to(a.dtype) * b


@triton.jit
def _mul(a, b, p0, p1, p2):
    if a.dtype == tl.int1:
        r = a & b
    else:
        r = a * b
    return r


@triton.jit
def _div(a, b, p0, p1, p2):
    return _fdiv(a, b)


@triton.jit
def _maximum(a, b, p0, p1, p2):
    return tl.where(_isnan(a) | (a > b), a, b)  # NaN propagates


@triton.jit
def _minimum(a, b, p0, p1, p2):
    return tl.where(_isnan(a) | (a < b), a, b)


@triton.jit
def _eq(a, b, p0, p1, p2):
    return a == b


@triton.jit
def _ne(a, b, p0, p1, p2):
    return a != b


@triton.jit
def _lt(a, b, p0, p1, p2):
    return a < b


@triton.jit
def _le(a, b, p0, p1, p2):
    return a <= b


@triton.jit
def _gt(a, b, p0, p1, p2):
    return a > b


@triton.jit
def _ge(a, b, p0, p1, p2):
    return a >= b


@triton.jit
def _lerp2(a, b, p0, p1, p2):
    return _lerp3(a, b, p0.to(a.dtype), p0, p1, p2)


@triton.jit
def _fmax(a, b, p0, p1, p2):
    return tl.where(_isnan(b) | (a > b), a, b)  # NaN is ignored


@triton.jit
def _fmin(a, b, p0, p1, p2):
    return tl.where(_isnan(b) | (a < b), a, b)


@triton.jit
def _logical_and(a, b, p0, p1, p2):
    return (a != 0) & (b != 0)


@triton.jit
def _logical_or(a, b, p0, p1, p2):
    return (a != 0) | (b != 0)


@triton.jit
def _logical_xor(a, b, p0, p1, p2):
    return (a != 0) != (b != 0)


@triton.jit
def _bitwise_and(a, b, p0, p1, p2):
    return a & b


@triton.jit
def _bitwise_or(a, b, p0, p1, p2):
    return a | b


@triton.jit
def _bitwise_xor(a, b, p0, p1, p2):
    return a ^ b


@triton.jit
def _heaviside(x, v, p0, p1, p2):
    return tl.where(x == 0, v, (x > 0).to(x.dtype))


@triton.jit
def _xlogy(x, y, p0, p1, p2):
    r = tl.where(x == 0, 0.0, x * tl.log(y)).to(x.dtype)
    return tl.where(y != y, y, r)  # NaN in y wins over x == 0


# Unary

@triton.jit
def _neg(x, p0, p1, p2):
    return -x


@triton.jit
def _abs(x, p0, p1, p2):
    return tl.where(x < 0, 0 - x, tl.where(x == 0, 0, x).to(x.dtype))  # abs(-0.) = 0.


@triton.jit
def _exp(x, p0, p1, p2):
    return tl.exp(x)


@triton.jit
def _log(x, p0, p1, p2):
    return tl.log(x)


@triton.jit
def _sqrt(x, p0, p1, p2):
    return tl.sqrt_rn(x)  # IEEE sqrt, not the approximate tl.sqrt


@triton.jit
def _rsqrt(x, p0, p1, p2):
    return _fdiv(tl.full(x.shape, 1, x.dtype), tl.sqrt_rn(x))  # rsqrt(-0.) = -inf


@triton.jit
def _sin(x, p0, p1, p2):
    return tl.sin(x)


@triton.jit
def _cos(x, p0, p1, p2):
    return tl.cos(x)


@triton.jit
def _tanh_op(x, p0, p1, p2):
    return _tanh(x)


@triton.jit
def _sigmoid(x, p0, p1, p2):
    return _fdiv(tl.full(x.shape, 1, x.dtype), 1.0 + tl.exp(-x))


@triton.jit
def _relu(x, p0, p1, p2):
    return tl.where(x < 0, 0, x).to(x.dtype)  # NaN stays NaN


@triton.jit
def _gelu(x, p0, p1, p2):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def _gelu_tanh(x, p0, p1, p2):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + _tanh(inner))


@triton.jit
def _silu(x, p0, p1, p2):
    return _fdiv(x, 1.0 + tl.exp(-x))


@triton.jit
def _clamp1(x, p0, p1, p2):
    """clamp with scalar bounds: p0 = min, p1 = max, p2 = 1 (min only), 2 (max only), 3."""
    which = p2.to(tl.int32)
    lo = p0.to(x.dtype)
    hi = p1.to(x.dtype)
    x = tl.where(((which & 1) != 0) & (x < lo), lo, x)
    return tl.where(((which & 2) != 0) & (x > hi), hi, x)


@triton.jit
def _sign(x, p0, p1, p2):
    if x.dtype == tl.int1:
        r = x  # sign of bool is the identity
    else:
        r = (x > 0).to(x.dtype) - (x < 0).to(x.dtype)  # sign(NaN) = 0, as on the CPU
    return r


@triton.jit
def _reciprocal(x, p0, p1, p2):
    return _fdiv(tl.full(x.shape, 1, x.dtype), x)


@triton.jit
def _deg2rad(x, p0, p1, p2):
    return x * 0.017453292519943295


@triton.jit
def _rad2deg(x, p0, p1, p2):
    return x * 57.29577951308232


@triton.jit
def _bitwise_not(x, p0, p1, p2):
    if x.dtype == tl.int1:
        r = x == 0
    else:
        r = ~x
    return r


@triton.jit
def _logical_not(x, p0, p1, p2):
    return x == 0


@triton.jit
def _exp2(x, p0, p1, p2):
    return tl.exp2(x)


@triton.jit
def _log2(x, p0, p1, p2):
    return tl.log2(x)


@triton.jit
def _log10(x, p0, p1, p2):
    return tl.log2(x) * 0.30102999566398120


@triton.jit
def _erf(x, p0, p1, p2):
    return tl.erf(x)


@triton.jit
def _floor(x, p0, p1, p2):
    return tl.floor(x)


@triton.jit
def _ceil(x, p0, p1, p2):
    return tl.ceil(x)


@triton.jit
def _trunc(x, p0, p1, p2):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _frac(x, p0, p1, p2):
    return x - tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _isinf(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = tl.abs(x) == float("inf")
    else:
        r = x != x
    return r


@triton.jit
def _isposinf(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = x == float("inf")
    else:
        r = x != x
    return r


@triton.jit
def _isneginf(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = x == -float("inf")
    else:
        r = x != x
    return r


@triton.jit
def _isnan_op(x, p0, p1, p2):
    return _isnan(x)


@triton.jit
def _isfinite(x, p0, p1, p2):
    if x.dtype.is_floating():
        r = tl.abs(x) < float("inf")
    else:
        r = x == x
    return r


@triton.jit
def _threshold(x, p0, p1, p2):
    return tl.where(x <= p0.to(x.dtype), p1.to(x.dtype), x)


@triton.jit
def _leaky_relu(x, p0, p1, p2):
    return tl.where(x > 0, x, x * p0.to(x.dtype))


@triton.jit
def _relu6(v):
    return tl.where(v < 0, 0.0, tl.where(v > 6, 6.0, v)).to(v.dtype)  # NaN stays NaN


@triton.jit
def _hardsigmoid(x, p0, p1, p2):
    return _fdiv(_relu6(x + 3.0), tl.full(x.shape, 6, x.dtype))


@triton.jit
def _hardswish(x, p0, p1, p2):
    return _fdiv(x * _relu6(x + 3.0), tl.full(x.shape, 6, x.dtype))


# Ternary

@triton.jit
def _where(c, x, y, p0, p1, p2):
    return tl.where(c != 0, x, y)


@triton.jit
def _lerp3(a, b, w, p0, p1, p2):
    # the two-sided formula keeps lerp(a, b, 1) == b exactly
    return tl.where(tl.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1.0 - w))


@triton.jit
def _addcmul(a, b, c, p0, p1, p2):
    return a + p0.to(a.dtype) * b * c


@triton.jit
def _addcdiv(a, b, c, p0, p1, p2):
    return a + p0.to(a.dtype) * _div(b, c, p0, p1, p2)


@triton.jit
def _clamp3(x, lo, hi, p0, p1, p2):
    r = tl.where(x < lo, lo, x)
    r = tl.where(r > hi, hi, r)
    r = tl.where(_isnan(hi), hi, r)
    r = tl.where(_isnan(lo), lo, r)
    return tl.where(_isnan(x), x, r)  # NaN in any operand propagates, x's first


# ---- the generic kernels --------------------------------------------------------------

@triton.jit
def _index(n, BLOCK: tl.constexpr, IDX64: tl.constexpr):
    """This program's linear output indices and their mask."""
    if IDX64:
        i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    else:
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    return i, i < n


@triton.jit
def _offset(i, shape, stride, NDIM: tl.constexpr, CONTIG: tl.constexpr):
    """Element offset of linear index i in an operand with these strides (row-major)."""
    if CONTIG:
        off = i
    else:
        rem = i
        off = tl.zeros_like(i)
        for d in tl.static_range(NDIM - 1, 0, -1):
            off += (rem % shape[d]) * stride[d]
            rem = rem // shape[d]
        off += rem * stride[0]
    return off


@triton.jit
def _unary_kernel(out, x, n, shape, so, sx, p0, p1, p2, OP: tl.constexpr,
                  NDIM: tl.constexpr, CONTIG: tl.constexpr, IDX64: tl.constexpr,
                  BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    p0, p1, p2 = _params(p0, p1, p2)
    vx = _up(tl.load(x + _offset(i, shape, sx, NDIM, CONTIG), mask=mask))
    r = OP(vx, p0, p1, p2)
    tl.store(out + _offset(i, shape, so, NDIM, CONTIG), r.to(out.dtype.element_ty), mask=mask)


@triton.jit
def _binary_kernel(out, a, b, n, shape, so, sa, sb, p0, p1, p2, OP: tl.constexpr,
                   NDIM: tl.constexpr, CONTIG: tl.constexpr, IDX64: tl.constexpr,
                   BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    p0, p1, p2 = _params(p0, p1, p2)
    va = _up(tl.load(a + _offset(i, shape, sa, NDIM, CONTIG), mask=mask))
    vb = _up(tl.load(b + _offset(i, shape, sb, NDIM, CONTIG), mask=mask))
    r = OP(va, vb, p0, p1, p2)
    tl.store(out + _offset(i, shape, so, NDIM, CONTIG), r.to(out.dtype.element_ty), mask=mask)


@triton.jit
def _ternary_kernel(out, a, b, c, n, shape, so, sa, sb, sc, p0, p1, p2, OP: tl.constexpr,
                    NDIM: tl.constexpr, CONTIG: tl.constexpr, IDX64: tl.constexpr,
                    BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    p0, p1, p2 = _params(p0, p1, p2)
    va = _up(tl.load(a + _offset(i, shape, sa, NDIM, CONTIG), mask=mask))
    vb = _up(tl.load(b + _offset(i, shape, sb, NDIM, CONTIG), mask=mask))
    vc = _up(tl.load(c + _offset(i, shape, sc, NDIM, CONTIG), mask=mask))
    r = OP(va, vb, vc, p0, p1, p2)
    tl.store(out + _offset(i, shape, so, NDIM, CONTIG), r.to(out.dtype.element_ty), mask=mask)


@triton.jit
def _params(p0, p1, p2):
    """The float64 parameters from their bits (int64)."""
    return (p0.to(tl.int64).to(tl.float64, bitcast=True),
            p1.to(tl.int64).to(tl.float64, bitcast=True),
            p2.to(tl.int64).to(tl.float64, bitcast=True))


# ---- op tables: name -> (function, dtypes it accepts) ---------------------------------
# dtype classes as in native/pointwise.h: FLOAT, NUM (int and float), ALL (with bool)
FLOAT, NUM, ALL, INT_BOOL = "float", "num", "all", "int_bool"

UNARY = {
    "neg": (_neg, NUM), "abs": (_abs, NUM), "exp": (_exp, FLOAT), "log": (_log, FLOAT),
    "sqrt": (_sqrt, FLOAT), "rsqrt": (_rsqrt, FLOAT), "sin": (_sin, FLOAT),
    "cos": (_cos, FLOAT), "tanh": (_tanh_op, FLOAT), "sigmoid": (_sigmoid, FLOAT),
    "relu": (_relu, NUM), "gelu": (_gelu, FLOAT), "gelu_tanh": (_gelu_tanh, FLOAT),
    "silu": (_silu, FLOAT), "clamp": (_clamp1, NUM),
    "sign": (_sign, ALL), "reciprocal": (_reciprocal, FLOAT), "deg2rad": (_deg2rad, FLOAT),
    "rad2deg": (_rad2deg, FLOAT), "bitwise_not": (_bitwise_not, INT_BOOL),
    "logical_not": (_logical_not, ALL), "exp2": (_exp2, FLOAT), "log2": (_log2, FLOAT),
    "log10": (_log10, FLOAT), "erf": (_erf, FLOAT), "floor": (_floor, FLOAT),
    "ceil": (_ceil, FLOAT), "trunc": (_trunc, FLOAT), "frac": (_frac, FLOAT),
    "isnan": (_isnan_op, ALL), "isinf": (_isinf, ALL), "isposinf": (_isposinf, ALL),
    "isneginf": (_isneginf, ALL), "isfinite": (_isfinite, ALL),
    "threshold": (_threshold, NUM), "leaky_relu": (_leaky_relu, FLOAT),
    "hardsigmoid": (_hardsigmoid, FLOAT), "hardswish": (_hardswish, FLOAT),
}
BINARY = {
    "add": (_add, ALL), "sub": (_sub, NUM), "mul": (_mul, ALL), "div": (_div, FLOAT),
    "maximum": (_maximum, ALL), "minimum": (_minimum, ALL), "lerp": (_lerp2, FLOAT),
    "eq": (_eq, ALL), "ne": (_ne, ALL), "lt": (_lt, ALL), "le": (_le, ALL),
    "gt": (_gt, ALL), "ge": (_ge, ALL), "fmax": (_fmax, ALL), "fmin": (_fmin, ALL),
    "logical_and": (_logical_and, ALL), "logical_or": (_logical_or, ALL),
    "logical_xor": (_logical_xor, ALL), "bitwise_and": (_bitwise_and, INT_BOOL),
    "bitwise_or": (_bitwise_or, INT_BOOL), "bitwise_xor": (_bitwise_xor, INT_BOOL),
    "heaviside": (_heaviside, ALL), "xlogy": (_xlogy, FLOAT),
}
TERNARY = {
    "where": (_where, ALL), "lerp": (_lerp3, FLOAT), "addcmul": (_addcmul, NUM),
    "addcdiv": (_addcdiv, FLOAT), "clamp": (_clamp3, NUM),
}


# ---- host side ------------------------------------------------------------------------

def _dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def _check(kernel, table, t):
    """NotImplementedError for a dtype the op does not take, as the CPU kernels raise."""
    if kernel not in table:
        raise NotImplementedError(f"pointwise kernel \"{kernel}\" has no Triton version yet")
    fn, allowed = table[kernel]
    name = _dtype_name(t)
    is_float = name in ("float16", "bfloat16", "float32", "float64")
    if ((allowed == FLOAT and not is_float) or (allowed == NUM and name == "bool")
            or (allowed == INT_BOOL and is_float)):
        # PyTorch's CUDA kernels name themselves "<op>_cuda" in this message
        raise NotImplementedError(f"\"{kernel}_cuda\" not implemented for '{type_name(name)}'")
    return fn


def type_name(name):
    """PyTorch's name of a dtype in kernel errors ('Float', 'Bool', 'Long', ...)."""
    return {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
            "int32": "Int", "int64": "Long", "float16": "Half", "bfloat16": "BFloat16",
            "float32": "Float", "float64": "Double"}.get(name, name)


def _shape_stride(t):
    shape = getattr(t, "_shape", None)
    if shape is None:
        return tuple(t.shape), tuple(t.stride())
    return tuple(shape), tuple(t._stride)


def collapse(shape, strides):
    """Merge dims that are contiguous in every operand and drop size-1 dims (like Nest).

    ``strides`` is a list of stride tuples, one per operand. Returns (shape, strides) with
    at least one dim."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    out_shape, out_strides = [], [[] for _ in strides]
    for d in dims:
        if out_shape and all(st[-1] == s[d] * shape[d] for st, s in zip(out_strides, strides)):
            out_shape[-1] *= shape[d]
            for st, s in zip(out_strides, strides):
                st[-1] = s[d]
        else:
            out_shape.append(shape[d])
            for st, s in zip(out_strides, strides):
                st.append(s[d])
    if not out_shape:  # 0-d or all size 1: one element
        return (1,), [(1,) for _ in strides]
    return tuple(out_shape), [tuple(st) for st in out_strides]


def _params_bits(*ps):
    return [struct.unpack("<q", struct.pack("<d", float(p)))[0] for p in ps]


def _launch(kernel_fn, op, out, inputs, in_strides, ps):
    shape, so = _shape_stride(out)
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    shape, strides = collapse(shape, [so] + [tuple(s) for s in in_strides])
    ndim = len(shape)
    if ndim > MAX_DIMS:
        raise RuntimeError(f"pointwise kernel: {ndim} non-mergeable dims, at most {MAX_DIMS}")
    contig = ndim == 1 and all(st[0] == 1 for st in strides)
    extent = max([n] + [sum((sz - 1) * abs(x) for sz, x in zip(shape, st)) + 1
                        for st in strides])
    idx64 = extent + BLOCK >= _INT32_LIMIT  # the last program's indices run past n
    grid = (triton.cdiv(n, BLOCK),)
    kernel_fn[grid](out, *inputs, n, shape, *strides, *_params_bits(*ps), OP=op, NDIM=ndim,
                    CONTIG=contig, IDX64=idx64, BLOCK=BLOCK)


def unary(kernel, out, x, x_stride, p0=0.0, p1=0.0, p2=0.0):
    op = _check(kernel, UNARY, x)
    _launch(_unary_kernel, op, out, (x,), (x_stride,), (p0, p1, p2))


def binary(kernel, out, a, a_stride, b, b_stride, p0=0.0, p1=0.0, p2=0.0):
    op = _check(kernel, BINARY, a)
    _launch(_binary_kernel, op, out, (a, b), (a_stride, b_stride), (p0, p1, p2))


def ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0=0.0):
    if kernel == "where":
        if _dtype_name(a) != "bool":
            raise RuntimeError("where expected condition to be a boolean tensor")
        op = _check(kernel, TERNARY, b)
    else:
        op = _check(kernel, TERNARY, a)
    _launch(_ternary_kernel, op, out, (a, b, c), (a_stride, b_stride, c_stride),
            (p0, 0.0, 0.0))
