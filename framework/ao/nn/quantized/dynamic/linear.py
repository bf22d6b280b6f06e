"""Dynamically quantized Linear: int8 weights, activations quantized per batch on the fly,
with fbgemm's numerics (PyTorch's x86 backend) reproduced exactly."""
import framework as fw
from framework import nn
from .... import per_channel_affine, per_tensor_affine, qint8
from ....quantization.qconfig import default_dynamic_qconfig
from ..modules import LinearPackedParams

__all__ = ["Linear", "linear_dynamic"]


def linear_dynamic(x, weight, bias, reduce_range=True):
    """``x @ weight.T + bias`` with ``x`` quantized to quint8 from its own min and max
    (0..127 with ``reduce_range``), int32 accumulation, and the result scaled back to float
    as fbgemm does: ``fma(float32(acc), float32(x_scale * w_scale), bias)``."""
    from ...._qtensor import _f32, choose_qparams
    if x.device.type != "cpu":
        raise NotImplementedError(
            "Could not run 'quantized::linear_dynamic' with arguments from the "
            f"'{'CUDA' if x.device.type == 'cuda' else x.device.type}' backend. This could "
            "be because the operator doesn't exist for this backend.")
    if x.dtype is not fw.float32:
        raise RuntimeError(f"quantized::linear_dynamic (fbgemm): expected a float32 input, "
                           f"got {x.dtype}")
    K = weight.shape[1]
    if x.shape[-1] != K:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({x.numel() // max(x.shape[-1], 1)}x{x.shape[-1]} and "
                           f"{K}x{weight.shape[0]})")
    with fw.no_grad():
        x = x.detach()
        mn, mx = (x.min().item(), x.max().item()) if x.numel() else (0.0, 0.0)
        x_scale, x_zp = choose_qparams(mn, mx, 0, 255, reduce_range)
        x_scale = _f32(x_scale)
        inv = _f32(1.0 / x_scale)
        # fma(x, 1/scale, zero_point) in float32 (exact product in float64, one rounding)
        xq = (x.double() * inv + x_zp).float().round().clamp(0, 255)
        wq = weight._qint.double()
        if weight.qscheme() is per_tensor_affine:
            wq = wq - weight.q_zero_point()
            w_scale = fw.tensor([_f32(weight.q_scale())], dtype=fw.float32)
        else:
            wq = wq - weight.q_per_channel_zero_points().double().unsqueeze(1)
            w_scale = weight.q_per_channel_scales().float()
        # integer products summed in float64 are exact (|acc| < 2**53)
        acc = (xq.double() - x_zp).reshape(-1, K) @ wq.t()
        multiplier = (w_scale.double() * x_scale).float()        # float32 product
        # fbgemm: fma(float32(acc), multiplier, bias); the float64 product is exact
        out = acc.float().double() * multiplier.double()
        if bias is not None:
            out = out + bias.detach().float().double()
        return out.float().reshape(*x.shape[:-1], weight.shape[0])


class Linear(nn.Module):
    """A dynamically quantized linear layer (PyTorch's ``DynamicQuantizedLinear``):
    ``weight()`` is a qint8 tensor, ``bias()`` a float tensor; each forward quantizes its
    input with a scale and zero point chosen from the input's range."""

    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__()
        if dtype is not qint8:
            raise RuntimeError("Unsupported dtype specified for dynamic quantized Linear!")
        self.in_features, self.out_features = in_features, out_features
        bias = fw.zeros(out_features) if bias_ else None
        qweight = fw.quantize_per_tensor(fw.zeros(out_features, in_features), 1.0, 0, qint8)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def __repr__(self):
        # the packed parameters are not a child to show, as in PyTorch
        return f"{self._get_name()}({self.extra_repr()})"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}")

    def weight(self):
        return self._packed_params._weight

    def bias(self):
        return self._packed_params._bias

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    def forward(self, x):
        return linear_dynamic(x, self.weight(), self.bias(), reduce_range=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = fw.tensor(self.scale)
        destination[prefix + "zero_point"] = fw.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        state_dict = dict(state_dict)
        for key in ("scale", "zero_point"):
            state_dict.pop(prefix + key, None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """Quantizes a float ``nn.Linear``'s weight with its qconfig's weight observer (the
        default dynamic qconfig's per-tensor symmetric qint8 observer if it has none)."""
        if not isinstance(mod, nn.Linear):
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for "
                                 f"['Linear'], got {type(mod).__name__}")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        observer = qconfig.weight()
        if observer.dtype is not qint8:
            raise RuntimeError(f"Unsupported dtype specified for dynamic quantized Linear: "
                               f"{observer.dtype}")
        weight = mod.weight.detach().float()
        observer(weight)
        scale, zp = observer.calculate_qparams()
        if observer.qscheme in (per_channel_affine, fw.per_channel_symmetric):
            qweight = fw.quantize_per_channel(weight, scale.double(), zp.long(),
                                              observer.ch_axis, qint8)
        else:
            qweight = fw.quantize_per_tensor(weight, float(scale), int(zp), qint8)
        out = cls(mod.in_features, mod.out_features, bias_=mod.bias is not None)
        out.set_weight_bias(qweight, None if mod.bias is None else mod.bias.detach().clone())
        return out
