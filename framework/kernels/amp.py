"""GradScaler's kernels (Triton), the cuda side of native/amp.cpp.

``non_finite_check_and_unscale`` is one launch over every tensor of the list (tables from
multi_tensor.py); ``update_scale`` is a single-program kernel, so neither reads anything
back to the host. 16-bit floats and float32 compute in float32, float64 in float64."""
import triton
import triton.language as tl

from .launcher import cached
from .multi_tensor import BLOCK, at as _at, block as _block, tables as _tables
from .pointwise import _down


@cached
@triton.jit
def _unscale_kernel(ref, tg, numels, start, owner, found_inf, inv_scale, ACC: tl.constexpr,
                    BLOCK: tl.constexpr):
    t, off, numel = _block(owner, start, numels, BLOCK)
    mask = off < numel
    gp = _at(tg, t, ref) + off
    g = tl.load(gp, mask=mask, other=0).to(ACC)
    # NaN fails the comparison too; masked lanes hold 0
    bad = tl.max(tl.where(tl.abs(g) < float("inf"), 0, 1), axis=0)
    # _down rounds to bfloat16 to nearest even, as the CPU does (the interpreter truncates)
    tl.store(gp, _down(g * tl.load(inv_scale).to(ACC), ref.dtype.element_ty), mask=mask)
    # every program that writes stores the same 1.0, so no atomics are needed
    tl.store(found_inf, 1.0, mask=bad > 0)


@cached
@triton.jit
def _update_scale_kernel(scale, tracker, found_inf, growth, backoff, interval):
    s = tl.load(scale)
    ok = tl.load(found_inf) == 0
    good = tl.load(tracker) + 1
    grow = ok & (good == interval)
    grown = s * growth
    keep = grow & (tl.abs(grown) < float("inf"))  # a grown scale that overflows is dropped
    s = tl.where(ok, tl.where(keep, grown, s), s * backoff)
    tl.store(scale, s)
    tl.store(tracker, tl.where(ok & (good != interval), good, 0))


def non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """Multiplies every element of ``grads`` by ``inv_scale`` in place and sets ``found_inf``
    to 1.0 if any element is inf or NaN, in one launch (see framework/_cpu/amp.py)."""
    if not grads or sum(g.numel() for g in grads) == 0:
        return
    (tg, ), numels, start, owner, grid = _tables(grads)
    acc = tl.float64 if grads[0].dtype.name == "float64" else tl.float32
    _unscale_kernel[(grid, )](grads[0], tg, numels, start, owner, found_inf, inv_scale,
                              ACC=acc, BLOCK=BLOCK)


def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                 growth_interval):
    """PyTorch's scale update in place, on the device (see framework/_cpu/amp.py); the
    factors are float32, as in PyTorch's cuda kernel."""
    _update_scale_kernel[(1, )](scale, growth_tracker, found_inf, float(growth_factor),
                                float(backoff_factor), int(growth_interval))
