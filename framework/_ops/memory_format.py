"""Memory formats and the layout of new tensors, as PyTorch chooses it.

- ``preserve_format`` (``to``, ``clone``, ``empty_like`` and friends by default): a dense
  non-overlapping input (a permute, a transpose, channels-last) keeps its exact strides;
  any other input gets dense strides in the same dim order (``dense_like``).
- Elementwise results (pointwise.py) follow PyTorch's TensorIterator: when every operand
  has the result's shape and the same dense strides, those strides; otherwise the dims are
  ordered by the operands' strides, the first operand deciding first and broadcast (stride
  0) dims skipped (``iter_strides``). A contiguous first operand gives a contiguous result.
- ``contiguous_format``, ``channels_last`` (4-d: N, H, W, C in memory) and
  ``channels_last_3d`` (5-d) ask for those layouts explicitly.
"""
from .._tensor import Tensor
from . import alloc


class _Named:
    """A named singleton printed and pickled as PyTorch's (``torch.channels_last``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


class memory_format(_Named):
    """A memory format (``framework.contiguous_format``, ``channels_last``, ...)."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
FORMATS = (contiguous_format, channels_last, channels_last_3d, preserve_format)


class layout(_Named):
    """A tensor layout; every tensor here is ``framework.strided`` (dense, with strides)."""

    __slots__ = ()


strided = layout("strided")

# the dims of a channels-last tensor from the fastest to the slowest in memory
_CL_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}
_cache = {}


def check(op, fmt):
    """``fmt`` as a memory format (None: ``default``), or PyTorch's TypeError."""
    if fmt is None or fmt.__class__ is memory_format:
        return fmt
    raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(fmt).__name__}")


def _from_order(shape, order):
    """Dense strides with the dims laid out in ``order`` (fastest first)."""
    st = [0] * len(shape)
    acc = 1
    for d in order:
        st[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(st)


def format_strides(op, shape, fmt):
    """The strides of a new tensor of ``shape`` in an explicit memory format."""
    if fmt is contiguous_format:
        return alloc.contiguous_strides(shape)
    want = 4 if fmt is channels_last else 5
    if len(shape) != want:
        raise RuntimeError(f"required rank {want} tensor to use {fmt.name} format")
    return _from_order(shape, _CL_ORDER[want])


def is_contiguous(shape, stride, fmt):
    """Tensor.is_contiguous(memory_format=): the strides are exactly the format's (size-1
    dims aside; an empty tensor is contiguous, but channels-last only with its strides, as
    in PyTorch)."""
    if fmt is None or fmt is contiguous_format:
        if 0 in shape:
            return True
        order = range(len(shape) - 1, -1, -1)
    elif fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    else:
        order = _CL_ORDER.get(4 if fmt is channels_last else 5)
        if len(shape) != (4 if fmt is channels_last else 5):
            return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggest(t):
    """PyTorch's suggest_memory_format: channels_last (channels_last_3d) for a 4-d (5-d)
    tensor whose strides order its dims as N, [D,] H, W, C in memory, else
    contiguous_format. Ambiguous layouts (C of size 1, an N111 tensor) count as contiguous,
    as in PyTorch."""
    nd = len(t._shape)
    if nd not in _CL_ORDER or t.is_contiguous():
        return contiguous_format
    shape, stride = t._shape, t._stride
    if stride[1] == 0:
        return contiguous_format
    low = 0
    for d in _CL_ORDER[nd]:
        if shape[d] == 0 or stride[d] < low or (d == 0 and low == stride[1]):
            return contiguous_format
        low = stride[d] * shape[d] if shape[d] > 1 else stride[d]
    return channels_last if nd == 4 else channels_last_3d


def keep_format(out, *inputs):
    """``out`` in the channels-last format of the first channels-last tensor of ``inputs``
    (PyTorch's convolutions, pooling and batch norm keep that layout), else as it is."""
    if len(out._shape) in _CL_ORDER:
        for x in inputs:
            fmt = suggest(x)
            if fmt is not contiguous_format:
                return out.contiguous(memory_format=fmt)
    return out


def is_dense(shape, stride):
    """Whether the elements fill ``numel`` consecutive slots, in any dim order."""
    dims = sorted((st, n) for n, st in zip(shape, stride) if n != 1)
    expected = 1
    for st, n in dims:
        if n == 0:
            return True
        if st != expected:
            return False
        expected *= n
    return True


def _perm(shape, strides_list):
    """TensorIterator's dim order (fastest first) for operands with these strides (already
    expanded to ``shape``): an insertion sort from the row-major order where the first
    operand whose strides differ decides, broadcast dims (stride 0) never decide, and of
    two dims with equal strides the smaller one goes first."""
    nd = len(shape)
    perm = list(range(nd - 1, -1, -1))

    def should_swap(d0, d1):
        for st in strides_list:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def iter_strides(shape, strides_list):
    """The strides of an elementwise result of ``shape`` whose operands have these strides
    (expanded to ``shape``), as TensorIterator allocates it."""
    key = (shape, *strides_list)
    st = _cache.get(key)
    if st is None:
        first = strides_list[0]
        if all(s == first for s in strides_list) and is_dense(shape, first):
            st = first
        else:
            st = _from_order(shape, _perm(shape, strides_list))
        alloc.remember(_cache, key, st)
    return st


def dense_like(shape, stride):
    """The strides preserve_format gives a copy of a tensor: its own when it is dense and
    non-overlapping, else dense ones in the same dim order."""
    key = (shape, stride)
    st = _cache.get(key)
    if st is None:
        st = stride if is_dense(shape, stride) else dense_order(shape, shape, stride)
        alloc.remember(_cache, key, st)
    return st


def dense_order(shape, like_shape, like_stride):
    """Dense strides for ``shape`` with its dims in the memory order of a tensor of
    ``like_shape`` and ``like_stride`` (as many dims; row-major when that tensor is)."""
    key = ("order", shape, like_shape, like_stride)
    st = _cache.get(key)
    if st is None:
        st = alloc.remember(_cache, key, _from_order(shape, _perm(like_shape, (like_stride,))))
    return st


def like_strides(op, x, fmt):
    """The strides of a new tensor like ``x`` in memory format ``fmt`` (None: preserve)."""
    if fmt is None or fmt is preserve_format:
        return dense_like(x._shape, x._stride)
    if fmt.__class__ is not memory_format:
        check(op, fmt)
    return format_strides(op, x._shape, fmt)


def empty_like(x, dtype, device, fmt=None, op="empty_like"):
    """An uninitialised tensor of x's shape in format ``fmt`` (None: preserve x's layout)."""
    t = alloc.empty(x._shape, dtype, device)
    st = like_strides(op, x, fmt)
    if st != t._stride:     # a permutation of row-major: the same storage size
        t._stride = st
    return t


def piece_unit(shape, stride, n):
    """For ``n`` tensors of one ``shape`` and ``stride``: the distance, in elements, between
    the offsets at which they tile one dense block of memory with no gap and no overlap (as
    the pieces of ``split``/``chunk`` of a dense tensor do: attention's q, k and v from one
    projection), or None when the layout cannot. The dims of size above 1, by stride, must
    be dense but for one step ``n`` times as long: the room for the ``n`` pieces."""
    unit, expected = None, 1
    for s, size in sorted((s, size) for size, s in zip(shape, stride) if size != 1):
        if s == expected:
            expected *= size
        elif unit is None and s == expected * n:
            unit, expected = expected, s * size
        else:
            return None
    return expected if unit is None else unit  # no step inside: one piece after another


def empty_like_pieces(ts, dtype, device):
    """New uninitialised tensors laid out as ``ts`` are: where ``ts`` tile one dense block of
    a storage (``piece_unit``), theirs tile one new buffer the same way, so a backward that
    joins them again (``pieces_backward`` of the split) needs no copy; else each its own
    ``empty_like``."""
    t0 = ts[0]
    st, shape, stride = t0._storage, t0._shape, t0._stride
    if len(ts) > 1 and all(t._storage is st and t._shape == shape and t._stride == stride
                           for t in ts):
        unit = piece_unit(shape, stride, len(ts)) if 0 not in shape else None
        offsets = sorted(t._offset for t in ts)
        if unit and all(o - offsets[0] == i * unit for i, o in enumerate(offsets)):
            buf = alloc.empty((len(ts) * t0.numel(),), dtype, device)
            base = buf._offset - offsets[0]
            return [Tensor._make(buf._storage, shape, stride, base + t._offset, dtype)
                    for t in ts]
    return [empty_like(t, dtype, device) for t in ts]
