"""``asarray``: an object as a tensor, sharing memory with it whenever it can."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import alloc


def _same_device(have, want):
    return want is None or (have.type == want.type and
                            (want.index is None or have.index == want.index))


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """Converts ``obj`` (a tensor, NumPy array or scalar, DLPack capsule, object with the
    buffer protocol, scalar or sequence of scalars) to a tensor. Tensors, arrays, capsules
    and buffers are shared unless another dtype or device, or ``copy=True``, is asked for;
    ``copy=False`` raises when the result cannot share ``obj``'s memory."""
    dev = alloc.resolve_device(device) if device is not None else None
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        dtype = alloc.resolve_dtype(dtype)
    from .creation import from_numpy, tensor
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, np.ndarray):
        if any(s < 0 for s in obj.strides):
            raise ValueError(
                "At least one stride in the given numpy array is negative, and tensors with "
                "negative strides are not currently supported. (You can probably work around "
                "this by making a copy of your array  with array.copy().) ")
        t = from_numpy(obj)
    elif isinstance(obj, np.generic):
        if copy is False:
            raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or "
                               "transform it in a ndarray. ")
        return _grad(tensor(np.asarray(obj), dtype=dtype, device=dev), requires_grad)
    elif hasattr(obj, "__dlpack__") or type(obj).__name__ == "PyCapsule":
        from .._dlpack import from_dlpack
        t = from_dlpack(obj)
    elif _is_buffer(obj):
        from .._frombuffer import frombuffer
        t = frombuffer(obj, dtype=dtype or _dtype.get_default_dtype())
    else:   # scalars and sequences: always a new tensor on the default device
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return _grad(tensor(obj, dtype=dtype, device=dev), requires_grad)
    if dtype is not None and t.dtype is not dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{t.dtype.scalar_name}' into "
                             f"dtype '{dtype.scalar_name}'.")
        t, copied = t.to(dtype=dtype), True
    else:
        copied = False
    if not _same_device(t.device, dev):
        if copy is False:
            raise ValueError(f"can't alias tensor from device '{t.device}' to '{dev}'.")
        t, copied = t.to(device=dev), True
    if copy and not copied:
        t, copied = t.clone(), True
    return _grad(t, requires_grad)


def _is_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _grad(t, requires_grad):
    """``t`` with ``requires_grad`` applied: None keeps it (and the history), False gives a
    view without history, True keeps the history or makes ``t`` a leaf that requires grad."""
    if requires_grad is None or requires_grad == t.requires_grad:
        return t
    if not requires_grad:
        return t.detach()
    if t.dtype.category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    # PyTorch marks the caller's own tensor when the result is that tensor
    return t.requires_grad_(True)
