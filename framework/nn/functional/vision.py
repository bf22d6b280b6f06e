"""Vision functions: interpolate/upsample, grid_sample, affine_grid, pixel and channel
shuffles (PyTorch's names, signatures and errors).

All are composites of framework ops, so gradients come from autograd. Resampling is
separable: every output position along one spatial dimension reads a few input positions
("taps") with weights, computed on the host with torch's index rules in the precision torch
uses (float32 unless the input is float64); one ``index_select`` gathers all taps of a
dimension and a multiply-and-sum combines them.
"""
import math
import warnings

import numpy as np

import framework as _fw

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample",
           "affine_grid", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle"]

_MODES_TEXT = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
               "nearest-exact")
# Number of spatial dimensions each interpolating mode works on
_MODE_SPATIAL = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}
_CUBIC_A = -0.75            # torch's bicubic coefficient (the antialiased filter uses -0.5)


# ---------------------------------------------------------------------------------------
# 1-D tap tables: (index (out, K) int64, weight (out, K) float64 or None)
# ---------------------------------------------------------------------------------------
def _area_scale(in_size, out_size, align_corners, scale, ftype):
    """torch's area_pixel_compute_scale: input pixels per output pixel."""
    if align_corners:
        return ftype((in_size - 1) / (out_size - 1)) if out_size > 1 else ftype(0)
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(in_size) / ftype(out_size)


def _nearest_taps(in_size, out_size, scale, exact):
    # torch computes these in float32 whatever the input dtype
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(in_size) / np.float32(out_size)
    dst = np.arange(out_size)
    if exact:
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32))
    else:
        src = np.floor(dst.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), in_size - 1)[:, None], None


def _linear_taps(in_size, out_size, align_corners, scale, ftype):
    if in_size == out_size:
        return np.arange(out_size)[:, None], None
    s = _area_scale(in_size, out_size, align_corners, scale, ftype)
    dst = np.arange(out_size).astype(ftype)
    if align_corners:
        src = s * dst
    else:
        src = np.maximum(s * (dst + ftype(0.5)) - ftype(0.5), ftype(0))
    i0 = np.minimum(src.astype(np.int64), in_size - 1)
    lam1 = np.clip(src - i0.astype(ftype), 0, 1)
    i1 = i0 + (i0 < in_size - 1)
    return (np.stack([i0, i1], 1),
            np.stack([1 - lam1, lam1], 1).astype(np.float64))


def _keys_near(x, a):
    """Keys cubic-convolution kernel for |x| <= 1."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _keys_far(x, a):
    """Keys cubic-convolution kernel for 1 < |x| < 2."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_coeffs(t, a):
    """The four cubic weights for fractional offsets ``t`` in [0, 1) (NumPy arrays or
    framework tensors)."""
    return [_keys_far(t + 1, a), _keys_near(t, a), _keys_near(1 - t, a), _keys_far(2 - t, a)]


def _cubic_taps(in_size, out_size, align_corners, scale, ftype):
    s = _area_scale(in_size, out_size, align_corners, scale, ftype)
    dst = np.arange(out_size).astype(ftype)
    src = s * dst if align_corners else s * (dst + ftype(0.5)) - ftype(0.5)
    base = np.floor(src)
    t = src - base
    idx = base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
    w = np.stack(_cubic_coeffs(t, ftype(_CUBIC_A)), 1).astype(np.float64)
    return np.clip(idx, 0, in_size - 1), w


def _area_taps(in_size, out_size):
    # adaptive average pooling windows: [floor(i*in/out), ceil((i+1)*in/out))
    i = np.arange(out_size)
    start = (i * in_size) // out_size
    end = ((i + 1) * in_size + out_size - 1) // out_size
    k = int((end - start).max()) if out_size else 1
    idx = start[:, None] + np.arange(k)[None, :]
    valid = idx < end[:, None]
    w = np.where(valid, 1.0 / (end - start)[:, None], 0.0)
    return np.minimum(idx, in_size - 1), w


def _aa_filter(mode):
    """(half-width, filter) of the antialiasing kernel of ``mode``."""
    if mode == "bilinear":
        return 1.0, lambda x: np.maximum(1.0 - np.abs(x), 0.0)
    if mode == "bicubic":
        def cubic(x):
            x = np.abs(x)
            return np.where(x < 1, _keys_near(x, -0.5),
                            np.where(x < 2, _keys_far(x, -0.5), 0.0))
        return 2.0, cubic

    def lanczos(x):     # a = 3
        return np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    return 3.0, lanczos


def _aa_taps(in_size, out_size, align_corners, scale, mode):
    # Antialiased resampling (PIL's method): the filter is stretched by the downscale
    # factor, so every input pixel under an output pixel contributes.
    half, filt = _aa_filter(mode)
    s = float(_area_scale(in_size, out_size, align_corners, scale, np.float64))
    support = half * s if s >= 1.0 else half
    inv = 1.0 / s if s >= 1.0 else 1.0
    k = int(math.ceil(support)) * 2 + 1
    idx = np.zeros((out_size, k), np.int64)
    w = np.zeros((out_size, k))
    for i in range(out_size):
        centre = s * (i + 0.5)
        lo = max(int(centre - support + 0.5), 0)
        n = min(max(min(int(centre + support + 0.5), in_size) - lo, 0), k)
        ww = filt((np.arange(n) + lo - centre + 0.5) * inv)
        total = ww.sum()
        if total != 0:
            ww = ww / total
        idx[i, :n] = lo + np.arange(n)
        w[i, :n] = ww
    return np.minimum(idx, in_size - 1), w


def _apply_taps(x, dim, idx, w):
    """Resamples ``x`` along ``dim``: out[..., i, ...] = sum_k w[i, k] * x[..., idx[i, k], ...]."""
    out_size, k = idx.shape
    if w is None and k == 1 and out_size == x.shape[dim] and \
            np.array_equal(idx[:, 0], np.arange(out_size)):
        return x
    index = _fw.tensor(idx.reshape(-1), dtype=_fw.int64, device=x.device)
    g = x.index_select(dim, index)
    if w is None:
        return g
    shape = tuple(x.shape)
    g = g.view(shape[:dim] + (out_size, k) + shape[dim + 1:])
    wt = _fw.tensor(w, dtype=x.dtype, device=x.device)
    wt = wt.view((out_size, k) + (1,) * (len(shape) - dim - 1))
    return (g * wt).sum(dim + 1)


# ---------------------------------------------------------------------------------------
# interpolate
# ---------------------------------------------------------------------------------------
def _is_integer(x):
    if isinstance(x, _fw.Tensor):
        return not x.is_floating_point() and x.dim() == 0
    return isinstance(x, int) or (isinstance(x, np.integer))


def _check_sizes(input, out_sizes, mode):
    nd = input.dim() - 2
    in_sizes = tuple(input.shape[2:])
    if mode == "area":
        # torch runs adaptive average pooling, with its own emptiness rule
        if nd == 1:
            sizes, first, name = list(input.shape[:2]) + [1, in_sizes[0]], 2, "2d"
        else:
            sizes, first, name = list(input.shape), 2 if nd == 2 else 1, f"{nd}d"
        for i in range(first, len(sizes)):
            if sizes[i] == 0:
                raise RuntimeError(
                    f"adaptive_avg_pool{name}(): Expected input to have non-zero size for "
                    f"non-batch dimensions, but input has sizes {sizes} with dimension {i} "
                    "being empty")
        return
    if min(in_sizes) <= 0 or min(out_sizes) <= 0:
        names = ("D", "H", "W")[3 - nd:]
        i_txt = ", ".join(f"{n}: {s}" for n, s in zip(names, in_sizes))
        o_txt = ", ".join(f"{n}: {s}" for n, s in zip(names, out_sizes))
        sep = " and " if nd == 1 else " "
        raise RuntimeError("Input and output sizes should be greater than 0, but got "
                           f"input ({i_txt}){sep}output ({o_txt})")
    if input.numel() == 0 and math.prod(tuple(input.shape)[1:]) == 0:
        raise RuntimeError(f"Non-empty {nd + 2}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    r"""Down/up samples the input to the given ``size`` or by the given ``scale_factor``.

    Modes: ``nearest``, ``nearest-exact``, ``linear`` (3-D), ``bilinear``/``bicubic``
    (4-D), ``trilinear`` (5-D), ``area`` (adaptive average pooling) and ``lanczos``
    (4-D, antialias only). Input is (N, C, d1, ..., dK).
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.dim() - 2
    scale_factors = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and output "
                    f"size of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * nd
        output_size = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        # the output size from the scale, which is then forgotten: indices follow the sizes
        output_size = [math.floor(input.shape[i + 2] * scale_factors[i]) for i in range(nd)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")

    if mode in ("nearest", "nearest-exact", "area") and 1 <= nd <= 3:
        pass
    elif mode in _MODE_SPATIAL and nd == _MODE_SPATIAL[mode]:
        if mode == "lanczos":
            if align_corners:
                raise ValueError("Lanczos mode does not support align_corners=True")
            if not antialias:
                raise ValueError("Lanczos mode requires antialias=True")
    elif mode in ("linear", "bilinear", "trilinear") and 1 <= nd <= 3:
        raise NotImplementedError(f"Got {nd + 2}D input, but {mode} mode needs "
                                  f"{_MODE_SPATIAL[mode] + 2}D input")
    else:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
            f"for the modes: {_MODES_TEXT} (got {mode})")

    if output_size is None:
        # C++ truncates in * scale to an integer
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(nd)]
    _check_sizes(input, output_size, mode)
    if mode not in ("nearest", "nearest-exact") and not input.is_floating_point():
        raise NotImplementedError(f"interpolate(): mode '{mode}' is not implemented for "
                                  f"{input.dtype} inputs")
    ftype = np.float64 if input.dtype == _fw.float64 else np.float32
    out = input
    for i in range(nd):
        n_in, n_out = input.shape[i + 2], output_size[i]
        sc = scale_factors[i] if scale_factors is not None else None
        if mode in ("nearest", "nearest-exact"):
            idx, w = _nearest_taps(n_in, n_out, sc, mode == "nearest-exact")
        elif mode == "area":
            idx, w = _area_taps(n_in, n_out)
        elif antialias:
            idx, w = _aa_taps(n_in, n_out, align_corners, sc, mode)
        elif mode == "bicubic":
            idx, w = _cubic_taps(n_in, n_out, align_corners, sc, ftype)
        else:
            idx, w = _linear_taps(n_in, n_out, align_corners, sc, ftype)
        out = _apply_taps(out, i + 2, idx, w)
    if out is input:
        out = input.clone()     # interpolate always returns a new tensor
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    r"""Upsamples input (deprecated in favour of :func:`interpolate`, which it calls)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    r"""Upsamples input with nearest neighbours (deprecated: use :func:`interpolate`)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    r"""Upsamples input bilinearly with align_corners=True (deprecated: use
    :func:`interpolate`)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------------------------
# grid_sample / affine_grid
# ---------------------------------------------------------------------------------------
_TORCH_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                     "float64": "Double"}


def _type_name(dtype):
    name = str(dtype).split(".")[-1]
    return _TORCH_TYPE_NAMES.get(name, name)


def _unnormalize(coord, size, align_corners):
    # [-1, 1] -> pixel coordinates: corner pixel centres (align_corners) or corner edges
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """Reflects ``coord`` into [twice_low/2, twice_high/2] (a float tensor)."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = _fw.fmod(coord, span)
    flips = _fw.floor(coord / span)
    return _fw.where(_fw.remainder(flips, 2) == 0, extra + low, span - extra + low)


def _clip(coord, size):
    """coord clamped to [0, size - 1]; like torch, the gradient is zero on the bounds too."""
    inside = (coord > 0) & (coord < size - 1)
    return _fw.where(inside, coord, coord.detach().clamp(0, size - 1))


def _pad_coordinate(coord, size, padding_mode, align_corners):
    """Applies ``border``/``reflection`` padding to a source coordinate."""
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _cubic_matrix(a):
    """Coefficients of the four cubic weights as polynomials in the fractional offset t:
    row p holds the t**p coefficients of taps -1, 0, 1, 2 (expanded Keys kernel)."""
    return [[0.0, 1.0, 0.0, 0.0],
            [a, 0.0, -a, 0.0],
            [-2 * a, -(a + 3), 2 * a + 3, a],
            [a, a + 2, -(a + 2), -a]]


def _poly_weights(t, rows, ntaps):
    """sum_p rows[p][j] * t**p for every tap j, as a (ntaps, *t.shape) tensor (Horner)."""
    coef = [_fw.tensor(r, dtype=t.dtype, device=t.device).view(ntaps, *([1] * t.dim()))
            for r in rows]
    w = coef[-1]
    for c in reversed(coef[:-1]):
        w = w * t + c
    return w


def _axis_taps(coord, size, mode, padding_mode, align_corners):
    """Taps of grid_sample along one axis, stacked on a leading dimension: (integer index
    clamped into range, weight or None, in-bounds mask), each (T, *coord.shape)."""
    src = _unnormalize(coord, size, align_corners)
    if mode == "bicubic":
        # padding applies to each tap position, not to the sampling point
        base = _fw.floor(src)
        w = _poly_weights(src - base, _cubic_matrix(_CUBIC_A), 4)
        offs = _fw.tensor([-1.0, 0.0, 1.0, 2.0], dtype=src.dtype, device=src.device)
        pos = base.detach().unsqueeze(0) + offs.view(4, *([1] * src.dim()))
        pos = _pad_coordinate(pos, size, padding_mode, align_corners)
    else:
        src = _pad_coordinate(src, size, padding_mode, align_corners)
        if mode == "nearest":
            pos, w = _fw.round(src.detach()).unsqueeze(0), None
        else:
            base = _fw.floor(src)
            w = _poly_weights(src - base, [[1.0, 0.0], [-1.0, 1.0]], 2)
            offs = _fw.tensor([0.0, 1.0], dtype=src.dtype, device=src.device)
            pos = base.detach().unsqueeze(0) + offs.view(2, *([1] * src.dim()))
    idx = pos.detach().to(_fw.int64)
    inside = (idx >= 0) & (idx < size)
    return idx.clamp(0, size - 1), w, inside


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    r"""Samples ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalised locations of
    ``grid`` (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), whose last dimension is
    (x, y[, z]) in [-1, 1]. Gradients flow to both ``input`` and ``grid``.
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    in_shape, g_shape = list(input.shape), list(grid.shape)
    if input.device != grid.device:
        raise RuntimeError("grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(grid.dtype)}")
    if in_shape[0] != g_shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {in_shape} and grid with sizes {g_shape}")
    nd = input.dim() - 2
    if g_shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last "
                           f"dimension, but got grid with sizes {g_shape}")
    # anything but 4-D input is checked as the 5-D case, as torch does
    want = 4 if input.dim() == 4 else 5
    if input.dim() != want or grid.dim() != want:
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number "
                           f"of dimensions, but got input with sizes {in_shape} and grid with "
                           f"sizes {g_shape}")
    for i in range(2, input.dim()):
        if in_shape[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {in_shape} with dimension "
                               f"{i} being empty")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        raise NotImplementedError(f"grid_sample(): not implemented for {input.dtype} inputs")

    n, c = in_shape[:2]
    spatial = in_shape[2:]
    out_spatial = g_shape[1:-1]
    p = math.prod(out_spatial)
    flat_grid = grid.reshape(n, p, nd)
    # grid's last dimension is (x, y, z): x indexes the last spatial dimension
    axes = [_axis_taps(flat_grid[..., k], spatial[nd - 1 - k], mode, padding_mode,
                       align_corners) for k in range(nd)]
    # every combination of the axes' taps: axis k's taps go on dimension nd-1-k of a
    # (T_z, T_y, T_x, N, P) grid, so x varies fastest
    lin, weight, ok = None, None, None
    for k, (idx, w, inside) in enumerate(axes):
        shape = [1] * nd + [n, p]
        shape[nd - 1 - k] = idx.shape[0]
        stride = math.prod(spatial[nd - k:])
        term = (idx * stride if stride != 1 else idx).view(shape)
        lin = term if lin is None else lin + term
        ok = inside.view(shape) if ok is None else ok & inside.view(shape)
        if w is not None:
            weight = w.view(shape) if weight is None else weight * w.view(shape)
    full = tuple(lin.shape)
    t = math.prod(full[:nd])
    lin = lin.reshape(t, n, p)
    ok = ok.expand(full).reshape(t, n, p)
    if weight is None:
        weight = ok.to(input.dtype)
    else:
        weight = _fw.where(ok, weight.expand(full).reshape(t, n, p), 0.0)
    index = lin.permute(1, 0, 2).reshape(n, 1, t * p).expand(n, c, t * p)
    weight = weight.permute(1, 0, 2).reshape(n, 1, t, p)
    vals = input.reshape(n, c, math.prod(spatial)).gather(2, index).reshape(n, c, t, p)
    out = (vals * weight).sum(2)
    if mode == "nearest" and grid.requires_grad and _fw.is_grad_enabled():
        # torch gives grid a zero gradient in nearest mode rather than none at all
        out = out + _fw.where(_fw.zeros((), dtype=_fw.bool, device=grid.device),
                              flat_grid[..., 0], 0.0).unsqueeze(1)
    return out.reshape([n, c] + out_spatial)


def _linspace_from_neg_one(theta, steps, align_corners):
    if steps <= 1:
        return _fw.zeros(1, dtype=theta.dtype, device=theta.device)
    r = _fw.linspace(-1, 1, steps, dtype=theta.dtype, device=theta.device)
    if not align_corners:
        r = r * (steps - 1) / steps
    return r


def affine_grid(theta, size, align_corners=None):
    r"""Generates a 2-D or 3-D flow field (sampling grid) from a batch of affine matrices
    ``theta`` (N, 2, 3) or (N, 3, 4), for an output of ``size`` (N, C, H, W) or
    (N, C, D, H, W)."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size[-2:])
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size[-3:])
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    nd = len(spatial)
    n = size[0]
    # base grid (*spatial, nd + 1): columns x, y[, z], 1, with x along the last dimension
    cols = []
    for k in range(nd):
        line = _linspace_from_neg_one(theta, spatial[nd - 1 - k], align_corners)
        view = [1] * nd
        view[nd - 1 - k] = -1
        cols.append(line.reshape(view).expand(spatial))
    cols.append(_fw.ones(spatial, dtype=theta.dtype, device=theta.device))
    base = _fw.stack(cols, -1).reshape(1, -1, nd + 1).expand(n, math.prod(spatial), nd + 1)
    grid = _fw.bmm(base, theta.transpose(1, 2))
    return grid.reshape([n] + spatial + [nd])


# ---------------------------------------------------------------------------------------
# pixel and channel shuffles
# ---------------------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    r"""Rearranges (*, C*r^2, H, W) into (*, C, H*r, W*r), r = ``upscale_factor``."""
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    shape = list(input.shape)
    c, h, w = shape[-3:]
    if c % (r * r) != 0:
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {r * r}")
    batch = shape[:-3]
    nb = len(batch)
    x = input.reshape(batch + [c // (r * r), r, r, h, w])
    x = x.permute(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return x.reshape(batch + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    r"""Rearranges (*, C, H*r, W*r) into (*, C*r^2, H, W), r = ``downscale_factor``."""
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    shape = list(input.shape)
    c, h, w = shape[-3:]
    if h % r != 0:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r != 0:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={w} is not divisible by {r}")
    if input.numel() == 0:
        # torch returns empty inputs unchanged in shape here (pixel_shuffle reshapes them)
        return input.clone()
    batch = shape[:-3]
    nb = len(batch)
    x = input.reshape(batch + [c, h // r, r, w // r, r])
    x = x.permute(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return x.reshape(batch + [c * r * r, h // r, w // r])


def channel_shuffle(input, groups):
    r"""Divides the channels of (N, C, *) into ``groups`` groups and interleaves them:
    (N, g, C/g, *) -> (N, C/g, g, *)."""
    if input.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    shape = list(input.shape)
    c = shape[1]
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape([shape[0], groups, c // groups] + shape[2:]).transpose(1, 2)
    return x.reshape(shape)


def native_channel_shuffle(input, groups):
    r"""Same as :func:`channel_shuffle` (torch's native entry point)."""
    return channel_shuffle(input, groups)
