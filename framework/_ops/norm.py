"""Normalization ops with fused kernels: native_layer_norm, _fused_rms_norm,
native_group_norm, batch_norm_stats + batch_norm_elemt, and their backward ops (PyTorch's
names). framework.nn.functional's layer_norm, rms_norm, group_norm and
batch_norm check their arguments with PyTorch's errors and call these.

The kernels (native/norm.cpp, framework/kernels/norm.py) take a contiguous input of one
floating dtype and weight, bias and statistics in the accumulation dtype (float32;
float64 for float64 inputs), so a 16-bit input with float32 parameters gives the input's
dtype and float32 statistics. The row norms' forward ops return the statistics they save
as extra outputs (mean and rstd per row). Batch norm is two ops, as its statistics (per
channel, over the whole batch) take a pass of their own anyway: batch_norm_stats (which
also updates the running statistics) and batch_norm_elemt, whose derivative reads the
statistics as arguments, so that its output may be changed in place (BatchNorm followed by
ReLU(inplace=True)) before backward.

Gradients: each forward op's derivative (ops.yaml) calls its backward op with a mask of
the one gradient that formula wants; the backward op runs the input-gradient kernel (a
row at a time) or the parameter-gradient kernel (partial sums, then a column reduction).
When the backward itself must be differentiable (create_graph=True: grad mode is on and an
argument requires grad) the backward op computes the same values as a composite of
framework ops that recomputes the statistics from the input, so double backward works.
"""
from .. import _dtype
from ..autograd import grad_mode
from . import alloc
from .args import same_device
from .pointwise import convert, require_tensor

_F32, _F64 = _dtype.float32, _dtype.float64


def _acc(x):
    return _F64 if x.dtype is _F64 else _F32


def _dense(t, dtype, device):
    """``t`` contiguous in ``dtype`` (no copy when it already is)."""
    if t is None:
        return None
    if t.dtype is dtype and t.is_contiguous() and t._storage.device is device:
        return t
    return convert(t, dtype, device)


def _eps(x):
    """rms_norm's default eps: the machine epsilon of the computing dtype."""
    return _dtype.finfo(_acc(x)).eps


def _check_float(op, x):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{op}\" not implemented for '{x.dtype.scalar_name}'")


def _rows_of(input, normalized_shape):
    k = len(normalized_shape)
    inner = alloc.numel(tuple(normalized_shape))
    return alloc.numel(input._shape[:input.dim() - k]), inner


def _stat_shape(input, normalized_shape):
    k = len(normalized_shape)
    return tuple(input._shape[:input.dim() - k]) + (1,) * k


def _needs_graph(*ts):
    """create_graph: the backward op must itself be recorded."""
    return grad_mode._mode.enabled and any(t is not None and t._requires_grad for t in ts)


def _rows_forward(op, input, weight, bias, R, K, S, G, eps, rms, stat_shape):
    require_tensor(op, input, "input", 1)
    _check_float(op, input)
    dev = same_device(op, input, weight, bias)
    acc = _acc(input)
    x = _dense(input, input.dtype, dev)
    y = alloc.empty(input._shape, input.dtype, dev)
    mean = None if rms else alloc.empty(stat_shape, acc, dev)
    rstd = alloc.empty(stat_shape, acc, dev)
    if R:
        alloc.backend(dev).norm.rows_forward(x, _dense(weight, acc, dev), _dense(bias, acc, dev),
                                             y, mean, rstd, R, K, S, G, eps, rms)
    return y, mean, rstd


def _param_grads(dev, acc, mask, shape):
    """Accumulation-dtype buffers of ``shape`` (the parameters') for the weight and bias
    gradients the mask asks for; the kernels see them flat (the recorded formula casts
    them to the parameters' dtype)."""
    dw = alloc.empty(shape, acc, dev) if mask[1] else None
    db = alloc.empty(shape, acc, dev) if mask[2] else None
    return dw, db


# ---- layer_norm / rms_norm ----------------------------------------------------------------

def native_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer norm over the last ``len(normalized_shape)`` dims: (output, mean, rstd)."""
    shape = [int(s) for s in normalized_shape]
    R, K = _rows_of(input, shape)
    return _rows_forward("native_layer_norm", input, weight, bias, R, K, 1, 1, eps, False,
                         _stat_shape(input, shape))


def _fused_rms_norm(input, normalized_shape, weight=None, eps=None):
    """RMS norm over the last ``len(normalized_shape)`` dims: (output, rstd); ``eps``
    defaults to the machine epsilon of the computing dtype."""
    shape = [int(s) for s in normalized_shape]
    if eps is None:
        eps = _eps(input)
    R, K = _rows_of(input, shape)
    y, _, rstd = _rows_forward("_fused_rms_norm", input, weight, None, R, K, 1, 1, eps, True,
                               _stat_shape(input, shape))
    return y, rstd


def _rows_backward(grad_out, input, mean, rstd, weight, shape, R, K, rms, mask):
    dev = input._storage.device
    acc = _acc(input)
    x = _dense(input, input.dtype, dev)
    dy = _dense(grad_out, input.dtype, dev)
    dx = alloc.empty(input._shape, input.dtype, dev) if mask[0] else None
    dw, db = _param_grads(dev, acc, mask, tuple(shape))
    if R and K:
        w = _dense(weight, acc, dev) if mask[0] else None
        alloc.backend(dev).norm.rows_backward(dy, x, w, mean, rstd, dx, dw, db, R, K, rms)
    elif R == 0:   # the sums over no rows
        for t in (dw, db):
            if t is not None:
                t.zero_()
    return dx, dw, db


def _composite_rows(grad_out, input, dims, weight, eps, rms, mask):
    """The backward of layer/rms norm over ``dims`` as framework ops (recorded), from the
    input: differentiable again."""
    x = input.float() if input.dtype in (_dtype.float16, _dtype.bfloat16) else input
    g = grad_out.to(x.dtype)
    n = 1
    for d in dims:
        n *= input.shape[d]
    if rms:
        rstd = ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
        xhat = x * rstd
    else:
        mean = x.mean(dims, keepdim=True)
        rstd = (x.var(dims, correction=0, keepdim=True) + eps).rsqrt()
        xhat = (x - mean) * rstd
    batch = tuple(range(input.dim() - len(dims)))
    dx = dw = db = None
    if mask[0]:
        wg = g * weight.to(x.dtype) if weight is not None else g
        dx = wg - (wg * xhat).mean(dims, keepdim=True) * xhat
        if not rms:
            dx = dx - wg.mean(dims, keepdim=True)
        dx = (dx * rstd).to(input.dtype)
    if mask[1]:
        dw = (g * xhat).sum(batch) if batch else g * xhat
    if mask[2]:
        db = g.sum(batch) if batch else g
    return dx, dw, db


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight=None,
                               bias=None, eps=1e-5, output_mask=(True, True, True)):
    """Gradients of native_layer_norm for (input, weight, bias), those of ``output_mask``."""
    shape = [int(s) for s in normalized_shape]
    if _needs_graph(grad_out, input, weight):
        dims = tuple(range(input.dim() - len(shape), input.dim()))
        return _composite_rows(grad_out, input, dims, weight, eps, False, output_mask)
    R, K = _rows_of(input, shape)
    return _rows_backward(grad_out, input, mean, rstd, weight, shape, R, K, False,
                          output_mask)


def _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight=None, eps=None,
                             output_mask=(True, True)):
    """Gradients of _fused_rms_norm for (input, weight), those of ``output_mask``."""
    shape = [int(s) for s in normalized_shape]
    mask = (output_mask[0], output_mask[1], False)
    if _needs_graph(grad_out, input, weight):
        if eps is None:
            eps = _eps(input)
        dims = tuple(range(input.dim() - len(shape), input.dim()))
        dx, dw, _ = _composite_rows(grad_out, input, dims, weight, eps, True, mask)
        return dx, dw
    R, K = _rows_of(input, shape)
    dx, dw, _ = _rows_backward(grad_out, input, None, rstd, weight, shape, R, K, True, mask)
    return dx, dw


# ---- group_norm ---------------------------------------------------------------------------

def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """Group norm of (N, C, *) with ``group`` groups: (output, mean, rstd), the statistics
    shaped (N, group)."""
    return _rows_forward("native_group_norm", input, weight, bias, N * group, C // group,
                         HxW, group, eps, False, (N, group))


def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, eps,
                               output_mask=(True, True, True)):
    """Gradients of native_group_norm for (input, weight, bias), those of ``output_mask``."""
    if _needs_graph(grad_out, input, weight):
        x = input.float() if input.dtype in (_dtype.float16, _dtype.bfloat16) else input
        xg = x.reshape(N, group, -1)
        m = xg.mean(2, keepdim=True)
        rs = (xg.var(2, correction=0, keepdim=True) + eps).rsqrt()
        xhat = ((xg - m) * rs).reshape(N, C, HxW)
        g = grad_out.to(x.dtype).reshape(N, C, HxW)
        dx = dw = db = None
        if output_mask[0]:
            wg = g * weight.to(x.dtype).reshape(1, C, 1) if weight is not None else g
            wg = wg.reshape(N, group, -1)
            xh = xhat.reshape(N, group, -1)
            dx = (wg - wg.mean(2, keepdim=True) - xh * (wg * xh).mean(2, keepdim=True)) * rs
            dx = dx.reshape(input.shape).to(input.dtype)
        if output_mask[1]:
            dw = (g * xhat).sum((0, 2))
        if output_mask[2]:
            db = g.sum((0, 2))
        return dx, dw, db
    dev = input._storage.device
    acc = _acc(input)
    x = _dense(input, input.dtype, dev)
    dy = _dense(grad_out, input.dtype, dev)
    be = alloc.backend(dev).norm
    R, K = N * group, C // group
    dx = None
    if output_mask[0]:
        dx = alloc.empty(input._shape, input.dtype, dev)
        if R and K * HxW:
            be.rows_backward_input(dy, x, _dense(weight, acc, dev), mean, rstd, dx, R, K, HxW,
                                   group, False)
    dw, db = _param_grads(dev, acc, output_mask, (C,))
    if dw is not None or db is not None:
        be.channel_param_grads(dy, x, mean, rstd, dw, db, N, C, HxW, group, max(K, 1))
    return dx, dw, db


# ---- batch_norm ---------------------------------------------------------------------------

def _nchw(input):
    n = input.shape[0]
    c = input.shape[1] if input.dim() > 1 else 1
    return n, c, alloc.numel(input._shape[2:])


def batch_norm_stats(input, running_mean, running_var, training, momentum, eps):
    """Batch norm's statistics of (N, C, *) per channel: (mean, invstd). In training they
    are the batch's (biased variance) and the running statistics, when given, are updated
    in place with ``momentum`` (the variance unbiased); otherwise the running statistics'.
    Not differentiable by itself: batch_norm_elemt's derivative accounts for them."""
    require_tensor("batch_norm_stats", input, "input", 1)
    _check_float("batch_norm", input)
    dev = same_device("batch_norm", input, running_mean, running_var)
    acc = _acc(input)
    N, C, S = _nchw(input)
    if training:
        mean = alloc.empty((C,), acc, dev)
        var = alloc.empty((C,), acc, dev)
        if N * S:
            alloc.backend(dev).norm.channel_stats(_dense(input, input.dtype, dev), mean, var,
                                                  N, C, S)
            n = N * S
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
            if running_var is not None:
                unbiased = var * (n / max(n - 1, 1))
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        else:
            # an empty batch: no statistics (the output is empty too); running ones kept
            mean.zero_()
            var.fill_(1)
    else:
        mean = convert(running_mean, acc, dev)
        var = running_var.to(acc)
    return mean, (var + eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, training, eps):
    """(input - mean) * invstd * weight + bias per channel of (N, C, *), with the
    statistics of batch_norm_stats (``training``: the batch's, so that the input gradient
    goes through them too)."""
    require_tensor("batch_norm_elemt", input, "input", 1)
    _check_float("batch_norm", input)
    dev = same_device("batch_norm", input, weight, bias)
    acc = _acc(input)
    N, C, S = _nchw(input)
    scale = invstd * weight.to(acc) if weight is not None else invstd
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias.to(acc)
    y = alloc.empty(input._shape, input.dtype, dev)
    alloc.backend(dev).norm.channel_affine(_dense(input, input.dtype, dev),
                                           _dense(scale, acc, dev), None, None,
                                           _dense(shift, acc, dev), y, N, C, S)
    return y


def native_batch_norm_backward(grad_out, input, weight, save_mean, save_invstd, train, eps,
                               output_mask=(True, True, True)):
    """Gradients of batch norm (batch_norm_elemt with batch_norm_stats' statistics) for
    (input, weight, bias), those of ``output_mask``; ``train``: the statistics are the
    batch's, else constants (the running statistics')."""
    dims = (0,) + tuple(range(2, input.dim()))
    if _needs_graph(grad_out, input, weight):
        x = input.float() if input.dtype in (_dtype.float16, _dtype.bfloat16) else input
        g = grad_out.to(x.dtype)
        view = (1, -1) + (1,) * (input.dim() - 2)
        if train:
            m = x.mean(dims, keepdim=True)
            rs = (x.var(dims, correction=0, keepdim=True) + eps).rsqrt()
        else:
            m = save_mean.to(x.dtype).reshape(view)
            rs = save_invstd.to(x.dtype).reshape(view)
        xhat = (x - m) * rs
        dx = dw = db = None
        if output_mask[0]:
            wg = g * weight.to(x.dtype).reshape(view) if weight is not None else g
            if train:
                wg = wg - wg.mean(dims, keepdim=True) - xhat * (wg * xhat).mean(dims,
                                                                               keepdim=True)
            dx = (wg * rs).to(input.dtype)
        if output_mask[1]:
            dw = (g * xhat).sum(dims)
        if output_mask[2]:
            db = g.sum(dims)
        return dx, dw, db
    dev = input._storage.device
    acc = _acc(input)
    N, C, S = _nchw(input)
    x = _dense(input, input.dtype, dev)
    dy = _dense(grad_out, input.dtype, dev)
    be = alloc.backend(dev).norm
    need_sums = output_mask[1] or output_mask[2] or (train and output_mask[0])
    sgx = sg = None
    if need_sums:
        sgx = alloc.empty((C,), acc, dev)
        sg = alloc.empty((C,), acc, dev)
        if N * S:
            be.channel_param_grads(dy, x, save_mean, save_invstd, sgx, sg, N, C, S, 0, 1)
        else:
            sgx.zero_()
            sg.zero_()
    dx = None
    if output_mask[0]:
        k = save_invstd * weight.to(acc) if weight is not None else save_invstd
        dx = alloc.empty(input._shape, input.dtype, dev)
        if train:
            n = max(N * S, 1)
            kz = -k * save_invstd * sgx / n
            k0 = k * (save_mean * save_invstd * sgx - sg) / n
            be.channel_affine(dy, _dense(k, acc, dev), x, _dense(kz, acc, dev),
                              _dense(k0, acc, dev), dx, N, C, S)
        else:
            be.channel_affine(dy, _dense(k, acc, dev), None, None, None, dx, N, C, S)
    return (dx, sgx if output_mask[1] else None, sg if output_mask[2] else None)
