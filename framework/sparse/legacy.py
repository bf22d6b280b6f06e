"""PyTorch's legacy sparse tensor types: ``framework.sparse.FloatTensor(indices, values,
size)`` and the rest, as old graph code (pygcn, LightGCN) builds its adjacency matrices.
``isinstance(t, framework.sparse.FloatTensor)`` is a dtype, device and COO-layout test."""
from .. import _dtype
from .._device import device as framework_device
from .._legacy_types import _TYPES, tensortype
from .._tensor import Tensor


def _type_names(args):
    return ", ".join(type(a).__name__ for a in args)


class sparsetensortype(tensortype):
    """The class of the legacy sparse types: calling one with ``(indices, values[, size])``
    makes a COO tensor (the values keep their dtype, as PyTorch's do), with ``(*size)`` an
    empty one of the type's dtype."""

    _layout_name = "sparse_coo"

    def __call__(cls, *args, device=None):
        from .coo import sparse_coo_tensor
        device = device or cls._device_type
        if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]):
            for a in args[:2]:
                if a.device.type != framework_device(device).type:
                    raise TypeError(f"legacy constructor expects device type: "
                                    f"{framework_device(device).type} but device type: "
                                    f"{a.device.type} was passed")
            return sparse_coo_tensor(args[0], args[1], *args[2:], device=device)
        if len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = tuple(args[0])
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            from .. import empty, zeros
            index = zeros((len(args), 0), dtype=_dtype.int64, device=device)
            return sparse_coo_tensor(index, empty((0,), dtype=cls.dtype, device=device),
                                     args, device=device)
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({_type_names(args)}), but expected one of:\n"
                        " * (*, torch.device device = None)\n"
                        " * (Tensor indices, Tensor values, *, torch.device device = None)\n"
                        " * (Tensor indices, Tensor values, tuple of ints size, *, "
                        "torch.device device = None)\n"
                        " * (tuple of ints size, *, torch.device device = None)")


def make(device_type, module):
    """The legacy sparse types of one device type, by name, living in ``module``."""
    types = {}
    for name, dt in _TYPES:
        cls = sparsetensortype(name + "Tensor", (), {"dtype": dt,
                                                     "is_cuda": device_type == "cuda",
                                                     "_device_type": device_type})
        cls.__module__ = module
        types[name + "Tensor"] = cls
    return types
