"""torch.nn.functional.linear_cross_entropy: cross entropy of a linear projection's logits,
composed of linear and cross_entropy (PyTorch's reference implementation; its chunked
``options`` only bound peak memory and do not change the result, so they are accepted and
the logits are formed whole)."""
import framework as _fw


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...); a weight of
    shape (C, d_1, ..., d_K, in_features) gives K-dimensional logits (N, C, d_1, ..., d_K).
    ``ignore_index=None`` ignores no class."""
    F = _fw.nn.functional
    if linear_weight.dim() < 2:
        raise RuntimeError(f"linear_cross_entropy: linear_weight must have at least 2 "
                           f"dimensions, got shape {tuple(linear_weight.shape)}")
    out_features = tuple(linear_weight.shape[:-1])
    w2 = linear_weight.reshape(-1, linear_weight.shape[-1])
    b = None if linear_bias is None else linear_bias.reshape(-1)
    logits = F.linear(input, w2, b)
    logits = logits.reshape(*input.shape[:-1], *out_features)
    if ignore_index is None:
        # no class index is negative: -100 ignores nothing
        ignore_index = -100
    return F.cross_entropy(logits, target, weight=weight, reduction=reduction,
                           ignore_index=ignore_index, label_smoothing=label_smoothing)
