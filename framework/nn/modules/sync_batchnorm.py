"""``SyncBatchNorm``: batch normalization whose batch statistics cover the whole batch of
all the processes of a group (framework.distributed), not only this process's part.

In training with an initialized process group of more than one process, each process
all-reduces its per-channel sums and element count, then the sums of squared deviations
from the global mean (two all-reduces of ``C + 1`` and ``C`` numbers); every process then
normalizes with the same mean and variance and updates the running statistics identically
(unbiased variance over the whole batch). Backward all-reduces the per-channel sums of
``dy`` and ``dy * (x - mean)`` for the input gradient; the weight and bias gradients stay
local, as in PyTorch (DistributedDataParallel averages them). Otherwise (eval, no process
group, one process) it is a BatchNorm.
"""
import framework as fw

from .. import functional as F
from .batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _reduce_dims(input):
    return [0] + list(range(2, input.dim()))


def _channel_view(t, ndim):
    return t.reshape((1, -1) + (1,) * (ndim - 2))


class _SyncBatchNormFunction(fw.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        from ... import distributed as dist
        c = input.shape[1]
        dims = _reduce_dims(input)
        # statistics in at least float32 (half inputs) and in float64 where they are
        acc = input.dtype if input.dtype in (fw.float32, fw.float64) else fw.float32
        x = input.to(acc)
        count = input.numel() // c
        # 1) global sum and count, hence the mean
        stats = fw.cat([x.sum(dims), fw.full((1,), float(count), dtype=acc,
                                             device=input.device)])
        dist.all_reduce(stats, group=process_group)
        total = int(round(stats[c].item()))
        mean = stats[:c] / total
        # 2) global sum of squared deviations, hence the (biased) variance
        xmu = x - _channel_view(mean, x.dim())
        m2 = (xmu * xmu).sum(dims)
        dist.all_reduce(m2, group=process_group)
        var = m2 / total
        invstd = (var + eps).rsqrt()
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            unbiased = var * (total / (total - 1)) if total > 1 else var
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype),
                                                alpha=momentum)
        out = xmu * _channel_view(invstd, x.dim())
        if weight is not None:
            out = out * _channel_view(weight.to(acc), x.dim())
        if bias is not None:
            out = out + _channel_view(bias.to(acc), x.dim())
        ctx.save_for_backward(xmu, weight, invstd)
        ctx.total = total
        ctx.process_group = process_group
        ctx.has_bias = bias is not None
        return out.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        from ... import distributed as dist
        xmu, weight, invstd = ctx.saved_tensors
        nd = xmu.dim()
        dims = _reduce_dims(xmu)
        c = xmu.shape[1]
        dy = grad_output.to(xmu.dtype)
        sum_dy = dy.sum(dims)
        sum_dy_xmu = (dy * xmu).sum(dims)
        grad_input = grad_weight = grad_bias = None
        if weight is not None and ctx.needs_input_grad[1]:
            grad_weight = (sum_dy_xmu * invstd).to(weight.dtype)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = sum_dy.to(weight.dtype if weight is not None else dy.dtype)
        if ctx.needs_input_grad[0]:
            combined = fw.cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(combined, group=ctx.process_group)
            mean_dy = combined[:c] / ctx.total
            mean_dy_xmu = combined[c:] / ctx.total
            g = (dy - _channel_view(mean_dy, nd)
                 - xmu * _channel_view(invstd * invstd * mean_dy_xmu, nd))
            scale = invstd if weight is None else invstd * weight.to(invstd.dtype)
            grad_input = (g * _channel_view(scale, nd)).to(grad_output.dtype)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalization over an ``(N, C, +)`` input whose statistics, in training, are
    those of the whole batch across the processes of ``process_group`` (default: the
    whole world).

    Args:
        num_features: number of channels ``C``
        eps: added to the variance for numerical stability. Default: 1e-5
        momentum: weight of the new batch in the running statistics; ``None`` for a
            cumulative average. Default: 0.1
        affine: learnable per-channel ``weight`` and ``bias``. Default: ``True``
        track_running_stats: keep running statistics (used in eval mode). Default: ``True``
        process_group: the group whose batches are normalized together. Default: ``None``
        bias: with ``affine``, also learn ``bias``. Default: ``True``

    As in PyTorch, a synchronized (distributed training) forward needs a cuda input.
    :meth:`convert_sync_batchnorm` turns the BatchNorm layers of a model into these.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        from ... import distributed as dist
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is None:
                raise AssertionError("num_batches_tracked must not be None")
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked.item()
            else:
                factor = self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        running_mean = self.running_mean if not self.training or self.track_running_stats \
            else None
        running_var = self.running_var if not self.training or self.track_running_stats \
            else None
        # no synchronization in eval mode
        need_sync = (bn_training and self.training and dist.is_available()
                     and dist.is_initialized())
        if need_sync:
            if input.device.type != "cuda":
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or "
                                 "privateuseone")
            process_group = dist.group.WORLD
            if self.process_group:
                process_group = self.process_group
            world_size = dist.get_world_size(process_group)
            need_sync = world_size > 1
        if not need_sync:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias,
                                bn_training, factor, self.eps)
        size = input.numel() // input.size(1)
        if size == 1 and world_size < 2:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {size}")
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean,
                                            running_var, self.eps, factor, process_group,
                                            world_size)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        r"""Replaces every ``BatchNorm*d`` layer of ``module`` (recursively) by a
        :class:`SyncBatchNorm` that keeps its parameters, buffers and training flag.

        Args:
            module (nn.Module): the model (or a single BatchNorm layer)
            process_group (optional): the group to synchronize over; default the world

        Returns:
            ``module`` with its BatchNorm layers converted; a new :class:`SyncBatchNorm`
            when ``module`` itself is a BatchNorm layer.
        """
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                          module.affine, module.track_running_stats,
                                          process_group, bias=module.bias is not None)
            if module.affine:
                with fw.no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
