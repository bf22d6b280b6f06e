"""Tensor methods of PyTorch that the core Tensor class does not carry: the element-wise
Python callbacks (``apply_``, ``map_``, ``map2_``), ``dim_order``, the deprecated
out-of-place ``resize``/``resize_as``, ``as_subclass``, ``nonzero_static``, ``to_dense`` and
a few small aliases. ``install(Tensor)`` sets them on the class (methods that already exist
are left alone); ``nonzero_static`` is also the top-level function.
"""
import functools
import operator
import warnings

from . import _dtype

__all__ = ["install", "nonzero_static"]


# ---- Python callbacks element by element (CPU only) ---------------------------------------

_INT_BITS = {_dtype.int8: 8, _dtype.int16: 16, _dtype.int32: 32, _dtype.int64: 64}


def _to_element(value, dtype):
    """A callback's result as a Python value of ``dtype``'s kind (PyTorch's unpacking:
    a real number for floating tensors, an integer (floats truncated) for integer ones)."""
    if dtype == _dtype.bool:
        try:
            return bool(value)
        except Exception:
            raise TypeError(f"must be real number, not {type(value).__name__}") from None
    if dtype.is_floating_point:
        if isinstance(value, float):
            return value
        f = getattr(type(value), "__float__", None)
        if f is None:
            idx = getattr(type(value), "__index__", None)
            if idx is None:
                raise TypeError(f"must be real number, not {type(value).__name__}")
            return float(idx(value))
        return float(f(value))
    # integer dtypes
    if isinstance(value, float) or (not hasattr(type(value), "__index__")
                                    and hasattr(type(value), "__float__")):
        v = int(float(value))
    else:
        idx = getattr(type(value), "__index__", None)
        if idx is None:
            raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an "
                            f"integer")
        v = idx(value)
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    if dtype == _dtype.uint8:
        if v > 255 or v < -255:
            raise RuntimeError("value cannot be converted to type uint8 without overflow")
        return v & 0xFF
    bits = _INT_BITS[dtype]
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise RuntimeError(f"value cannot be converted to type {str(dtype).split('.')[-1]} "
                           "without overflow")
    return v


def _flat_values(t):
    """The elements of ``t`` as Python scalars, in logical (row-major) order."""
    vals = t.tolist()
    if t.dim() == 0:
        return [vals]
    for _ in range(t.dim() - 1):
        vals = [v for row in vals for v in row]
    return vals


def _write_back(self, values):
    from ._ops import creation
    new = creation.tensor(values, dtype=self.dtype).reshape(self.shape)
    self.copy_(new)
    return self


def _check_tensor_arg(name, argname, pos, value):
    from ._tensor import Tensor
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argname}' (position {pos}) must be Tensor, not "
                        f"{type(value).__name__}")


def apply_(self, callable):
    """apply_(callable) -> Tensor

    Applies the function :attr:`callable` to each element in the tensor, replacing each
    element with the value returned by :attr:`callable`.

    .. note:: This function only works with CPU tensors and should not be used in code
        sections that require high performance.
    """
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    if self.device.type != "cpu":
        raise TypeError("apply_ is only implemented on CPU tensors")
    dt = self.dtype
    vals = [_to_element(callable(v), dt) for v in _flat_values(self)]
    return _write_back(self, vals)


def map_(self, tensor, callable):
    """map_(tensor, callable)

    Applies :attr:`callable` for each element in :attr:`self` tensor and the given
    :attr:`tensor` and stores the results in :attr:`self` tensor. :attr:`self` tensor and
    the given :attr:`tensor` must be broadcastable.
    """
    _check_tensor_arg("map_", "other", 1, tensor)
    if self.requires_grad or tensor.requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    if self.dtype != tensor.dtype or self.device != tensor.device:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()})")
    if self.device.type != "cpu":
        raise TypeError("map_ is only implemented on CPU tensors")
    other = tensor.expand(self.shape)
    dt = self.dtype
    vals = [_to_element(callable(a, b), dt)
            for a, b in zip(_flat_values(self), _flat_values(other))]
    return _write_back(self, vals)


def map2_(self, x, y, callable):
    """map2_(x, y, callable)

    Like :meth:`map_`, with two tensors :attr:`x` and :attr:`y` broadcast to :attr:`self`:
    ``callable(self_elem, x_elem, y_elem)``.
    """
    _check_tensor_arg("map2_", "x", 1, x)
    _check_tensor_arg("map2_", "y", 2, y)
    if self.requires_grad or x.requires_grad or y.requires_grad:
        raise RuntimeError("Can't call map2_() on Variable that requires grad. Use "
                           "var.detach().map2_() instead.")
    if x.dtype != self.dtype or x.device != self.device:
        raise TypeError(f"map2_: expected {self.type()} for argument 'x' (got {x.type()})")
    if y.dtype != self.dtype or y.device != self.device:
        raise TypeError(f"map2_: expected {self.type()} for argument 'y' (got {y.type()})")
    if self.device.type != "cpu":
        raise TypeError("map2_ is only implemented on CPU tensors")
    xe, ye = x.expand(self.shape), y.expand(self.shape)
    dt = self.dtype
    vals = [_to_element(callable(a, b, c), dt)
            for a, b, c in zip(_flat_values(self), _flat_values(xe), _flat_values(ye))]
    return _write_back(self, vals)


# ---- metadata -----------------------------------------------------------------------------

def const_data_ptr(self):
    """The address of the first element of :attr:`self` (as :meth:`data_ptr`)."""
    return self.data_ptr()


def mutable_data_ptr(self):
    """The address of the first element of :attr:`self` (as :meth:`data_ptr`)."""
    return self.data_ptr()


def _should_swap(shape, stride, a, b):
    def ge(x, y):
        if y == 0:
            return True
        if x == 0:
            return False
        return x >= y or x % y == 0

    sa, sb = stride[a], stride[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        if ge(shape[b], shape[a]):
            return 0
        return 1
    if ge(sb, sa):
        return -1
    if ge(sa, sb):
        return 1
    return 0


def dim_order(self, *, ambiguity_check=False):
    """dim_order(ambiguity_check=False) -> tuple

    Returns the uniquely determined tuple of int describing the dim order or physical
    layout of :attr:`self`: the dimensions from the outermost to the innermost in memory.

    If `ambiguity_check` is True, raises a RuntimeError when the dim order cannot be
    uniquely determined; if it is a list of memory formats, raises a RuntimeError when the
    tensor can not be interpreted into exactly one of the given memory formats, or it
    cannot be uniquely determined. Otherwise it raises TypeError.
    """
    from ._ops.memory_format import channels_last, contiguous_format, memory_format
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list):
            raise TypeError(
                "The ambiguity_check argument must be a bool or a list of memory formats.")
        for mf in ambiguity_check:
            if not isinstance(mf, memory_format):
                raise TypeError(
                    "The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, stride = tuple(self.shape), tuple(self.stride())

    def invalid_unique_memory_format(valid):
        return sum(1 for mf in valid if self.is_contiguous(memory_format=mf)) != 1

    def has_multiple_dim_order():
        dup = any(a == b for a, b in zip(stride, stride[1:]))
        return dup or any(s == 1 for s in shape)

    valid = ambiguity_check if isinstance(ambiguity_check, list) else []
    check_multiple = ambiguity_check if isinstance(ambiguity_check, bool) else True
    if (check_multiple and has_multiple_dim_order()) and invalid_unique_memory_format(valid):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    ndim = len(shape)
    if ndim == 0:
        return ()
    if ndim == 1:
        return (0,)
    is_contig = self.is_contiguous(memory_format=contiguous_format)
    is_cl = self.is_contiguous(memory_format=channels_last)
    if is_contig and not is_cl:
        return tuple(range(ndim))
    if is_cl and not is_contig:
        return (0, *range(2, ndim), 1)
    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):
        dim1 = i
        for dim0 in reversed(range(i)):
            c = _should_swap(shape, stride, perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    if ambiguity_check:
        for i in range(ndim - 1):
            if _should_swap(shape, stride, perm[i], perm[i + 1]) != -1:
                raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


# ---- deprecated out-of-place resize ---------------------------------------------------------

def _resize_to(self, sizes):
    sizes = tuple(int(s) for s in sizes)
    numel = functools.reduce(operator.mul, sizes, 1)
    if self.numel() != numel:
        raise RuntimeError(
            "requested resize to {} ({} elements in total), but the given tensor has a size "
            "of {} ({} elements). autograd's resize can only change the shape of a given "
            "tensor, while preserving the number of elements. ".format(
                "x".join(map(str, sizes)), numel, "x".join(map(str, self.size())),
                self.numel()))
    return self.contiguous().view(*sizes)


def resize(self, *sizes):
    """Deprecated out-of-place resize: ``self`` viewed with ``sizes`` (same number of
    elements)."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return _resize_to(self, sizes)


def resize_as(self, tensor):
    """Deprecated out-of-place resize_as: ``self`` viewed with ``tensor``'s size."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return _resize_to(self, tensor.size())


# ---- types and layouts ----------------------------------------------------------------------

def as_subclass(self, cls):
    """as_subclass(cls) -> Tensor

    Makes a ``cls`` instance with the same data pointer as ``self``. Changes in the output
    mirror changes in ``self``, and the output stays attached to the autograd graph.
    ``cls`` must be a subclass of ``Tensor``.
    """
    from ._tensor import Tensor
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = self.view_as(self)
    if cls is not Tensor:
        out.__class__ = cls
        from .overrides import subclass_used    # a plain subclass's first use: dispatch on
        subclass_used(cls)
    return out


def to_dense(self, dtype=None, *, masked_grad=None):
    """to_dense(dtype=None, *, masked_grad=None) -> Tensor

    A strided copy of :attr:`self` if it is not strided, else :attr:`self` (converted to
    ``dtype`` when it is given and differs)."""
    if dtype is None or dtype == self.dtype:
        return self
    return self.to(dtype)


def hardshrink(self, lambd=0.5):
    """See :func:`framework.nn.functional.hardshrink`."""
    from .nn import functional as F
    return F.hardshrink(self, lambd)


def prelu(self, weight):
    """See :func:`framework.nn.functional.prelu`."""
    from .nn import functional as F
    return F.prelu(self, weight)


def _get_volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


def _set_volatile(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", stacklevel=2)


volatile = property(_get_volatile, _set_volatile)


# ---- nonzero_static -------------------------------------------------------------------------

def nonzero_static(input, *, size, fill_value=-1):
    r"""nonzero_static(input, *, size, fill_value=-1) -> Tensor

    The indices of the non-zero elements of :attr:`input`, as :func:`framework.nonzero`, in
    a tensor of fixed shape ``(size, input.dim())``: truncated to the first ``size`` rows
    when there are more, padded with rows of :attr:`fill_value` when there are fewer.
    """
    from ._ops import creation
    from ._tensor import Tensor
    import framework
    if not isinstance(input, Tensor):
        raise TypeError(f"nonzero_static(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not "
                        f"{type(size).__name__}")
    if isinstance(fill_value, bool) or not isinstance(fill_value, int):
        raise TypeError(f"nonzero_static(): argument 'fill_value' must be int, not "
                        f"{type(fill_value).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if input.device.type == "meta":   # its shape does not depend on data
        return creation.empty((size, input.dim()), dtype=_dtype.int64, device=input.device)
    nz = framework.nonzero(input)
    k = nz.shape[0]
    if k >= size:
        return nz[:size].contiguous() if k > size else nz
    pad = creation.full((size - k, input.dim()), fill_value, dtype=_dtype.int64,
                        device=input.device)
    return framework.cat((nz, pad), dim=0)


def _nonzero_static_method(self, *, size, fill_value=-1):
    return nonzero_static(self, size=size, fill_value=fill_value)


_nonzero_static_method.__name__ = "nonzero_static"
_nonzero_static_method.__doc__ = "See :func:`framework.nonzero_static`."


_METHODS = {
    "apply_": apply_, "map_": map_, "map2_": map2_,
    "const_data_ptr": const_data_ptr, "mutable_data_ptr": mutable_data_ptr,
    "dim_order": dim_order, "resize": resize, "resize_as": resize_as,
    "as_subclass": as_subclass, "nonzero_static": _nonzero_static_method,
    "hardshrink": hardshrink, "prelu": prelu, "to_dense": to_dense, "volatile": volatile,
}


def install(Tensor):
    """Sets the methods above on ``Tensor``, leaving any it already has."""
    for name, fn in _METHODS.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
