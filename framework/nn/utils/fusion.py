"""Folding an eval-mode BatchNorm into the convolution or linear layer before it
(PyTorch's ``torch.nn.utils.fusion``).

In eval mode BatchNorm is the per-channel affine map ``y = (x - mean) * w / sqrt(var + eps)
+ b``; applied after ``conv``/``linear`` it folds into their weight (scaled per output
channel) and bias, so that one layer computes what the two did."""
import copy

import framework as _fw

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    r"""A new convolution module (a deep copy of ``conv``) that computes ``bn(conv(x))``.

    Args:
        conv: a convolution module (``nn.Conv1d/2d/3d`` or, with ``transpose=True``,
            ``nn.ConvTranspose1d/2d/3d``), in eval mode.
        bn: a BatchNorm module in eval mode with its running statistics.
        transpose (bool): the convolution's weight has the output channels in dim 1
            (transposed convolutions). Default: ``False``.
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)

    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    r"""The fused convolution weight and bias, as two Parameters.

    Args:
        conv_w: convolution weight; conv_b: its bias (None: zeros).
        bn_rm, bn_rv: BatchNorm running mean and variance; bn_eps: its epsilon.
        bn_w, bn_b: BatchNorm weight and bias (None: ones and zeros, ``affine=False``).
        transpose (bool): the output channels are dim 1 of ``conv_w``.

    Returns the weight ``conv_w * (bn_w / sqrt(bn_rv + eps))`` (per output channel) in
    ``conv_w``'s dtype and the bias ``(conv_b - bn_rm) * bn_w / sqrt(bn_rv + eps) + bn_b``
    in ``conv_b``'s dtype (``conv_w``'s without a bias); the weight requires grad as
    ``conv_w`` does, the bias as ``conv_b`` does (a new zero bias: not)."""
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = _fw.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _fw.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _fw.zeros_like(bn_rm)
    bn_var_rsqrt = _fw.rsqrt(bn_rv + bn_eps)

    if transpose:
        shape = [1, -1] + [1] * (len(conv_w.shape) - 2)
    else:
        shape = [-1, 1] + [1] * (len(conv_w.shape) - 2)

    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)

    return (_fw.nn.Parameter(fused_conv_w, conv_w.requires_grad),
            _fw.nn.Parameter(fused_conv_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    r"""A new ``nn.Linear`` (a deep copy of ``linear``) that computes ``bn(linear(x))``.

    Both must be in eval mode; ``bn.num_features`` must equal ``linear.out_features`` or
    be 1 (a BatchNorm over the features that ``linear`` outputs)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)

    # the fused weight keeps the linear's shapes: bn's channels must broadcast against the
    # linear's output features
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and "
            f"bn.num_features={bn.num_features}")

    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    r"""The fused linear weight and bias, as two Parameters: ``linear_w * scale[:, None]``
    and ``(linear_b - bn_rm) * scale + bn_b`` with ``scale = bn_w / sqrt(bn_rv + eps)``
    (``linear_b`` None: zeros). ``bn_w`` and ``bn_b`` are required (as in PyTorch)."""
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = _fw.zeros_like(bn_rm)
    bn_scale = bn_w * _fw.rsqrt(bn_rv + bn_eps)

    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)

    return (_fw.nn.Parameter(fused_w, linear_w.requires_grad),
            _fw.nn.Parameter(fused_b, linear_b.requires_grad))
