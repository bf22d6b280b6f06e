"""Pooling functions of nn.functional.

Max pooling (and adaptive max pooling) is an op of the table with a kernel that returns
the indices of the maxima (framework/_ops/pool.py: max_pool{1,2,3}d_with_indices,
adaptive_max_pool{1,2,3}d_with_indices); the gradient is scattered back at those indices.
Average pooling is a composite of strided views: the input is zero-padded, cut into windows
by ``unfold`` (no copy), summed over each window and divided by PyTorch's divisor. Adaptive
average pooling averages one dim at a time (separable: a 2d bin is a product of 1d bins),
gathering each bin's elements. Lp pooling is average pooling of x**p; unpooling scatters
values at their indices. All accept unbatched inputs ((C, L), (C, H, W), (C, D, H, W)).
Argument checks and error texts are PyTorch's.
"""
import itertools
import math

import framework as _fw
from framework._ops import pool as _P
from framework._ops.memory_format import keep_format
from ..modules.utils import _pair, _single, _triple

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _keep_format(r, x, return_indices=True):
    """A pooling result, or (values, indices), channels-last when x is, as in PyTorch."""
    if not isinstance(r, tuple):
        return keep_format(r, x)
    if not return_indices:
        return keep_format(r[0], x)
    return tuple(keep_format(t, x) for t in r)


def _table():
    # the op table's nn.functional namespace (max_pool*_with_indices live there)
    return _fw._nn_functional_ops


# ---- max pooling ---------------------------------------------------------------------------

def _check_max_pool1d(input, kernel_size, stride, padding, dilation):
    """PyTorch's checks of max_pool1d (without indices), in its order and words."""
    if input.dim() not in (2, 3) or 0 in tuple(input.shape[-2:]):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{_P.sizes_text(input.shape)}")
    op = "max_pool1d"
    k = _P.ints(op, "kernel_size", kernel_size, 2)
    if len(k) != 1:
        raise RuntimeError(f"max_pool1d() kernel_size must be an int, list of ints or tuple of "
                           f"ints of size 1 but got size {len(k)}")
    s = k if stride is None else _P.ints(op, "stride", stride, 3) or k
    if len(s) != 1:
        raise RuntimeError(f"max_pool1d() stride must be None, an int, list of ints, or tuple "
                           f"of ints of size 1 but got size {len(s)}")
    p = _P.ints(op, "padding", padding, 4)
    if len(p) != 1:
        raise RuntimeError(f"max_pool1d() padding must be an int, list of ints, or tuple of "
                           f"ints of size 1 but got size {len(p)}")
    d = _P.ints(op, "dilation", dilation, 5)
    if len(d) != 1:
        raise RuntimeError(f"max_pool1d() dilation must be an int, list of ints or tuple of "
                           f"ints of size 1 but got size {len(d)}")
    k, s, p, d = k[0], s[0], p[0], d[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    return k, s, p, d


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1D max pooling over (N, C, L) or (C, L); with ``return_indices`` also the positions
    of the maxima (for :func:`max_unpool1d`)."""
    if return_indices:
        return _table().max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                                ceil_mode)
    _P.require_tensor("max_pool1d", input, "input", 1)
    k, s, p, d = _check_max_pool1d(input, kernel_size, stride, padding, dilation)
    o = _P.out_size(input.shape[-1], k, p, s, d, ceil_mode)
    if o <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return _table().max_pool1d_with_indices(input, k, s, p, d, ceil_mode)[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2D max pooling over (N, C, H, W) or (C, H, W); with ``return_indices`` also the
    positions of the maxima within each plane."""
    r = _table().max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                         ceil_mode)
    return _keep_format(r, input, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3D max pooling over (N, C, D, H, W) or (C, D, H, W); with ``return_indices`` also the
    positions of the maxima within each volume."""
    r = _table().max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                         ceil_mode)
    return _keep_format(r, input, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive 1D max pooling to ``output_size`` (bins [floor(i*L/out), ceil((i+1)*L/out)))."""
    r = _table().adaptive_max_pool1d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive 2D max pooling to ``output_size`` (an int, or (H, W) where None keeps the
    input's size)."""
    r = _table().adaptive_max_pool2d_with_indices(input, output_size)
    return _keep_format(r, input, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive 3D max pooling to ``output_size``."""
    r = _table().adaptive_max_pool3d_with_indices(input, output_size)
    return _keep_format(r, input, return_indices)


# ---- average pooling -----------------------------------------------------------------------

def _avg_divisor(size, k, s, p, o, count_include_pad):
    """Per output position along one dim: PyTorch's window size (with the padding counted
    or not), 1 where a window holds no input element (its sum, 0, is then the output)."""
    out = []
    for i in range(o):
        start = i * s - p
        end = min(start + k, size + p)
        n = end - start if count_include_pad else min(end, size) - max(start, 0)
        out.append(n if n > 0 else 1)
    return out


class _AvgGeometry:
    """One average pooling's windows over x's last nd dims (arguments already checked): the
    forward map (window sums over divisors) and its adjoint (each output's gradient spread
    over its window), both built from strided views."""

    def __init__(self, x, nd, k, s, p, out, count_include_pad, divisor_override):
        self.nd, self.k, self.s, self.p, self.out = nd, k, s, p, tuple(out)
        self.spatial = tuple(x.shape[x.dim() - nd:])
        # right padding: enough for the last window (ceil mode may run past the padding)
        self.right = [max(p[i], (out[i] - 1) * s[i] + k[i] - self.spatial[i] - p[i])
                      for i in range(nd)]
        if divisor_override is not None:
            self.div = divisor_override
        else:
            div = None
            for i in range(nd):
                v = _avg_divisor(self.spatial[i], k[i], s[i], p[i], out[i], count_include_pad)
                t = _fw.tensor(v, dtype=x.dtype, device=x.device)
                t = t.reshape((-1,) + (1,) * (nd - 1 - i))
                div = t if div is None else div * t
            self.div = div

    def _divide(self, total):
        if not total.dtype.is_floating_point:   # int64: PyTorch divides toward zero
            return total.div(self.div, rounding_mode="trunc")
        return total / self.div

    def forward(self, x):
        nd = self.nd
        pads = []
        for i in reversed(range(nd)):   # F.pad lists the last dim first
            pads += [self.p[i], self.right[i]]
        w = _fw.nn.functional.pad(x, pads) if any(pads) else x
        for i in range(nd):
            dim = x.dim() - nd + i
            w = w.unfold(dim, self.k[i], self.s[i]).narrow(dim, 0, self.out[i])
        return self._divide(w.sum(tuple(range(-nd, 0))))

    def adjoint(self, g):
        nd, lead = self.nd, tuple(g.shape[:g.dim() - self.nd])
        g = g / self.div
        padded = tuple(self.spatial[i] + self.p[i] + self.right[i] for i in range(nd))
        buf = g.new_zeros(lead + padded)
        base = len(lead)
        for offset in itertools.product(*(range(k) for k in self.k)):
            view = buf
            for i in range(nd):
                view = view.narrow(base + i, offset[i], (self.out[i] - 1) * self.s[i] + 1)
                view = view[(slice(None),) * (base + i) + (slice(None, None, self.s[i]),)]
            view.add_(g)
        for i in range(nd):
            buf = buf.narrow(base + i, self.p[i], self.spatial[i])
        return buf


class _AvgPool(_fw.autograd.Function):
    """Average pooling; its gradient is the adjoint map, whose gradient is this map again
    (both linear), so double backward works."""

    @staticmethod
    def forward(ctx, x, geom):
        ctx.geom = geom
        return geom.forward(x)

    @staticmethod
    def backward(ctx, grad):
        return _AvgPoolAdjoint.apply(grad, ctx.geom), None


class _AvgPoolAdjoint(_fw.autograd.Function):
    @staticmethod
    def forward(ctx, grad, geom):
        ctx.geom = geom
        return geom.adjoint(grad)

    @staticmethod
    def backward(ctx, grad):
        return _AvgPool.apply(grad, ctx.geom), None


def _avg_pool(x, nd, k, s, p, out, ceil_mode, count_include_pad, divisor_override):
    """Average pooling of x's last nd dims (sizes ``out``); arguments already checked."""
    geom = _AvgGeometry(x, nd, k, s, p, out, count_include_pad, divisor_override)
    return _AvgPool.apply(x, geom)


def _check_float(op, x, int64_ok=False):
    if not x.dtype.is_floating_point and not (int64_ok and x.dtype is _fw.int64):
        raise NotImplementedError(f"\"{op}\" not implemented for '{x.dtype.scalar_name}'")


def _avg_pool2d_checked(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    if x.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(x.dim(), 1)}, {max(x.dim(), 1) - 1}], but got -3)")
    h, w = x.shape[-2:]
    oh = _P.checked_out_size(h, k[0], p[0], s[0], 1, ceil_mode)
    ow = _P.checked_out_size(w, k[1], p[1], s[1], 1, ceil_mode)
    _P.shape_check_2d(x, k, s, p, (1, 1), (oh, ow))
    _check_float("avg_pool2d", x, int64_ok=True)
    return _avg_pool(x, 2, k, s, p, (oh, ow), ceil_mode, count_include_pad, divisor_override)


def _check_divisor(divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1D average pooling over (N, C, L) or (C, L)."""
    _P.require_tensor("avg_pool1d", input, "input", 1)
    _P.check_rank_2_to_3("avg_pool1d", input)
    k, s, p, _ = _P.parse_1d("avg_pool1d", kernel_size, stride, padding, 1)
    y = _avg_pool2d_checked(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, ceil_mode,
                            count_include_pad, None)
    return y.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2D average pooling over (N, C, H, W) or (C, H, W). ``count_include_pad``: the zero
    padding counts in the divisor; ``divisor_override``: divide by this instead."""
    _P.require_tensor("avg_pool2d", input, "input", 1)
    k, s, p, _ = _P.parse_nd("avg_pool2d", 2, kernel_size, stride, padding, 1,
                             _P.messages_2d("avg_pool2d"))
    _check_divisor(divisor_override)
    return _keep_format(
        _avg_pool2d_checked(input, k, s, p, ceil_mode, count_include_pad, divisor_override),
        input)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3D average pooling over (N, C, D, H, W) or (C, D, H, W)."""
    _P.require_tensor("avg_pool3d", input, "input", 1)
    k, s, p, _ = _P.parse_nd("avg_pool3d", 3, kernel_size, stride, padding, 1,
                             _P.messages_3d("avg_pool3d"))
    _check_divisor(divisor_override)
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    out = tuple(_P.checked_out_size(input.shape[i - 3], k[i], p[i], s[i], 1, ceil_mode)
                for i in range(3))
    _P.shape_check_3d("avg_pool3d", input, k, s, p, (1, 1, 1), out, avg=True)
    _check_float("avg_pool3d_out_frame", input, int64_ok=True)
    return _keep_format(
        _avg_pool(input, 3, k, s, p, out, ceil_mode, count_include_pad, divisor_override),
        input)


# ---- adaptive average pooling --------------------------------------------------------------

def _adaptive_avg_dim(x, dim, o):
    """Adaptive average along one dim: bin i is [floor(i*L/o), ceil((i+1)*L/o))."""
    size = x.shape[dim]
    if o == size:
        return x
    if o == 0:
        return x.narrow(dim, 0, 0)
    if size % o == 0:   # equal bins: a reshape and a mean
        return x.unflatten(dim, (o, size // o)).mean(dim + 1)
    starts = [(i * size) // o for i in range(o)]
    ends = [-(-((i + 1) * size) // o) for i in range(o)]
    width = max(e - b for b, e in zip(starts, ends))
    # each bin gathers `width` positions; the ones past its end read an appended zero
    index = [b + j if b + j < e else size for b, e in zip(starts, ends) for j in range(width)]
    zero_shape = list(x.shape)
    zero_shape[dim] = 1
    padded = _fw.cat([x, x.new_zeros(zero_shape)], dim)
    picked = padded.index_select(dim, _fw.tensor(index, device=x.device))
    total = picked.unflatten(dim, (o, width)).sum(dim + 1)
    counts = _fw.tensor([e - b for b, e in zip(starts, ends)], dtype=x.dtype, device=x.device)
    return total / counts.reshape((-1,) + (1,) * (x.dim() - 1 - dim))


def _adaptive_avg(op, input, nd, out, kernel_op, ranks):
    neg = [v for v in out if v < 0]
    if neg:
        sep = ", " if nd < 3 else None
        shown = sep.join(str(v) for v in out) if sep else \
            f"{out[0]}, {out[1]},{out[2]}"   # PyTorch's own spacing
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")
    if len(out) != nd:
        raise RuntimeError(f"{op}: output_size must be {nd}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {ranks} tensor, but got "
                           f"{_P.sizes_text(input.shape)}")
    if all(v == 1 for v in out):    # global pooling (PyTorch takes the mean, as here)
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    _check_float(kernel_op, input)
    for i in range(-nd, 0):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_P.sizes_text(input.shape)} "
                               f"with dimension {input.dim() + i} being empty")
    y = input
    for i in range(nd):
        y = _adaptive_avg_dim(y, input.dim() - nd + i, out[i])
    return y


def adaptive_avg_pool1d(input, output_size):
    """Adaptive 1D average pooling of (N, C, L) or (C, L) to ``output_size``."""
    _P.require_tensor("adaptive_avg_pool1d", input, "input", 1)
    _P.check_rank_2_to_3("adaptive_avg_pool1d", input)
    o = _P.ints("adaptive_avg_pool1d", "output_size", output_size, 2)
    if len(o) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(o)})")
    y = _adaptive_avg("adaptive_avg_pool2d", input.unsqueeze(-2), 2, (1,) + o,
                      "adaptive_avg_pool2d", "3D or 4D")
    return y.squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """Adaptive 2D average pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int,
    or (H, W) where None keeps the input's size)."""
    _P.require_tensor("adaptive_avg_pool2d", input, "input", 1)
    out = _P.adaptive_output_size("adaptive_avg_pool2d", input, output_size, 2)
    y = _adaptive_avg("adaptive_avg_pool2d", input, 2, out, "adaptive_avg_pool2d", "3D or 4D")
    return _keep_format(y, input)


def adaptive_avg_pool3d(input, output_size):
    """Adaptive 3D average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size``."""
    _P.require_tensor("adaptive_avg_pool3d", input, "input", 1)
    out = _P.adaptive_output_size("adaptive_avg_pool3d", input, output_size, 3)
    y = _adaptive_avg("adaptive_avg_pool3d", input, 3, out, "adaptive_avg_pool3d_cpu",
                      "4D or 5D")
    return _keep_format(y, input)


# ---- Lp pooling ----------------------------------------------------------------------------

def _lp_finish(out, norm_type, window):
    # sign(out) * relu(|out|) is out, with PyTorch's gradient (0 where out is 0)
    out = _fw.sign(out) * _fw.relu(_fw.abs(out))
    return out.mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, L): (sum over each window of x**p) ** (1/p)."""
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, math.prod(_single(kernel_size)))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, H, W): (sum over each window of x**p) ** (1/p)."""
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, math.prod(_pair(kernel_size)))


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, D, H, W)."""
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, math.prod(_triple(kernel_size)))


# ---- unpooling -----------------------------------------------------------------------------

def _unpool_output_size(input, kernel, stride, padding, output_size):
    """PyTorch's output size of max_unpool: the default inverts the pooling's size rule; a
    given size may differ from it by less than the stride."""
    nd = len(kernel)
    default = [(input.shape[input.dim() - nd + i] - 1) * stride[i] + kernel[i] - 2 * padding[i]
               for i in range(nd)]
    if output_size is None:
        return default
    given = output_size
    if len(given) == nd + 2:
        given = given[2:]
    if len(given) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(given)}'")
    for i in range(nd):
        lo, hi = default[i] - stride[i], default[i] + stride[i]
        if not lo < given[i] < hi:
            raise ValueError(f'invalid output_size "{given}" (dim {i} must be between {lo} '
                             f'and {hi})')
    return list(given)


def _max_unpool(op, nd, input, indices, size):
    """Scatters input's values at ``indices`` into zeros of the last nd dims ``size``, with
    PyTorch's checks (``op`` names max_unpooling2d or max_unpooling3d)."""
    # duplicate indices race for one output place, so PyTorch refuses it on every device
    _fw._determinism.alert_not_deterministic(f"{op}_forward_out")
    if indices.dtype is not _fw.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype.scalar_name}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {op} should be a {nd + 1}d or {nd + 2}d Tensor, but got "
                           f"a tensor with {input.dim()} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_P.sizes_text(input.shape)}) but got indices tensor with shape: "
                           f"{_P.sizes_text(indices.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}_forward_out_cpu(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but got "
                               f"{_P.sizes_text(input.shape)} with dimension {i} being empty.")
    _check_float("max_unpool2d" if nd == 2 else "max_unpool3d", input)
    n = math.prod(size)
    lead = tuple(input.shape[:input.dim() - nd])
    flat_idx = indices.reshape(lead + (-1,))
    if indices.numel():
        bad = ((flat_idx < 0) | (flat_idx >= n)).reshape(-1)
        if bool(bad.any()):
            # PyTorch's loop keeps going and reports the last bad index it met
            last = int(flat_idx.reshape(-1)[bad.nonzero()[-1, 0]])
            raise RuntimeError(f"Found an invalid max index: {last} (output volumes are of size "
                               f"{'x'.join(str(v) for v in size)})")
    out = input.new_zeros(lead + (n,))
    out = out.scatter(-1, flat_idx, input.reshape(lead + (-1,)))
    return out.reshape(lead + tuple(size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool1d`: puts each value back at its index, zeros
    elsewhere."""
    k = _single(kernel_size)
    s = _single(stride) if stride is not None else k
    p = _single(padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    y = _max_unpool("max_unpooling2d", 2, input.unsqueeze(-1), indices.unsqueeze(-1),
                    tuple(size) + (1,))
    return y.squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool2d`: puts each value back at its index, zeros
    elsewhere."""
    k = _pair(kernel_size)
    s = _pair(stride) if stride is not None else k
    p = _pair(padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool("max_unpooling2d", 2, input, indices, size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of :func:`max_pool3d`."""
    k = _triple(kernel_size)
    s = _triple(stride) if stride is not None else k
    p = _triple(padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool("max_unpooling3d", 3, input, indices, size)
