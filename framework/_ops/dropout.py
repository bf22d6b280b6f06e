"""Fused dropout, the dropout rows of the op table: _fused_dropout (out = input * keep /
(1 - p)) and _fused_dropout_add (out = residual + input * keep / (1 - p)), one pass each.
nn.functional.dropout calls the first; nn.functional.dropout._dropout_add the second.

The keep mask comes from the Philox stream at (seed, offset), which the caller takes from
the device's generator: element i (row-major order of input's shape) is kept when 32-bit
word ``i % 4`` of counter ``offset + i // 4`` is >= round(p * 2**32), so an op over n
elements uses ``(n + 3) // 4`` counters (``counters(n)``). The mask is never stored: the
derivative (ops.yaml) calls _fused_dropout on the gradient with the same (seed, offset),
which regenerates it. That derivative is linear in the gradient and is the op itself, so
double backward needs nothing more.

Kept values are input * scale with scale = 1 / (1 - p) rounded to float32 (float64 for
float64 input), computed in float32 for 16-bit inputs and rounded once to the input's
dtype (after the residual add in the fused add). p == 1 drops everything (scale 0).
"""
import numpy as np

from .. import _dtype
from . import alloc
from .pointwise import convert, cpp_type_name, require_tensor

_FLOATS = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)
_MASK64 = (1 << 64) - 1


def counters(n):
    """Philox counters a dropout over ``n`` elements uses (one per four elements)."""
    return (n + 3) // 4


def _params(op, p, dtype):
    """(threshold, scale) of the kernels for drop probability p."""
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    threshold = min(1 << 32, int(round(p * 4294967296.0)))
    if p == 1.0:
        return threshold, 0.0
    scale = 1.0 / (1.0 - p)
    return threshold, scale if dtype is _dtype.float64 else float(np.float32(scale))


def _contig(x):
    return x if x.is_contiguous() else convert(x, x.dtype, x._storage.device)


def _check_input(op, input):
    require_tensor(op, input, "input", 1)
    if input.dtype not in _FLOATS:
        raise RuntimeError(f"{op}: expected a floating point input (float16, bfloat16, "
                           f"float32 or float64), got {cpp_type_name(input.dtype)}")


def _launch(op, input, residual, p, seed, offset):
    threshold, scale = _params(op, p, input.dtype)
    dev = input._storage.device
    x = _contig(input)
    r = None if residual is None else _contig(residual)
    out = alloc.empty(x._shape, x.dtype, dev)
    if out.numel():
        alloc.backend(dev).dropout.dropout(out, x, r, int(seed) & _MASK64,
                                           int(offset) & _MASK64, threshold, scale)
    return out


def fused_dropout(input, p, seed, offset):
    """input * keep / (1 - p), keep drawn from the Philox stream at (seed, offset): each
    element is zeroed with probability p. A contiguous result of input's shape and dtype."""
    _check_input("_fused_dropout", input)
    return _launch("_fused_dropout", input, None, p, seed, offset)


def fused_dropout_add(input, residual, p, seed, offset):
    """residual + input * keep / (1 - p) in one pass, with the mask of
    ``_fused_dropout(input, p, seed, offset)``. residual must have input's shape, dtype and
    device (nn.functional.dropout._dropout_add falls back to the composite otherwise)."""
    op = "_fused_dropout_add"
    _check_input(op, input)
    require_tensor(op, residual, "residual", 2)
    if tuple(residual.shape) != tuple(input.shape) or residual.dtype is not input.dtype:
        raise RuntimeError(
            f"{op}: expected residual of input's shape and dtype, got input "
            f"{list(input.shape)} {cpp_type_name(input.dtype)} and residual "
            f"{list(residual.shape)} {cpp_type_name(residual.dtype)}")
    if residual._storage.device is not input._storage.device:
        raise RuntimeError(f"{op}: expected input and residual on one device, got "
                           f"{input.device} and {residual.device}")
    return _launch(op, input, residual, p, seed, offset)
