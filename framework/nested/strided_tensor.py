"""Nested tensors with the strided layout (PyTorch's default ``torch.nested`` layout).

A strided nested tensor is a batch of dense tensors of the same number of dims whose sizes
may differ in any dim ((2, 5) and (3, 4)). Here it holds the components themselves, as
ordinary tensors: ops run on each component through the dense ops (so autograd records them
as usual and gradients reach the components), and ``backward(gradient)`` hands each
component its part of ``gradient``. ``size(i)`` of a dim where the components differ raises,
as does ``shape``, as in PyTorch.
"""
from .. import overrides as _overrides
from .._ops.memory_format import strided
from .._tensor import Tensor, _new, _wrap_dim
from ..sparse.base import _NoStorage, _guard
from .tensor import NestedStorageless


class StridedNestedTensor(NestedStorageless, Tensor):
    """A strided-layout nested tensor (made by ``framework.nested.nested_tensor`` and
    ``as_nested_tensor``; not created directly)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("nested tensors are made by framework.nested.nested_tensor or "
                        "as_nested_tensor")

    @staticmethod
    def make(components, device=None, dtype=None):
        """A nested tensor of ``components`` (no copy, no checks); ``device``/``dtype``
        only matter when there are none."""
        import framework
        if not _overrides._active:
            _enable_protocol()
        components = tuple(components)
        t = _new(StridedNestedTensor)
        t.__dict__["_components"] = components
        if components:
            device, dtype = components[0].device, components[0].dtype
        t._storage = _NoStorage(framework.device(device or "cpu"))
        t.dtype = dtype or framework.get_default_dtype()
        # the regular sizes, None where the components differ (size(i) raises there)
        n = components[0].dim() if components else 0
        sizes = [len(components)]
        for d in range(n):
            s = {c.shape[d] for c in components}
            sizes.append(s.pop() if len(s) == 1 else None)
        t._shape = tuple(sizes)
        # autograd runs on the components; the nested tensor's own fields stay unset
        t._requires_grad, t._grad, t._grad_fn = False, None, None
        t._output_nr = 0
        t._base = None
        return t

    def _like(self, components):
        return StridedNestedTensor.make(components, self.device, self.dtype)

    # dense kernels and views read these first: a dense op given a nested tensor raises
    _stride = property(_guard)
    _offset = property(_guard)

    def _backend_name(self):
        return "NestedTensor" + ("CUDA" if self._storage.device.type == "cuda" else "CPU")

    # ---- metadata ----------------------------------------------------------------------
    layout = strided
    is_nested = True

    @property
    def shape(self):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                           "file an issue.")

    def size(self, dim=None):
        """The size of dim ``dim`` where all components agree on it (``size()`` raises, as
        the sizes are irregular in general)."""
        if dim is None:
            return self.shape
        d = _wrap_dim(dim, self.dim(), "size", "dim", 1)
        s = self._shape[d]
        if s is None:
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return s

    def dim(self):
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._shape)

    def numel(self):
        return sum(c.numel() for c in self._components)

    nelement = numel

    def stride(self, dim=None):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please "
                           "file an issue.")

    def is_contiguous(self, memory_format=None):
        return all(c.is_contiguous() for c in self._components)

    def numpy(self, *, force=False):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                           "file an issue.")

    def tolist(self):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please "
                           "file an issue.")

    def item(self):
        raise RuntimeError("item(): not supported for NestedTensor")

    def __len__(self):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                           "file an issue.")

    def __iter__(self):
        return iter(self._components)

    def __getitem__(self, index):
        """``nt[i]`` (component ``i``) and ``nt[i, ...]`` (indexing into it)."""
        rest = ()
        if isinstance(index, tuple) and index:
            index, rest = index[0], index[1:]
        if isinstance(index, bool) or not isinstance(index, int) and not (
                isinstance(index, Tensor) and index.dim() == 0
                and not index.dtype.is_floating_point):
            raise NotImplementedError("NestedTensor indexing: only an integer index on the "
                                      "batch dim is supported")
        c = self._components[_wrap_dim(int(index), len(self._components))]
        return c[rest] if rest else c

    def __repr__(self):
        body = ",\n".join("  " + repr(c).replace("\n", "\n  ") for c in self._components)
        tail = ", requires_grad=True" if self.requires_grad and self.is_leaf else ""
        return f"nested_tensor([\n{body}\n]{tail})"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)

    def __bool__(self):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")

    def __hash__(self):
        return id(self)

    # ---- autograd: that of the components ---------------------------------------------
    @property
    def requires_grad(self):
        return any(c.requires_grad for c in self._components)

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Sets whether autograd records operations on this (leaf) nested tensor."""
        for c in self._components:
            c.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return next((c.grad_fn for c in self._components if c.grad_fn is not None), None)

    @property
    def is_leaf(self):
        return all(c.is_leaf for c in self._components)

    @property
    def grad(self):
        gs = [c._grad for c in self._components]
        if all(g is None for g in gs):
            return None
        return self._like([c.new_zeros(c.shape) if g is None else g
                           for c, g in zip(self._components, gs)])

    @grad.setter
    def grad(self, value):
        for i, c in enumerate(self._components):
            c.grad = None if value is None else value._components[i]

    def retain_grad(self):
        for c in self._components:
            c.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Backward from this nested tensor; ``gradient``: a nested tensor of its sizes."""
        from .. import autograd
        if gradient is None:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        _check_same(self, gradient, "backward")
        pairs = [(c, g) for c, g in zip(self._components, gradient._components)
                 if c.requires_grad]
        if not pairs:
            raise RuntimeError("element 0 of tensors does not require grad and does not "
                               "have a grad_fn")
        autograd.backward([c for c, _ in pairs], [g for _, g in pairs], retain_graph,
                          create_graph, inputs=inputs)

    def detach(self):
        return self._like([c.detach() for c in self._components])

    def clone(self, *, memory_format=None):
        return self._like([c.clone() for c in self._components])

    def contiguous(self, memory_format=None):
        return self._like([c.contiguous() for c in self._components])

    def to(self, *args, **kwargs):
        """``to(device/dtype)`` of each component."""
        cs = [c.to(*args, **kwargs) for c in self._components]
        if all(a is b for a, b in zip(cs, self._components)):
            return self
        return self._like(cs)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self._like([c.float() for c in self._components])

    def double(self):
        return self._like([c.double() for c in self._components])

    def half(self):
        return self._like([c.half() for c in self._components])

    def bfloat16(self):
        return self._like([c.bfloat16() for c in self._components])

    def type_as(self, other):
        return self.to(dtype=other.dtype)

    def __deepcopy__(self, memo):
        out = self.detach().clone()
        out.requires_grad_(self.requires_grad and self.is_leaf)
        memo[id(self)] = out
        return out

    def unbind(self, dim=0):
        """The components."""
        if _wrap_dim(dim, self.dim()) != 0:
            raise RuntimeError("NestedTensor can only be unbound along dimension 0 got "
                               f"dimension {dim} instead.")
        return self._components

    def narrow(self, dim, start, length):
        """The components ``start:start + length`` (only dim 0 is supported)."""
        if dim != 0:
            raise RuntimeError(f"narrow(): only dim=0 supported for nested tensors, but got: "
                               f"{dim}")
        n = len(self._components)
        start = start + n if start < 0 else start
        if not 0 <= start <= n or length < 0 or start + length > n:
            raise IndexError(f"narrow(): start ({start}) + length ({length}) exceeds dimension "
                             f"size ({n}).")
        return self._like(self._components[start:start + length])

    def to_padded_tensor(self, padding, output_size=None):
        """A dense tensor with each component padded with ``padding`` at the end of every
        dim to the largest size (or to ``output_size``)."""
        return to_padded(self, padding, output_size)


# ---- helpers -----------------------------------------------------------------------------------
def _check_same(a, b, op):
    """``a`` and ``b``: nested tensors whose components have the same sizes."""
    if not isinstance(b, StridedNestedTensor):
        raise RuntimeError(f"{op}(): expected a nested tensor with the strided layout, but got "
                           f"{type(b).__name__}")
    if len(a._components) != len(b._components) or any(
            x.shape != y.shape for x, y in zip(a._components, b._components)):
        raise RuntimeError(f"{op}(): expected nested tensors with the same sizes, but got "
                           f"{_sizes(a)} and {_sizes(b)}")


def _sizes(nt):
    return [tuple(c.shape) for c in nt._components]


def to_padded(nt, padding, output_size=None):
    """The dense (B, max sizes...) tensor of ``nt``'s components padded with ``padding``
    (differentiable with respect to the components)."""
    import framework
    import framework.nn.functional as F
    n = nt.dim()
    if output_size is not None:
        output_size = tuple(output_size)
        if len(output_size) != n:
            raise RuntimeError("Length of output_size does not match NestedTensor dims. "
                               "Broadcasting is not supported.")
    if not nt._components:
        return framework.empty(output_size or (0,), dtype=nt.dtype, device=nt.device)
    sizes = [max(c.shape[d] for c in nt._components) for d in range(n - 1)]
    if output_size is not None:
        if output_size[0] < len(nt._components) or any(
                o < s for o, s in zip(output_size[1:], sizes)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        sizes = list(output_size[1:])
    parts = []
    for c in nt._components:
        pad = []
        for d in reversed(range(c.dim())):
            pad += [0, sizes[d] - c.shape[d]]
        parts.append(F.pad(c, pad, value=padding) if any(pad) else c)
    out = framework.stack(parts)
    if output_size is not None and output_size[0] > out.shape[0]:
        extra = out.new_full((output_size[0] - out.shape[0],) + tuple(sizes), padding)
        out = framework.cat([out, extra])
    return out


def from_list(ts, dtype, device, op):
    """The components of ``ts`` (tensors or data) as tensors of one dtype and device."""
    import framework
    ts = list(ts)
    if any(isinstance(t, Tensor) and t.is_nested for t in ts):
        raise RuntimeError(f"{op}(): expected a list of dense tensors")
    first = next((t for t in ts if isinstance(t, Tensor)), None)
    if dtype is None and first is not None and isinstance(ts[0], Tensor):
        dtype = ts[0].dtype
    ts = [t if isinstance(t, Tensor) else framework.tensor(t, dtype=dtype) for t in ts]
    for i, t in enumerate(ts):
        if t.dim() != ts[0].dim():
            raise RuntimeError("All Tensors given to nested_tensor must have the same "
                               f"dimension. Found dimension {t.dim()} for Tensor at index "
                               f"{i} and dimension {ts[0].dim()} for Tensor at index 0.")
    if ts:
        dtype = ts[0].dtype if dtype is None else dtype
        device = ts[0].device if device is None else device
    return [t.to(device=device, dtype=dtype) for t in ts], dtype, device


def nested_from_list(ts, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``nested_tensor(ts)``: a leaf nested tensor holding copies of ``ts``."""
    cs, dtype, device = from_list(ts, dtype, device, "nested_tensor")
    cs = [c.detach().clone() for c in cs]
    if pin_memory:
        cs = [c.pin_memory() for c in cs]
    nt = StridedNestedTensor.make(cs, device, dtype)
    return nt.requires_grad_(True) if requires_grad else nt


def as_nested(ts, dtype=None, device=None):
    """``as_nested_tensor(ts)``: copies of a list of tensors keeping their history, or the
    (B, ...) tensor ``ts`` seen as B components (views of it)."""
    if isinstance(ts, Tensor):
        if ts.dim() < 1:
            raise RuntimeError("as_nested_tensor(): expected a tensor with at least 1 dim, "
                               f"but got shape {tuple(ts.shape)}")
        t = ts.to(device=device or ts.device, dtype=dtype or ts.dtype)
        return StridedNestedTensor.make(t.unbind(0), t.device, t.dtype)
    if not isinstance(ts, (list, tuple)):
        raise TypeError("as_nested_tensor(): Expected ts to be a tensor or a list of tensors, "
                        f"but got {type(ts).__name__}")
    cs, dtype, device = from_list(ts, dtype, device, "as_nested_tensor")
    return StridedNestedTensor.make([c.clone() if any(c is t for t in ts) else c
                                     for c in cs], device, dtype)


def narrow(tensor, dim, start, length):
    """``narrow(layout=strided)``: copies of the batch entries ``start:start + length`` of
    ``tensor`` (integer ``start`` and ``length``; only dim 0, as in PyTorch)."""
    if isinstance(start, Tensor) or isinstance(length, Tensor):
        raise RuntimeError("start and length must be integers for the strided layout NT impl")
    return as_nested(list(tensor.unbind(0))).narrow(dim, start, length)


from . import strided_ops as _ops  # noqa: E402  (the op table needs the class above)


def _enable_protocol():
    """Lets free functions (``F.softmax(nt, -1)``) reach the class's
    ``__torch_function__`` (see framework.nested.ops.enable_protocol)."""
    from ..overrides import _subclass_defined
    _subclass_defined(StridedNestedTensor)


_ops.install(StridedNestedTensor)
