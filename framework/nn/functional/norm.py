"""Normalization layers' math: batch, layer, group, RMS, instance and local response norm,
and ``normalize``. Batch, layer, group and RMS norm check their arguments here and run
fused ops (framework/_ops/norm.py: a forward and a backward kernel each); the others are
composites of framework ops."""
import framework as fw
from framework._func import vmap as _vmap
from framework._ops.memory_format import keep_format

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm", "normalize"]


_LOW = (fw.float16, fw.bfloat16)


def _upcast(t):
    """Half-precision tensors compute their statistics in float32 (PyTorch's opmath)."""
    return t.float() if t is not None and t.dtype in _LOW else t


def _mean_var(x, dims, keepdim=False):
    """Mean and biased variance over ``dims``. An empty reduction (whose output is empty
    anyway) gives zeros and ones: no division by zero, in the forward or var's backward."""
    count = 1
    for d in dims:
        count *= x.shape[d]
    if count == 0:
        shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape)) if keepdim else \
            tuple(s for i, s in enumerate(x.shape) if i not in dims)
        return x.new_zeros(shape), x.new_ones(shape)
    return x.mean(dims, keepdim=keepdim), x.var(dims, correction=0, keepdim=keepdim)


def _check_vec(t, name, n):
    if t is not None and t.numel() != n:
        raise RuntimeError(f"{name} should contain {n} elements not {t.numel()}")


def _channel_view(t, ndim):
    """A per-channel vector shaped to broadcast against an (N, C, *) input."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _affine(out, weight, bias, ndim):
    if weight is not None:
        out = out * _channel_view(weight, ndim)
    if bias is not None:
        out = out + _channel_view(bias, ndim)
    return out


def _update_running(running, stat, momentum):
    """``running = (1 - momentum) * running + momentum * stat``, in place, unrecorded."""
    with fw.no_grad():
        running.mul_(1 - momentum).add_(stat.detach().to(running.dtype) * momentum)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    r"""Batch normalization over every dimension but the channel one (dim 1).

    In training, normalizes with the batch's mean and biased variance and, when running
    statistics are given, updates them in place with ``momentum`` (the running variance
    takes the unbiased batch variance). Otherwise normalizes with the running statistics.
    """
    if input.dim() < 2 and running_mean is None and weight is None and bias is None:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                         "got 1)")
    c = input.shape[1] if input.dim() > 1 else 0
    # values per channel: every dimension but the channel one
    n = 1
    for i, s in enumerate(input.shape):
        if i != 1:
            n *= s
    if training:
        if n == 1:
            raise ValueError("Expected more than 1 value per channel when training, got "
                             f"input size {input.shape!r}")
        if running_mean is not None or running_var is not None:
            _vmap.check_running_stats(running_mean, running_var)
    elif running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    elif running_var is None:
        raise RuntimeError("running_var must be defined in evaluation mode")
    _check_vec(running_mean, "running_mean", c)
    _check_vec(running_var, "running_var", c)
    _check_vec(weight, "weight", c)
    _check_vec(bias, "bias", c)
    mean, invstd = fw.batch_norm_stats(input, running_mean, running_var, training, momentum,
                                       eps)
    y = fw.batch_norm_elemt(input, weight, bias, mean, invstd, training, eps)
    return keep_format(y, input)    # channels-last stays channels-last, as in PyTorch


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    r"""Instance normalization: each channel of each sample normalized over its spatial
    dimensions. With ``use_input_stats`` and running statistics given, those are updated
    with the statistics averaged over the batch."""
    if use_input_stats:
        spatial = 1
        for s in input.shape[2:]:
            spatial *= s
        if spatial == 1:
            raise ValueError("Expected more than 1 spatial element when training, got input "
                             f"size {input.shape!r}")
        if running_mean is not None or running_var is not None:
            _vmap.check_running_stats(running_mean, running_var)
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    nd = input.dim()
    c = input.shape[1] if nd > 1 else 0
    _check_vec(running_mean, "running_mean", c)
    _check_vec(running_var, "running_var", c)
    _check_vec(weight, "weight", c)
    _check_vec(bias, "bias", c)
    dims = tuple(range(2, nd))
    x = _upcast(input)
    if use_input_stats:
        mean, var = _mean_var(x, dims, keepdim=True)
        m = input.numel() // (input.shape[0] * c) if input.numel() else 0
        if input.shape[0] > 0 and m > 0:
            flat_mean = mean.reshape(input.shape[0], c).mean(0)
            flat_var = var.reshape(input.shape[0], c).mean(0) * (m / max(m - 1, 1))
            if running_mean is not None:
                _update_running(running_mean, flat_mean, momentum)
            if running_var is not None:
                _update_running(running_var, flat_var, momentum)
    else:
        mean = _channel_view(_upcast(running_mean), nd)
        var = _channel_view(_upcast(running_var), nd)
    out = (x - mean) * (var + eps).rsqrt()
    return _affine(out, _upcast(weight), _upcast(bias), nd).to(input.dtype)


def _normalized_dims(input, normalized_shape, fn, star_sep):
    if isinstance(normalized_shape, int) or not hasattr(normalized_shape, "__len__"):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    shape = [int(s) for s in normalized_shape]
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if input.dim() < k or list(input._shape[input.dim() - k:]) != shape:
        inner = ", ".join(str(s) for s in shape)
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*{star_sep}{inner}], but got input of size{list(input.shape)}")
    return shape, tuple(range(input.dim() - k, input.dim()))


def _check_same(t, name, shape):
    if t is not None and list(t._shape) != shape:
        raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                           f"{name} of shape {list(t.shape)} and normalized_shape = {shape}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    r"""Layer normalization over the last ``len(normalized_shape)`` dimensions, with biased
    variance, then an elementwise affine map when ``weight``/``bias`` are given."""
    shape, dims = _normalized_dims(input, normalized_shape, "layer_norm", ", ")
    _check_same(weight, "weight", shape)
    _check_same(bias, "bias", shape)
    return fw.native_layer_norm(input, shape, weight, bias, eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    r"""Root mean square normalization over the last ``len(normalized_shape)`` dimensions:
    ``x / sqrt(mean(x**2) + eps) * weight``; ``eps`` defaults to ``finfo(input.dtype).eps``."""
    shape, dims = _normalized_dims(input, normalized_shape, "rms_norm", "")
    _check_same(weight, "weight", shape)
    return fw._fused_rms_norm(input, shape, weight, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    r"""Group normalization: the channels (dim 1) split into ``num_groups`` groups, each
    normalized over its channels and the spatial dimensions, then a per-channel affine map."""
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{list(t.shape)} and input of shape {list(input.shape)}")
    hxw = 1
    for sz in input.shape[2:]:
        hxw *= sz
    return fw.native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    r"""Local response normalization across channels: each element divided by
    ``(k + alpha / size * sum of squares over `size` neighbouring channels) ** beta``."""
    if input.dim() < 3:
        # PyTorch's message, spaces and all
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    parts = []
    if before:
        parts.append(sq.new_zeros((sq.shape[0], before) + tuple(sq.shape[2:])))
    parts.append(sq)
    if after:
        parts.append(sq.new_zeros((sq.shape[0], after) + tuple(sq.shape[2:])))
    padded = fw.cat(parts, 1) if len(parts) > 1 else sq
    # window sums as `size` shifted slices: size is small, and this keeps exact zeros
    # where the window holds only zeros (a cumsum difference would not)
    win = padded.narrow(1, 0, c)
    for s in range(1, size):
        win = win + padded.narrow(1, s, c)
    div = (win * (alpha / size) + k).pow(beta)
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    r"""Divides ``input`` by its ``p``-norm over ``dim``, clamped below by ``eps``:
    ``v / max(||v||_p, eps)``."""
    # linalg.vector_norm, not Tensor.norm: the latter rejects inf norms of empty inputs
    denom = fw.linalg.vector_norm(input, p, dim, keepdim=True).clamp_min(eps)
    denom = denom.expand_as(input)
    if out is None:
        return input / denom
    return fw.div(input, denom, out=out)
