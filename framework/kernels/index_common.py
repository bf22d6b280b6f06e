"""Shared pieces of the Triton index family (index.py and index_scatter.py; the cuda side
of native/index.cpp): the error styles and bad-index reporting, block sizes, and the jit
helpers both files' kernels use.

Index values are always bounds-checked on the device: a bad index is never read or
written through. A kernel that meets one records ``position * K + k`` (its row-major
position in the index space, and which index tensor) with an atomic min into a one-element
int64 tensor (``_record_error``); the launcher reads that slot back (``_first_error``) and
raises the CPU backend's IndexError (or RuntimeError) for the first bad position
(``bad_index``), re-reading the offending value itself (``_read_int``). A launcher whose
kernel writes through user indices in place (scatter) first runs ``check_range``, so that a
bad index raises before anything is written.
"""
import triton
import triton.language as tl

from .. import _dtype
from .._ops import alloc
from .._tensor import Tensor
from . import copy as _copy
from .pointwise import BLOCK, _index, _offset, collapse
from .launcher import cached, cdiv, next_pow2

STYLE_DIM, STYLE_SELF, STYLE_TAKE, STYLE_PREFIX, STYLE_RUNTIME, STYLE_DATA = range(6)

_NO_ERROR = 2**63 - 1


# ---- host helpers ---------------------------------------------------------------------

_block_size = []


def _block(n=None):
    """Elements per program (a power of two, at most n rounded up): BLOCK on a GPU; 16
    times more under Triton's interpreter, whose cost is per program (and per jit call),
    hardly per element."""
    if not _block_size:
        from .. import cuda
        _block_size.append(BLOCK * 16 if cuda.is_simulated() else BLOCK)
    return _block_size[0] if n is None else _pow2(n, _block_size[0])


def _pow2(n, cap):
    """The smallest power of two >= n, at most cap."""
    return min(cap, next_pow2(n))


def _contig(shape):
    return alloc.contiguous_strides(tuple(shape))


def _idx64(n, shape, strides):
    """Whether a launch over n elements needs int64 positions and offsets: an index or
    an element offset of one of the operands (strides, in elements) may reach 2**31."""
    extent = max([n] + [sum((sz - 1) * abs(st) for sz, st in zip(shape, sts)) + 1
                        for sts in strides])
    return extent + _block() >= 2**31


def _error_slot(device):
    err = alloc.empty((1,), _dtype.int64, device)
    _copy.fill(err, _NO_ERROR)
    return err


def _first_error(err):
    """The recorded key, or None when no program met a bad index."""
    key = err.item()
    return None if key == _NO_ERROR else key


def _read_int(t, shape, strides, p):
    """The value of integer tensor ``t`` at row-major position p of (shape, strides)."""
    off = 0
    for n, st in zip(reversed(shape), reversed(strides)):
        off += (p % n) * st
        p //= n
    return Tensor._make(t._storage, (), (), t._offset + off, t.dtype).item()


def bad_index(style, prefix, v, dim, size):
    """Raises the CPU backend's error for index v out of range (native/index.cpp)."""
    dims = f"index {v} is out of bounds for dimension {dim} with size {size}"
    if style == STYLE_SELF:
        raise IndexError("index out of range in self")
    if style == STYLE_TAKE:
        raise IndexError(f"out of range: tried to access index {v} on a tensor of {size} "
                         "elements.")
    if style == STYLE_PREFIX:
        raise IndexError(prefix + dims)
    if style == STYLE_RUNTIME:
        raise RuntimeError(dims)
    if style == STYLE_DATA:     # PyTorch's CPU index_select along dim 1
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={v} axis_dim={size}")
    if size == 0:
        raise IndexError("index is out of bounds for dimension with size 0")
    raise IndexError(dims)


def check_range(index, shape, strides, size, style, dim, prefix=""):
    """Raises ``style``'s error for the first value of the integer tensor ``index`` (seen
    at shape, strides) outside [0, size): a kernel that writes through the index runs only
    after this, so a bad index leaves the destination untouched."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    cshape, (si,) = collapse(tuple(shape), [tuple(strides)])
    err = _error_slot(index._storage.device)
    _check_range_kernel[(cdiv(n, _block(n)),)](index, n, cshape, si, size, err,
                                               NDIM=len(cshape),
                                               IDX64=_idx64(n, cshape, [si]),
                                               BLOCK=_block(n))
    key = _first_error(err)
    if key is not None:
        bad_index(style, prefix, _read_int(index, cshape, si, key), dim, size)


def _check_index_dtype(op, index):
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")


# ---- jit helpers ----------------------------------------------------------------------

@triton.jit
def _record_error(err, bad, key):
    """err[0] = min(err[0], smallest key where bad): one atomic per program, if any."""
    k = tl.min(tl.where(bad, key.to(tl.int64), 9223372036854775807))
    tl.atomic_min(err, k, mask=k < 9223372036854775807)


@triton.jit
def _scalar(bits, IS_FLOAT: tl.constexpr):
    """A scalar argument from _scalar_arg: float64 from its bits, or int64."""
    if IS_FLOAT:
        v = bits.to(tl.int64).to(tl.float64, bitcast=True)
    else:
        v = bits.to(tl.int64)
    return v


@cached
@triton.jit
def _check_range_kernel(idx, n, shape, si, size, err, NDIM: tl.constexpr, IDX64: tl.constexpr,
                        BLOCK: tl.constexpr):
    """Records the first position i whose idx value is outside [0, size)."""
    i, mask = _index(n, BLOCK, IDX64)
    v = tl.load(idx + _offset(i, shape, si, NDIM, False), mask=mask, other=0).to(tl.int64)
    _record_error(err, mask & ((v < 0) | (v >= size)), i.to(tl.int64))
