"""The pieces SyncBatchNorm is made of in torch (``batch_norm_gather_stats``,
``batch_norm_backward_reduce``, ...), as framework ops. Statistics are per channel (dim 1)
over the batch and spatial dimensions; ``invstd`` is ``1 / sqrt(var + eps)`` with the
biased variance. The framework's own ``batch_norm_stats``/``batch_norm_elemt`` are fused
ops of a different signature; these take torch's."""
__all__ = ["batch_norm_gather_stats", "batch_norm_gather_stats_with_counts",
           "batch_norm_backward_reduce", "batch_norm_backward_elemt", "batch_norm_update_stats"]


def _fw():
    import framework
    return framework


def _reduce_dims(t):
    return [0] + list(range(2, t.dim()))


def _channel(v, ndim):
    """A per-channel vector shaped to broadcast against an (N, C, ...) tensor."""
    return v.reshape([1, -1] + [1] * (ndim - 2))


def _update_running(running_mean, running_var, mean, var, n, momentum):
    fw = _fw()
    with fw.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var * (n / (n - 1)) if n > 1 else var
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """Per-channel mean and biased variance of ``input``; updates the running statistics
    (with the unbiased variance) when given."""
    dims = _reduce_dims(input)
    mean = input.mean(dims)
    var = input.var(dims, correction=0)
    _update_running(running_mean, running_var, mean, var, input.numel() // input.shape[1],
                    momentum)
    return mean, var


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    """Combines per-process statistics ``mean``/``invstd`` (world, C) of ``counts`` (world,)
    elements each into the global mean and invstd; updates the running statistics."""
    fw = _fw()
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum()
    gmean = (mean * counts).sum(0) / total
    var_i = invstd.reciprocal().square() - eps
    gvar = (counts * (var_i + (mean - gmean).square())).sum(0) / total
    _update_running(running_mean, running_var, gmean, gvar, float(total.item()), momentum)
    return gmean.to(input.dtype), fw.rsqrt(gvar + eps).to(input.dtype)


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    """:func:`batch_norm_gather_stats_with_counts` with the same ``count`` for every
    process."""
    fw = _fw()
    counts = fw.full((mean.shape[0],), count, dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    """Per-channel ``sum_dy``, ``sum_dy_xmu`` (when ``input_g``), ``grad_weight`` (when
    ``weight_g``) and ``grad_bias`` (when ``bias_g``); those not asked for are None."""
    dims = _reduce_dims(input)
    sum_dy = grad_out.sum(dims)
    xmu = input - _channel(mean, input.dim())
    sum_dy_xmu = (grad_out * xmu).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    grad_bias = sum_dy if bias_g else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    """The input gradient of batch norm from the global ``sum_dy``/``sum_dy_xmu`` over
    ``count`` (world,) elements per process."""
    nd = input.dim()
    n = count.sum().to(sum_dy.dtype)
    mean_dy = _channel(sum_dy / n, nd)
    mean_dy_xmu = _channel(sum_dy_xmu / n, nd)
    istd = _channel(invstd, nd)
    xmu = input - _channel(mean, nd)
    scale = istd if weight is None else istd * _channel(weight, nd)
    return ((grad_out - mean_dy - xmu * istd.square() * mean_dy_xmu) * scale).to(input.dtype)
