"""``CrossMapLRN2d``: the legacy (Lua Torch) cross-channel local response normalization
that PyTorch keeps, with its exact window and its hand-written backward.

``scale[c] = k + alpha / size * sum(x[j] ** 2 for j in window(c))`` and
``out = x * scale ** -beta``. The window is the legacy one: channels up to
``c + pre_pad - 1`` (``pre_pad = (size - 1) // 2 + 1``), from ``c - pre_pad + 1`` but always
with channel 0 (the legacy running sum never drops it); the backward is the legacy formula
(not the exact derivative of that window), as PyTorch computes it. Both are computed with
cumulative sums over the channels instead of a loop.
"""
import framework as fw

from .module import Module

__all__ = ["CrossMapLRN2d"]


def _index(values, device):
    return fw.tensor(values, dtype=fw.int64, device=device)


def _padded_cumsum(t):
    """``cs[:, k] = sum(t[:, :k])`` for k in 0..C (a leading zero channel)."""
    cs = t.cumsum(1)
    return fw.cat([fw.zeros_like(cs[:, :1]), cs], 1)


class _CrossMapLRN2dFunction(fw.autograd.Function):
    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        channels = input.size(1)
        pre_pad = int((size - 1) / 2 + 1)
        cs = _padded_cumsum(input * input)
        hi = [min(c + pre_pad - 1, channels - 1) + 1 for c in range(channels)]
        # the legacy running sum drops channels 1..c-pre_pad (never channel 0)
        lo = [c - pre_pad + 1 if c - pre_pad >= 1 else 0 for c in range(channels)]
        dev = input.device
        scale = (cs.index_select(1, _index(hi, dev)) - cs.index_select(1, _index(lo, dev))
                 + cs.index_select(1, _index([1 if v > 0 else 0 for v in lo], dev)))
        scale = scale * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.save_for_backward(input, output, scale)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        size = ctx.size
        channels = input.size(1)
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        if inverse_pre_pad > size - 1:
            # PyTorch's legacy buffer of channels + size - 1 is too short (size 1)
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds "
                               f"dimension size ({channels + size - 1}).")
        cs = _padded_cumsum(grad_output * output / scale)
        # channel c accumulates the ratios of channels c - inverse_pre_pad ..
        # c + size - 1 - inverse_pre_pad
        lo = [min(max(c - inverse_pre_pad, 0), channels) for c in range(channels)]
        hi = [min(max(c + size - inverse_pre_pad, 0), channels) for c in range(channels)]
        dev = input.device
        accum = cs.index_select(1, _index(hi, dev)) - cs.index_select(1, _index(lo, dev))
        grad_input = scale.pow(-ctx.beta) * grad_output - cache_ratio_value * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    r"""Legacy cross-channel local response normalization over a 4-d input (see the
    module docstring for its exact window).

    Args:
        size (int): number of channels to normalize across
        alpha (float): multiplicative factor. Default: 0.0001
        beta (float): exponent. Default: 0.75
        k (float): additive factor. Default: 1
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
