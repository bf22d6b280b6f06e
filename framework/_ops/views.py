"""View ops: new shape/stride/offset over the same storage, never a copy (except reshape
and contiguous when the layout requires one)."""
import builtins

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from . import alloc

_make = Tensor._make


def _view(base, shape, stride, offset):
    t = _make(base._storage, tuple(shape), tuple(stride), offset, base.dtype)
    t._base = base if base._base is None else base._base
    return t


def _dims(args):
    """Accepts f(2, 3), f((2, 3)) and f([2, 3]) like PyTorch's size arguments."""
    if len(args) == 1 and not isinstance(args[0], int):
        args = args[0]
    return tuple(builtins.int(a) for a in args)


def _infer_size(op, shape, numel):
    shape = list(shape)
    infer = [i for i, s in enumerate(shape) if s == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = 1
    for i, s in enumerate(shape):
        if i not in infer:
            known *= s
    if infer:
        if known == 0 or numel % known:
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
    shape, st = _view_layout("view", self, _dims(size))
    if st is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return _view(self, shape, st, self._offset)


def reshape(input, *shape):
    """A view with the given shape when possible, otherwise a contiguous copy."""
    shape, st = _view_layout("reshape", input, _dims(shape))
    if st is not None:
        return _view(input, shape, st, input._offset)
    return _reshape_copy(input, shape)


def _reshape_copy(input, shape):
    c = clone(input)
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
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
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
    d = _wrap_dim(dim, input.dim())
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    inner = _infer_size("unflatten", sizes, input._shape[d])
    return view(input, input._shape[:d] + inner + input._shape[d + 1:])


def squeeze(input, dim=None):
    """Removes dims of size 1 (all, or the given dim / dims)."""
    nd = input.dim()
    if dim is None:
        dims = [d for d in range(nd) if input._shape[d] == 1]
    else:
        dims = [_wrap_dim(d, nd) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))]
        dims = [d for d in dims if input._shape[d] == 1]
    shape = [s for d, s in enumerate(input._shape) if d not in dims]
    stride = [s for d, s in enumerate(input._stride) if d not in dims]
    return _view(input, shape, stride, input._offset)


def unsqueeze(input, dim):
    """Inserts a dim of size 1 at ``dim``."""
    d = _wrap_dim(dim, input.dim() + 1)
    shape, stride = list(input._shape), list(input._stride)
    st = shape[d] * stride[d] if d < len(shape) else 1
    shape.insert(d, 1)
    stride.insert(d, st)
    return _view(input, shape, stride, input._offset)


def transpose(input, dim0, dim1):
    """Swaps two dims."""
    nd = input.dim()
    a, b = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
    shape, stride = list(input._shape), list(input._stride)
    shape[a], shape[b] = shape[b], shape[a]
    stride[a], stride[b] = stride[b], stride[a]
    return _view(input, shape, stride, input._offset)


swapaxes = swapdims = transpose


def permute(input, *dims):
    """Reorders the dims."""
    dims = _dims(dims)
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
    return transpose(input, -2, -1)


def expand(self, *sizes):
    """Broadcasts size-1 dims to larger sizes (-1 keeps a size) without copying."""
    sizes = _dims(sizes)
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
    return _view(self, shape, stride, self._offset)


def expand_as(self, other):
    return expand(self, other._shape)


def broadcast_to(input, size):
    return expand(input, tuple(size))


def broadcast_tensors(*tensors):
    """Expands tensors to their common broadcast shape."""
    from .pointwise import broadcast_shapes
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*(t._shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def narrow(input, dim, start, length):
    """The slice [start, start+length) of one dim, as a view."""
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    start = builtins.int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    shape = list(input._shape)
    shape[d] = length
    return _view(input, shape, input._stride, input._offset + start * input._stride[d])


def select(input, dim, index):
    """The sub-tensor at ``index`` along ``dim`` (that dim removed)."""
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    index = builtins.int(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._shape)} at dimension {d}")
    if index < 0:
        index += size
    return _view(input, input._shape[:d] + input._shape[d + 1:],
                 input._stride[:d] + input._stride[d + 1:], input._offset + index * input._stride[d])


def unbind(input, dim=0):
    """The tuple of all slices along ``dim``."""
    d = _wrap_dim(dim, input.dim())
    return tuple(select(input, d, i) for i in range(input._shape[d]))


def split(tensor, split_size_or_sections, dim=0):
    """Splits into chunks of a given size, or of the given list of sizes."""
    d = _wrap_dim(dim, tensor.dim())
    size = tensor._shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and not (step == 0 and size == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        if size == 0:
            return (tensor,)
        return tuple(narrow(tensor, d, s, min(step, size - s)) for s in range(0, size, step))
    sections = [builtins.int(s) for s in split_size_or_sections]
    if sum(sections) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                           f"(input tensor's size at dimension {d}), but got split_sizes="
                           f"{sections}")
    out, start = [], 0
    for s in sections:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    """Splits into ``chunks`` nearly equal pieces (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input.dim())
    size = input._shape[d]
    step = max(1, -(-size // chunks))
    return split(input, step, d)


def movedim(input, source, destination):
    """Moves dims from ``source`` positions to ``destination`` positions."""
    nd = input.dim()
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(d, nd) for d in src]
    dst = [_wrap_dim(d, nd) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `source` or `destination`")
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, order)


moveaxis = movedim


def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit size, stride and storage offset (no bounds beyond storage)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    off = input._offset if storage_offset is None else storage_offset
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    need = off + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    if need * input.dtype.itemsize > input._storage.nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {off}, and itemsize {input.dtype.itemsize} requiring a "
                           f"storage size of {need * input.dtype.itemsize} are out of bounds "
                           f"for storage of size {input._storage.nbytes}")
    return _view(input, size, stride, off)


def unfold(self, dimension, size, step):
    """All slices of length ``size`` along ``dimension`` taken every ``step``, as a new
    last dim."""
    nd = self.dim()
    d = _wrap_dim(dimension, nd) if nd else 0
    cur = self._shape[d] if nd else 1
    if size > cur:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {cur} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, stride = list(self._shape), list(self._stride)
    if nd == 0:
        return _view(self, [size], [1], self._offset)
    shape[d] = (cur - size) // step + 1
    inner = stride[d]
    stride[d] = step * inner
    return _view(self, shape + [size], stride + [inner], self._offset)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the (dim1, dim2) matrices as a view, in a new last dim."""
    nd = input.dim()
    a, b = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
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
    return _view(input, shape, stride, off)


def contiguous(input, memory_format=None):
    """Self if already contiguous, else a contiguous copy."""
    return input if input.is_contiguous() else clone(input)


def clone(input, *, memory_format=None):
    """A copy with its own (contiguous) memory."""
    out = alloc.empty(input._shape, input.dtype, input._storage.device)
    alloc.backend(out._storage.device).copy.copy(out, input, input._stride)
    return out


def copy_(self, src, non_blocking=False):
    """Copies ``src`` (broadcast, converted) into self; returns self."""
    from .pointwise import expand_strides, broadcast_shapes, as_operand
    if not isinstance(src, Tensor):
        return fill_(self, src)
    if broadcast_shapes(self._shape, src._shape) != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                           f"shape {list(broadcast_shapes(self._shape, src._shape))}")
    if src._storage.device is not self._storage.device:
        from .creation import to_device
        src = to_device(src, self._storage.device, non_blocking=non_blocking)
    if src._storage is self._storage and _overlaps(self, src):
        src = clone(src)
    self._storage.version += 1
    alloc.backend(self._storage.device).copy.copy(self, src, expand_strides(src, self._shape))
    return self


def _overlaps(a, b):
    if a.is_set_to(b):
        return False

    def span(t):
        lo = t._offset
        hi = lo + sum((n - 1) * s for n, s in zip(t._shape, t._stride)) + 1
        return lo * t.dtype.itemsize, hi * t.dtype.itemsize
    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


def fill_(self, value):
    """Fills self with a number (or a 0-d tensor's value)."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        value = value.item()
    self._storage.version += 1
    alloc.backend(self._storage.device).copy.fill(self, value)
    return self


def zero_(self):
    return fill_(self, 0)


def resize_(self, *sizes, memory_format=None):
    """Changes the shape in place, re-allocating storage when it needs to grow."""
    shape = _dims(sizes)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    n = alloc.numel(shape)
    need = (self._offset + n) * self.dtype.itemsize
    if need > self._storage.nbytes:
        new = alloc.storage(need, self._storage.device)
        old = self._storage
        if old.nbytes:
            _copy_bytes(new, old, min(old.nbytes, need))
        new.version = old.version
        self._storage = new
    self._shape = shape
    self._stride = alloc.contiguous_strides(shape)
    return self


def _copy_bytes(dst, src, nbytes):
    from .. import _dtype
    d = _make(dst, (nbytes,), (1,), 0, _dtype.uint8)
    s = _make(src, (nbytes,), (1,), 0, _dtype.uint8)
    alloc.backend(dst.device).copy.copy(d, s, (1,))


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, the_template._shape)


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


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Makes self share ``source``'s storage (Triton's interpreter uses this)."""
    if source is None:
        self._storage = alloc.storage(0, self._storage.device)
        self._shape, self._stride, self._offset = (0,), (1,), 0
        return self
    if isinstance(source, Tensor):
        self._storage = source._storage
        if size is None:
            self._shape, self._stride, self._offset = source._shape, source._stride, source._offset
            return self
    else:
        self._storage = source._s if hasattr(source, "_s") else source
    self._shape = tuple(size)
    self._stride = tuple(stride) if stride is not None else alloc.contiguous_strides(self._shape)
    self._offset = storage_offset
    return self
