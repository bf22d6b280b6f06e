"""Multi-tensor gradient norm and clipping (Triton), the cuda side of native/grad_norm.cpp:
``clip_grad_norm_`` on cuda in three launches instead of three per gradient (230 for the
demo GPT's 76 parameters).

``total_norm`` writes each program's sum of squares of one BLOCK of one tensor (tables from
multi_tensor.py) to a partials buffer, then one program sums the partials in a fixed order
(deterministic, no atomics) and stores the square root in the gradients' dtype.
``scale_`` multiplies every gradient by ``min(max_norm / (total + 1e-6), 1)``, reading the
total on the device: nothing comes back to the host. float32 accumulates in float32,
float64 in float64."""
import triton
import triton.language as tl

from .launcher import cached
from .multi_tensor import BLOCK, at as _at, block as _block, tables as _tables
from .pointwise import _params_bits, from_bits

_FINISH_BLOCK = 1024


def _acc(t):
    return tl.float64 if t.dtype.name == "float64" else tl.float32


@cached
@triton.jit
def _sumsq_kernel(ref, tg, numels, start, owner, partials, ACC: tl.constexpr,
                  BLOCK: tl.constexpr):
    t, off, numel = _block(owner, start, numels, BLOCK)
    g = tl.load(_at(tg, t, ref) + off, mask=off < numel, other=0).to(ACC)
    tl.store(partials + tl.program_id(0), tl.sum(g * g, axis=0))


@cached
@triton.jit
def _finish_kernel(partials, n, out, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], partials.dtype.element_ty)
    for i in range(0, n, BLOCK):
        idx = i + tl.arange(0, BLOCK)
        acc += tl.load(partials + idx, mask=idx < n, other=0)
    tl.store(out, tl.sqrt(tl.sum(acc, axis=0)).to(out.dtype.element_ty))


@cached
@triton.jit
def _scale_kernel(ref, tg, numels, start, owner, total, max_norm_bits, ACC: tl.constexpr,
                  BLOCK: tl.constexpr):
    t, off, numel = _block(owner, start, numels, BLOCK)
    mask = off < numel
    gp = _at(tg, t, ref) + off
    # as torch: clamp(max_norm / (total + 1e-6), max=1) in the total's dtype
    tot = tl.load(total)
    max_norm = from_bits(max_norm_bits).to(tot.dtype)
    coef = max_norm / (tot + 1e-6)
    coef = tl.where(coef > 1.0, 1.0, coef)      # a NaN total stays NaN (tl.minimum drops it)
    g = tl.load(gp, mask=mask)
    tl.store(gp, (g.to(ACC) * coef.to(g.dtype).to(ACC)).to(g.dtype), mask=mask)


def total_norm(tensors):
    """The 2-norm of ``tensors`` as if concatenated, a 0-d tensor of their dtype on their
    device (contiguous, all float32 or all float64: framework/nn/utils/clip_grad.py checks)."""
    import framework as fw
    ref = tensors[0]
    (tg, ), numels, start, owner, grid = _tables(tensors)
    acc = fw.float64 if ref.dtype is fw.float64 else fw.float32
    partials = fw.empty((grid, ), dtype=acc, device=ref.device)
    _sumsq_kernel[(grid, )](ref, tg, numels, start, owner, partials, ACC=_acc(ref),
                            BLOCK=BLOCK)
    out = fw.empty((), dtype=ref.dtype, device=ref.device)
    _finish_kernel[(1, )](partials, grid, out, BLOCK=_FINISH_BLOCK)
    return out


def scale_(tensors, max_norm, total):
    """Every tensor *= min(max_norm / (total + 1e-6), 1), ``total`` a 1-element float32 or
    float64 tensor on their device."""
    ref = tensors[0]
    (tg, ), numels, start, owner, grid = _tables(tensors)
    _scale_kernel[(grid, )](ref, tg, numels, start, owner, total, *_params_bits(max_norm),
                            ACC=_acc(ref), BLOCK=BLOCK)
