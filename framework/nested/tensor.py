"""NestedTensor: a batch of tensors that differ in one ("ragged") dim, stored jagged.

The components are concatenated along the ragged dim into one dense ``values`` tensor;
``offsets`` (int64, B + 1 entries, on the same device) says where each component starts.
Dim ``_ragged_idx`` of the nested tensor is the ragged one; ``values`` has the nested
tensor's dims without the batch dim, so its dim ``_ragged_idx - 1`` is the ragged one.

The size of the ragged dim is a :class:`NestedInt` (PyTorch's symbolic ``j1``), one per
offsets tensor: ops that keep the offsets keep the same ``j``, so two nested tensors can be
combined only when they share their offsets, as in PyTorch.

Autograd runs on ``values``: a nested tensor's ``requires_grad``, ``grad_fn`` and ``grad``
are those of its values, so gradients reach the values tensor (and the tensors it was cut
from) through ordinary dense ops.
"""
import itertools

from .. import overrides as _overrides
from .._ops.memory_format import layout
from .._tensor import Tensor, _new
from ..sparse.base import _NoStorage, _guard

jagged = layout("jagged")

_counter = itertools.count(1)


class NestedInt:
    """The size of a ragged dim (PyTorch's symbolic ``j1``): equal only to itself."""

    __slots__ = ("id",)

    def __init__(self):
        self.id = next(_counter)

    def __repr__(self):
        return f"j{self.id}"

    __str__ = __repr__

    def __eq__(self, other):
        return other is self

    def __ne__(self, other):
        return other is not self

    def __hash__(self):
        return hash(("NestedInt", self.id))


def nested_int(offsets):
    """The NestedInt of ``offsets`` (made on first use and kept on the tensor)."""
    j = offsets.__dict__.get("_nested_int")
    if j is None:
        j = offsets.__dict__["_nested_int"] = NestedInt()
    return j


class NestedStorageless:
    """What both nested layouts answer for their (absent) storage, in PyTorch's words."""

    __slots__ = ()

    def storage_offset(self):
        raise RuntimeError("storage_offset(): not supported for NestedTensor")

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of NestedTensor")


class NestedTensor(NestedStorageless, Tensor):
    """A jagged-layout nested tensor (made by ``framework.nested.nested_tensor`` and friends;
    not created directly)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("NestedTensor is made by framework.nested.nested_tensor, "
                        "as_nested_tensor or nested_tensor_from_jagged")

    @staticmethod
    def make(values, offsets, lengths=None, ragged_idx=1, min_seqlen=None, max_seqlen=None):
        """A nested tensor over ``values`` and ``offsets`` (no copy, no checks)."""
        if not _overrides._active:
            from .ops import enable_protocol
            enable_protocol()
        t = _new(NestedTensor)
        d = t.__dict__
        d["_values"], d["_offsets"], d["_lengths"] = values, offsets, lengths
        d["_ragged_idx"] = ragged_idx
        d["_seqlens"] = (min_seqlen, max_seqlen)
        t._storage = _NoStorage(values._storage.device)
        shape = list(values.shape)
        shape[ragged_idx - 1] = nested_int(offsets)
        t._shape = (offsets.shape[0] - 1,) + tuple(shape)
        t.dtype = values.dtype
        # the dense autograd fields stay unset: autograd runs on the values
        t._requires_grad, t._grad, t._grad_fn = False, None, None
        t._output_nr = 0
        t._base = None
        return t

    def _like(self, values, ragged_idx=None):
        """A nested tensor with this one's offsets (so its ``j``) over new ``values``."""
        return NestedTensor.make(values, self._offsets, self._lengths,
                                 self._ragged_idx if ragged_idx is None else ragged_idx,
                                 *self._seqlens)

    # the guard: dense kernels and views read these first
    _stride = property(_guard)
    _offset = property(_guard)

    def _backend_name(self):
        return "NestedTensor" + ("CUDA" if self._storage.device.type == "cuda" else "CPU")

    # ---- the jagged parts --------------------------------------------------------------
    def values(self):
        """The components concatenated along the ragged dim (a view: writes show through)."""
        return self._values

    def offsets(self):
        """Where each component starts in ``values`` (B + 1 entries)."""
        return self._offsets

    def lengths(self):
        """The length of each component when given (a tensor with holes), else None."""
        return self._lengths

    def _cache(self):
        """Host-side facts about the offsets (and lengths), kept on the offsets tensor so
        that every nested tensor sharing them reads the device only once."""
        key = "_nested_cache" if self._lengths is None else "_nested_cache_%d" % id(
            self._lengths)
        c = self._offsets.__dict__.get(key)
        if c is None:
            c = self._offsets.__dict__[key] = {}
        return c

    def _starts_lens(self):
        """(starts, lengths) of the components as Python lists."""
        c = self._cache()
        sl = c.get("starts_lens")
        if sl is None:
            off = self._offsets.tolist()
            if self._lengths is None:
                lens = [off[i + 1] - off[i] for i in range(len(off) - 1)]
            else:
                lens = self._lengths.tolist()
            sl = c["starts_lens"] = (off[:-1], lens)
        return sl

    @property
    def _max_seqlen(self):
        m = self._seqlens[1]
        return m if m is not None else max(self._starts_lens()[1], default=0)

    @property
    def _min_seqlen(self):
        m = self._seqlens[0]
        return m if m is not None else min(self._starts_lens()[1], default=0)

    # ---- metadata ----------------------------------------------------------------------
    @property
    def layout(self):
        return jagged

    is_nested = True

    def numel(self):
        return self._values.numel()

    def stride(self, dim=None):
        raise RuntimeError("stride(): not supported for NestedTensor with the jagged layout")

    def is_contiguous(self, memory_format=None):
        return self._lengths is None and self._values.is_contiguous()

    def numpy(self, *, force=False):
        raise TypeError("can't convert NestedTensor to numpy. Use unbind() or "
                        "to_padded_tensor() first.")

    def tolist(self):
        raise RuntimeError(".tolist() is not supported for tensor subclasses, got NestedTensor")

    def item(self):
        raise RuntimeError("item(): not supported for NestedTensor")

    def __getitem__(self, index):
        """``nt[i]``: component ``i`` (other indexing is not supported)."""
        if isinstance(index, int) or (isinstance(index, Tensor) and index.dim() == 0
                                      and not index.dtype.is_floating_point):
            return self.unbind()[int(index)]
        raise NotImplementedError("NestedTensor indexing: only an integer index (one "
                                  "component) is supported for the jagged layout")

    def __len__(self):
        return self._shape[0]

    def __repr__(self):
        return (f"NestedTensor(size={tuple(self._shape)}, offsets={self._offsets!r}, "
                f"contiguous={self.is_contiguous()})").replace("framework.", "")

    __str__ = __repr__

    # ---- autograd: that of the values --------------------------------------------------
    @property
    def requires_grad(self):
        return self._values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Sets whether autograd records operations on this (leaf) nested tensor."""
        self._values.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._values.grad_fn

    @property
    def is_leaf(self):
        return self._values.is_leaf

    @property
    def grad(self):
        g = self._values.grad
        return None if g is None else self._like(g)

    @grad.setter
    def grad(self, value):
        self._values.grad = None if value is None else value.values()

    def retain_grad(self):
        self._values.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Backward from this nested tensor; ``gradient``: a nested tensor of its shape."""
        if gradient is None:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if not isinstance(gradient, NestedTensor) or gradient._offsets is not self._offsets:
            raise RuntimeError("backward(): gradient must be a NestedTensor with the same "
                               f"shape as the output {tuple(self._shape)}")
        self._values.backward(gradient._values, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        return self._like(self._values.detach())

    def clone(self, *, memory_format=None):
        return self._like(self._values.clone())

    def to(self, *args, **kwargs):
        """``to(device/dtype)`` of the values; the offsets follow the device."""
        values = self._values.to(*args, **kwargs)
        if values is self._values:
            return self
        off, lens = self._offsets, self._lengths
        if values.device != off.device:
            off = off.to(values.device)
            lens = None if lens is None else lens.to(values.device)
        return NestedTensor.make(values, off, lens, self._ragged_idx, *self._seqlens)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to(dtype=self._values.float().dtype)

    def double(self):
        return self.to(dtype=self._values.double().dtype)

    def half(self):
        return self.to(dtype=self._values.half().dtype)

    def bfloat16(self):
        return self.to(dtype=self._values.bfloat16().dtype)

    def type_as(self, other):
        return self.to(dtype=other.dtype)

    def __deepcopy__(self, memo):
        out = self.clone().detach()
        out.requires_grad_(self.requires_grad and self.is_leaf)
        memo[id(self)] = out
        return out

    def unbind(self, dim=0):
        """The components (views of ``values``)."""
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        d = self._ragged_idx - 1
        starts, lens = self._starts_lens()
        return tuple(self._values.narrow(d, s, n) for s, n in zip(starts, lens))

    def to_padded_tensor(self, padding, output_size=None):
        """A dense tensor with each component padded with ``padding`` along the ragged dim
        to the longest (or to ``output_size[ragged dim]``)."""
        from . import to_padded_tensor
        return to_padded_tensor(self, padding, output_size)

