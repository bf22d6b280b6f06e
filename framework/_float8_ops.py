"""The few pointwise ops PyTorch runs on float8 tensors, on every device.

PyTorch's float8 dtypes are storage formats: besides copies, casts and views, its CPU
kernels take them only in ``abs``, ``eq``/``ne``, ``isnan``, ``where`` (and ``isinf``,
``isfinite`` for some formats; the tables below are PyTorch 2.13's). The native and Triton
pointwise kernels have no float8 cases: when one is handed a float8 operand, its launcher
calls the function here, which runs the op through the same launchers on float32 values
(decoded by the float8 copy kernels) or on the codes as bytes, or raises PyTorch's
NotImplementedError for the op and dtype.
"""
from . import _dtype
from ._tensor import Tensor

_ALL = frozenset(("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"))

# kernel -> the float8 dtypes PyTorch takes in it
UNARY = {"abs": _ALL, "isnan": _ALL, "isinf": frozenset(("float8_e5m2",)),
         "isfinite": frozenset(("float8_e5m2",))}
BINARY = {"eq": _ALL, "ne": _ALL}
TERNARY = {"where": _ALL}

# kernels whose PyTorch error names the op without the device ("isinf" for every device)
_PLAIN_NAMES = {"isinf", "isfinite", "masked_fill", "masked_scatter", "unique", "unique_dim"}


def refuse(kernel, dt, device_type):
    """PyTorch's error for an op its kernels do not take in dtype ``dt``."""
    name = kernel if kernel in _PLAIN_NAMES else f"{kernel}_{device_type}"
    return NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name}'")


def as_bytes(t):
    """A float8 tensor viewed as uint8 (same storage, shape and strides)."""
    return Tensor._make(t._storage, t._shape, t._stride, t._offset, _dtype.uint8)


def _backend(t):
    from ._ops import alloc
    return alloc.backend(t._storage.device)


def _check(table, kernel, t, out):
    if t.dtype.name not in table.get(kernel, ()):
        f8 = t if t.dtype.is_float8 else out
        raise refuse(kernel, f8.dtype, out._storage.device.type)


def _decoded(t, stride, shape):
    """float32 values of float8 ``t`` read at ``stride`` (expanded to ``shape``), and their
    strides at ``shape``; broadcast dims stay size 1 (a scalar decodes to one value)."""
    from ._ops import alloc
    small = tuple(n if s else 1 for n, s in zip(shape, stride))
    f = alloc.empty(small, _dtype.float32, t._storage.device)
    _backend(t).copy.copy(f, t, stride)
    return f, tuple(s if st else 0 for s, st in zip(f._stride, stride))


def unary(kernel, out, x, x_stride, p0=0.0, p1=0.0, p2=0.0):
    """out = kernel(x) for a float8 ``x`` (or a float8 ``out``), computed on float32 values
    and, for a float8 result (abs), rounded back."""
    _check(UNARY, kernel, x, out)
    f, fs = _decoded(x, x_stride, out._shape)
    pw = _backend(out).pointwise
    if not out.dtype.is_float8:
        return pw.unary(kernel, out, f, fs, p0, p1, p2)
    # abs: the sign bit of the float32 cleared (NaNs included, as C's fabs), then rounded
    # back. (PyTorch's vectorized CPU loop over contiguous float8 keeps the codes of -0 and
    # NaNs; its scalar loop, for strided views and short tails, is this one.)
    from ._ops.pointwise import scalar_tensor
    bits = Tensor._make(f._storage, f._shape, f._stride, f._offset, _dtype.int32)
    mask = scalar_tensor(0x7FFFFFFF, _dtype.int32, f._storage.device)
    pw.binary("bitwise_and", bits, bits, bits._stride, mask, (0,) * len(f._shape))
    _backend(out).copy.copy(out, f, fs)


def binary(kernel, out, a, a_stride, b, b_stride, p0=0.0, p1=0.0, p2=0.0):
    """out = kernel(a, b) for float8 operands (both of one float8 dtype: nothing else
    promotes with it), compared as their float32 values."""
    _check(BINARY, kernel, a, out)
    if b.dtype is not a.dtype:
        raise refuse(kernel, a.dtype, out._storage.device.type)
    fa, sa = _decoded(a, a_stride, out._shape)
    fb, sb = _decoded(b, b_stride, out._shape)
    _backend(out).pointwise.binary(kernel, out, fa, sa, fb, sb, p0, p1, p2)


def ternary(kernel, out, a, a_stride, b, b_stride, c, c_stride, p0=0.0):
    """where(a, b, c) for float8 b, c and out: the codes move as bytes, bit for bit."""
    _check(TERNARY, kernel, b, out)
    if not (c.dtype is b.dtype is out.dtype):
        raise refuse(kernel, b.dtype, out._storage.device.type)
    _backend(out).pointwise.ternary(kernel, as_bytes(out), a, a_stride, as_bytes(b), b_stride,
                                    as_bytes(c), c_stride, p0)
