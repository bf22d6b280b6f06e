"""View ops: new shape/stride/offset over the same storage, never a copy (except reshape
and contiguous when the layout requires one)."""
import builtins
import operator

from .. import _determinism, _dtype
from .._tensor import Tensor, _wrap_dim
from . import alloc, args, overlap
from . import memory_format as _memory_format

_make = Tensor._make


def _view(base, shape, stride, offset):
    t = _make(base._storage, tuple(shape), tuple(stride), offset, base.dtype)
    t._base = base if base._base is None else base._base
    return t


def _checked_view(base, shape, stride, offset):
    """A view of ``base``'s storage after checking that all of it lies inside the storage
    (args.check_geometry): every view op whose geometry comes from the user's numbers
    goes through here."""
    args.check_geometry(shape, stride, offset, base.dtype.itemsize, base._storage.nbytes)
    return _view(base, shape, stride, offset)


def _dims(op, sizes, name="size"):
    """Accepts f(2, 3), f((2, 3)) and f([2, 3]) like PyTorch's size arguments (ints only)."""
    return args.int_list(op, name, sizes, 1)


def _infer_size(op, shape, numel):
    shape = list(shape)
    infer = [i for i, s in enumerate(shape) if s == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{_fmt(shape)}")
    known = 1
    for i, s in enumerate(shape):
        if i not in infer:
            known *= s
    if infer:
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} "
                               f"because the unspecified dimension size -1 can be any value "
                               f"and is ambiguous")
        if numel % known:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[infer[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _fmt(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _view_strides(shape, stride, new_shape):
    """Strides that view ``shape/stride`` as ``new_shape`` without copying, or None
    (PyTorch's computeStride: split the old dims into contiguous chunks)."""
    if not shape:
        return alloc.contiguous_strides(new_shape)
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0:
        return alloc.contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = stride[-1]
    tensor_numel, view_numel = 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and stride[d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base_stride = stride[d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(new_stride)


_LAYOUTS = {}


def _view_layout(op, t, dims):
    """(shape, strides or None) of viewing ``t`` with the requested ``dims`` (-1 inferred).
    Memoized: a program takes the same few views again and again."""
    key = (t._shape, t._stride, dims)
    r = _LAYOUTS.get(key)
    if r is None:
        shape = _infer_size(op, dims, t.numel())
        r = alloc.remember(_LAYOUTS, key, (shape, _view_strides(t._shape, t._stride, shape)))
    return r


def view(self, *size):
    """A view with another shape; fails if the strides don't allow it."""
    if len(size) == 1 and isinstance(size[0], _dtype.dtype):
        from .creation import view_dtype
        return view_dtype(self, size[0])
    shape, st = _view_layout("view", self, _dims("view", size))
    if st is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return _view(self, shape, st, self._offset)


def reshape(input, *shape):
    """A view with the given shape when possible, otherwise a contiguous copy."""
    shape, st = _view_layout("reshape", input, _dims("reshape", shape, "shape"))
    if st is not None:
        return _view(input, shape, st, input._offset)
    return _reshape_copy(input, shape)


def _reshape_copy(input, shape):
    c = clone(input, memory_format=_memory_format.contiguous_format)
    return _make(c._storage, shape, alloc.contiguous_strides(shape), 0, c.dtype)


def view_as(self, other):
    return view(self, other._shape)


def reshape_as(self, other):
    return reshape(self, other._shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Flattens dims start_dim..end_dim into one."""
    nd = input.dim()
    if nd == 0:
        return reshape(input, (1,))
    s = _wrap_dim(start_dim, nd, "flatten", "start_dim", 1)
    e = _wrap_dim(end_dim, nd, "flatten", "end_dim", 2)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    n = 1
    for d in range(s, e + 1):
        n *= input._shape[d]
    return reshape(input, input._shape[:s] + (n,) + input._shape[e + 1:])


def unflatten(input, dim, sizes):
    """Expands one dim into ``sizes`` (one entry may be -1)."""
    d = _wrap_dim(dim, input.dim(), "unflatten")
    sizes = args.int_tuple("unflatten", "sizes", sizes, 2)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    n = input._shape[d]
    if -1 not in sizes and known != n or -1 in sizes and (known == 0 or n % known):
        raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the "
                           f"size of dim {d} ({n}) in the input tensor")
    inner = _infer_size("unflatten", sizes, n)
    return view(input, input._shape[:d] + inner + input._shape[d + 1:])


def squeeze(input, dim=None):
    """Removes dims of size 1 (all, or the given dim / dims)."""
    nd = input.dim()
    if dim is None:
        dims = [d for d in range(nd) if input._shape[d] == 1]
    else:
        dims = [_wrap_dim(d, nd, "squeeze") for d in
                (dim if isinstance(dim, (tuple, list)) else (dim,))]
        if len(set(dims)) != len(dims):
            d = next(d for i, d in enumerate(dims) if d in dims[:i])
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        # a 0-d tensor takes dim 0 or -1 and stays as it is
        dims = [d for d in dims if nd and input._shape[d] == 1]
    shape = [s for d, s in enumerate(input._shape) if d not in dims]
    stride = [s for d, s in enumerate(input._stride) if d not in dims]
    return _view(input, shape, stride, input._offset)


def unsqueeze(input, dim):
    """Inserts a dim of size 1 at ``dim``."""
    d = _wrap_dim(dim, input.dim() + 1, "unsqueeze", "dim", 1)
    shape, stride = list(input._shape), list(input._stride)
    st = shape[d] * stride[d] if d < len(shape) else 1
    shape.insert(d, 1)
    stride.insert(d, st)
    return _view(input, shape, stride, input._offset)


def transpose(input, dim0, dim1):
    """Swaps two dims."""
    nd = input.dim()
    a = _wrap_dim(dim0, nd, "transpose", "dim0", 1)
    b = _wrap_dim(dim1, nd, "transpose", "dim1", 2)
    shape, stride = list(input._shape), list(input._stride)
    if not nd:      # transpose(0, 0) of a 0-d tensor: the same view
        return _view(input, shape, stride, input._offset)
    shape[a], shape[b] = shape[b], shape[a]
    stride[a], stride[b] = stride[b], stride[a]
    return _view(input, shape, stride, input._offset)


swapaxes = swapdims = transpose


_PERMUTATIONS = {}   # (rank, dims) -> itemgetter of the dims, for dims checked once


def permute(input, *dims):
    """Reorders the dims."""
    if len(dims) == 1 and dims[0].__class__ in (tuple, list):
        dims = tuple(dims[0])
    shape, stride = input._shape, input._stride
    nd = len(shape)
    try:
        pick = _PERMUTATIONS.get((nd, dims))
    except TypeError:    # unhashable dims: the checks below raise PyTorch's error
        pick = None
    if pick is not None:
        for d in dims:   # (1.0 and True hash as 1 does: the cache holds ints only)
            if d.__class__ is not int:
                pick = None
                break
    if pick is None and nd > 1 and len(dims) == nd:
        # the common call: ints in range, each once; remembered as an itemgetter
        wrapped = [d + nd if d < 0 else d for d in dims
                   if d.__class__ is int and -nd <= d < nd]
        if len(wrapped) == nd and len(set(wrapped)) == nd:
            pick = alloc.remember(_PERMUTATIONS, (nd, dims), operator.itemgetter(*wrapped))
    if pick is not None:
        t = _make(input._storage, pick(shape), pick(stride), input._offset, input.dtype)
        t._base = input if input._base is None else input._base
        return t
    dims = _dims("permute", dims, "dims")
    nd = input.dim()
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}"
                           .replace("(sparse_coo)", ""))
    wrapped = [_wrap_dim(d, nd) for d in dims]
    if len(set(wrapped)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view(input, [input._shape[d] for d in wrapped], [input._stride[d] for d in wrapped],
                 input._offset)


def t(input):
    """Transposes a tensor of at most 2 dims."""
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.dim()}D")
    return transpose(input, 0, 1) if input.dim() == 2 else input


def adjoint(input):
    """The conjugate transpose of the last two dims (a view for real tensors; conj()
    computes the conjugate of complex ones)."""
    t = transpose(input, -2, -1)
    return t.conj() if input.dtype.is_complex else t


def expand(self, *sizes):
    """Broadcasts size-1 dims to larger sizes (-1 keeps a size) without copying."""
    sizes = _dims("expand", sizes)
    nd, n = self.dim(), len(sizes)
    if n < nd:
        raise RuntimeError(f"expand({self.type()}{{{list(self._shape)}}}, size={list(sizes)}): "
                           f"the number of sizes provided ({n}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({nd})")
    shape, stride = [], []
    for i, s in enumerate(sizes):
        d = i - (n - nd)
        if d < 0:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            shape.append(s)
            stride.append(0)
            continue
        cur = self._shape[d]
        if s == -1:
            s = cur
        if cur == s:
            shape.append(s)
            stride.append(self._stride[d])
        elif cur == 1:
            shape.append(s)
            stride.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(self._shape)}")
    return _checked_view(self, shape, stride, self._offset)


def expand_as(self, other):
    return expand(self, other._shape)


def broadcast_to(input, size):
    return expand(input, _dims("broadcast_to", (size,)))


def broadcast_tensors(*tensors):
    """Expands tensors to their common broadcast shape."""
    from .pointwise import broadcast_shapes
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*(t._shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


_NARROW = ("int dim, Tensor start, int length", "int dim, int start, int length")


def narrow(input, dim, start, length):
    """The slice [start, start+length) of one dim, as a view."""
    if isinstance(start, Tensor) and (start.dim() or start.dtype.category != 1):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    try:
        start = args.to_int("narrow", "start", start, 2)
        length = args.to_int("narrow", "length", length, 3)
        if dim.__class__ is not int:
            dim = args.to_int("narrow", "dim", dim, 1)
    except TypeError:
        raise args.invalid_combination("narrow", (dim, start, length), _NARROW) from None
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    shape = list(input._shape)
    shape[d] = length
    return _checked_view(input, shape, input._stride, input._offset + start * input._stride[d])


def select(input, dim, index):
    """The sub-tensor at ``index`` along ``dim`` (that dim removed)."""
    index = args.to_int("select", "index", index, 2)
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim(), "select", "dim", 1)
    size = input._shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._shape)} at dimension {d}")
    if index < 0:
        index += size
    return _checked_view(input, input._shape[:d] + input._shape[d + 1:],
                         input._stride[:d] + input._stride[d + 1:],
                         input._offset + index * input._stride[d])


def unbind(input, dim=0):
    """The tuple of all slices along ``dim``."""
    d = _wrap_dim(dim, input.dim(), "unbind", "dim", 1)
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return tuple(select(input, d, i) for i in range(input._shape[d]))


def split(tensor, split_size_or_sections, dim=0):
    """Splits into chunks of a given size, or of the given list of sizes."""
    if not isinstance(split_size_or_sections, (list, tuple)):
        step = args.to_int("split", "split_size", split_size_or_sections, 1)
        if tensor.dim() == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={step}")
        d = _wrap_dim(dim, tensor.dim(), "split")
        size = tensor._shape[d]
        if step == 0 and size != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        if size == 0:
            return (tensor,)
        return tuple(narrow(tensor, d, s, min(step, size - s)) for s in range(0, size, step))
    sections = list(args.int_list("split_with_sizes", "split_sizes", (split_size_or_sections,)))
    if tensor.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor.dim(), "split")
    size = tensor._shape[d]
    if any(s < 0 for s in sections):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sections}")
    if sum(sections) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                           f"(input tensor's size at dimension {d}), but got split_sizes="
                           f"{sections}")
    out, start = [], 0
    for s in sections:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def split_method(self, split_size, dim=0):
    """``Tensor.split(split_size, dim=0)``: the method names its size ``split_size``
    (``x.split(split_size=[a, b], dim=-1)`` in Mamba's reference code)."""
    from . import dispatcher
    return dispatcher.function("split")(self, split_size, dim)   # the recorded op


split_method.__name__, split_method.__qualname__ = "split", "Tensor.split"  # in TypeErrors


def chunk(input, chunks, dim=0):
    """Splits into ``chunks`` nearly equal pieces (the last may be smaller)."""
    chunks = args.to_int("chunk", "chunks", chunks, 1)
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input.dim(), "chunk")
    size = input._shape[d]
    if size == 0:       # PyTorch gives `chunks` empty pieces (split would give one)
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-size // chunks), d)


def movedim(input, source, destination):
    """Moves dims from ``source`` positions to ``destination`` positions."""
    nd = input.dim()
    src = list(source) if isinstance(source, (tuple, list)) else [source]
    dst = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(d, nd, "movedim", "source", 1) for d in src]
    dst = [_wrap_dim(d, nd, "movedim", "destination", 2) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if not nd:
        return permute(input, [])
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, order)


moveaxis = movedim


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit size, stride and storage offset, inside the storage."""
    size = args.int_tuple("as_strided", "size", size, 1)
    stride = args.int_tuple("as_strided", "stride", stride, 2)
    off = input._offset if storage_offset is None else \
        args.to_int("as_strided", "storage_offset", storage_offset, 3)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    return _checked_view(input, size, stride, off)


def unfold(self, dimension, size, step):
    """All slices of length ``size`` along ``dimension`` taken every ``step``, as a new
    last dim."""
    size = args.to_int("unfold", "size", size, 2)
    step = args.to_int("unfold", "step", step, 3)
    nd = self.dim()
    d = _wrap_dim(dimension, nd, "unfold", "dimension", 1)
    cur = self._shape[d] if nd else 1
    if size > cur:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {cur} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if nd == 0:
        return _checked_view(self, (size,), (1,), self._offset)
    shape, stride = list(self._shape), list(self._stride)
    shape[d] = (cur - size) // step + 1
    inner = stride[d]
    stride[d] = step * inner
    return _checked_view(self, tuple(shape) + (size,), tuple(stride) + (inner,), self._offset)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the (dim1, dim2) matrices as a view, in a new last dim."""
    offset = args.to_int("diagonal", "offset", offset, 1)
    nd = input.dim()
    a = _wrap_dim(dim1, nd, "diagonal", "dim1", 2)
    b = _wrap_dim(dim2, nd, "diagonal", "dim2", 3)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    off = input._offset
    if offset >= 0:
        n = max(0, min(input._shape[a], input._shape[b] - offset))
        off += offset * input._stride[b] if n else 0
    else:
        n = max(0, min(input._shape[a] + offset, input._shape[b]))
        off += -offset * input._stride[a] if n else 0
    shape = [s for i, s in enumerate(input._shape) if i not in (a, b)] + [n]
    stride = [s for i, s in enumerate(input._stride) if i not in (a, b)]
    stride.append(input._stride[a] + input._stride[b])
    return _checked_view(input, tuple(shape), tuple(stride), off)


def contiguous(input, memory_format=None):
    """Self if already contiguous in ``memory_format`` (default contiguous_format), else
    a copy that is."""
    fmt = _memory_format.contiguous_format if memory_format is None else memory_format
    if fmt is _memory_format.contiguous_format:   # the common call: the row-major test
        if input.is_contiguous():
            return input
    elif input.is_contiguous(memory_format=fmt):
        return input
    return clone(input, memory_format=fmt)


def clone(input, *, memory_format=None):
    """A copy with its own memory, in input's layout (preserve_format) unless
    ``memory_format`` says otherwise."""
    device = input._storage.device
    if memory_format is None and input._stride == alloc.contiguous_strides(input._shape):
        out = alloc.empty(input._shape, input.dtype, device)
    else:
        out = _memory_format.empty_like(input, input.dtype, device, memory_format, "clone")
    alloc.backend(device).copy.copy(out, input, input._stride)
    return out


def copy_(self, src, non_blocking=False):
    """Copies ``src`` (broadcast, converted) into self; returns self."""
    from .pointwise import expand_strides, broadcast_shapes
    if not isinstance(src, Tensor):
        return fill_(self, src)
    if broadcast_shapes(self._shape, src._shape) != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                           f"shape {list(broadcast_shapes(self._shape, src._shape))}")
    if src._storage.device is not self._storage.device:
        from .creation import to_device
        src = to_device(src, self._storage.device, non_blocking=non_blocking)
    overlap.check_internal(self)
    if self._storage is src._storage:
        overlap.check_partial(self, src)
        if overlap.overlap(self, src) is overlap.TOO_HARD:
            src = clone(src)    # a layout PyTorch lets through: read all of src first
    self._storage.version += 1
    alloc.backend(self._storage.device).copy.copy(self, src, expand_strides(src, self._shape))
    return self


def fill_(self, value):
    """Fills self with a number (or a 0-d tensor's value)."""
    return _fill(self, value, self.numel())


def assign_(self, value):
    """``self[...] = value`` for a number: PyTorch converts it as a one-element tensor and
    copies that, so a 16- or 8-bit float takes any value (inf, or float8's saturation)."""
    return _fill(self, value, 1)


def _fill(self, value, numel):
    """fill_, the value range-checked as for a fill of ``numel`` elements."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        value = value.item()
        if self.dtype.is_float8:    # a float8 fill from a tensor is a cast (saturates)
            numel = 1
    elif value.__class__ is not builtins.float and value.__class__ is not builtins.int:
        value = args.scalar("fill_", "value", value)
    value = args.check_fill(value, self.dtype, numel)
    self._storage.version += 1
    alloc.backend(self._storage.device).copy.fill(self, value)
    return self


def zero_(self):
    return fill_(self, 0)


def resize_(self, *sizes, memory_format=None):
    """Changes the shape in place, re-allocating storage when it needs to grow."""
    shape = _dims("resize_", sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    args.numel(shape)
    item = self.dtype.itemsize
    need = args.storage_nbytes(shape, item)
    if need:
        need += self._offset * item
        if need > args.INT64_MAX:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if need > self._storage.nbytes:
        new = alloc.storage(need, self._storage.device)
        old = self._storage
        if old.nbytes:
            _copy_bytes(new, old, min(old.nbytes, need))
        new.version = old.version
        self._storage = new
        if _determinism._enabled:
            _fill_grown(self, old.nbytes, need)
    self._shape = shape
    self._stride = alloc.contiguous_strides(shape)
    if memory_format is not None and memory_format is not _memory_format.contiguous_format:
        _memory_format.check("resize_", memory_format)
        if memory_format is _memory_format.preserve_format:
            raise RuntimeError("Unsupported memory formatPreserve")     # PyTorch's text
        self._stride = _memory_format.format_strides("resize_", shape, memory_format)
    return self


def _fill_grown(t, old_nbytes, new_nbytes):
    """The elements resize_ added, filled as deterministic mode fills uninitialized
    memory (PyTorch fills the storage past its old end)."""
    item = t.dtype.itemsize
    start = -(-old_nbytes // item)
    n = new_nbytes // item - start
    if n > 0:
        _determinism.fill_uninitialized(_make(t._storage, (n,), (1,), start, t.dtype))


def _copy_bytes(dst, src, nbytes):
    from .. import _dtype
    d = _make(dst, (nbytes,), (1,), 0, _dtype.uint8)
    s = _make(src, (nbytes,), (1,), 0, _dtype.uint8)
    alloc.backend(dst.device).copy.copy(d, s, (1,))


def resize_as_(self, the_template, memory_format=None):
    if memory_format is _memory_format.preserve_format:     # the template's layout
        memory_format = _memory_format.suggest(the_template)
    return resize_(self, the_template._shape, memory_format=memory_format)


def squeeze_(self, dim=None):
    return _set_view(self, squeeze(self, dim))


def unsqueeze_(self, dim):
    return _set_view(self, unsqueeze(self, dim))


def transpose_(self, dim0, dim1):
    return _set_view(self, transpose(self, dim0, dim1))


def t_(self):
    return _set_view(self, t(self))


def as_strided_(self, size, stride, storage_offset=None):
    return _set_view(self, as_strided(self, size, stride, storage_offset))


def _set_view(self, v):
    self._shape, self._stride, self._offset = v._shape, v._stride, v._offset
    return self


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """Makes self a view of ``source`` (a tensor or a storage), whole or with the given
    offset, size and stride, checked against the storage (Triton's interpreter uses this).
    A storage too small raises (PyTorch would grow it in place)."""
    if source is None:
        self._storage = alloc.storage(0, self._storage.device)
        self._shape, self._stride, self._offset = (0,), (1,), 0
        return self
    item = self.dtype.itemsize
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            from .pointwise import cpp_type_name
            raise RuntimeError(f"Could not set tensor of type {cpp_type_name(source.dtype)} to "
                               f"a tensor of type {cpp_type_name(self.dtype)}")
        storage = source._storage
        if size is None and storage_offset is None:
            geometry = source._shape, source._stride, source._offset
    else:
        storage = source._s if hasattr(source, "_s") else source
        if size is None and storage_offset is None:
            geometry = (storage.nbytes // item,), (1,), 0
    if size is not None or storage_offset is not None:
        if size is None or storage_offset is None:
            raise TypeError("set_() received an invalid combination of arguments: "
                            "storage_offset and size go together")
        offset = args.to_int("set_", "storage_offset", storage_offset, 2)
        shape = args.int_tuple("set_", "size", size, 3)
        stride = alloc.contiguous_strides(shape) if stride is None else \
            args.int_tuple("set_", "stride", stride, 4)
        if len(shape) != len(stride):
            raise RuntimeError(f"unequal size length ({len(shape)}) and stride length "
                               f"({len(stride)})")
        geometry = shape, stride, offset
        if offset >= 0 and any(n < 0 for n in shape):     # PyTorch checks this first here
            raise RuntimeError("numel: integer multiplication overflow")
    # negative strides (PyTorch refuses them) only from our own views, by the interpreter
    args.check_geometry(*geometry, item, storage.nbytes,
                        negative_strides=getattr(source, "host_alias", False))
    self._storage = storage
    self._shape, self._stride, self._offset = geometry
    return self
