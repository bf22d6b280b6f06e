"""Statically quantized Linear and Conv2d (PyTorch's ``QuantizedLinear``/``QuantizedConv2d``)
and ReLU on quantized tensors, with fbgemm's integer arithmetic reproduced exactly."""
import framework as fw
from framework import nn
from ... import per_channel_affine, per_channel_symmetric, per_tensor_affine, qint8, quint8
from ..._qtensor import QTensor, _f32
from .modules import LinearPackedParams

__all__ = ["Linear", "Conv2d", "ReLU"]


def _check_quint8(op, x):
    if not (isinstance(x, QTensor) and x.dtype is quint8
            and x.qscheme() is per_tensor_affine):
        what = f"a quantized tensor of {x.dtype}" if isinstance(x, QTensor) else \
            f"a {x.dtype} tensor"
        raise RuntimeError(f"{op}: expected a per-tensor quint8 input (use QuantStub / "
                           f"framework.quantize_per_tensor), got {what}")


def _weight_terms(w):
    """(integers minus zero point as float64, per-output-channel float32 scales)."""
    q = w._qint.double()
    if w.qscheme() is per_tensor_affine:
        return q - w.q_zero_point(), fw.full((q.shape[0],), _f32(w.q_scale()))
    zp = w.q_per_channel_zero_points().double().reshape(-1, *([1] * (q.dim() - 1)))
    return q - zp, w.q_per_channel_scales().float()


def requantize(acc, x_scale, w_scales, bias, out_scale, out_zp, channel_dim):
    """The output stage: the int32 accumulator to float as fbgemm's dynamic path does,
    ``y = fma(float32(acc), float32(x_scale * w_scale), bias)``, then ``y`` quantized as
    ``quantize_per_tensor`` does, ``rint(fma(y, 1/out_scale, zero_point))`` saturated to
    quint8. (This matches PyTorch's fbgemm output on every case tested, including ties
    that fbgemm's documented ``(acc + bias / (x_scale * w_scale)) * multiplier`` form
    rounds the other way.)"""
    shape = [1] * acc.dim()
    shape[channel_dim] = -1
    act_w = (w_scales.double() * _f32(x_scale)).float().reshape(shape)   # float32 products
    # float64 products of float32 values are exact: one rounding each, as an fma
    y = acc.float().double() * act_w.double()
    if bias is not None:
        y = y + bias.detach().float().double().reshape(shape)
    inv = _f32(1.0 / _f32(out_scale))
    v = (y.float().double() * inv + out_zp).float().round().clamp(0, 255)
    return QTensor._wrap(v.to(fw.uint8), quint8, per_tensor_affine, float(out_scale),
                         int(out_zp))


def _quantize_weight(mod):
    observer = mod.qconfig.weight()
    weight = mod.weight.detach().float()
    observer(weight)
    scale, zp = observer.calculate_qparams()
    if observer.dtype is not qint8:
        raise RuntimeError(f"Unsupported dtype specified for quantized {type(mod).__name__}: "
                           f"{observer.dtype}")
    if observer.qscheme in (per_channel_affine, per_channel_symmetric):
        return fw.quantize_per_channel(weight, scale.double(), zp.long(), observer.ch_axis,
                                       qint8)
    return fw.quantize_per_tensor(weight, float(scale), int(zp), qint8)


def _output_qparams(mod):
    scale, zp = mod.activation_post_process.calculate_qparams()
    return float(scale), int(zp)


class Linear(nn.Module):
    """A quantized linear layer: quint8 input and output (``scale``, ``zero_point``),
    qint8 weight, float bias."""

    _version = 3

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(
            fw.quantize_per_tensor(fw.zeros(out_features, in_features), 1.0, 0, qint8),
            fw.zeros(out_features) if bias_ else None)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return "QuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"scale={self.scale}, zero_point={self.zero_point}, "
                f"qscheme={self.weight().qscheme()}")

    def __repr__(self):
        return f"{self._get_name()}({self.extra_repr()})"

    def weight(self):
        return self._packed_params._weight

    def bias(self):
        return self._packed_params._bias

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    def forward(self, x):
        _check_quint8("quantized::linear", x, )
        if x.shape[-1] != self.in_features:
            raise RuntimeError(f"quantized::linear: input of {x.shape[-1]} features, weight "
                               f"of {self.in_features}")
        w, ws = _weight_terms(self.weight())
        xq = x._qint.double() - x.q_zero_point()
        acc = xq.reshape(-1, self.in_features) @ w.t()      # exact: |acc| < 2**53
        out = requantize(acc, x.q_scale(), ws, self.bias(), self.scale, self.zero_point, 1)
        return out.reshape(*x.shape[:-1], self.out_features)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = fw.tensor(self.scale)
        destination[prefix + "zero_point"] = fw.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        state_dict = dict(state_dict)
        self.scale = float(state_dict.pop(prefix + "scale", fw.tensor(self.scale)))
        self.zero_point = int(state_dict.pop(prefix + "zero_point",
                                             fw.tensor(self.zero_point)))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A quantized Linear from an observed float ``nn.Linear`` (after ``prepare``)."""
        out = cls(mod.in_features, mod.out_features, mod.bias is not None)
        out.set_weight_bias(_quantize_weight(mod),
                            None if mod.bias is None else mod.bias.detach().float().clone())
        out.scale, out.zero_point = _output_qparams(mod)
        return out


class Conv2d(nn.Module):
    """A quantized 2-d convolution: quint8 input and output, qint8 weight, float bias
    (zero padding only)."""

    _version = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros"):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError(f"quantized Conv2d: padding_mode {padding_mode!r} is "
                                      "not supported, only 'zeros'")
        pair = nn.modules.utils._pair
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = pair(kernel_size), pair(stride)
        self.padding, self.dilation = pair(padding), pair(dilation)
        self.groups, self.padding_mode = groups, padding_mode
        w = fw.zeros(out_channels, in_channels // groups, *self.kernel_size)
        # a plain pair, not buffers: the state dict names them weight and bias, as PyTorch
        self._packed = (fw.quantize_per_tensor(w, 1.0, 0, qint8),
                        fw.zeros(out_channels) if bias else None)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return "QuantizedConv2d"

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}, scale={self.scale}, zero_point={self.zero_point}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self._packed[1] is None:
            s += ", bias=False"
        return s

    def __repr__(self):
        return f"{self._get_name()}({self.extra_repr()})"

    def weight(self):
        return self._packed[0]

    def bias(self):
        return self._packed[1]

    def set_weight_bias(self, w, b):
        self._packed = (w, b)

    def forward(self, x):
        _check_quint8("quantized::conv2d", x)
        if x.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        w, ws = _weight_terms(self.weight())
        xq = x._qint.double() - x.q_zero_point()
        # integer products summed in float64 are exact; zero padding is the zero point
        acc = nn.functional.conv2d(xq, w, None, self.stride, self.padding, self.dilation,
                                   self.groups)
        return requantize(acc, x.q_scale(), ws, self.bias(), self.scale, self.zero_point, 1)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "weight"], destination[prefix + "bias"] = self._packed
        destination[prefix + "scale"] = fw.tensor(self.scale)
        destination[prefix + "zero_point"] = fw.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        state_dict = dict(state_dict)
        for key in ("weight", "bias", "scale", "zero_point"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
        self._packed = (state_dict.pop(prefix + "weight", self._packed[0]),
                        state_dict.pop(prefix + "bias", self._packed[1]))
        self.scale = float(state_dict.pop(prefix + "scale", fw.tensor(self.scale)))
        self.zero_point = int(state_dict.pop(prefix + "zero_point",
                                             fw.tensor(self.zero_point)))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """A quantized Conv2d from an observed float ``nn.Conv2d`` (after ``prepare``)."""
        out = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride,
                  mod.padding, mod.dilation, mod.groups, mod.bias is not None,
                  mod.padding_mode)
        out.set_weight_bias(_quantize_weight(mod),
                            None if mod.bias is None else mod.bias.detach().float().clone())
        out.scale, out.zero_point = _output_qparams(mod)
        return out


class ReLU(nn.Module):
    """ReLU on a quantized tensor: ``max(q, zero_point)`` with the input's parameters (a
    float input goes through ``framework.relu``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def _get_name(self):
        return "ReLU"

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""

    def forward(self, x):
        if not isinstance(x, QTensor):
            return fw.relu(x)
        if x.qscheme() is not per_tensor_affine:
            raise RuntimeError("quantized relu: only per-tensor quantized inputs are supported")
        return x._like(x._qint.clamp(min=x.q_zero_point()))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.inplace)
