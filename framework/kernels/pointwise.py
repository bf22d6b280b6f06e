"""Pointwise kernels (Triton): one generic N-d strided broadcasting kernel per arity.

Each op is a small scalar ``@triton.jit`` function of its operands and the three float
parameters p0, p1, p2 (pointwise_ops.py: ``_add(a, b, p0, p1, p2) = a + p0 * b``), listed
with the dtypes it takes in pointwise_ops.UNARY/BINARY/TERNARY under the CPU backend's
kernel names. ``_unary_kernel``, ``_binary_kernel`` and ``_ternary_kernel`` take that
function as a ``tl.constexpr`` and wrap it in the memory access: each program handles
BLOCK elements of the flattened output index space. The host first merges dims that are
contiguous in every operand and drops size-1 dims (like native/common.h's Nest), so most
launches are 1-d; when every operand is then contiguous (stride 1) the kernel skips the
index math (CONTIG). Otherwise the linear index is unravelled into up to MAX_DIMS
coordinates and each operand's offset comes from its own strides (0 on broadcast dims).
Offsets are int64 when an index or an offset may reach 2**31 (IDX64), int32 otherwise.

dtypes: float16 and bfloat16 operands are computed in float32 (upcast on load, rounded
once on store); float32 and float64 compute in their own type; integer and bool operands
compute in their own type where the op allows them (the same masks as the CPU kernels:
FLOAT ops raise NotImplementedError for integers, NUM ops for bool). The parameters are
passed as the bits of a float64 so that float64 ops see them exactly (a Python float
argument would be typed float32 by Triton), and cast to the compute dtype in the op like
the CPU's ``from_param`` (integers truncate).

The launchers have the signatures of framework/_cpu/pointwise.py and take framework
tensors (cuda): Triton reads ``data_ptr()`` (the address of element 0 of the view) and the
dtype of each tensor argument; the launchers read ``_shape``/``_stride`` of ``out``; input
strides are the explicit ``*_stride`` arguments, in elements, already expanded to out's
shape (0 where broadcast).

The ops (pointwise_ops.UNARY/BINARY/TERNARY, every kernel of the CPU tables):
unary neg abs sign signbit reciprocal deg2rad rad2deg bitwise_not logical_not exp exp2
expm1 log log2 log10 log1p sqrt rsqrt pow_scalar sin cos tan asin acos atan sinh cosh tanh
asinh acosh atanh sinc erf erfc erfinv sigmoid logit floor ceil trunc frac round
round_decimals isnan isinf isposinf isneginf isfinite nan_to_num clamp threshold relu gelu
gelu_tanh silu mish softplus elu leaky_relu hardsigmoid hardswish; binary add sub mul div
div_trunc div_floor remainder fmod pow atan2 hypot copysign ldexp xlogy logaddexp
logaddexp2 nextafter lerp maximum minimum fmax fmin eq ne lt le gt ge logical_and/or/xor
isclose heaviside bitwise_and/or/xor lshift rshift, and mul_scalar div_scalar
div_trunc_scalar div_floor_scalar (16-bit floats by the scalar p0 kept in float32, PyTorch's
opmath; the second operand is not read); ternary where lerp addcmul addcdiv clamp.

Integer division (div_trunc, div_floor, remainder, fmod) by zero raises RuntimeError
"ZeroDivisionError" like the CPU kernels (PyTorch's CUDA kernels give unspecified values):
the kernel replaces zero divisors by 1 and sets a flag in a 1-element int32 tensor, which
the launcher reads after the launch, so those launches synchronise with the device.
Floor division and remainder of negative integers follow Python (PyTorch), MIN // -1 wraps,
integer pow is by squaring (wrapping; negative exponents give 0 except for bases 1, -1).

Accuracy and known differences from the CPU kernels:
- sqrt, rsqrt, hypot and divisions are IEEE (tl.sqrt_rn / tl.div_rn in float32; float64
  tl.sqrt and / are IEEE); tl.sqrt_rn and tl.div_rn take only float32.
- exp/log/sin/cos/erf use Triton's core math (fast hardware approximations on a GPU for
  float32, a few ulp off the CPU's and worse for large |x| in sin/cos; libdevice is not
  available in the interpreter); tanh is computed in float64 from exp; log1p/expm1 use the
  Goldberg/Kahan tricks on log/exp.
- asin, acos, atan, atan2 (Cephes atan), sinh, cosh, asinh, acosh, atanh, sinc, erfc
  (1 - erf below 2, a continued fraction above), erfinv (the CPU's algorithm) and float pow
  (C99 special values; integer exponents up to 64 by squaring, else exp(y log|x|)) are
  computed in float64 from exp/log/sqrt/erf whatever the float dtype: float32 results are
  then nearly correctly rounded (sinc(n) of a float32 integer n is ~1e-17, where the CPU
  gives sin(pi_f32 n) / (pi_f32 n) ~ 1e-8); float64 ones are within about 1e-14 relative
  (pow: |y log x| ulp, under 1e-13).
- fmod (and the float paths of remainder and div_floor) is exact for every quotient: |a|
  is reduced modulo |b| 2^k in float64, 52 bits of the exponent gap per loop step.
- nextafter of float16/bfloat16 steps the 16-bit patterns, as the CPU's.
- bfloat16 is loaded by a shift and stored by rounding the float32 bits (``_up``,
  ``_down``): the same bits as a GPU's conversions, where Triton's interpreter's own
  conversion flushes subnormals.
More than MAX_DIMS dims that do not merge raise RuntimeError.
"""
import struct

import triton
import triton.language as tl

from .. import _dtype, _float8_ops
from .._ops import alloc
from .pointwise_ops import (BINARY, FLOAT, INT, INT_BOOL, INT_DIVISION, NUM, PER_DTYPE,
                            TERNARY, UNARY)
from .launcher import cached, cdiv
from .pointwise_math import _to_int_wrapping

MAX_DIMS = 8
BLOCK = 1024  # elements per program: a power of two, 8 per thread at 4 warps
_INT32_LIMIT = 2**31


@triton.jit
def _up(x):
    """16-bit floats compute in float32. bfloat16 is the high half of a float32: widened
    by a shift (exact; Triton's interpreter flushes bfloat16 subnormals in its conversion)."""
    if x.dtype.is_bf16():
        x = (x.to(tl.int16, bitcast=True).to(tl.int32) << 16).to(tl.float32, bitcast=True)
    elif x.dtype.is_fp16():
        x = x.to(tl.float32)
    return x


@triton.jit
def _down(x, ty: tl.constexpr):
    """x converted to the output's element type; 16-bit floats are reached through float32
    (Triton's interpreter converts float64 and integers to bfloat16 wrongly), bfloat16 by
    rounding the float32 bits to nearest even (the interpreter's conversion flushes
    subnormals; a GPU's cvt.rn.bf16.f32 gives the same bits)."""
    if (ty == tl.float16 or ty == tl.bfloat16) and x.dtype != tl.float32:
        x = x.to(tl.float32)
    if ty == tl.bfloat16:
        bits = x.to(tl.int32, bitcast=True)
        r = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        r = tl.where(x != x, 0x7FC0, r)  # NaN stays a quiet NaN
        y = r.to(tl.int16).to(tl.bfloat16, bitcast=True)
    else:
        y = _to_int_wrapping(x, ty)
    return y


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


@cached
@triton.jit
def _unary_kernel(out, x, n, shape, so, sx, p0, p1, p2, OP: tl.constexpr,
                  NDIM: tl.constexpr, CONTIG: tl.constexpr, IDX64: tl.constexpr,
                  BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    p0, p1, p2 = _params(p0, p1, p2)
    # masked-off lanes read 1, a value every op takes quietly (0 would make log, 1/x and
    # x/0 raise floating-point warnings in the interpreter); their results are not stored
    vx = _up(tl.load(x + _offset(i, shape, sx, NDIM, CONTIG), mask=mask, other=1))
    r = OP(vx, p0, p1, p2)
    tl.store(out + _offset(i, shape, so, NDIM, CONTIG), _down(r, out.dtype.element_ty), mask=mask)


@cached
@triton.jit
def _binary_kernel(out, a, b, n, shape, so, sa, sb, p0, p1, p2, flag, OP: tl.constexpr,
                   NDIM: tl.constexpr, CONTIG: tl.constexpr, IDX64: tl.constexpr,
                   BLOCK: tl.constexpr, ZERO_FLAG: tl.constexpr):
    """ZERO_FLAG: set flag[0] to 1 if any divisor b is 0 (integer division)."""
    i, mask = _index(n, BLOCK, IDX64)
    p0, p1, p2 = _params(p0, p1, p2)
    va = _up(tl.load(a + _offset(i, shape, sa, NDIM, CONTIG), mask=mask, other=1))
    vb = _up(tl.load(b + _offset(i, shape, sb, NDIM, CONTIG), mask=mask, other=1))
    if ZERO_FLAG:
        tl.atomic_max(flag, tl.max((mask & (vb == 0)).to(tl.int32), axis=0))
    r = OP(va, vb, p0, p1, p2)
    tl.store(out + _offset(i, shape, so, NDIM, CONTIG), _down(r, out.dtype.element_ty), mask=mask)


@cached
@triton.jit
def _ternary_kernel(out, a, b, c, n, shape, so, sa, sb, sc, p0, p1, p2, OP: tl.constexpr,
                    NDIM: tl.constexpr, CONTIG: tl.constexpr, IDX64: tl.constexpr,
                    BLOCK: tl.constexpr):
    i, mask = _index(n, BLOCK, IDX64)
    p0, p1, p2 = _params(p0, p1, p2)
    va = _up(tl.load(a + _offset(i, shape, sa, NDIM, CONTIG), mask=mask, other=1))
    vb = _up(tl.load(b + _offset(i, shape, sb, NDIM, CONTIG), mask=mask, other=1))
    vc = _up(tl.load(c + _offset(i, shape, sc, NDIM, CONTIG), mask=mask, other=1))
    r = OP(va, vb, vc, p0, p1, p2)
    tl.store(out + _offset(i, shape, so, NDIM, CONTIG), _down(r, out.dtype.element_ty), mask=mask)


@triton.jit
def from_bits(bits):
    """A float64 kernel argument from its bits (an int: Triton takes a Python float as a
    float32), as the host's ``_params_bits`` gives them."""
    return bits.to(tl.int64).to(tl.float64, bitcast=True)


@triton.jit
def _params(p0, p1, p2):
    """The float64 parameters from their bits (int64)."""
    return from_bits(p0), from_bits(p1), from_bits(p2)


# ---- host side ------------------------------------------------------------------------

def _check(kernel, table, t):
    """The op's function; NotImplementedError for a dtype the op does not take, as the CPU
    kernels raise; None for a float8 operand (framework/_float8_ops.py decides)."""
    fn, allowed = table[kernel]
    name = t.dtype.name
    is_float = name in ("float16", "bfloat16", "float32", "float64")
    is_bool = name == "bool"
    if ((allowed == FLOAT and not is_float) or (allowed == NUM and is_bool)
            or (allowed == INT_BOOL and is_float) or (allowed == INT and (is_float or is_bool))
            or t.dtype.is_complex       # complex ops run on real views (complex_views.py)
            or t.dtype.is_float8):
        if t.dtype.is_float8:       # the launcher hands it to framework/_float8_ops.py
            return None
        # PyTorch's CUDA kernels name themselves "<op>_cuda" in this message
        raise NotImplementedError(f"\"{kernel}_cuda\" not implemented for '{type_name(name)}'")
    return PER_DTYPE.get((kernel, name), fn)


def type_name(name):
    """PyTorch's name of a dtype in kernel errors ('Float', 'Bool', 'Long', ...)."""
    dt = _dtype._NAMES.get(name)
    return dt.scalar_name if dt is not None else name


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
    """The float64 bit patterns (int64) of the parameters, as the kernels take them. One
    pack and one unpack per call: this runs on every elementwise launch."""
    pack, unpack = _BIT_CODECS.get(len(ps)) or _bit_codec(len(ps))
    return unpack(pack(*ps))


_BIT_CODECS = {}


def _bit_codec(n):
    codec = struct.Struct(f"<{n}d").pack, struct.Struct(f"<{n}q").unpack
    _BIT_CODECS[n] = codec
    return codec


def geometry(out, in_strides):
    """How a launch walks out's elements: (n, merged shape, [out strides, input strides...],
    CONTIG, IDX64), or None when out is empty. Shared by every elementwise launcher."""
    shape, so = out._shape, out._stride
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return None
    if all(st == so for st in in_strides) and out.is_contiguous():
        # the common case (every operand dense and alike) without the general merge below
        return n, (n,), [(1,)] * (len(in_strides) + 1), True, n + BLOCK >= _INT32_LIMIT
    # the other layouts of a training loop come back every step: kept by layout
    key = (shape, so, tuple(in_strides))
    g = _GEOMETRIES.get(key)
    if g is None:
        g = alloc.remember(_GEOMETRIES, key, _general_geometry(n, shape, so, in_strides))
    return g


_GEOMETRIES = {}


def _general_geometry(n, shape, so, in_strides):
    strides = [so] + [tuple(s) for s in in_strides]
    if len(shape) > 1 and any(so[d] < so[d + 1] for d in range(len(so) - 1)):
        # visit dims in out's memory order (a permuted dense out, PyTorch's preserve_format,
        # then merges into one contiguous run); the order does not change an elementwise op
        order = sorted(range(len(shape)), key=lambda d: -abs(so[d]))
        shape = tuple(shape[d] for d in order)
        strides = [tuple(st[d] for d in order) for st in strides]
    shape, strides = collapse(shape, strides)
    ndim = len(shape)
    if ndim > MAX_DIMS:
        raise RuntimeError(f"pointwise kernel: {ndim} non-mergeable dims, at most {MAX_DIMS}")
    contig = ndim == 1 and all(st[0] == 1 for st in strides)
    extent = max([n] + [sum((sz - 1) * abs(x) for sz, x in zip(shape, st)) + 1
                        for st in strides])
    idx64 = extent + BLOCK >= _INT32_LIMIT  # the last program's indices run past n
    return n, shape, strides, contig, idx64


def _launch(kernel_fn, op, out, inputs, in_strides, ps, **extra):
    """Launches ``kernel_fn`` over out's elements; returns False if there are none.
    ``extra``: further kernel arguments (the binary kernel's flag)."""
    g = geometry(out, in_strides)
    if g is None:
        return False
    n, shape, strides, contig, idx64 = g
    grid = (cdiv(n, BLOCK),)
    kernel_fn[grid](out, *inputs, n, shape, *strides, *_params_bits(*ps), OP=op,
                    NDIM=len(shape), CONTIG=contig, IDX64=idx64, BLOCK=BLOCK, **extra)
    return True


def unary(kernel, out, x, x_stride, p0=0.0, p1=0.0, p2=0.0):
    op = _check(kernel, UNARY, x)
    if op is None:
        return _float8_ops.unary(kernel, out, x, x_stride, p0, p1, p2)
    if kernel == "round_decimals":
        p1 = 10.0 ** abs(p0)  # the scale, as the CPU computes it in float64
    _launch(_unary_kernel, op, out, (x,), (x_stride,), (p0, p1, p2))


def binary(kernel, out, a, a_stride, b, b_stride, p0=0.0, p1=0.0, p2=0.0):
    op = _check(kernel, BINARY, a)
    if op is None:
        return _float8_ops.binary(kernel, out, a, a_stride, b, b_stride, p0, p1, p2)
    if kernel in INT_DIVISION and not a.dtype.is_floating_point:
        device = out._storage.device
        flag = alloc.empty((1,), _dtype.int32, device)
        alloc.backend(device).copy.fill(flag, 0)
        if (_launch(_binary_kernel, op, out, (a, b), (a_stride, b_stride), (p0, p1, p2),
                    flag=flag, ZERO_FLAG=True) and flag.item()):
            raise RuntimeError("ZeroDivisionError")  # as the CPU kernels and PyTorch's CPU
    else:
        _launch(_binary_kernel, op, out, (a, b), (a_stride, b_stride), (p0, p1, p2),
                flag=None, ZERO_FLAG=False)


def ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0=0.0):
    if kernel == "where":
        if a.dtype.name != "bool":
            raise RuntimeError("where expected condition to be a boolean tensor")
        op = _check(kernel, TERNARY, b)
    else:
        op = _check(kernel, TERNARY, a)
    if op is None:
        return _float8_ops.ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0)
    _launch(_ternary_kernel, op, out, (a, b, c), (a_stride, b_stride, c_stride),
            (p0, 0.0, 0.0))
