"""Quantize/DeQuantize modules and the packed weight-and-bias holder of quantized Linear
layers."""
import framework as fw
from framework import nn
from ... import qint8

__all__ = ["Quantize", "DeQuantize", "LinearPackedParams"]


class Quantize(nn.Module):
    """Quantizes a float input per tensor with a fixed ``scale`` and ``zero_point``."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", fw.tensor([float(scale)]))
        self.register_buffer("zero_point", fw.tensor([int(zero_point)], dtype=fw.int64))
        self.dtype = dtype

    def forward(self, X):
        return fw.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.float().item(), zero_point.long().item(),
                        mod.activation_post_process.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """Dequantizes a quantized input to float32."""

    def forward(self, Xq):
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()


class LinearPackedParams(nn.Module):
    """Holds a quantized Linear layer's quantized weight and float bias; saved in a state
    dict as PyTorch does: ``dtype`` and ``_packed_params`` (the pair (weight, bias))."""

    _version = 3

    def __init__(self, dtype=qint8):
        super().__init__()
        self.dtype = dtype
        self._weight = fw.quantize_per_tensor(fw.zeros(1, 1), 1.0, 0, dtype)
        self._bias = None

    def set_weight_bias(self, weight, bias):
        self._weight, self._bias = weight, bias

    def _weight_bias(self):
        return self._weight, self._bias

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        for key in ("dtype", "_packed_params"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
        if prefix + "dtype" in state_dict:
            self.dtype = state_dict[prefix + "dtype"]
        if prefix + "_packed_params" in state_dict:
            weight, bias = state_dict[prefix + "_packed_params"]
            self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(
            {k: v for k, v in state_dict.items()
             if k not in (prefix + "dtype", prefix + "_packed_params")},
            prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs)

    def __repr__(self):
        return repr(self._weight_bias())
