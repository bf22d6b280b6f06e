"""Counting and order statistics composed from framework ops: isin (sort + searchsorted),
histogram / histogramdd (bin search on the edges + index_add) and quantile / nanquantile
(sort + gather + linear interpolation, so autograd goes through them)."""
import builtins
import math

import framework as fw

from .. import _dtype, return_types
from .._tensor import Tensor, _wrap_dim
from .composites import write_out
from .pointwise import require_tensor, type_name

histogram_type = getattr(return_types, "histogram", None) or return_types._structseq(
    "histogram", ("hist", "bin_edges"))
histogramdd_type = getattr(return_types, "histogramdd", None) or return_types._structseq(
    "histogramdd", ("hist", "bin_edges"))
return_types.histogram, return_types.histogramdd = histogram_type, histogramdd_type


# ---- isin -------------------------------------------------------------------------------

def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """A bool tensor shaped like ``elements``: whether each element occurs in
    ``test_elements`` (either may be a number); ``invert`` negates."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__})")
    ref = elements if isinstance(elements, Tensor) else test_elements
    for v in (elements, test_elements):
        if isinstance(v, Tensor) and v.dtype is _dtype.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    dt = fw.result_type(elements, test_elements)
    e = elements.to(dt) if isinstance(elements, Tensor) else fw.tensor(elements, dtype=dt,
                                                                       device=ref.device)
    t = test_elements.to(dt) if isinstance(test_elements, Tensor) else \
        fw.tensor([test_elements], dtype=dt, device=ref.device)
    with fw.no_grad():
        t = t.reshape(-1)
        if t.numel() == 0:
            res = fw.zeros(e.shape, dtype=_dtype.bool, device=e.device)
        else:
            s = t.sort().values
            pos = fw.searchsorted(s, e.reshape(-1)).clamp_max(s.numel() - 1)
            res = (s.index_select(0, pos) == e.reshape(-1)).reshape(e.shape)
        if invert:
            res = res.logical_not()
    return write_out("isin", res, out)


# ---- histograms ---------------------------------------------------------------------------

def _outer_edges(x, d, rng):
    """(leftmost, rightmost) edge of dimension ``d`` of the (N, D) samples ``x``."""
    if rng is not None:
        lo, hi = float(rng[2 * d]), float(rng[2 * d + 1])
    elif x.shape[0]:
        col = x[:, d]
        lo, hi = float(col.min()), float(col.max())
    else:
        lo, hi = 0.0, 1.0
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                           f"{_fmt(lo)} max {_fmt(hi)} for dimension {d}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(lo)}, "
                           f"{_fmt(hi)}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _fmt(v):
    return str(int(v)) if math.isfinite(v) and v == int(v) else str(v)


def _histogramdd(op, input, bins, rng, weight, density):
    """The core of histogram and histogramdd: (hist, [edges per dim])."""
    require_tensor(op, input, "input")
    if not input.dtype.is_floating_point or input.dtype in (_dtype.float16, _dtype.bfloat16):
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = input.shape[-1]
    x = input.reshape(-1, D)
    if isinstance(bins, (int, Tensor)):
        bins = [bins] * D if not isinstance(bins, Tensor) else [bins]
    bins = list(bins)
    if len(bins) != D:
        raise RuntimeError(f"torch.histogramdd: expected {D} sequences of bin edges for each "
                           f"of the {D} dimensions of the input, but got {len(bins)}")
    if rng is not None and len(rng) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should "
                           f"have {2 * D} elements, but got {len(rng)}")
    if weight is not None:
        require_tensor(op, weight, "weight")
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(
                f"torch.histogramdd: if weight tensor is provided it should have the same "
                f"shape as the input tensor excluding its innermost dimension, but got input "
                f"with shape {list(input.shape)} and weight with shape {list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(
                f"torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({_cname(input.dtype)}), "
                f"and weight({_cname(weight.dtype)})")
    with fw.no_grad():
        edges, counts = [], []
        for d, b in enumerate(bins):
            if isinstance(b, Tensor):
                if b.dtype is not input.dtype:
                    raise RuntimeError(
                        f"torch.histogramdd: input tensor and bins tensors should have the "
                        f"same dtype, but got input with dtype {_cname(input.dtype)} and bins "
                        f"for dimension {d} with dtype {_cname(b.dtype)}")
                if b.dim() != 1:
                    raise RuntimeError(f"torch.histogramdd: bins tensor should have one "
                                       f"dimension, but got {b.dim()} dimensions in the bins "
                                       f"tensor for dimension {d}")
                if b.numel() < 1:
                    raise RuntimeError(f"torch.histogramdd: bins tensor should have at least "
                                       f"1 element, but got {b.numel()} elements in the bins "
                                       f"tensor for dimension {d}")
                e = b.to(input.device).contiguous()
            else:
                if b <= 0:
                    raise RuntimeError(f"torch.{op}(): bins must be > 0, but got {b} for "
                                       f"dimension {d}")
                lo, hi = _outer_edges(x, d, rng)
                e = fw.linspace(lo, hi, b + 1, dtype=input.dtype, device=input.device)
            edges.append(e)
            counts.append(e.numel() - 1)
        total = 1
        for c in counts:
            total *= c
        flat = fw.zeros(0 if total < 0 else total, dtype=input.dtype, device=input.device)
        if x.shape[0] and total > 0:
            lin = fw.zeros(x.shape[0], dtype=_dtype.int64, device=input.device)
            valid = fw.ones(x.shape[0], dtype=_dtype.bool, device=input.device)
            for d, e in enumerate(edges):
                col = x[:, d].contiguous()
                n = counts[d]
                # the last edge closes the last bin: x == edges[-1] lands in bin n-1
                idx = (fw.searchsorted(e, col, right=True) - 1).clamp(0, n - 1)
                valid = valid & (col >= e[0]) & (col <= e[-1])
                lin = lin * n + idx
            # samples outside the edges add 0 (their clamped bin is a valid one)
            w = valid.to(input.dtype) if weight is None else \
                fw.where(valid, weight.reshape(-1), 0.0)
            flat = flat.index_add(0, lin, w)
        hist = flat.reshape([builtins.max(c, 0) for c in counts])
        if density:
            widths = None
            for d, e in enumerate(edges):
                shape = [1] * D
                shape[d] = -1
                wd = (e[1:] - e[:-1]).reshape(shape)
                widths = wd if widths is None else widths * wd
            hist = hist / (hist.sum() * widths)
    return hist, edges


def _cname(dt):
    return {_dtype.float32: "float", _dtype.float64: "double", _dtype.float16: "c10::Half",
            _dtype.bfloat16: "c10::BFloat16"}.get(dt, type_name(dt))


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges) of the flattened ``input``: ``bins`` equal-width bins over
    ``range`` (default: the min and max of the input) or the given edges tensor; values
    outside are ignored, the last bin includes its right edge."""
    require_tensor("histogram", input, "input")
    if isinstance(bins, Tensor) and range is not None:
        raise TypeError("histogram() received an invalid combination of arguments - got "
                        "(Tensor, bins=Tensor, range=...)")
    w = weight.reshape(-1, 1)[:, 0] if weight is not None and weight.shape == input.shape \
        else weight
    if w is not None and tuple(w.shape) != (input.numel(),):
        raise RuntimeError(
            f"torch.histogramdd: if weight tensor is provided it should have the same shape "
            f"as the input tensor excluding its innermost dimension, but got input with "
            f"shape {[input.numel(), 1]} and weight with shape {list(weight.shape)}")
    hist, edges = _histogramdd("histogram", input.reshape(-1, 1), bins, range, w, density)
    res = histogram_type(hist, edges[0])
    if out is not None:
        write_out("histogram", res[0], out[0])
        write_out("histogram", res[1], out[1])
        return histogram_type(out[0], out[1])
    return res


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the D-dimensional samples in the rows of ``input`` (shape
    (..., D)): ``bins`` an int, an int per dim or an edges tensor per dim."""
    hist, edges = _histogramdd("histogramdd", input, bins, range, weight, density)
    return histogramdd_type(hist, tuple(edges))


# ---- quantiles ------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    require_tensor(op, input, "input")
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        qt = fw.tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        if q.dim() > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.device != input.device:
            raise RuntimeError("quantile() q tensor must be on the same device as the input "
                               "tensor")
        scalar_q = q.dim() == 0
        qt = q.reshape(-1)
        if qt.numel() and not bool(((qt >= 0) & (qt <= 1)).all()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    nd = input.dim()
    if dim is None:
        x = input.reshape(-1)
        out_shape = [1] * nd if keepdim else []
    else:
        d = _wrap_dim(dim, builtins.max(nd, 1), op)
        x = input.movedim(d, -1) if nd else input.reshape(1)
        out_shape = list(input.shape)
        if nd:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    s = x.sort(-1).values
    n = s.shape[-1]
    # the ranks keep q's history: linear interpolation is differentiable in q
    qv = qt.reshape([1] * (s.dim() - 1) + [-1])
    with fw.no_grad():
        nan = s.isnan()
        count = nan.logical_not().sum(-1, keepdim=True).to(s.dtype) - 1
        has_nan = nan.any(-1, keepdim=True)
    if ignore_nan:
        ranks = (qv * count).clamp_min(0)
    else:
        ranks = (qv * (n - 1)).expand(*s.shape[:-1], qt.numel())
        ranks = fw.where(has_nan, fw.full_like(ranks.detach(), n - 1), ranks)
    with fw.no_grad():
        if interpolation == "lower":
            ranks = ranks.floor()
        elif interpolation == "higher":
            ranks = ranks.ceil()
        elif interpolation == "nearest":
            ranks = ranks.round()
        below = ranks.to(_dtype.int64).contiguous()
        above = ranks.ceil().to(_dtype.int64).contiguous()
    weights = fw.full_like(ranks.detach(), 0.5) if interpolation == "midpoint" else \
        ranks - below
    vb = s.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        va = s.gather(-1, above)
        vb = vb + weights * (va - vb)
    # (..., Q) -> (Q, out_shape)
    res = vb.movedim(-1, 0).reshape([qt.numel()] + out_shape)
    return res.reshape(out_shape) if scalar_q else res


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles of ``input`` along ``dim`` (all elements when None); a row
    holding NaN gives NaN."""
    res = _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    return write_out("quantile", res, out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """:func:`quantile` that ignores NaN (an all-NaN row gives NaN)."""
    res = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    return write_out("nanquantile", res, out)
