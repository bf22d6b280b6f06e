"""Packed and padded sequences for the recurrent layers (PyTorch's ``torch.nn.utils.rnn``).

A ``PackedSequence`` stores a batch of variable-length sequences time step by time step:
``data`` holds, for t = 0, 1, ..., the ``batch_sizes[t]`` sequences still running at step
t (sorted longest first), so a recurrent layer processes step t on the first
``batch_sizes[t]`` rows of its hidden state. Packing and unpacking are one
``index_select`` each, so gradients flow through them.
"""
from collections import namedtuple

import numpy as np

import framework

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceBase = namedtuple(
    "PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _bind(t, fn):
    return None if t is None else fn(t)


class PackedSequence(_PackedSequenceBase):
    r"""Holds the data and ``batch_sizes`` of a packed sequence (a namedtuple of
    ``data``, ``batch_sizes``, ``sorted_indices``, ``unsorted_indices``).

    Made by :func:`pack_padded_sequence` and :func:`pack_sequence`, not by hand.
    ``batch_sizes`` is an int64 CPU tensor; ``sorted_indices`` maps packed batch rows to
    the original batch order, ``unsorted_indices`` is its inverse.
    """
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should "
                "never be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The sequence with ``data`` converted as ``Tensor.to`` does; the indices follow
        its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t):
            return t.to(data.device)
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move),
                          _bind(self.unsorted_indices, move))

    def cuda(self, device=None, non_blocking=False):
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device, non_blocking=non_blocking)

    def cpu(self):
        return self.to("cpu")

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def double(self):
        return self.to(dtype=framework.float64)

    def float(self):
        return self.to(dtype=framework.float32)

    def half(self):
        return self.to(dtype=framework.float16)

    def long(self):
        return self.to(dtype=framework.int64)

    def int(self):
        return self.to(dtype=framework.int32)

    def short(self):
        return self.to(dtype=framework.int16)

    def char(self):
        return self.to(dtype=framework.int8)

    def byte(self):
        return self.to(dtype=framework.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (None stays None)."""
    if permutation is None:
        return None
    out = framework.empty_like(permutation)
    return out.scatter_(0, permutation,
                        framework.arange(permutation.numel(), device=permutation.device))


def _lengths_list(lengths):
    """``lengths`` (list or tensor) as an int64 CPU tensor and a Python list, with
    PyTorch's check."""
    if not isinstance(lengths, framework.Tensor):
        lengths = framework.as_tensor(lengths, dtype=framework.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=framework.int64)
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        dev = str(lengths.device) if lengths.device.type != "cpu" else "cpu"
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {dev} Long tensor")
    return lengths, [int(v) for v in lengths.tolist()]


def _batch_sizes(lengths):
    """batch_sizes[t] = number of sequences longer than t (lengths sorted descending)."""
    steps = lengths[0] if lengths else 0
    return [sum(1 for n in lengths if n > t) for t in range(steps)]


def _packed_rows(batch_sizes, batch):
    """For each packed row, its index in a (T * batch) time-major layout."""
    return np.concatenate([t * batch + np.arange(bs) for t, bs in enumerate(batch_sizes)])


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    r"""Packs a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of
    sequences of the given ``lengths``.

    With ``enforce_sorted=True`` the lengths must be in decreasing order; otherwise the
    batch is sorted here and the permutation kept in ``sorted_indices``.
    """
    lengths, lens = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = framework.sort(lengths, descending=True)
        lens = [int(v) for v in lengths.tolist()]
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    steps, batch = input.shape[0], input.shape[1]
    if len(lens) != batch:
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX "
            "exportability.")
    if lens[0] > steps:
        raise RuntimeError(f"Expected all lengths to be at most the padded sequence length "
                           f"{steps}, but got a length of {lens[0]}")
    sizes = _batch_sizes(lens)
    rows = framework.tensor(_packed_rows(sizes, batch), device=input.device)
    data = input.reshape((steps * batch,) + tuple(input.shape[2:])).index_select(0, rows)
    batch_sizes = framework.tensor(sizes, dtype=framework.int64)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    r"""Unpacks a :class:`PackedSequence` into ``(padded, lengths)``: a ``(T, B, *)``
    tensor (``(B, T, *)`` with ``batch_first``) filled with ``padding_value`` past each
    sequence's end, and the int64 CPU lengths, in the original batch order.
    ``total_length`` pads T up to that length."""
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}")
        steps = total_length
    data = sequence.data
    batch = sizes[0] if sizes else 0
    n = data.shape[0]
    # Each (t, b) slot takes packed row offset[t] + b, or the padding row n past the end.
    index = np.full((steps, batch), n, dtype=np.int64)
    offset = 0
    for t, bs in enumerate(sizes):
        index[t, :bs] = offset + np.arange(bs)
        offset += bs
    pad_row = framework.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                             device=data.device)
    source = framework.cat([data, pad_row])
    index = framework.tensor(index.reshape(-1), device=data.device)
    padded = source.index_select(0, index).reshape((steps, batch) + tuple(data.shape[1:]))
    lengths = framework.tensor([sum(1 for bs in sizes if bs > b) for b in range(batch)],
                               dtype=framework.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    r"""Stacks a list of tensors ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), T the longest L_i, padding with ``padding_value`` on
    ``padding_side`` ("right" or "left")."""
    if isinstance(sequences, framework.Tensor):
        sequences = sequences.unbind(0)
    try:
        sequences = tuple(sequences)
    except TypeError:
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got "
                           f"arg of type: {type(sequences)}") from None
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    trailing = tuple(first.shape[1:])
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for i, s in enumerate(sequences):
        if tuple(s.shape[1:]) != trailing:
            dim = next(d for d in range(1, s.dim()) if s.shape[d] != first.shape[d])
            raise RuntimeError(f"The size of tensor a ({first.shape[dim]}) must match the "
                               f"size of tensor b ({s.shape[dim]}) at non-singleton "
                               f"dimension {dim}")
        s = s.to(first.dtype)
        fill = framework.full((longest - s.shape[0],) + trailing, padding_value,
                              dtype=first.dtype, device=s.device)
        padded.append(framework.cat([s, fill] if padding_side == "right" else [fill, s]))
    return framework.stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    r"""The inverse of :func:`pad_sequence`: a list of the ``lengths[i]`` first steps of
    each sequence of ``padded_sequences``. (Unlike PyTorch, the input is not transposed
    in place when ``batch_first=False``.)"""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    r"""Packs a list of tensors ``(L_i, *)``: ``pack_padded_sequence(pad_sequence(...))``."""
    lengths = framework.as_tensor([s.size(0) for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    r"""The inverse of :func:`pack_sequence`: a list of tensors ``(L_i, *)``."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
