"""``nn.functional.pad``: constant, reflect, replicate and circular padding.

The output is written as a few strided copies of pieces of the input: along each padded
dim the output index maps to an input index piecewise linearly (step 1 in the middle,
step -1 for a reflected border, step 0 for a replicated one), so each combination of
pieces is one copy through a view with negative or zero strides.
"""
from .. import _dtype
from .._tensor import Tensor
from . import alloc
from .pointwise import require_tensor
from .shape import copy_pieces, int_list

_MODES = ("constant", "reflect", "replicate", "circular")
_KERNEL = {"reflect": "reflection_pad", "replicate": "replication_pad"}


def pad(input, pad, mode="constant", value=None):
    """Pads the last ``len(pad) // 2`` dims of ``input``. ``pad`` is (left, right) for the
    last dim, then (top, bottom) for the one before it, and so on; negative values crop.

    Modes: 'constant' fills with ``value`` (default 0) and works for any number of dims;
    'reflect' mirrors without repeating the edge, 'replicate' repeats the edge and
    'circular' wraps around. These three pad the last 1, 2 or 3 dims of an input with one
    or two more dims than that (the optional batch dim), as in PyTorch.
    """
    require_tensor("pad", input, "input", 1)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pads = int_list("pad", "pad", 2, pad)
    nd = len(input._shape)
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) > 2 * nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pads)} and input of "
                           f"dimension {nd}")
    k = len(pads) // 2
    dims = list(range(nd - k, nd))
    pairs = [(pads[2 * (nd - 1 - d)], pads[2 * (nd - 1 - d) + 1]) for d in dims]
    if mode == "constant":
        return _constant(input, dims, pairs, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if not (1 <= k <= 3 and nd in (k + 1, k + 2)):
        raise NotImplementedError(f"Padding size {len(pads)} is not supported for {nd}D input "
                                  f"tensor.")
    if mode == "circular":
        return _circular(input, dims, pairs)
    return _mirror(input, dims, pairs, mode)


def _constant(x, dims, pairs, value):
    shape, pieces = list(x._shape), {}
    for d, (a, b) in zip(dims, pairs):
        kept = shape[d] + min(a, 0) + min(b, 0)
        if kept < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        left, right = max(a, 0), max(b, 0)
        shape[d] = left + kept + right
        # only the borders are filled: (start, length, None, None) pieces
        pieces[d] = [(0, left, None, None), (left, kept, max(-a, 0), 1),
                     (left + kept, right, None, None)]
    res = alloc.empty(tuple(shape), x.dtype, x._storage.device)
    copy_pieces(res, x, pieces, value)
    return res


def _circular(x, dims, pairs):
    shape, pieces = list(x._shape), {}
    for d, (a, b) in zip(dims, pairs):
        n = shape[d]
        if a > n or b > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + a + b < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        # PyTorch crops the negative sides first and wraps around what is left
        lo, m = max(-a, 0), n + min(a, 0) + min(b, 0)
        pa, pb = max(a, 0), max(b, 0)
        if m < 0 or pa > m or pb > m:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape[d] = m + pa + pb
        pieces[d] = [(pa, m, lo, 1), (0, pa, lo + m - pa, 1), (pa + m, pb, lo, 1)]
    res = alloc.empty(tuple(shape), x.dtype, x._storage.device)
    copy_pieces(res, x, pieces)
    return res


def _mirror(x, dims, pairs, mode):
    """reflect / replicate: out index j of a dim reads input index p = j - left, mirrored
    (reflect) or clamped (replicate) into [0, n)."""
    nd, k = len(x._shape), len(dims)
    if 0 in x._shape[nd - k - 1:]:
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{list(x._shape)}")
    if mode == "reflect":
        for i, (d, (a, b)) in enumerate(reversed(list(zip(dims, pairs)))):
            if not (a < x._shape[d] and b < x._shape[d]):
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than "
                                   f"the corresponding input dimension, but got: padding "
                                   f"({a}, {b}) at dimension {d} of input {list(x._shape)}")
    sizes = [x._shape[d] for d in dims]
    outs = [n + a + b for n, (a, b) in zip(sizes, pairs)]
    if all(o < 1 for o in outs):
        raise RuntimeError(_too_small(mode, sizes, outs))
    shape = list(x._shape)
    for d, o in zip(dims, outs):
        shape[d] = o
    for o in outs:
        if o < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {o}: {shape}")
    if x.dtype is _dtype.bool:
        raise NotImplementedError(f"\"{_KERNEL[mode]}{k}d\" not implemented for 'Bool'")
    pieces = {d: _mirror_pieces(n, a, b, o, mode)
              for d, n, (a, b), o in zip(dims, sizes, pairs, outs)}
    res = alloc.empty(tuple(shape), x.dtype, x._storage.device)
    copy_pieces(res, x, pieces)
    return res


def _mirror_pieces(n, a, b, out_n, mode):
    """(out_start, length, src_start, src_step) pieces of one dim: left border, middle,
    right border, each clipped to the output."""
    step = -1 if mode == "reflect" else 0
    # (first p, end p, source of p = c + s * p)
    segments = [(None, 0, 0, step), (0, n, 0, 1), (n, None, 2 * (n - 1) if step else n - 1, step)]
    pieces = []
    for plo, phi, c, s in segments:
        jlo = 0 if plo is None else max(plo + a, 0)
        jhi = out_n if phi is None else min(phi + a, out_n)
        if jhi > jlo:
            pieces.append((jlo, jhi - jlo, c + s * (jlo - a), s))
    return pieces


def _too_small(mode, sizes, outs):
    if len(sizes) == 1:
        return f"input (W: {sizes[0]}) is too small. Calculated output W: {outs[0]}"
    if len(sizes) == 2:
        gap = " " if mode == "replicate" else ""
        return (f"input (H: {sizes[0]}, W: {sizes[1]}{gap}) is too small. Calculated output "
                f"H: {outs[0]} W: {outs[1]}")
    return (f"input (D: {sizes[0]} H: {sizes[1]}, W: {sizes[2]}) is too small. Calculated "
            f"output D: {outs[0]} H: {outs[1]} W: {outs[2]}")
