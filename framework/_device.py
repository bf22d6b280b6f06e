"""framework.device: where a tensor lives ("cpu" or "cuda:N")."""

__all__ = ["device"]


def _is_foreign_device(obj):
    """Whether ``obj`` is a PyTorch ``torch.device``: on a GPU, Triton's driver hands one out
    (``get_active_torch_device``) when PyTorch is loaded, and scripts pass it on."""
    return obj.__class__.__name__ == "device" and isinstance(getattr(obj, "type", None), str)


class device:
    """A device type and optional index, as in ``framework.device("cuda:0")``."""

    __slots__ = ("type", "index", "_str")
    _cache = {}

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): got a device and an index")
            return type
        if isinstance(type, int) and index is None:   # device(0) means cuda:0, as in torch
            type, index = "cuda", type
        key = (type, index)
        d = cls._cache.get(key)
        if d is not None:
            return d
        if not isinstance(type, str):
            if _is_foreign_device(type) and index is None:
                return cls(type.type, type.index)
            raise TypeError(f"device(): argument 'type' must be str, not {type.__class__.__name__}")
        kind, sep, idx = type.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if kind not in ("cpu", "cuda", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        # one object per (type, index): "cuda:0" and ("cuda", 0) are the same device, and
        # the ops compare devices by identity
        d = cls._cache.get((kind, index))
        if d is not None:
            cls._cache[key] = d
            return d
        d = object.__new__(cls)
        d.type, d.index = kind, index
        d._str = kind if index is None else f"{kind}:{index}"
        cls._cache[key] = cls._cache[(kind, index)] = d
        return d

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self._str

    def __eq__(self, other):
        if other is self:  # canonical devices are shared objects: the usual case
            return True
        if isinstance(other, str):
            other = device(other)
        elif not isinstance(other, device) and _is_foreign_device(other):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    # `with framework.device("cuda"):` sets the default device of factory functions
    def __enter__(self):
        from ._ops import alloc
        alloc.push_default_device(self)
        return self

    def __exit__(self, *exc):
        from ._ops import alloc
        alloc.pop_default_device()


CPU = device("cpu")


def canonical(d):
    """A tensor's device: cuda without an index means the current cuda device."""
    if d is None:
        return None
    if not isinstance(d, device):
        d = device(d)
    if d.type == "cuda" and d.index is None:
        from . import cuda
        return device("cuda", cuda.current_device())
    return d


def set_default_device(device):
    """Sets the device factory functions (``empty``, ``zeros``, ``randn``, modules'
    parameters ...) allocate on when given no ``device``; None means the CPU. A ``with
    framework.device(...)`` block still wins inside it."""
    from ._ops import alloc
    alloc.set_default_device(CPU if device is None else canonical(device))


def get_default_device():
    """The device factory functions allocate on when given no ``device``."""
    from ._ops import alloc
    return alloc.default_device()
