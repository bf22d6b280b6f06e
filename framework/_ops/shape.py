"""Joining and shaping ops: cat and the stacks, flip, roll, rot90, repeat, tile,
repeat_interleave and atleast_Nd (the diagonal builders and grids are in ``diagonals.py``).

Each op is a composition of strided views and copies into blocks of one output: the copy
kernel (``backend(device).copy.copy``) reads any strided view (negative and zero strides
included) and converts dtypes on the way, so these ops need no kernel of their own and
run on every device that has a copy kernel. Padding is in ``padding.py``.
"""
import builtins
import itertools

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from .._float8_ops import refuse
from . import alloc, args
from .pointwise import require_tensor, check_out, common_device, type_name
from .views import (_dims, _view, _view_strides, contiguous, reshape, transpose,
                    unsqueeze)

_make = Tensor._make
_PROMOTE = _dtype._PROMOTE


# ---- helpers ----------------------------------------------------------------------------

def copy_into(dst, src):
    """dst[...] = src[...]: same shape, any strides (negative and 0 too), any dtypes."""
    if alloc.numel(dst._shape):
        alloc.backend(dst._storage.device).copy.copy(dst, src, src._stride)


def _concat(res, tensors):
    """Fills a new contiguous ``res`` with ``tensors`` back to back when they are all
    contiguous and of its dtype (cat along the outermost dim: one native call on the CPU);
    False otherwise, for the general path."""
    if not res.is_contiguous():
        return False
    dt = res.dtype
    for t in tensors:
        if t.dtype is not dt or not t.is_contiguous():
            return False
    alloc.backend(res._storage.device).copy.concat(res, tensors)
    return True


def _stack_batch(res, tensors):
    """Fills ``res[k] = tensors[k]`` in one backend call when the tensors share a layout and
    a dtype (a data loader's batch: one native call on the CPU, split among its threads);
    False otherwise, for the general path."""
    ref = tensors[0]
    dt, st = ref.dtype, ref._stride
    for t in tensors:
        if t.dtype is not dt or t._stride != st:
            return False
    if not alloc.numel(res._shape):
        return True
    alloc.backend(res._storage.device).copy.copy_many(res, tensors)
    return True


def block(t, starts, shape):
    """The view of ``t`` that starts at index ``starts`` and has sizes ``shape``."""
    off = t._offset
    for s, st in zip(starts, t._stride):
        off += s * st
    return _make(t._storage, tuple(shape), t._stride, off, t.dtype)


def narrow_view(t, dim, start, length):
    shape = list(t._shape)
    shape[dim] = length
    return _make(t._storage, tuple(shape), t._stride, t._offset + start * t._stride[dim],
                 t.dtype)


def copy_pieces(out, src, pieces, value=0):
    """Copies ``src`` into ``out`` piece by piece. ``pieces`` maps a dim to a list of
    (out_start, length, src_start, src_step): along that dim, out index ``out_start + i``
    reads src index ``src_start + src_step * i`` (step -1 reverses, 0 repeats one index);
    a piece with src_start None is filled with ``value`` instead. Dims not in ``pieces``
    map one to one. One copy (or fill) per combination of pieces."""
    dims = sorted(pieces)
    backend = alloc.backend(out._storage.device)
    for combo in itertools.product(*(pieces[d] for d in dims)):
        shape, sstride = list(out._shape), list(src._stride)
        ooff, soff, fill = out._offset, src._offset, False
        for d, (o, n, s, step) in zip(dims, combo):
            shape[d] = n
            ooff += o * out._stride[d]
            if s is None:
                fill = True
            else:
                soff += s * src._stride[d]
                sstride[d] = step * src._stride[d]
        shape = tuple(shape)
        if alloc.numel(shape) == 0:
            continue
        dst = _make(out._storage, shape, out._stride, ooff, out.dtype)
        if fill:
            backend.copy.fill(dst, value)
        else:
            backend.copy.copy(dst, src_view(src, shape, sstride, soff), tuple(sstride))


def src_view(src, shape, stride, offset):
    return _make(src._storage, shape, tuple(stride), offset, src.dtype)


def tensor_list(op, tensors):
    """``tensors`` as a tuple of Tensors, with PyTorch's TypeErrors."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not Tensor")
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return tuple(tensors)


def int_list(op, name, pos, value):
    """An int or a sequence of ints as a tuple, with PyTorch's TypeError otherwise."""
    if hasattr(value, "__index__") and not isinstance(value, builtins.bool):
        return (args.to_int(op, name, value, pos),)
    return args.int_tuple(op, name, value, pos)


def promote(tensors):
    """The common dtype of tensors by PyTorch's promotion lattice."""
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            dt = _PROMOTE[(dt, t.dtype)]
    return dt


def _overlap(a, b):
    if a._storage is not b._storage or not a.numel() or not b.numel():
        return False

    def span(t):
        lo = hi = t._offset
        for n, s in zip(t._shape, t._stride):
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        return lo * t.dtype.itemsize, (hi + 1) * t.dtype.itemsize
    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


def result(op, out, shape, dtype, device, inputs=()):
    """A new output, or the validated (and if need be resized) ``out=`` tensor."""
    if out is None:
        return alloc.empty(tuple(shape), dtype, device)
    require_tensor(op, out, "out")
    if not _dtype.can_cast(dtype, out.dtype):
        raise TypeError(f"torch.{op}(): input types can't be cast to the desired output type "
                        f"{type_name(out.dtype)}")
    for i, t in enumerate(inputs):
        if _overlap(t, out):
            raise RuntimeError(f"unsupported operation: the input tensors cannot refer to any "
                               f"of the output memory locations. Found overlap in input tensor "
                               f"{i}")
    return check_out(op, out, tuple(shape), dtype, False)


def _neg_dim_check(shape):
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(shape)}")


# ---- joining ----------------------------------------------------------------------------

def cat(tensors, dim=0, *, out=None):
    """Concatenates tensors along an existing dim; dtypes are promoted. 1-d empty tensors
    (shape ``(0,)``) are skipped, as in PyTorch."""
    return _cat("cat", tensors, dim, out)


def concat(tensors, dim=0, *, out=None):
    """Alias of :func:`cat`."""
    return _cat("concat", tensors, dim, out)


def concatenate(tensors, axis=0, *, out=None):
    """Alias of :func:`cat` with NumPy's argument name."""
    return _cat("concatenate", tensors, axis, out)


def _cat(op, tensors, dim, out):
    tensors = tensor_list(op, tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not t._shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    dtype = promote(tensors)
    device = common_device(op, tensors)
    live = [(i, t) for i, t in enumerate(tensors) if t._shape != (0,)]
    if not live:
        return result(op, out, (0,), dtype, device, tensors)
    ref = live[0][1]
    nd = len(ref._shape)
    d = _wrap_dim(dim, nd)
    size = 0
    for i, t in live:
        if len(t._shape) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and "
                               f"{len(t._shape)}")
        for k in range(nd):
            if k != d and t._shape[k] != ref._shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref._shape[k]} but got size {t._shape[k]} "
                                   f"for tensor number {i} in the list.")
        size += t._shape[d]
    res = result(op, out, ref._shape[:d] + (size,) + ref._shape[d + 1:], dtype, device,
                 tensors)
    if out is None and all(s == 1 for s in ref._shape[:d]) and _concat(res, [t for _, t in live]):
        return res
    pos = 0
    for _, t in live:
        n = t._shape[d]
        copy_into(narrow_view(res, d, pos, n), t)
        pos += n
    return res


def stack(tensors, dim=0, *, out=None):
    """Joins equal-shaped tensors along a new dim ``dim``; dtypes are promoted."""
    tensors = tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]
    d = _wrap_dim(dim, len(ref._shape) + 1)
    for i, t in enumerate(tensors):
        if t._shape != ref._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ref._shape)} at entry 0 and {list(t._shape)} at entry "
                               f"{i}")
    dtype = promote(tensors)
    device = common_device("stack", tensors)
    res = result("stack", out, ref._shape[:d] + (len(tensors),) + ref._shape[d:], dtype,
                 device, tensors)
    if d == 0 and _stack_batch(res, tensors):
        return res
    shape = ref._shape
    stride = res._stride[:d] + res._stride[d + 1:]
    for k, t in enumerate(tensors):
        copy_into(_make(res._storage, shape, stride, res._offset + k * res._stride[d],
                        res.dtype), t)
    return res


def _nonempty(op, tensors):
    tensors = tensor_list(op, tensors)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def hstack(tensors, *, out=None):
    """Concatenates along dim 1 (dim 0 for 1-d inputs) after :func:`atleast_1d`."""
    ts = atleast_1d(_nonempty("hstack", tensors))
    return _cat("hstack", ts, 0 if len(ts[0]._shape) == 1 else 1, out)


def vstack(tensors, *, out=None):
    """Concatenates along dim 0 after :func:`atleast_2d`."""
    return _cat("vstack", atleast_2d(_nonempty("vstack", tensors)), 0, out)


def row_stack(tensors, *, out=None):
    """Alias of :func:`vstack`."""
    return _cat("row_stack", atleast_2d(_nonempty("row_stack", tensors)), 0, out)


def dstack(tensors, *, out=None):
    """Concatenates along dim 2 after :func:`atleast_3d`."""
    return _cat("dstack", atleast_3d(_nonempty("dstack", tensors)), 2, out)


def column_stack(tensors, *, out=None):
    """Concatenates along dim 1; 0-d and 1-d inputs become columns ``(n, 1)``."""
    ts = _nonempty("column_stack", tensors)
    ts = [reshape(t, (t.numel(), 1)) if len(t._shape) <= 1 else t for t in ts]
    return _cat("column_stack", ts, 1, out)


def _atleast(t, n):
    nd = len(t._shape)
    if nd >= n:
        return t
    if nd == 0:
        return reshape(t, (1,) * n)
    if nd == 2:
        return unsqueeze(t, -1)            # (a, b) -> (a, b, 1)
    t = unsqueeze(t, 0)                    # (n) -> (1, n)
    return t if n == 2 else unsqueeze(t, -1)


def _atleast_all(name, n, tensors):
    if len(tensors) == 1:
        x = tensors[0]
        if isinstance(x, Tensor):
            return _atleast(x, n)
        if not isinstance(x, (list, tuple)):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(x).__name__})")
        tensors = x
    return tuple(_atleast(t, n) for t in tensor_list(name, tensors))


def atleast_1d(*tensors):
    """Views of the inputs with at least one dim (one tensor in, one tensor out)."""
    return _atleast_all("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    """Views with at least two dims: 0-d -> (1, 1), 1-d (n) -> (1, n)."""
    return _atleast_all("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    """Views with at least three dims: (n) -> (1, n, 1), (a, b) -> (a, b, 1)."""
    return _atleast_all("atleast_3d", 3, tensors)


# ---- reordering -------------------------------------------------------------------------

def _flipped(t, dims):
    """A view of ``t`` reversed along ``dims`` (negative strides)."""
    stride, off = list(t._stride), t._offset
    for d in dims:
        n = t._shape[d]
        if n > 1:
            off += (n - 1) * stride[d]
            stride[d] = -stride[d]
    return _make(t._storage, t._shape, tuple(stride), off, t.dtype)


def flip(input, dims):
    """A copy of ``input`` with the order of elements reversed along ``dims``."""
    dims = int_list("flip", "dims", 2, dims)
    nd = len(input._shape)
    wrapped = []
    for d in dims:
        w = _wrap_dim(d, nd)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    if input.dtype.is_float8 and input.numel():
        _refuse_float8_flip(input, wrapped)
    res = alloc.empty(input._shape, input.dtype, input._storage.device)
    copy_into(res, _flipped(input, wrapped if nd else []))
    return res


def _refuse_float8_flip(input, dims):
    """PyTorch's flip kernel has no float8 case, and runs unless the flip leaves the
    stride-1 dim alone (then rows move whole, as bytes) or moves nothing (size-1 dims)."""
    moved = [d for d in dims if input._shape[d] > 1]
    inner = [d for d in range(input.dim()) if input._shape[d] > 1 and input._stride[d] == 1]
    if moved and (not inner or inner[0] in moved):
        raise refuse("flip", input.dtype, input._storage.device.type)


def flip_method(self, *args, dims=None):
    """``Tensor.flip(*dims)``: dims as separate ints, one sequence, or ``dims=``."""
    if dims is None:
        dims = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    elif args:
        raise TypeError("flip() got multiple values for argument 'dims'")
    from . import dispatcher
    return dispatcher.function("flip")(self, dims)   # the recorded op (autograd)


def fliplr(input):
    """Flips dim 1 (left/right)."""
    if len(input._shape) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Flips dim 0 (up/down)."""
    if len(input._shape) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    """Rolls elements along ``dims`` by ``shifts`` (wrapping around); without ``dims`` the
    tensor is rolled as if flattened, then restored to its shape."""
    shifts = int_list("roll", "shifts", 2, shifts)
    dims = () if dims is None else int_list("roll", "dims", 3, dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        flat = roll(reshape(input, (-1,)), shifts, (0,))
        return _view(flat, input._shape, alloc.contiguous_strides(input._shape), 0)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    nd = len(input._shape)
    if nd == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    total = {}
    for s, d in zip(shifts, dims):
        w = _wrap_dim(d, nd)
        total[w] = total.get(w, 0) + s
    pieces = {}
    for d, s in total.items():
        n = input._shape[d]
        s = s % n if n else 0
        if s:
            pieces[d] = [(s, n - s, 0, 1), (0, s, n - s, 1)]
    res = alloc.empty(input._shape, input.dtype, input._storage.device)
    copy_pieces(res, input, pieces)
    return res


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees ``k`` times in the plane of ``dims``, from the first dim
    towards the second."""
    dims = int_list("rot90", "dims", 3, dims)
    nd = len(input._shape)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _wrap_dim(dims[0], nd), _wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return transpose(flip(input, (d0,)), d0, d1)
    return flip(input, ())


# ---- repetition -------------------------------------------------------------------------

def repeat(self, *repeats):
    """Tiles ``self`` ``repeats[i]`` times along each dim (leading dims are added when
    ``repeats`` is longer than ``self.dim()``)."""
    reps = _dims("repeat", repeats, "repeats")
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    return _repeat(self, reps)


def _repeat(t, reps):
    nd = len(t._shape)
    if len(reps) < nd:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    lead = len(reps) - nd
    shape = (1,) * lead + t._shape
    stride = (0,) * lead + t._stride
    out_shape = tuple(r * n for r, n in zip(reps, shape))
    _neg_dim_check(out_shape)
    res = alloc.empty(out_shape, t.dtype, t._storage.device)
    # out viewed as (r0, n0, r1, n1, ...) reads t through stride 0 on each r_i
    ishape = tuple(x for r, n in zip(reps, shape) for x in (r, n))
    istride = tuple(x for s in stride for x in (0, s))
    copy_into(_make(res._storage, ishape, alloc.contiguous_strides(ishape), 0, res.dtype),
              _make(t._storage, ishape, istride, t._offset, t.dtype))
    return res


def tile(input, *dims):
    """Like :meth:`Tensor.repeat`, but ``dims`` shorter than ``input.dim()`` is padded
    with leading ones."""
    reps = _dims("tile", dims, "dims")
    nd = len(input._shape)
    if len(reps) < nd:
        reps = (1,) * (nd - len(reps)) + reps
    return _repeat(input, reps)


_INDEX_DTYPES = (_dtype.int32, _dtype.int64)


def _check_repeats_dtype(repeats):
    if repeats.dtype not in _INDEX_DTYPES:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{type_name(repeats.dtype)}'")


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeats each element (each slice along ``dim``) ``repeats`` times, consecutively;
    without ``dim`` the input is flattened. ``repeats`` is an int or a tensor of counts.
    ``repeat_interleave(counts)`` alone gives ``[0]*counts[0] + [1]*counts[1] + ...``."""
    if repeats is None:
        return _repeat_index(input, output_size)
    if dim is None:
        input = reshape(input, (-1,))
        d = 0
    else:
        if not input._shape:
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], "
                             f"but got {dim})")
        d = _wrap_dim(dim, len(input._shape))
    n = input._shape[d]
    if isinstance(repeats, Tensor):
        if len(repeats._shape) > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        _check_repeats_dtype(repeats)
        if repeats.numel() != 1:
            if repeats._shape[0] != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but "
                                   f"got repeats.size(0) = {repeats._shape[0]} and "
                                   f"input.size({d}) = {n}")
            return _interleave_counts(input, d, repeats, output_size)
        count = repeats.reshape(-1).tolist()[0]
        if count < 0:
            raise RuntimeError("repeats can not be negative")
    elif isinstance(repeats, builtins.int):
        count = repeats
        if count < 0:
            raise RuntimeError("Repeats must be non-negative")
    else:
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                        f"{type(repeats).__name__}")
    if output_size is not None and output_size != n * count:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * count} but "
                           f"got {output_size}")
    shape = input._shape
    res = alloc.empty(shape[:d] + (n * count,) + shape[d + 1:], input.dtype,
                      input._storage.device)
    ishape = shape[:d + 1] + (count,) + shape[d + 1:]
    src = _make(input._storage, ishape, input._stride[:d + 1] + (0,) + input._stride[d + 1:],
                input._offset, input.dtype)
    copy_into(_make(res._storage, ishape, alloc.contiguous_strides(ishape), 0, res.dtype), src)
    return res


def _total(repeats, output_size):
    if repeats._storage.device.type == "meta":   # the repeats' values are not there
        if output_size is None:
            raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
        return output_size
    total = alloc.backend(repeats._storage.device).shape.repeat_interleave_total(repeats)
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return total


def _interleave_counts(input, d, repeats, output_size):
    """Slice i of ``input`` along ``d`` written repeats[i] times (a native kernel: the
    runs have data-dependent lengths)."""
    total = _total(repeats, output_size)
    shape = input._shape
    outer, n, inner = alloc.numel(shape[:d]), shape[d], alloc.numel(shape[d + 1:])
    src = input
    stride = _view_strides(shape, input._stride, (outer, n, inner))
    if stride is None:
        src = contiguous(input)
        stride = alloc.contiguous_strides((outer, n, inner))
    src = _make(src._storage, (outer, n, inner), stride, src._offset, src.dtype)
    res = alloc.empty(shape[:d] + (total,) + shape[d + 1:], input.dtype, input._storage.device)
    if res.numel():
        alloc.backend(res._storage.device).shape.repeat_interleave_copy(res, src, repeats)
    return res


def _repeat_index(repeats, output_size):
    if len(repeats._shape) != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    _check_repeats_dtype(repeats)
    total = _total(repeats, output_size)
    res = alloc.empty((total,), repeats.dtype, repeats._storage.device)
    alloc.backend(res._storage.device).shape.repeat_interleave_index(res, repeats)
    return res
