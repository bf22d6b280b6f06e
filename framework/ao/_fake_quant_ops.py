"""Fake quantization ops: ``fake_quantize_per_tensor_affine`` and
``fake_quantize_per_channel_affine``, PyTorch's quantization-aware-training primitives.

They quantize and dequantize in floating point: ``(clamp(round(x * (1 / scale)) + zero_point,
quant_min, quant_max) - zero_point) * scale``, rounding half to even as PyTorch's kernels do,
and pass gradients straight through where the unclamped quantized value lies in
``[quant_min, quant_max]`` (zero outside). Built on framework ops; no kernels of their own.
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
           "_fake_quantize_learnable_per_tensor_affine"]

_FLOATS = (_dtype.float32, _dtype.float16, _dtype.bfloat16, _dtype.float64)


def _fw():
    import framework
    return framework


_TORCH_NAMES = {_dtype.int64: "Long", _dtype.int16: "Short", _dtype.int8: "Char",
                _dtype.uint8: "Byte", _dtype.float64: "Double", _dtype.bfloat16: "BFloat16",
                _dtype.bool: "Bool"}


def _check_range(op, quant_min, quant_max):
    if not quant_min <= quant_max:
        # PyTorch's text, spaces included
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")


def _check_input(op, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype not in _FLOATS:
        raise RuntimeError(f"{op}: expected a floating point input, got {x.dtype}")


def _quantize(x, inv_scale, zero_point, quant_min, quant_max, scale, float_zp=False):
    """Returns (fake-quantized x, mask of values whose quantized value was in range)."""
    if float_zp:
        q = (x * inv_scale + zero_point).round_()
    else:
        q = (x * inv_scale).round_() + zero_point
    mask = (q >= quant_min) & (q <= quant_max)
    q = q.clamp_(quant_min, quant_max)
    if float_zp:
        # PyTorch dequantizes in double here; with an integer zero point float32 is exact
        q = q.double()
        zero_point, scale = zero_point.double(), scale.double()
    return ((q - zero_point) * scale).to(x.dtype), mask


class _StraightThrough(Function):
    @staticmethod
    def forward(ctx, x, inv_scale, zero_point, quant_min, quant_max, scale, float_zp=False):
        out, mask = _quantize(x, inv_scale, zero_point, quant_min, quant_max, scale, float_zp)
        ctx.save_for_backward(mask)
        return out

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * mask, None, None, None, None, None, None


def _scalar_qparams(op, x, scale, zero_point):
    if isinstance(scale, Tensor):
        if scale.numel() != 1:
            raise RuntimeError(f"{op}: scale must be a one-element tensor, got shape "
                               f"{tuple(scale.shape)}")
        scale = scale.item()
    if isinstance(zero_point, Tensor):
        if zero_point.numel() != 1:
            raise RuntimeError(f"{op}: zero_point must be a one-element tensor, got shape "
                               f"{tuple(zero_point.shape)}")
        zero_point = zero_point.item()
    # PyTorch's kernel works with a float32 scale and its float32 reciprocal
    scale32 = np.float32(scale)
    return float(scale32), float(np.float32(1.0) / scale32), int(zero_point)


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """Returns a new tensor with the data in ``input`` fake quantized using ``scale``,
    ``zero_point``, ``quant_min`` and ``quant_max``:
    ``(clamp(round(input / scale + zero_point), quant_min, quant_max) - zero_point) * scale``.
    """
    op = "fake_quantize_per_tensor_affine"
    _check_input(op, input)
    _check_range(op, quant_min, quant_max)
    sc, inv, zp = _scalar_qparams(op, input, scale, zero_point)
    if not isinstance(zero_point, Tensor) and not quant_min <= zp <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    return _StraightThrough.apply(input, inv, zp, quant_min, quant_max, sc)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """Returns a new tensor with the data in ``input`` fake quantized per channel along
    ``axis`` using ``scale`` and ``zero_point`` (1-D tensors of ``input.size(axis)``)."""
    op = "fake_quantize_per_channel_affine"
    _check_input(op, input)
    _check_range(op, quant_min, quant_max)
    if not isinstance(scale, Tensor) or not isinstance(zero_point, Tensor):
        raise TypeError(f"{op}(): scale and zero_point must be Tensors")
    nd = input.dim()
    if not -max(nd, 1) <= axis < max(nd, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {axis})")
    if zero_point.dtype not in (_dtype.int32, _dtype.float32, _dtype.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{_TORCH_NAMES.get(zero_point.dtype, zero_point.dtype)}")
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if axis < -1:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    axis = axis % nd
    if scale.numel() != input.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with "
                           "input tensor")
    if bool(((zero_point < quant_min) | (zero_point > quant_max)).any()):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    shape = [1] * nd
    shape[axis] = -1
    sc = scale.detach().to(device=input.device, dtype=_dtype.float32).reshape(shape)
    inv = 1.0 / sc
    zp = zero_point.detach().to(device=input.device, dtype=_dtype.float32).reshape(shape)
    if zero_point.dtype.is_floating_point:
        # a float zero point is added before rounding (PyTorch's learnable-qparams path)
        return _StraightThrough.apply(input, inv, zp, quant_min, quant_max, sc, True)
    return _StraightThrough.apply(input, inv, zp, quant_min, quant_max, sc)


class _LearnablePerTensor(Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max, grad_factor):
        fw = _fw()
        sc = float(np.float32(scale.item()))
        # PyTorch rounds (and clamps) the learnable zero point before use
        zp = int(fw.clamp(zero_point.detach().round(), quant_min, quant_max).item())
        inv = float(np.float32(1.0) / np.float32(sc))
        out, mask = _quantize(x, inv, zp, quant_min, quant_max, sc)
        ctx.save_for_backward(x, mask)
        ctx.qparams = (sc, inv, zp, quant_min, quant_max, grad_factor)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, mask = ctx.saved_tensors
        sc, inv, zp, qmin, qmax, grad_factor = ctx.qparams
        q = (x * inv).round() + zp
        low, high = q < qmin, q > qmax
        # LSQ: d out / d scale is (q - zp) - x / scale inside the range, the clamp bound
        # minus zp outside; d out / d zero_point is -scale outside and 0 inside
        q_in = q - zp - x * inv
        d_scale = q_in.masked_fill(low, qmin - zp).masked_fill(high, qmax - zp)
        d_zp = (low | high).to(x.dtype) * (-sc)
        g_scale = (grad * d_scale).sum().reshape(1) * grad_factor
        g_zp = (grad * d_zp).sum().reshape(1) * grad_factor
        return grad * mask, g_scale, g_zp, None, None, None


def _fake_quantize_learnable_per_tensor_affine(self, scale, zero_point, quant_min, quant_max,
                                               grad_factor=1.0):
    """Fake quantization with gradients with respect to ``scale`` and ``zero_point`` too
    (Learned Step Size Quantization)."""
    op = "_fake_quantize_learnable_per_tensor_affine"
    _check_input(op, self)
    _check_range(op, quant_min, quant_max)
    return _LearnablePerTensor.apply(self, scale, zero_point, quant_min, quant_max,
                                     grad_factor)
