"""DTensor factories: ``zeros``, ``ones``, ``empty``, ``full`` (PyTorch's
``torch.distributed.tensor`` ones): each rank allocates only its local shard."""
from ... import _dtype
from ..._ops import creation
from ._api import DTensor, _check_placements
from . import _redistribute as R
from .placement_types import Partial, Replicate

__all__ = ["zeros", "ones", "empty", "full"]


def _size(size, op):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    if not all(isinstance(s, int) and s >= 0 for s in size):
        raise TypeError(f"{op}(): size must be non-negative ints, got {size}")
    return tuple(size)


def _make(op, size, fill, dtype, requires_grad, device_mesh, placements):
    if device_mesh is None:
        raise ValueError(f"{op}(): device_mesh is required")
    if placements is None:
        placements = [Replicate()] * device_mesh.ndim
    placements = _check_placements(device_mesh, placements, len(size))
    if any(isinstance(p, Partial) for p in placements) and fill not in (None, 0):
        raise NotImplementedError(f"{op}(): Partial placement is only supported for zeros")
    shape = R.local_shape(size, device_mesh, placements)
    dtype = dtype or _dtype.get_default_dtype()
    device = device_mesh.device_type
    local = creation.empty(shape, dtype=dtype, device=device) if fill is None else \
        creation.full(shape, fill, dtype=dtype, device=device)
    out = DTensor._wrap(local, device_mesh, placements, size)
    if requires_grad:
        out.requires_grad_(True)
    return out


def zeros(*size, requires_grad=False, dtype=None, layout=None, device_mesh=None,
          placements=None):
    """A DTensor of zeros of global ``size`` laid out as ``placements``."""
    return _make("zeros", _size(size, "zeros"), 0, dtype, requires_grad, device_mesh,
                 placements)


def ones(*size, dtype=None, layout=None, requires_grad=False, device_mesh=None,
         placements=None):
    """A DTensor of ones of global ``size`` laid out as ``placements``."""
    return _make("ones", _size(size, "ones"), 1, dtype, requires_grad, device_mesh, placements)


def empty(*size, dtype=None, layout=None, requires_grad=False, device_mesh=None,
          placements=None):
    """An uninitialised DTensor of global ``size`` laid out as ``placements``."""
    return _make("empty", _size(size, "empty"), None, dtype, requires_grad, device_mesh,
                 placements)


def full(size, fill_value, *, dtype=None, layout=None, requires_grad=False, device_mesh=None,
         placements=None):
    """A DTensor of global ``size`` filled with ``fill_value``, laid out as
    ``placements``."""
    return _make("full", _size((size,) if isinstance(size, int) else tuple(size), "full"),
                 fill_value, dtype, requires_grad, device_mesh, placements)
