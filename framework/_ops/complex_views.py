"""Complex tensors as pairs of reals: the views every complex op computes on.

A complex64 (complex128) tensor is stored as interleaved float32 (float64) (real, imag)
pairs, as in PyTorch and NumPy. No kernel of either backend knows a complex dtype: the
complex ops (complex_ops.py) and the backends' copy and fill (through ``copy``/``fill``
below) work on the real views made here, so each complex op runs the real kernels of its
device, Triton on ``cuda`` and native on the CPU."""
import warnings

from .. import _dtype
from .._tensor import Tensor

_make = Tensor._make


def as_real(t):
    """The real view of complex ``t``: shape + (2,), (real, imag) along the last dim (no
    autograd, no checks: view_as_real is the public op)."""
    return _make(t._storage, t._shape + (2,), tuple(2 * s for s in t._stride) + (1,),
                 2 * t._offset, t.dtype.to_real())


def part(t, k, shape=None, stride=None):
    """The real (``k`` = 0) or imaginary (``k`` = 1) parts of complex ``t`` as a real
    tensor of t's shape, or of ``shape`` with t's ``stride`` broadcast to it."""
    if shape is None:
        shape, stride = t._shape, t._stride
    return _make(t._storage, shape, tuple(2 * s for s in stride), 2 * t._offset + k,
                 t.dtype.to_real())


def copy(real_copy, real_fill, dst, src, src_stride):
    """A backend's copy (``real_copy``, ``real_fill``: its own) when either side is complex: real to complex fills the imaginary
    part with zeros, complex to real keeps the real part (with PyTorch's warning)."""
    if dst.dtype.is_complex:
        if src.dtype.is_complex:
            real_copy(as_real(dst), as_real(src), tuple(2 * s for s in src_stride) + (1,))
            return
        real_copy(part(dst, 0), src, src_stride)
        real_fill(part(dst, 1), 0)
        return
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                  stacklevel=4)
    real_copy(dst, part(src, 0, dst._shape, src_stride), tuple(2 * s for s in src_stride))


def fill(real_fill, dst, value):
    """A backend's fill of a complex tensor with a number (a Python complex or real)."""
    value = complex(value)
    real_fill(part(dst, 0), value.real)
    real_fill(part(dst, 1), value.imag)



# ---- the public views --------------------------------------------------------------------

def _view_of(base, t):
    t._base = base if base._base is None else base._base
    return t


def view_as_real(input):
    """A real view of a complex tensor: shape + (2,), the last dim holding (real, imag)."""
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _view_of(input, as_real(input))


def view_as_complex(input):
    """A complex view of a real tensor whose last dim of size 2 holds (real, imag)."""
    dt = input.dtype
    if dt is not _dtype.float32 and dt is not _dtype.float64:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {dt.scalar_name}")
    if not input._shape or input._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input._stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input._stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if input._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _view_of(input, _make(input._storage, input._shape[:-1],
                                 tuple(s // 2 for s in input._stride[:-1]),
                                 input._offset // 2, dt.to_complex()))


def real(input):
    """The real parts of a complex tensor as a view; a real tensor itself."""
    if not input.dtype.is_complex:
        return input
    return _view_of(input, part(input, 0))


def imag(input):
    """The imaginary parts of a complex tensor as a view."""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _view_of(input, part(input, 1))

