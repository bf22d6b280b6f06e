"""CPU launchers: embedding kernels (native/embedding.cpp).

``weight`` / ``grad_weight`` are contiguous (num_weights, D) tensors of a floating dtype,
``indices`` a contiguous (n,) int32 or int64 tensor, ``out`` / ``grad`` contiguous (n, D)
tensors of the weight's dtype. framework/kernels/embedding.py has the same launchers."""
from .. import _C


def embedding_forward(weight, indices, out, n, D, num_weights):
    """out (n, D) = rows of weight (num_weights, D) at indices (n,); raises IndexError
    ("index out of range in self") for an index outside [0, num_weights), before anything
    is written."""
    _C.embedding_forward(indices.dtype.code, weight.data_ptr(), indices.data_ptr(),
                         out.data_ptr(), n, D, num_weights, D * weight.dtype.itemsize)


def embedding_backward(grad, indices, grad_weight, n, D, num_weights, padding_idx,
                       scale_grad_by_freq):
    """grad_weight (num_weights, D) = the sum of the rows of grad (n, D) at each index
    (divided by the index's count in indices with scale_grad_by_freq; row padding_idx,
    if in [0, num_weights), zero). grad and grad_weight share one floating dtype; the sums
    are in float32 (float64 for float64), in a fixed order. Raises IndexError for an index
    outside [0, num_weights)."""
    _C.embedding_backward(grad.dtype.code, indices.dtype.code, grad.data_ptr(),
                          indices.data_ptr(), grad_weight.data_ptr(), n, D, num_weights,
                          int(padding_idx), bool(scale_grad_by_freq))
