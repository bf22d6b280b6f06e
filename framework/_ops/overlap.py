"""Memory-overlap rules for written-to tensors, as PyTorch applies them (its MemoryOverlap):

- internal overlap: a tensor written in place (or given as ``out=``) whose elements share
  memory (a stride of 0 over a size above 1, as ``expand`` makes) is refused, since the
  result would depend on the order the kernel visits elements in;
- partial overlap: an input that shares some but not all of its memory with the output
  (``v.add_(v.t())``) is refused for the same reason; an input that is exactly the output
  (same storage, offset, sizes and strides) is fine for pointwise ops.

Layouts PyTorch cannot decide cheaply (neither stride-0 nor non-overlapping-and-dense) are
let through, as in PyTorch.
"""
NO, YES, TOO_HARD, PARTIAL, FULL = "no", "yes", "too_hard", "partial", "full"

_INTERNAL = ("unsupported operation: more than one element of the written-to tensor refers to "
             "a single memory location. Please clone() the tensor before performing the "
             "operation.")
_PARTIAL = ("unsupported operation: some elements of the input tensor and the written-to "
            "tensor refer to a single memory location. Please clone() the tensor before "
            "performing the operation.")


def non_overlapping_and_dense(shape, stride):
    """True when the elements fill a block of memory with no gaps and no sharing."""
    dims = sorted((s, n) for n, s in zip(shape, stride) if n != 1)
    expected = 1
    for s, n in dims:
        if s != expected:
            return False
        expected *= n
    return True


def internal_overlap(t):
    """YES when two elements of ``t`` share memory for certain, NO when none do, TOO_HARD
    otherwise."""
    shape, stride = t._shape, t._stride
    for n, s in zip(shape, stride):
        if s == 0 and n > 1:
            return YES
    if non_overlapping_and_dense(shape, stride):
        return NO
    return TOO_HARD


def check_internal(t):
    """Raises PyTorch's error if ``t`` may not be written to (elements sharing memory)."""
    for n, s in zip(t._shape, t._stride):
        if s == 0 and n > 1:
            raise RuntimeError(_INTERNAL)


def _span(t):
    """[first, last + 1) byte range of ``t`` in its storage (empty tensors span nothing)."""
    size = t.dtype.itemsize
    lo = t._offset * size
    if not all(t._shape):
        return lo, lo
    hi = lo + (sum((n - 1) * s for n, s in zip(t._shape, t._stride)) + 1) * size
    return lo, hi


def overlap(a, b):
    """NO, FULL (same memory, same layout), PARTIAL or TOO_HARD for two tensors."""
    if a._storage is not b._storage:
        return NO
    if a.numel() == 0 or b.numel() == 0:
        return NO
    if internal_overlap(a) is not NO or internal_overlap(b) is not NO:
        return TOO_HARD
    (a0, a1), (b0, b1) = _span(a), _span(b)
    if (a0, a1) == (b0, b1) and a._stride == b._stride and a._shape == b._shape:
        return FULL
    if a0 < b1 and b0 < a1:
        return PARTIAL
    return NO


def check_partial(out, inp):
    """Raises PyTorch's error when ``inp`` shares part (not all) of ``out``'s memory."""
    if out._storage is inp._storage and overlap(out, inp) is PARTIAL:
        raise RuntimeError(_PARTIAL)


def check_any(out, inp):
    """Raises when ``inp`` shares any memory with ``out`` (ops that read inputs at other
    positions than they write: index_select, gather, cat...)."""
    if out._storage is inp._storage and overlap(out, inp) in (PARTIAL, FULL):
        raise RuntimeError(_PARTIAL)
