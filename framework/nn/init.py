"""Parameter initialisation (PyTorch's ``torch.nn.init``).

Every function fills its tensor in place under ``no_grad`` (so a leaf Parameter can be
re-initialised without autograd complaining) and returns it. Random ones take an optional
``generator`` (a framework.Generator) that is passed to the sampling op.
"""
import math
import warnings

import framework as _fw

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
    # deprecated spellings without the trailing underscore, as torch keeps them
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
               "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    r"""Return the recommended gain value for the given nonlinearity function.

    linear/conv*/sigmoid: 1, tanh: 5/3, relu: sqrt(2),
    leaky_relu: sqrt(2 / (1 + negative_slope^2)) (``param``, default 0.01), selu: 3/4.
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    r"""Fill the input Tensor with values drawn from the uniform distribution U(a, b)."""
    with _fw.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    r"""Fill the input Tensor with values drawn from the normal distribution N(mean, std^2)."""
    with _fw.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    r"""Fill the input Tensor with values drawn from a normal distribution N(mean, std^2)
    truncated to [a, b].

    Sampled by inverting the normal CDF on a uniform draw over [cdf(a), cdf(b)], which is
    exact and needs one pass (torch resamples rejected values; the distribution is the same).
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with _fw.no_grad():
        lo = _norm_cdf((a - mean) / std)
        hi = _norm_cdf((b - mean) / std)
        # U(2lo-1, 2hi-1) through erfinv gives a standard normal truncated to [lo, hi]
        # in CDF space; sampling in float32 at least keeps half-precision tensors unbiased.
        work_dtype = tensor.dtype if tensor.dtype == _fw.float64 else _fw.float32
        u = _fw.empty(tuple(tensor.shape), dtype=work_dtype, device=tensor.device)
        u.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        u = u.erfinv_().mul_(std * math.sqrt(2.0)).add_(mean)
        # erfinv at the rounded edges may step just outside [a, b]
        u = u.clamp_(min=a, max=b)
        tensor.copy_(u)
    return tensor


def constant_(tensor, val):
    r"""Fill the input Tensor with the value ``val``."""
    with _fw.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    r"""Fill the input Tensor with the scalar value 1."""
    with _fw.no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    r"""Fill the input Tensor with the scalar value 0."""
    with _fw.no_grad():
        return tensor.zero_()


def eye_(tensor):
    r"""Fill the 2-dimensional input Tensor with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _fw.no_grad():
        tensor.copy_(_fw.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype,
                             device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    r"""Fill the {3, 4, 5}-dimensional input Tensor with the Dirac delta function, so a
    convolution with it preserves as many input channels as possible (per group)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with _fw.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer "
                         "than 2 dimensions")
    receptive = 1
    for s in tuple(tensor.shape)[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    r"""Fill the input Tensor with U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))
    (Glorot initialisation)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    r"""Fill the input Tensor with N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))
    (Glorot initialisation)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    r"""Fill the input Tensor with U(-bound, bound), bound = gain * sqrt(3 / fan_mode)
    (He initialisation); ``a`` is the negative slope used by ``leaky_relu``."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    r"""Fill the input Tensor with N(0, std^2), std = gain / sqrt(fan_mode)
    (He initialisation)."""
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    r"""Fill the input Tensor with a (semi) orthogonal matrix times ``gain``; dimensions
    after the first are flattened."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with _fw.no_grad():
        # QR of a Gaussian matrix; the LAPACK path wants float32/64 on the host dtype
        flat = _fw.empty((rows, cols), dtype=tensor.dtype, device=tensor.device)
        flat.normal_(0, 1, generator=generator)
        if rows < cols:
            flat = flat.t()
        q, r = _fw.linalg.qr(flat)
        # Multiplying by the signs of diag(R) makes Q Haar-distributed (Mezzadri 2006)
        q = q * _fw.diagonal(r, 0).sign()
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    r"""Fill the 2D input Tensor as a sparse matrix: N(0, std^2) values with a fraction
    ``sparsity`` of each column set to zero."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    num_zeros = math.ceil(sparsity * rows)
    with _fw.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            # drawn on the tensor's device, so a generator for that device applies
            zero_rows = _fw.randperm(rows, generator=generator, device=tensor.device)
            tensor[zero_rows[:num_zeros], col] = 0
    return tensor


def _deprecated(fn):
    new_name = fn.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated alias of :func:`{new_name}`."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
