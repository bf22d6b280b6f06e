"""The embedding family: the lookup as one op (framework.embedding, PyTorch's aten
signature) and its weight gradient (framework.embedding_dense_backward, or with
``sparse=True`` a sparse COO tensor from embedding_sparse_backward); nn.functional.embedding
calls the first.

The kernels (native/embedding.cpp, framework/kernels/embedding.py) take a contiguous
(num_weights, D) table and contiguous flat int32/int64 indices: other layouts are copied
here. Both devices check every index and raise PyTorch's IndexError ("index out of range
in self") at the call. The backward is a deterministic segment sum per weight row on both
devices (a counting sort on the CPU, a stable sort on cuda), accumulated in float32 for
16-bit weights.

The backward is linear in grad_output, so its own derivative (double backward) is a
lookup again: the incoming gradient gathered at the same indices, scaled as the backward
scales (1 / count with scale_grad_by_freq, 0 at padding_idx).
"""
from .. import _dtype
from . import alloc
from .args import same_device
from .pointwise import require_tensor, type_name


def _fw():
    import framework
    return framework


def _check_indices(op, indices):
    if indices.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{indices.type()} instead (while checking arguments for {op})")


def _flat(indices):
    return indices.reshape(-1).contiguous()


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` ((num_weights, D)) at ``indices`` (any shape, int32 or int64):
    output ``indices.shape + (D,)``. ``padding_idx`` (in [0, num_weights); negative: none)
    and ``scale_grad_by_freq`` only change the weight's gradient
    (embedding_dense_backward). With ``sparse`` the weight's gradient is a sparse COO tensor
    (embedding_sparse_backward)."""
    op = "embedding"
    require_tensor(op, weight, "weight", 1)
    require_tensor(op, indices, "indices", 2)
    _check_indices(op, indices)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    device = same_device(op, weight, indices)
    num_weights, D = weight.shape
    idx = _flat(indices)
    n = idx.shape[0]
    out = alloc.empty((n, D), weight.dtype, device)
    alloc.backend(device).embedding.embedding_forward(weight.contiguous(), idx, out, n, D,
                                                      num_weights)
    return out.reshape(tuple(indices.shape) + (D,))


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    """The gradient of embedding's ``weight`` ((num_weights, D), grad_output's dtype) for
    ``grad_output`` (``indices.shape + (D,)``): each row is the sum of grad_output's rows
    at its index (divided by the index's count in ``indices`` with
    ``scale_grad_by_freq``); row ``padding_idx`` (if in [0, num_weights)) is zero. The sums
    are in float32 (float64 for float64) and deterministic."""
    op = "embedding_dense_backward"
    require_tensor(op, grad_output, "grad_output", 1)
    require_tensor(op, indices, "indices", 2)
    _check_indices(op, indices)
    if not grad_output.dtype.is_floating_point:
        raise NotImplementedError(f"\"{op}\" not implemented for "
                                  f"'{type_name(grad_output.dtype)}'")
    num_weights = int(num_weights)
    if num_weights < 0:
        raise RuntimeError(f"{op}: num_weights must be non-negative, got {num_weights}")
    device = same_device(op, grad_output, indices)
    idx = _flat(indices)
    n = idx.shape[0]
    D = grad_output.shape[-1] if grad_output.dim() else 1
    if grad_output.dim() == 0 or grad_output.numel() != n * D:
        raise RuntimeError(f"{op}: grad_output of shape {list(grad_output.shape)} does not "
                           f"fit indices of shape {list(indices.shape)}")
    grad = grad_output.reshape(n, D).contiguous()
    gw = alloc.empty((num_weights, D), grad_output.dtype, device)
    alloc.backend(device).embedding.embedding_backward(
        grad, idx, gw, n, D, num_weights, int(padding_idx), bool(scale_grad_by_freq))
    return gw


def embedding_sparse_backward(grad_output, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """The gradient of embedding's ``weight`` as an uncoalesced sparse COO tensor of shape
    ``(num_weights, D)``, as PyTorch's: one entry per looked-up index (the ``padding_idx``
    ones left out), its value grad_output's row there. Written with framework ops, so it
    runs on every device and is differentiable itself."""
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    from ..sparse.coo import SparseCooTensor
    D = grad_output.shape[-1]
    idx = indices.reshape(-1)
    values = grad_output.reshape(-1, D)
    if padding_idx != -1:
        keep = (idx != padding_idx).nonzero().reshape(-1)
        idx, values = idx.index_select(0, keep), values.index_select(0, keep)
    if idx.dtype is not _dtype.int64:
        idx = idx.to(_dtype.int64)
    return SparseCooTensor.make(idx.reshape(1, -1), values, (int(num_weights), D),
                                idx.shape[0] < 2)


# ---- derivative of the backward (double backward), over framework ops ------------------

def backward_grad_output(gg, indices, num_weights, padding_idx, scale_grad_by_freq):
    """d<gg, dW>/d grad_output for dW = embedding_dense_backward(grad_output, ...): dW is
    linear in grad_output, so this is gg (num_weights, D) looked up at ``indices``, each row
    first scaled as the backward scales it."""
    fw = _fw()
    pad = 0 <= padding_idx < num_weights
    if scale_grad_by_freq or pad:
        rows = fw.ones(num_weights, dtype=gg.dtype, device=gg.device)
        if scale_grad_by_freq:
            counts = fw.bincount(indices.reshape(-1).to(_dtype.int64), minlength=num_weights)
            rows = rows / counts.clamp_min(1).to(gg.dtype)
        if pad:
            rows = rows.index_fill(0, fw.tensor([padding_idx], device=gg.device), 0)
        gg = gg * rows.unsqueeze(1)
    return fw.embedding(gg, indices)
