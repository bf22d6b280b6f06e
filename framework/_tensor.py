"""Tensor: a strided view over a Storage, with autograd fields.

Ops (``add``, ``sum``, ``view``, ...) are attached as methods by the dispatcher from
``ops.yaml``; this file holds what is a property of the tensor object itself.
"""
import builtins
import warnings
import weakref

import numpy as np

from . import _dtype, _float8
from ._device import CPU
from ._storage import Storage

_new = object.__new__
_indexing = None


def _load_indexing():
    """framework._ops.indexing, imported on first use (it imports this module)."""
    global _indexing
    from ._ops import indexing
    _indexing = indexing
    return indexing


_creation = None


def _load_creation():
    """framework._ops.creation, imported on first use (a function-level import costs ~1 us
    a call)."""
    global _creation
    from ._ops import creation
    _creation = creation
    return creation

_record = None


def _load_record():
    """framework.autograd.record, imported on first use (as _load_creation)."""
    global _record
    from .autograd import record
    _record = record
    return record


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead.")


# shape -> its row-major strides, filled by framework._ops.alloc.contiguous_strides (every
# new tensor's shape passes there): a tensor with these strides is contiguous
ROW_MAJOR_STRIDES = {}

# id -> tensor: the slices a running framework.func.vmap gave its function (filled by
# framework/_func/vmap.py); .item() and bool() of one raise PyTorch's vmap errors
_VMAP_SLICES = {}
_VMAP_ITEM_ERROR = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
    "report.")
_VMAP_FLOW_ERROR = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues .")


class Tensor:
    """A multi-dimensional array of one dtype on one device (PyTorch's ``torch.Tensor``)."""

    __slots__ = ("_storage", "_shape", "_stride", "_offset", "dtype", "_requires_grad", "_grad",
                 "_grad_fn", "_output_nr", "_base", "__weakref__", "__dict__")

    # ``framework.Tensor(data)`` / ``framework.Tensor(2, 3)`` as in PyTorch.
    def __new__(cls, *args, device=None):
        from ._ops import creation
        if len(args) == 1 and not isinstance(args[0], int):
            t = creation._new_tensor(args[0], _dtype.get_default_dtype(), device)
        else:
            t = creation.empty(*args, dtype=_dtype.get_default_dtype(), device=device)
        if cls is not Tensor:
            t.__class__ = cls
            from .overrides import subclass_used
            subclass_used(cls)
        return t

    def __init__(self, *args, **kwargs):
        pass

    # ``__torch_function__`` (framework/overrides.py): a subclass's ops return the subclass
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from .overrides import default_torch_function
        return default_torch_function(cls, func, types, args, kwargs)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        from .overrides import _subclass_defined
        _subclass_defined(cls)

    @staticmethod
    def _make(storage, shape, stride, offset, dtype):
        """A tensor over existing storage (no copy, no checks)."""
        t = _new(Tensor)
        t._storage = storage
        t._shape = shape
        t._stride = stride
        t._offset = offset
        t.dtype = dtype
        t._requires_grad = False
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._base = None
        return t

    # ---- metadata --------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        """The shape as a ``framework.Size``, or the size of one dim."""
        if dim is None:
            return Size(self._shape)
        return self._shape[_wrap_dim(dim, len(self._shape), "size", "dim", 1)]

    def stride(self, dim=None):
        """Strides in elements, or the stride of one dim."""
        if dim is None:
            return self._stride
        return self._stride[_wrap_dim(dim, len(self._shape), "stride", "dim", 1)]

    def dim(self):
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self._shape)

    def numel(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    def storage_offset(self):
        return self._offset

    def data_ptr(self):
        return self._storage.ptr + self._offset * self.dtype.itemsize

    @property
    def device(self):
        return self._storage.device

    def get_device(self):
        d = self._storage.device
        return -1 if d.type == "cpu" else d.index

    @property
    def is_cuda(self):
        return self._storage.device.type == "cuda"

    @property
    def is_cpu(self):
        return self._storage.device.type == "cpu"

    @property
    def is_meta(self):
        return self._storage.device.type == "meta"

    # layouts, backends and kinds of tensor a dense tensor is not (PyTorch code tests them;
    # framework.sparse's subclasses set is_sparse/is_sparse_csr)
    is_sparse = is_sparse_csr = is_quantized = is_nested = is_mkldnn = False
    is_xpu = is_mps = is_vulkan = is_ipu = is_xla = is_maia = is_mtia = False

    @property
    def layout(self):
        from ._ops.memory_format import strided
        return strided

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def is_inference(self):
        """Whether this is an inference tensor (created inside ``inference_mode``)."""
        from .autograd.grad_mode import is_inference
        return is_inference(self)

    @property
    def real(self):
        """The real parts (a view; the tensor itself when it is real)."""
        import framework
        return framework.real(self)

    @property
    def imag(self):
        """The imaginary parts of a complex tensor (a view)."""
        import framework
        return framework.imag(self)

    def is_signed(self):
        return self.dtype.is_signed

    def is_contiguous(self, memory_format=None):
        """Whether elements are laid out row-major without gaps (size-1 dims ignored), or in
        ``memory_format`` (``framework.channels_last``...) when given."""
        if memory_format is not None:
            from ._ops.memory_format import is_contiguous
            return is_contiguous(self._shape, self._stride, memory_format)
        try:
            if ROW_MAJOR_STRIDES.get(self._shape) == self._stride:
                return True  # the common case: one lookup instead of the loop below
        except TypeError:  # a shape that is not a tuple
            pass
        if 0 in self._shape:  # an empty tensor is contiguous whatever its strides
            return True
        expected = 1
        for n, st in zip(reversed(self._shape), reversed(self._stride)):
            if n != 1:
                if st != expected:
                    return False
                expected *= n
        return True

    def is_set_to(self, other):
        st, ot = self._storage, other._storage
        same = st is ot or (st.buf is ot.buf and st.buf is not None)  # .data shares memory
        return (same and self._offset == other._offset
                and self._shape == other._shape and self._stride == other._stride)

    def _is_view(self):
        return self._base is not None

    @property
    def _version(self):
        if self.is_inference():
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._storage.version

    # ---- autograd fields (the engine lives in framework.autograd) --------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Sets whether autograd records operations on this (leaf) tensor."""
        if requires_grad and self.dtype.category < 2:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        if requires_grad and self.is_inference():
            from .autograd.grad_mode import is_inference_mode_enabled
            if not is_inference_mode_enabled():
                raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                                   "InferenceMode is not allowed.")
        self._requires_grad = builtins.bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        """The node that created this tensor (None for leaves)."""
        fn = self._grad_fn
        if self._base is not None and fn is not None:
            from .autograd.graph import view_fn
            return view_fn(self)
        return fn

    @property
    def grad(self):
        """The gradient accumulated by backward (leaves, and tensors that retain grad)."""
        g = self._grad
        if g is None and self._grad_fn is not None and not self.__dict__.get("_retains"):
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            want = self.__dict__.get("_grad_dtype", self.dtype)
            if want is not None and value.dtype is not want:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype.name}' "
                    f"to a tensor with grad_dtype '{want.scalar_name}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
                    "set the tensor's grad_dtype attribute with a specific dtype, or None to "
                    "allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
                    "tensor and its gradient may break downstream systems that assume they "
                    "match.")
            if value._storage.device != self._storage.device:
                raise RuntimeError(
                    f"attempting to assign a gradient located on device '{value.device}' to a "
                    f"tensor located on device '{self.device}'. Please ensure that the "
                    "gradient and the tensor are on the same device")
            if value._shape != self._shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._shape)}' to a "
                    f"tensor of size '{list(self._shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def grad_dtype(self):
        """The allowed dtype of ``grad`` (leaves only): the tensor's dtype by default; the
        engine casts incoming gradients to it; None allows any dtype."""
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.__dict__.get("_grad_dtype", self.dtype)

    @grad_dtype.setter
    def grad_dtype(self, value):
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dtype.dtype):
            raise RuntimeError("grad_dtype must be a torch.dtype or None, but got "
                               f"{type(value).__name__}")
        if self._grad is not None and value is not None and self._grad.dtype is not value:
            raise RuntimeError(
                f"Cannot set grad_dtype to '{value.scalar_name}' because there is already a "
                f"gradient with dtype '{self._grad.dtype.scalar_name}'. Please clear the "
                "gradient (.grad = None) before changing grad_dtype, or ensure the new "
                "grad_dtype matches the existing gradient's dtype.")
        self.__dict__["_grad_dtype"] = value

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulates the gradient of this tensor into the ``.grad`` of the graph leaves."""
        from . import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a
        replacement. Returns a handle with ``remove()``."""
        from .autograd import graph
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is None:
            return graph.add_hook(_leaf_hooks(self, "_pre_hooks"), hook)
        return graph.add_hook(self.grad_fn._tensor_hooks_for(self._output_nr),
                              hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after the gradient was accumulated into this leaf's .grad."""
        from .autograd import graph
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        return graph.add_hook(_leaf_hooks(self, "_post_hooks"), hook)

    def retain_grad(self):
        """Makes this non-leaf tensor keep its ``.grad`` after backward."""
        import weakref
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self.__dict__.get("_retains"):
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)
        self.__dict__["_retains"] = True

    @property
    def retains_grad(self):
        return self.grad_fn is not None and bool(self.__dict__.get("_retains"))

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def data(self):
        # PyTorch gives .data a version counter of its own, so writes through it are not
        # seen by autograd's saved-tensor checks: here, a storage object over the same memory
        st = self._storage
        if st.__class__ is Storage:
            st = Storage(st.ptr, st.nbytes, st.device, st.buf)
        return Tensor._make(st, self._shape, self._stride, self._offset, self.dtype)

    @data.setter
    def data(self, other):
        # self takes other's memory but keeps its own version counter, as in PyTorch
        st = other._storage
        if st.__class__ is Storage:
            st = Storage(st.ptr, st.nbytes, st.device, st.buf)
            st.version = self._storage.version
        self._storage, self._shape, self._stride = st, other._shape, other._stride
        self._offset, self.dtype = other._offset, other.dtype

    def detach(self):
        """A view of the same data that does not require grad."""
        return Tensor._make(self._storage, self._shape, self._stride, self._offset, self.dtype)

    def detach_(self):
        self._grad_fn = None
        self._requires_grad = False
        return self

    def polygamma_(self, n):
        """In-place version of :meth:`polygamma` (its row in ops.yaml takes ``n`` first)."""
        from ._ops.special import polygamma_
        return polygamma_(self, n)

    # ---- conversion to Python and NumPy ----------------------------------------------
    def _host_array(self):
        """A NumPy view of the data (CPU) or a host copy (CUDA); bfloat16 widened to float32."""
        t = self if self._storage.device.type == "cpu" else self.cpu()
        item = t.dtype.itemsize
        if 0 in t._shape:   # an empty view may have an offset past the end of its buffer
            return np.empty(t._shape, np.float32 if t.dtype is _dtype.bfloat16
                            or t.dtype.is_float8 else t.dtype.np)
        # a size-1 dim may carry any stride (unfold with a huge step): NumPy would refuse
        # one whose bytes overflow, and it never moves along that dim anyway
        arr = np.ndarray(t._shape, dtype=t.dtype.np, buffer=t._storage.buf,
                         offset=t._offset * item,
                         strides=tuple(s * item if n != 1 else 0
                                       for n, s in zip(t._shape, t._stride)))
        if t.dtype is _dtype.bfloat16:
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        elif t.dtype.is_float8:
            arr = _float8.decode(arr, t.dtype.name)
        return arr

    def numpy(self, *, force=False):
        """A NumPy array sharing this CPU tensor's memory."""
        if not force:
            if self._storage.device.type != "cpu":
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            if self._requires_grad and _grad_enabled():    # PyTorch: only with grad mode on
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                                   "tensor.detach().numpy() instead.")
        if self.dtype is _dtype.bfloat16 or self.dtype.is_float8:
            raise TypeError(f"Got unsupported ScalarType {self.dtype.scalar_name}")
        return self._host_array()

    def __array__(self, dtype=None, copy=None):
        # as torch: cuda tensors and tensors that require grad raise (numpy()'s errors);
        # like torch, no __array_interface__: NumPy goes through __array__ (or DLPack)
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    # as torch: NumPy defers to a tensor operand's reflected operators (np.float64(2) * t
    # is a tensor), and a ufunc NumPy computes on a tensor comes back as a tensor
    __array_priority__ = 1000

    def __array_wrap__(self, array, context=None, return_scalar=False):
        if array.dtype == bool:
            array = array.astype("uint8")    # torch's (old) rule, kept by torch
        from ._ops.creation import from_numpy
        return from_numpy(np.ascontiguousarray(array) if array.ndim else array.reshape(()))

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule sharing this tensor's memory (versioned when ``max_version``
        is at least (1, 0))."""
        from ._dlpack import to_capsule
        return to_capsule(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        from ._dlpack import dlpack_device
        return dlpack_device(self)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if _VMAP_SLICES and id(self) in _VMAP_SLICES:
            raise RuntimeError(_VMAP_ITEM_ERROR)
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               "Scalar")
        if self._storage.device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._host_array().reshape(()).item()

    def tolist(self):
        """The data as (nested) Python lists of numbers."""
        return self._host_array().tolist()

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if _VMAP_SLICES and id(self) in _VMAP_SLICES:
            raise RuntimeError(_VMAP_FLOW_ERROR)
        n = self.numel()
        if n != 1:
            what = "no values" if n == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return builtins.bool(self.item())

    def __float__(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return builtins.float(self._real_item("double"))

    def __int__(self):
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return builtins.int(self._real_item("int64_t"))

    def _real_item(self, cname):
        """item(), a complex value only when its imaginary part is zero (PyTorch's error
        naming the C++ type ``cname`` otherwise)."""
        v = self.item()
        if v.__class__ is complex:
            if v.imag:
                raise RuntimeError(f"value cannot be converted to type {cname} without "
                                   f"overflow")
            return v.real
        return v

    def __index__(self):
        if self.dtype.category >= 2 or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    def __complex__(self):
        return complex(self.item())

    __hash__ = object.__hash__  # by identity (== compares elementwise), without a Python call

    def __repr__(self):
        from . import _tensor_str
        return _tensor_str.repr_tensor(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        from .autograd import grad_mode
        with grad_mode.no_grad():
            out = self.clone()
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            import copy
            out._grad = copy.deepcopy(self._grad, memo)
        memo[id(self)] = out
        return out

    def __copy__(self):
        """``copy.copy``: as PyTorch's, a new leaf sharing this tensor's data and
        ``requires_grad`` (without ``.grad``)."""
        import copy
        if type(self) is not Tensor:      # a subclass rebuilds itself by its own reduce
            return copy._reconstruct(self, None, *self.__reduce_ex__(4))
        out = self.detach()
        return out.requires_grad_() if self._requires_grad else out

    def __reduce_ex__(self, protocol):
        from ._ops import creation
        return (creation._rebuild, (self.cpu()._host_array().copy(), self.dtype.name,
                                   str(self.device), self._requires_grad))

    # ---- dtype and device conversion -------------------------------------------------
    def to(self, *args, **kwargs):
        """Returns a tensor with the given dtype and/or device (self if nothing changes)."""
        creation = _creation or _load_creation()
        if self._requires_grad:
            return (_record or _load_record()).to(creation.to, self, args, kwargs)
        return creation.to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            where = "framework.cuda." if self._storage.device.type == "cuda" else "framework."
            return where + self.dtype.scalar_name + "Tensor"
        from . import _legacy_types
        legacy = _legacy_types.resolve(dtype)
        if legacy is not None:     # FloatTensor, "torch.cuda.HalfTensor": dtype and device
            if self._storage.device.type == legacy._device_type:
                return self.to(legacy.dtype, non_blocking=non_blocking)
            return self.to(legacy._device_type, legacy.dtype, non_blocking=non_blocking)
        return self.to(dtype, non_blocking=non_blocking)

    def cpu(self, memory_format=None):
        return self if self._storage.device.type == "cpu" else self.to(CPU)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else device, non_blocking=non_blocking)

    def pin_memory(self, device=None):
        """A copy of this CPU tensor in pinned (page-locked) host memory, from which copies
        to the GPU can run asynchronously (``non_blocking=True``); self if already pinned.
        A dense layout keeps its strides, as in PyTorch."""
        if self._storage.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be "
                               "pinned")
        if self.is_pinned():
            return self
        from .cuda import _runtime
        from ._ops import alloc
        from ._ops.memory_format import dense_like
        stride = dense_like(self._shape, self._stride)
        n = self.numel()
        out = Tensor._make(_runtime.pinned_storage(n * self.dtype.itemsize), self._shape,
                           stride, 0, self.dtype)
        if n:
            alloc.backend(CPU).copy.copy(out, self, self._stride)
        return out

    def share_memory_(self):
        """Moves the storage to shared memory (no-op if already there, or on CUDA); self."""
        from ._shared_memory import share_tensor_
        return share_tensor_(self)

    def is_shared(self):
        """Whether the storage is in shared memory (always True for CUDA tensors)."""
        from ._shared_memory import is_shared
        return is_shared(self._storage)

    def is_pinned(self, device=None):
        """Whether this tensor lives in pinned host memory (always False on the GPU)."""
        if self._storage.device.type != "cpu":
            return False
        from .cuda import _runtime
        return _runtime.is_pinned(self._storage)

    def record_stream(self, stream):
        """Marks this cuda tensor's memory as in use by ``stream``: when the tensor is freed,
        the caching allocator reuses its memory only after the work queued on ``stream`` so
        far has finished (for tensors made on one stream and used on another)."""
        if self._storage.device.type != "cuda":
            raise RuntimeError("Could not run 'aten::record_stream' with arguments from the "
                               f"'{self._storage.device.type.upper()}' backend.")
        from .cuda import _runtime
        _runtime.record_stream(self._storage, stream)

    def float(self, memory_format=None):
        return self.to(_dtype.float32)

    def double(self, memory_format=None):
        return self.to(_dtype.float64)

    def cfloat(self, memory_format=None):
        return self.to(_dtype.complex64)

    def cdouble(self, memory_format=None):
        return self.to(_dtype.complex128)

    def half(self, memory_format=None):
        return self.to(_dtype.float16)

    def bfloat16(self, memory_format=None):
        return self.to(_dtype.bfloat16)

    def long(self, memory_format=None):
        return self.to(_dtype.int64)

    def int(self, memory_format=None):
        return self.to(_dtype.int32)

    def short(self, memory_format=None):
        return self.to(_dtype.int16)

    def char(self, memory_format=None):
        return self.to(_dtype.int8)

    def byte(self, memory_format=None):
        return self.to(_dtype.uint8)

    def bool(self, memory_format=None):
        return self.to(_dtype.bool)

    def type_as(self, other):
        return self.to(other.dtype)

    # ---- Python operators (the ops come from the dispatcher) -------------------------
    # operators that call an op's method with (self, other), made by the dispatcher
    # (framework/_ops/dispatcher.py install_operators): as PyTorch's, one that gets an
    # operand it does not take returns NotImplemented (a TypeError inside), so that Python
    # tries the other operand's reflected method
    _OPERATOR_METHODS = {
        "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
        "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
        "__truediv__": "div", "__itruediv__": "div_", "__floordiv__": "floor_divide",
        "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_",
        "__pow__": "pow", "__ipow__": "pow_", "__matmul__": "matmul",
        "__and__": "bitwise_and", "__rand__": "bitwise_and", "__iand__": "bitwise_and_",
        "__or__": "bitwise_or", "__ror__": "bitwise_or", "__ior__": "bitwise_or_",
        "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor_",
        "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
        "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    }

    def __rsub__(self, other):
        from ._ops import dispatcher
        return dispatcher.function("rsub")(self, other)

    def __rtruediv__(self, other):
        from . import _ops
        return _ops.pointwise.reverse("div", self, other)

    def __rfloordiv__(self, other):
        from . import _ops
        return _ops.pointwise.reverse("floor_divide", self, other)

    def __rmod__(self, other):
        from . import _ops
        return _ops.pointwise.reverse("remainder", self, other)

    def __rpow__(self, other):
        from . import _ops
        return _ops.pointwise.reverse("pow", self, other)

    def __rmatmul__(self, other):
        from . import _ops
        return _ops.pointwise.reverse("matmul", self, other)

    def __neg__(self):
        return self.neg()

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __invert__(self):
        if self.dtype.category >= 2:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                            "tensors")
        return self.bitwise_not()

    def __eq__(self, other):
        if isinstance(other, (str, type(None))):
            return NotImplemented     # torch: t == 'a' is False, not an error
        try:
            return self.eq(other)
        except TypeError:             # torch: t == [1, 2] is False, not an error
            return NotImplemented

    def __ne__(self, other):
        if isinstance(other, (str, type(None))):
            return NotImplemented
        try:
            return self.ne(other)
        except TypeError:
            return NotImplemented

    def __rlshift__(self, other):
        from . import _ops
        return _ops.pointwise.reverse("bitwise_left_shift", self, other)

    def __rrshift__(self, other):
        from . import _ops
        return _ops.pointwise.reverse("bitwise_right_shift", self, other)

    def __contains__(self, element):
        """True when ``element`` equals some entry (a scalar) or some slice (a tensor)."""
        if not isinstance(element, (Tensor, bool, int, float, complex)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                               f"passed in a {type(element)}.")
        return bool((element == self).any().item())

    def __getitem__(self, index):
        indexing = _indexing or _load_indexing()
        if self._requires_grad:
            from .autograd import record
            return record.getitem(indexing.getitem, self, index)
        return indexing.getitem(self, index)

    def __setitem__(self, index, value):
        indexing = _indexing or _load_indexing()
        if self._requires_grad or getattr(value, "_requires_grad", False):
            from .autograd import record
            record.setitem(indexing.setitem, self, index, value)
            return
        indexing.setitem(self, index, value)

    @property
    def T(self):
        if self.dim() == 0:
            import warnings
            warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity "
                          "in these cases.", UserWarning, stacklevel=2)
        elif self.dim() != 2:   # PyTorch: deprecated, still reverses the dims
            import warnings
            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse "
                          "their shape is deprecated and it will throw an error in a future "
                          "release. Consider `x.mT` to transpose batches of matrices or "
                          "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                          "dimensions of a tensor.", UserWarning, stacklevel=2)
        return self.permute(*range(self.dim() - 1, -1, -1))

    @property
    def mT(self):
        if self.dim() < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.dim()}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self):
        """The conjugate transpose (``T`` of a real tensor)."""
        if self.dim() not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{self.dim()}-D tensor."
                               + (" For batches of matrices, consider using tensor.mH"
                                  if self.dim() > 2 else ""))
        if self.dim() == 0:
            import warnings
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                          UserWarning, stacklevel=2)
        return self.permute(*range(self.dim() - 1, -1, -1)).conj()

    @property
    def mH(self):
        """The conjugate transpose of the last two dims (``mT`` of a real tensor)."""
        return self.mT.conj()


class Size(tuple):
    """The shape of a tensor: a tuple of ints (PyTorch's ``torch.Size``)."""

    def __repr__(self):
        return f"framework.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple.__add__(tuple(other), self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


class _UntypedStorage:
    """What Triton's interpreter needs of ``tensor.untyped_storage()``. ``host_alias``: the
    host view of a simulated cuda storage (``cpu()``), over which the interpreter rebuilds
    each kernel argument with ``set_``, internal views with negative strides included."""

    __slots__ = ("_strong", "_weak", "host_alias")

    def __init__(self, storage, host_alias=False):
        self._strong = storage
        self._weak = None
        self.host_alias = host_alias

    @property
    def _s(self):
        s = self._strong
        if s is None:
            s = self._weak()
            if s is None:
                raise RuntimeError("the storage was freed")
        return s

    def data_ptr(self):
        return self._s.ptr

    def size(self):
        return self._s.nbytes

    def nbytes(self):
        return self._s.nbytes

    @property
    def device(self):
        return self._s.device

    def cpu(self):
        """This storage in host memory: a copy of a cuda storage on a GPU. A simulated cuda
        storage already lives on the host, so there this aliases it: Triton's interpreter
        then runs in place, with no copies."""
        s = self._s
        if s.device.type == "cpu":
            return self
        from . import cuda
        if not cuda.is_simulated():
            from ._ops import alloc
            host = alloc.storage(s.nbytes, CPU)
            cuda._runtime.copy_bytes(host, s, s.nbytes)
            return _UntypedStorage(host)
        return _UntypedStorage(cuda._host_alias(s), host_alias=True)

    def copy_(self, other):
        if other.data_ptr() != self.data_ptr():
            from .cuda import _runtime
            _runtime.copy_bytes(self._s, other._s, min(self.nbytes(), other.nbytes()))
        elif self.device.type == "cuda" and other.device.type == "cpu":
            # Triton's interpreter writing a simulated launch's arguments back from their
            # host aliases (cpu()): nothing to copy. It is done with both, but keeps them
            # in a reference cycle until the garbage collector runs; let go of the device
            # memory now, so that it is freed as soon as its tensors are.
            other._s.buf = None
            self._release()
            other._release()
        return self

    def _release(self):
        if self._strong is not None:
            self._weak = weakref.ref(self._strong)
            self._strong = None


def _leaf_hooks(t, key):
    """The hook dict of a leaf, shared with its AccumulateGrad node."""
    h = t.__dict__.get(key)
    if h is None:
        from .autograd import graph
        h = t.__dict__[key] = graph._Hooks()
    return h


def _wrap_dim(dim, ndim, op=None, name="dim", pos=None):
    """Turns a possibly negative dim into an index in [0, ndim), with PyTorch's IndexError.
    ``dim`` may be an int, a NumPy integer or an integer 0-d tensor; anything else (float,
    bool, str) is PyTorch's TypeError, naming argument ``name`` at ``pos`` of ``op``."""
    if dim.__class__ is not int:        # the hot path is a plain int: one check
        dim = _dim_index(dim, op, name, pos)
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        if not -2 ** 63 <= dim < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def _dim_index(dim, op, name="dim", pos=None):
    """A dim that is not a plain int as a Python int, or PyTorch's TypeError (args.to_int;
    imported here because args imports this module)."""
    from ._ops.args import to_int
    return to_int(op, name, dim, pos)


def _grad_enabled():
    from .autograd import grad_mode
    return grad_mode._mode.enabled
