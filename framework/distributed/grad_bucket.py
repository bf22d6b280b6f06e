"""``GradBucket``: what a DDP communication hook receives for one bucket of gradients."""

__all__ = ["GradBucket"]


class GradBucket:
    """One bucket of DistributedDataParallel: its flattened local gradients (``buffer()``,
    not yet averaged), the parameters it holds and their gradients as views of the buffer.
    Bucket 0 holds the last parameters (backward produces their gradients first)."""

    def __init__(self, index, num_buckets, buffer, offsets, params):
        self._index = index
        self._num_buckets = num_buckets
        self._buffer = buffer
        self._offsets = offsets
        self._params = params

    def index(self):
        """The index of this bucket (0: the one all-reduced first)."""
        return self._index

    def is_last(self):
        """Whether this is the last bucket of the iteration to be all-reduced."""
        return self._index == self._num_buckets - 1

    def buffer(self):
        """The flattened 1D tensor of the bucket's gradients."""
        return self._buffer

    def set_buffer(self, buffer):
        """Replaces the bucket's flattened tensor (a compression hook's cast, say)."""
        self._buffer = buffer

    def gradients(self):
        """The gradient of each parameter, a view of ``buffer()`` shaped as the parameter."""
        return [self._buffer[o:o + p.numel()].view(p.shape)
                for p, o in zip(self._params, self._offsets)]

    def parameters(self):
        """The model parameters whose gradients are in this bucket."""
        return list(self._params)
