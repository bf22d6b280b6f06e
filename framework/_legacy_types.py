"""PyTorch's legacy tensor types: ``framework.FloatTensor``, ``framework.cuda.LongTensor``
and the rest. Each is a constructor (``LongTensor([1, 2])``, ``FloatTensor(2, 3)``) and a
type that ``isinstance`` matches by dtype and device; ``Tensor.type`` and
``set_default_tensor_type`` take them (or their names, "torch.cuda.HalfTensor").
"""
import warnings

from . import _dtype

# (name, dtype) of the types PyTorch has on the CPU and on cuda
_TYPES = (("Float", _dtype.float32), ("Double", _dtype.float64), ("Half", _dtype.float16),
          ("BFloat16", _dtype.bfloat16), ("Byte", _dtype.uint8), ("Char", _dtype.int8),
          ("Short", _dtype.int16), ("Int", _dtype.int32), ("Long", _dtype.int64),
          ("Bool", _dtype.bool))


class tensortype(type):
    """The class of the legacy tensor types: calling one makes a tensor of its dtype on its
    device (Tensor.new's rules); ``isinstance(t, FloatTensor)`` is a dtype-and-device test."""

    _layout_name = "strided"   # framework.sparse.FloatTensor and the rest: "sparse_coo"

    def __instancecheck__(cls, obj):
        from ._tensor import Tensor
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.device.type == cls._device_type
                and str(obj.layout).rsplit(".", 1)[-1] == cls._layout_name)

    def __call__(cls, *args, device=None):
        from ._ops import composites_extra, creation
        proto = creation.empty((0,), dtype=cls.dtype, device=device or cls._device_type)
        return composites_extra.new(proto, *args)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make(device_type, module):
    types = {}
    for name, dt in _TYPES:
        cls = tensortype(name + "Tensor", (), {"dtype": dt, "is_cuda": device_type == "cuda",
                                                 "_device_type": device_type})
        cls.__module__ = module
        types[name + "Tensor"] = cls
    return types


CPU_TYPES = _make("cpu", "framework")
CUDA_TYPES = _make("cuda", "framework.cuda")
_BY_NAME = {**{f"{p}.{n}": c for n, c in CPU_TYPES.items() for p in ("torch", "framework")},
            **{f"{p}.cuda.{n}": c for n, c in CUDA_TYPES.items()
               for p in ("torch", "framework")}}


def resolve(t):
    """A legacy type given as itself or by name ("torch.FloatTensor"); None for anything
    else (a dtype)."""
    if isinstance(t, tensortype):
        return t
    if isinstance(t, str):
        cls = _BY_NAME.get(t)
        if cls is None:
            raise ValueError(f"invalid type: '{t}'")
        return cls
    return None


_warned = False


def set_default_tensor_type(t):
    """Deprecated: sets the default floating dtype (and, for a cuda type, the default
    device) from a legacy tensor type or its name."""
    global _warned
    if not _warned:    # once a process, as PyTorch's
        _warned = True
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    cls = resolve(t)
    if cls is None:
        raise TypeError(f"invalid type object: only floating-point types are supported as the "
                        f"default type, got {t!r}")
    if not cls.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    from ._device import set_default_device
    _dtype.set_default_dtype(cls.dtype)
    set_default_device("cuda" if cls.is_cuda else "cpu")
