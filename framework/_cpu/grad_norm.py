"""CPU launchers: multi-tensor gradient norm and clipping (native/grad_norm.cpp), for
clip_grad_norm_. The tensors are contiguous, on the CPU, all float32 or all float64
(framework/nn/utils/clip_grad.py checks)."""
from .. import _C
from .._ops import alloc


def total_norm(tensors):
    """The 2-norm of ``tensors`` as if concatenated: a 0-d tensor of their dtype."""
    ref = tensors[0]
    out = alloc.empty((), ref.dtype, ref._storage.device)
    _C.grad_total_norm(ref.dtype.code, [t.data_ptr() for t in tensors],
                       [t.numel() for t in tensors], out.data_ptr())
    return out


def scale_(tensors, max_norm, total):
    """Every tensor *= min(max_norm / (total + 1e-6), 1), ``total`` a 1-element float32 or
    float64 tensor on the CPU."""
    _C.grad_scale(tensors[0].dtype.code, [t.data_ptr() for t in tensors],
                  [t.numel() for t in tensors], float(max_norm), total.dtype.code,
                  total.data_ptr())
