"""Fractional max pooling (Graham, 2014), as torch.nn.functional.fractional_max_pool2d and
fractional_max_pool3d: each (batch, channel) plane is pooled over windows of a fixed size
whose starts advance by a pseudo-random mix of floor(alpha) and ceil(alpha) steps, alpha =
(input - kernel) / (output - 1), drawn from one uniform sample per plane and dim
(``_random_samples``, shape (N, C, dims): PyTorch's order, width first for 2-d and depth
first for 3-d). Composed of gather and max, so gradients flow to the chosen elements."""
import framework as _fw


def _tuple(v, nd, what, name):
    t = (v,) * nd if isinstance(v, (int, float)) else tuple(v)
    if len(t) != nd:
        raise RuntimeError(f"{name}: {what} must be an int or a tuple of {nd}, got {v}")
    return t


def _starts(u, size, out, k):
    """The window starts of one dim for each plane: u of shape (P,), result (P, out)."""
    if out == 1:
        return _fw.full((u.shape[0], 1), size - k, dtype=_fw.int64, device=u.device)
    alpha = (size - k) / (out - 1)
    u64 = u.to(_fw.float64).unsqueeze(1)
    i = _fw.arange(out, dtype=_fw.float64, device=u.device)
    s = ((i + u64) * alpha).floor() - (u64 * alpha).floor()
    s = s.to(_fw.int64)
    last = _fw.full((u.shape[0], 1), size - k, dtype=_fw.int64, device=u.device)
    return _fw.cat([s[:, :-1], last], 1)


def _fractional_max_pool(name, nd, input, kernel_size, output_size, output_ratio,
                         return_indices, _random_samples):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: expected a {nd + 1}-D or {nd + 2}-D input, got shape "
                           f"{tuple(input.shape)}")
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    N, C = x.shape[:2]
    sizes = tuple(x.shape[2:])
    k = _tuple(kernel_size, nd, "kernel_size", name)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an "
                             f"output_ratio")
        ratio = _tuple(output_ratio, nd, "output_ratio", name)
        output_size = [int(s * r) for s, r in zip(sizes, ratio)]
    out = _tuple(output_size, nd, "output_size", name)
    for s, o, kk in zip(sizes, out, k):
        if o + kk - 1 > s:
            raise RuntimeError(f"{name}: output_size {out} + kernel_size {k} - 1 is too large "
                               f"for the input of spatial size {sizes}")
    if _random_samples is None:
        _random_samples = _fw.rand(N, C, nd, dtype=x.dtype, device=x.device)
    u = _random_samples.reshape(N * C, nd)
    # PyTorch's sample order: width (2-d) / depth (3-d) first
    order = (1, 0) if nd == 2 else (0, 1, 2)
    flat_idx = None
    for d in range(nd):
        st = _starts(u[:, order[d]], sizes[d], out[d], k[d])           # (P, out_d)
        pos = st.unsqueeze(-1) + _fw.arange(k[d], device=x.device)      # (P, out_d, k_d)
        stride = 1
        for s in sizes[d + 1:]:
            stride *= s
        pos = pos * stride
        # (P, out_0, ..., out_d, k_0, ..., k_d)
        view = [N * C] + [1] * d + [out[d]] + [1] * d + [k[d]]
        if flat_idx is None:
            flat_idx = pos.reshape(view)
        else:
            prev = flat_idx.unsqueeze(d + 1).unsqueeze(-1)
            flat_idx = prev + pos.reshape(view)
    P = N * C
    windows = 1
    for kk in k:
        windows *= kk
    idx = flat_idx.reshape(P, -1)
    vals = _fw.gather(x.reshape(P, -1), 1, idx).reshape(P, *out, windows)
    res, arg = vals.max(-1)
    indices = _fw.gather(idx.reshape(P, *out, windows), -1, arg.unsqueeze(-1)).squeeze(-1)
    shape = (N, C, *out) if batched else (C, *out)
    res, indices = res.reshape(shape), indices.reshape(shape)
    return (res, indices) if return_indices else res


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling of (N, C, H, W) or (C, H, W) ``input``; ``output_size`` or
    ``output_ratio`` gives the output's size; indices are flat over H * W."""
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling of (N, C, T, H, W) or (C, T, H, W) ``input``; indices are
    flat over T * H * W."""
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)
