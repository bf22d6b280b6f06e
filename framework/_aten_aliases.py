"""PyTorch's top-level (ATen) spellings of framework.nn.functional ops and a few global
switches: ``torch.layer_norm(input, normalized_shape, ..., cudnn_enable)``,
``torch.dropout(input, p, train)``, ``torch.kl_div(input, target, reduction=1)`` (the
reduction as ATen's int enum: 0 none, 1 mean, 2 sum; any other int means none), ...

They take torch's top-level signatures, which differ from nn.functional's: the arguments
are positional and required where ATen's are, reductions are ints (left out, they mean
none, as in PyTorch's Python binding), and the cudnn flags are accepted and ignored."""
import math
import warnings

import numpy as np

__all__ = [
    "layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm",
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
    "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "native_dropout",
    "bilinear", "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss", "ctc_loss",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "embedding_bag",
    "threshold", "threshold_", "rrelu", "rrelu_", "celu_", "selu_",
    "conv_tbc", "convolution", "native_norm", "native_channel_shuffle", "nuclear_norm",
    "frobenius_norm", "segment_reduce",
    "set_warn_always", "is_warn_always_enabled", "set_flush_denormal",
    "get_num_interop_threads", "set_num_interop_threads", "init_num_threads",
    "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype",
]


def _fw():
    import framework
    return framework


def _F():
    import framework.nn.functional as F
    return F


# -- warnings ------------------------------------------------------------------------------

_warn_always = False
_warned = set()


def set_warn_always(b):
    """When on, warnings that are otherwise issued once per process (TORCH_WARN_ONCE) are
    issued every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    global _warn_always
    _warn_always = b


def is_warn_always_enabled():
    """Whether :func:`set_warn_always` is on."""
    return _warn_always


def _warn_once(msg, category=UserWarning, stacklevel=3):
    if _warn_always or msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, category, stacklevel=stacklevel)


# -- threads and denormals -----------------------------------------------------------------

_interop_threads = None


def get_num_interop_threads():
    """Threads of the inter-op pool (the framework has none of its own: the value set with
    :func:`set_num_interop_threads`, else the number of intra-op threads)."""
    if _interop_threads is not None:
        return _interop_threads
    return _fw().get_num_threads()


def set_num_interop_threads(n):
    """Sets the number of inter-op threads; allowed once, as in PyTorch (the value is only
    stored: the framework runs ops on the calling thread)."""
    global _interop_threads
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(
            f"set_num_interop_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop_threads = n


def init_num_threads():
    """Initialises the thread pools' settings in the calling thread (nothing to do here)."""
    return None


_FTZ_DAZ = 0x8040          # MXCSR bits: flush-to-zero (15) and denormals-are-zero (6)
_libm = None


def _mxcsr_set(mode):
    """Sets FTZ and DAZ in the calling thread's MXCSR through glibc's fegetenv/fesetenv
    (x86-64 fenv_t: 32 bytes, MXCSR at offset 28). False when that is not possible."""
    import ctypes
    import platform
    global _libm
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        if _libm is None:
            _libm = ctypes.CDLL("libm.so.6")
        env = (ctypes.c_uint32 * 8)()
        if _libm.fegetenv(ctypes.byref(env)) != 0:
            return False
        env[7] = (env[7] | _FTZ_DAZ) if mode else (env[7] & ~_FTZ_DAZ)
        return _libm.fesetenv(ctypes.byref(env)) == 0
    except (OSError, AttributeError):
        return False


def set_flush_denormal(mode):
    """Turns flushing of denormal floats to zero on or off (in the calling thread's FPU, as
    PyTorch does); True when supported (x86-64)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return _mxcsr_set(mode)


# -- deprecated autocast switches ----------------------------------------------------------

def _autocast_deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    _autocast_deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _fw().get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    _autocast_deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _fw().get_autocast_dtype("cuda")


def is_autocast_cpu_enabled():
    _autocast_deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _fw().is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _autocast_deprecated("set_autocast_cpu_enabled(enabled)",
                         "set_autocast_enabled('cpu', enabled)")
    _fw().set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype):
    _autocast_deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _fw().set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _autocast_deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _fw().set_autocast_dtype("cuda", dtype)


# -- argument helpers ----------------------------------------------------------------------

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
# The losses' reduction defaults to 0 (none), not to the schema's 1 (mean): PyTorch's Python
# binding reads the default "at::Reduction::Mean" as 0, so torch.kl_div(x, y) (as
# binary_cross_entropy_with_logits, cosine_embedding_loss, hinge_embedding_loss,
# margin_ranking_loss, ctc_loss) returns the unreduced loss; so do these.


def _reduction(fname, reduction, pos):
    """ATen's int reduction as nn.functional's string (an int other than 0-2 is 'none')."""
    if isinstance(reduction, bool) or not isinstance(reduction, (int, np.integer)):
        raise TypeError(f"{fname}(): argument 'reduction' (position {pos}) must be int, "
                        f"not {type(reduction).__name__}")
    return _REDUCTIONS.get(int(reduction), "none")


def _check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _stride(stride):
    """ATen's empty stride list means 'the kernel size' (nn.functional's None)."""
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return None
    return stride


# -- normalisation -------------------------------------------------------------------------

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _F().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                           eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F().rms_norm(input, normalized_shape, weight, eps)


# -- dropout -------------------------------------------------------------------------------

def _feature_noise_shape(input):
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.dim() - 2)


def _dropout_impl(input, p, train, feature, alpha, inplace):
    _check_p(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input.mul(0)
    if feature:
        shape = _feature_noise_shape(input)
    if not feature and not alpha:
        return _F().dropout(input, p, True, inplace)
    if alpha and not feature:
        return _F().alpha_dropout(input, p, True, inplace)
    fw = _fw()
    noise = fw.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    if alpha:
        alpha_ = 1.7580993408473766
        a = 1.0 / math.sqrt((alpha_ * alpha_ * p + 1) * (1 - p))
        b = noise.add(-1).mul_(alpha_ * a).add_(alpha_ * a * p)
        noise = noise.mul_(a)
        return input.mul_(noise).add_(b) if inplace else input.mul(noise).add(b)
    noise = noise.div_(1 - p)
    return input.mul_(noise) if inplace else input.mul(noise)


def dropout(input, p, train):
    return _dropout_impl(input, p, train, False, False, False)


def dropout_(input, p, train):
    return _dropout_impl(input, p, train, False, False, True)


def alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, True, False)


def alpha_dropout_(input, p, train):
    return _dropout_impl(input, p, train, False, True, True)


def feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, False, True)


def feature_alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, True, True, False)


def feature_alpha_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, True, True)


def native_dropout(input, p, train):
    """(output, mask): the mask (bool) of the elements kept; train None means True."""
    fw = _fw()
    if train is None or train:
        if not 0 <= 1 - p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
        mask = fw.empty(input.shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
        scale = 0.0 if p == 1 else 1.0 / (1 - p)
        return input * mask * scale, mask.bool()
    return input.clone(), fw.ones(input.shape, dtype=fw.bool, device=input.device)


# -- losses --------------------------------------------------------------------------------

def bilinear(input1, input2, weight, bias=None):
    return _F().bilinear(input1, input2, weight, bias)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    r = _reduction("binary_cross_entropy_with_logits", reduction, 5)
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=r,
                                                 pos_weight=pos_weight)


def kl_div(input, target, reduction=0, *, log_target=False):
    r = _reduction("kl_div", reduction, 3)
    with warnings.catch_warnings():   # F's warning about 'mean' is not ATen's
        warnings.simplefilter("ignore")
        return _F().kl_div(input, target, reduction=r, log_target=log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    r = _reduction("cosine_embedding_loss", reduction, 5)
    return _F().cosine_embedding_loss(input1, input2, target, margin=margin, reduction=r)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    r = _reduction("hinge_embedding_loss", reduction, 4)
    return _F().hinge_embedding_loss(input, target, margin=margin, reduction=r)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    r = _reduction("margin_ranking_loss", reduction, 5)
    return _F().margin_ranking_loss(input1, input2, target, margin=margin, reduction=r)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    r = _reduction("poisson_nll_loss", reduction, 6)
    return _F().poisson_nll_loss(input, target, log_input=log_input, full=full, eps=eps,
                                 reduction=r)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    r = _reduction("ctc_loss", reduction, 6)
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=blank,
                         reduction=r, zero_infinity=zero_infinity)


# -- pooling -------------------------------------------------------------------------------

def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return tuple(_F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation,
                                 ceil_mode, return_indices=True))


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    return _F().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                           count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    return tuple(_F().adaptive_max_pool1d(input, output_size, return_indices=True))


# -- embedding_bag -------------------------------------------------------------------------

_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """ATen's embedding_bag: (output, offset2bag, bag_size, max_indices). The last three
    follow PyTorch's CPU kernel (offset2bag is empty for plain sum mode)."""
    fw = _fw()
    if mode not in _BAG_MODES:
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    indices = indices.reshape(-1)
    pidx = -1 if padding_idx is None else int(padding_idx)
    if pidx < 0 and padding_idx is not None:
        pidx += weight.shape[0]
    out = _F().embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                             mode=_BAG_MODES[mode], sparse=sparse,
                             per_sample_weights=per_sample_weights,
                             include_last_offset=include_last_offset,
                             padding_idx=padding_idx)
    idx = indices.cpu().numpy().astype(np.int64)
    offs = offsets.cpu().numpy().astype(np.int64)
    n = idx.shape[0]
    bags = offs.shape[0] - 1 if include_last_offset else offs.shape[0]
    ends = np.append(offs[1:], n) if not include_last_offset else offs[1:]
    starts = offs[:bags]
    ends = ends[:bags]
    offset2bag = np.zeros(n, dtype=np.int64)
    for b in range(bags):
        offset2bag[starts[b]:ends[b]] = b
    keep = idx != pidx
    bag_size = np.array([int(keep[starts[b]:ends[b]].sum()) for b in range(bags)],
                        dtype=np.int64)
    dev = weight.device
    if mode == 0:
        o2b = offset2bag if padding_idx is not None else np.zeros(0, dtype=np.int64)
        bag_size = np.zeros(bags, dtype=np.int64)
        max_idx = np.zeros(bags, dtype=np.int64)
    elif mode == 1:
        o2b, max_idx = offset2bag, bag_size
    else:
        o2b = offset2bag
        w = weight.detach().cpu().numpy()
        max_idx = np.zeros((bags, w.shape[1]), dtype=np.int64)
        for b in range(bags):
            sel = idx[starts[b]:ends[b]]
            sel = sel[sel != pidx]
            if sel.size:
                max_idx[b] = sel[np.argmax(w[sel], axis=0)]
    t = lambda a: fw.tensor(a, dtype=fw.int64, device=dev)  # noqa: E731
    return out, t(o2b), t(bag_size), t(max_idx)


# -- activations ---------------------------------------------------------------------------

def threshold(input, threshold, value):
    return _F().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _F().threshold_(input, threshold, value)


def _rrelu_gen(input, lower, upper, generator, inplace):
    noise = _fw().empty(input.shape, dtype=input.dtype, device=input.device)
    noise.uniform_(lower, upper, generator=generator)
    slope = _fw().where(input >= 0, _fw().ones_like(input), noise)
    return input.mul_(slope) if inplace else input * slope


def rrelu(input, lower=0.125, upper=0.3333333333333333, training=False, generator=None):
    if training and generator is not None:
        return _rrelu_gen(input, lower, upper, generator, False)
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower=0.125, upper=0.3333333333333333, training=False, generator=None):
    if training and generator is not None:
        return _rrelu_gen(input, lower, upper, generator, True)
    return _F().rrelu_(input, lower, upper, training)


def celu_(input, alpha=1.0):
    return _F().celu_(input, alpha)


def selu_(input):
    return _F().selu_(input)


def native_channel_shuffle(input, groups):
    return _F().native_channel_shuffle(input, groups)


# -- convolution ---------------------------------------------------------------------------

def conv_tbc(input, weight, bias, pad=0):
    """Time-batch-channel 1-d convolution: input (T, B, Cin), weight (K, Cin, Cout), bias
    (Cout) -> (T + 2 pad - K + 1, B, Cout)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = _F().conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1).contiguous()


def _expand(v, n):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's generic convolution: 1-3 spatial dims, direct or transposed."""
    F = _F()
    k = weight.dim() - 2
    if k not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, but got weight of "
                           f"size {list(weight.shape)}")
    stride, padding, dilation = _expand(stride, k), _expand(padding, k), _expand(dilation, k)
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[k - 1]
        return fn(input, weight, bias, tuple(stride), tuple(padding),
                  tuple(_expand(output_padding, k)), groups, tuple(dilation))
    fn = (F.conv1d, F.conv2d, F.conv3d)[k - 1]
    return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


# -- norms ---------------------------------------------------------------------------------

def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm of all elements (or over ``dim``). PyTorch implements it for sparse
    tensors only; here it takes dense ones."""
    fw = _fw()
    if p is None:
        p = 2
    x = input if dtype is None else input.to(dtype)
    return fw.linalg.vector_norm(x, p, dim=dim, keepdim=keepdim)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Deprecated ATen spelling of ``linalg.matrix_norm(A, 'nuc', dim, keepdim)``;
    ``nuclear_norm(input, keepdim)`` reduces the last two dims."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
               "will be removed in a future PyTorch release. Please use "
               "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    fw = _fw()
    if dim is None:
        dim = (-2, -1)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_aten_type(input.dtype)}")
    return fw.linalg.matrix_norm(input, "nuc", dim=tuple(dim), keepdim=keepdim, out=out)


def _aten_type(dtype):
    name = str(dtype).rsplit(".", 1)[-1]
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
            "float64": "Double"}.get(name, name)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """Deprecated ATen spelling of ``linalg.vector_norm(A, 2, dim, keepdim)`` (at most two
    dims)."""
    _warn_once("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
               "It will be removed in a future PyTorch release. Please use "
               "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    if isinstance(dim, int):
        dim = (dim,)
    dim = tuple(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           "instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_aten_type(input.dtype)} instead.")
    return _fw().linalg.vector_norm(input, 2, dim=dim if dim else None, keepdim=keepdim,
                                    out=out)


# -- indexing ------------------------------------------------------------------------------

def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduces consecutive segments of ``data`` along ``axis`` with "sum", "mean", "max"
    ("amax"), "min" ("amin") or "prod". The segments are ``lengths`` or ``offsets`` along
    their last dim (``axis`` must be that dim; leading dims index ``data``'s leading dims).
    Empty segments get ``initial`` (else 0 for sum, 1 for prod, nan for mean, -inf/inf for
    max/min)."""
    red = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if red not in ("sum", "mean", "max", "min", "prod"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    nd = data.dim()
    axis = axis + nd if axis < 0 else axis
    seg = lengths if lengths is not None else offsets
    name = "lengths" if lengths is not None else "offsets"
    if axis != seg.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} "
                           f"but got {axis}.")
    if seg.dtype.is_floating_point:
        raise NotImplementedError(f'"_segment_reduce_{name}_cpu_kernel1" not implemented for '
                                  f"'{_aten_type(seg.dtype)}'")
    b = seg.cpu().numpy().astype(np.int64)
    if lengths is not None:
        if not unsafe:
            if (b < 0).any():
                raise RuntimeError("lengths contains negative value!")
            if (b.sum(-1) != data.shape[axis]).any():
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis "
                                   "to sum to data.size(lengths.dim()-1) when !unsafe.")
        b = np.concatenate([np.zeros(b.shape[:-1] + (1,), np.int64), np.cumsum(b, -1)], -1)
    return _segment_reduce(data, red, b, axis, initial)


def _segment_reduce(data, red, bounds, axis, initial):
    fw = _fw()
    if bounds.ndim > 1:   # one leading dim at a time
        return fw.stack([_segment_reduce(data[i], red, bounds[i], axis - 1, initial)
                         for i in range(bounds.shape[0])], 0)
    shape = list(data.shape)
    shape[axis] = 1
    empty_val = {"sum": 0.0, "prod": 1.0, "mean": math.nan, "max": -math.inf,
                 "min": math.inf}[red] if initial is None else initial
    outs = []
    for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        if e - s <= 0:
            outs.append(fw.full(shape, empty_val, dtype=data.dtype, device=data.device))
            continue
        piece = data.narrow(axis, s, e - s)
        if red in ("sum", "mean"):
            r = piece.sum(axis, keepdim=True)
            if initial is not None:
                r = r + initial
            if red == "mean":
                r = r / (e - s)
        elif red == "prod":
            r = piece.prod(axis, keepdim=True)
            if initial is not None:
                r = r * initial
        else:
            r = piece.amax(axis, keepdim=True) if red == "max" else piece.amin(axis, keepdim=True)
            if initial is not None:
                init = fw.full(shape, initial, dtype=data.dtype, device=data.device)
                r = fw.maximum(r, init) if red == "max" else fw.minimum(r, init)
        outs.append(r)
    if not outs:
        shape[axis] = 0
        return fw.empty(shape, dtype=data.dtype, device=data.device)
    return fw.cat(outs, axis)

