"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers on assignment."""
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


def _empty():
    from .._ops import creation
    return creation.empty(0)


class Parameter(Tensor):
    r"""A Tensor that is a module parameter: assigning it to a Module attribute registers it,
    so that it shows up in :meth:`Module.parameters`.

    Args:
        data (Tensor): parameter tensor (the Parameter shares its storage).
        requires_grad (bool, optional): if the parameter requires gradient. Default: ``True``
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty()
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter.__new__(): argument 'data' (position 1) must be Tensor, "
                            f"not {type(data).__name__}")
        # an alias of ``data`` (same storage, hence same version counter), detached from
        # the graph: a parameter is always a leaf
        p = object.__new__(cls)
        p._storage = data._storage
        p._shape = data._shape
        p._stride = data._stride
        p._offset = data._offset
        p.dtype = data.dtype
        p._requires_grad = False
        p._grad = None
        p._grad_fn = None
        p._output_nr = 0
        p._base = None
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        # as PyTorch: the copy has the values and requires_grad, not the .grad
        result = type(self)(self.data.clone(), self._requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.data, self._requires_grad, type(self)))


def _rebuild_parameter(data, requires_grad, cls=Parameter):
    return cls(data, requires_grad)


class _BufferMeta(type):
    # ``isinstance(t, Buffer)`` is true for the tensors that ``Buffer(...)`` marked
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and bool(
                getattr(instance, "__dict__", {}).get("_is_buffer", False))
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    r"""Marks a tensor as a module buffer: assigning ``Buffer(t)`` to a Module attribute
    registers ``t`` as a buffer (saved in ``state_dict`` unless ``persistent=False``).

    Args:
        data (Tensor): buffer tensor.
        persistent (bool, optional): whether the buffer is part of the module's
            ``state_dict``. Default: ``True``
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty()
        t = data.detach()
        if data.requires_grad:
            t.requires_grad_(True)
        t.__dict__["persistent"] = persistent
        t.__dict__["_is_buffer"] = True
        return t
