"""How a DTensor is laid out along one mesh dimension: ``Shard(dim)``, ``Replicate()`` or
``Partial(reduce_op)`` (PyTorch's ``torch.distributed.tensor.placement_types``)."""

__all__ = ["Placement", "Shard", "Replicate", "Partial"]

_REDUCE_OPS = ("sum", "avg", "max", "min")


class Placement:
    """The base class of the placements."""

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


class Shard(Placement):
    """Split along tensor dimension ``dim`` as ``torch.chunk`` does: rank ``i`` of the mesh
    dimension holds chunk ``i`` (earlier ranks hold ``ceil(n / ranks)`` rows, later ones
    fewer or none)."""

    def __init__(self, dim):
        if not isinstance(dim, int):
            raise TypeError(f"Shard: dim must be an int, got {type(dim).__name__}")
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash(("Shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class Replicate(Placement):
    """Every rank of the mesh dimension holds the whole tensor."""

    def is_replicate(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """Every rank holds a partial value; the tensor is their reduction by ``reduce_op``
    ("sum", "avg", "max" or "min")."""

    def __init__(self, reduce_op="sum"):
        if reduce_op not in _REDUCE_OPS:
            raise ValueError(f"Partial: reduce_op must be one of {_REDUCE_OPS}, got "
                             f"{reduce_op!r}")
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash(("Partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"


def chunk_range(size, num_chunks, index):
    """(start, length) of chunk ``index`` when ``size`` rows are split as ``torch.chunk``
    does: chunks of ``ceil(size / num_chunks)`` rows, the last ones shorter or empty."""
    step = -(-size // num_chunks) if size else 0
    start = min(index * step, size)
    return start, min(step, size - start)
