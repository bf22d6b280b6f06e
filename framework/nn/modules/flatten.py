"""``Flatten`` and ``Unflatten``: reshape a range of dimensions."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flattens dimensions ``start_dim`` to ``end_dim`` (inclusive) into one.
    Default: every dimension but the batch one."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Expands dimension ``dim`` into ``unflattened_size`` (a tuple/list of ints, one of
    which may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("Unflatten with a named dimension needs named tensors, "
                                      "which framework does not have")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for i, s in enumerate(unflattened_size):
            if not isinstance(s, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element of "
                                f"type {type(s).__name__} at pos {i}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
