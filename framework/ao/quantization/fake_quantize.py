"""Fake-quantize modules: an observer plus fake quantization, for quantization-aware
training."""
import math

import numpy as np

import framework as fw
from framework import nn
from .. import (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams,
                per_tensor_affine, per_tensor_symmetric, qint8, quint8)
from .observer import (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver,
                       _with_args, resize_to_saved)

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FusedMovingAvgObsFakeQuantize",
           "default_fake_quant", "default_weight_fake_quant",
           "default_per_channel_weight_fake_quant", "default_fused_act_fake_quant",
           "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant",
           "disable_fake_quant", "enable_fake_quant", "disable_observer", "enable_observer"]


def _is_per_channel(qscheme):
    return qscheme in (per_channel_affine, per_channel_symmetric,
                       per_channel_affine_float_qparams)


class FakeQuantizeBase(nn.Module):
    """Base fake quantize module: holds the ``fake_quant_enabled`` and
    ``observer_enabled`` flags (uint8 buffers, as PyTorch's)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", fw.tensor([1], dtype=fw.uint8))
        self.register_buffer("observer_enabled", fw.tensor([1], dtype=fw.uint8))

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)

    with_args = classmethod(_with_args)


class FakeQuantize(FakeQuantizeBase):
    r"""Simulates quantize and dequantize at training time:
    ``x_out = (clamp(round(x / scale + zero_point), quant_min, quant_max) - zero_point) * scale``,
    with ``scale`` and ``zero_point`` from ``observer`` (run on every forward while enabled).
    """

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
                 is_dynamic=False, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if not quant_min <= quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = self.activation_post_process.is_dynamic
        self.register_buffer("scale", fw.tensor([1.0], dtype=fw.float32))
        self.register_buffer("zero_point", fw.tensor([0], dtype=fw.int32))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        if not (_is_per_channel(self.qscheme) or self.qscheme in (
                per_tensor_affine, per_tensor_symmetric)):
            raise AssertionError("Only per channel and per tensor quantization are supported "
                                 "in fake quantize, got qscheme: " + str(self.qscheme))
        self.is_per_channel = _is_per_channel(self.qscheme)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            _scale, _zero_point = self.calculate_qparams()
            _scale = _scale.to(self.scale.device)
            _zero_point = _zero_point.to(self.zero_point.device)
            if self.scale.shape != _scale.shape:
                self.scale.resize_(_scale.shape)
                self.zero_point.resize_(_zero_point.shape)
            self.scale.copy_(_scale)
            self.zero_point.copy_(_zero_point)
        if self.fake_quant_enabled[0] == 1:
            if self.is_per_channel:
                X = fw.fake_quantize_per_channel_affine(
                    X, self.scale, self.zero_point, self.ch_axis, self.quant_min,
                    self.quant_max)
            else:
                X = fw.fake_quantize_per_tensor_affine(
                    X, self.scale, self.zero_point, self.quant_min, self.quant_max)
        return X

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, quant_min={self.quant_min}, "
                f"quant_max={self.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
                f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        # scale and zero_point take the saved shapes (per-channel sizes) before the copy
        resize_to_saved(self, state_dict, prefix, ("scale", "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


def _choose_qparams(min_val, max_val, qmin, qmax, preserve_sparsity):
    """Scale and zero point of one channel as PyTorch's fused observer picks them (the
    FBGEMM rule: a symmetric range keeps zero exact, the zero point nudged to an integer)."""
    f32 = np.float32
    lo, hi = f32(min_val), f32(max_val)
    symmetric = preserve_sparsity and lo < 0 < hi
    if symmetric:
        sym_qmin, sym_qmax = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        max_scale = max(abs(float(lo) / sym_qmin), abs(float(hi) / sym_qmax))
        lo, hi = f32(max_scale * sym_qmin), f32(max_scale * sym_qmax)
    lo, hi = min(lo, f32(0)), max(hi, f32(0))
    scale = (float(hi) - float(lo)) / (qmax - qmin)
    if f32(scale) == 0 or math.isinf(f32(1) / f32(scale)):
        scale = 0.1
    small = float(f32(6.1e-5))
    if scale < small:
        amplifier = small / scale
        scale = small
        if lo == 0:
            hi = f32(scale * (qmax - qmin))
        elif hi == 0:
            lo = f32(-scale * (qmax - qmin))
        else:
            lo, hi = f32(lo * amplifier), f32(hi * amplifier)
    from_min, from_max = qmin - float(lo) / scale, qmax - float(hi) / scale
    err_min = abs(qmin) - abs(float(lo) / scale)
    err_max = abs(qmax) - abs(float(hi) / scale)
    zp = from_min if err_min < err_max else from_max
    if symmetric:
        zp = (qmin + qmax) / 2
    zp = qmin if zp < qmin else qmax if zp > qmax else int(np.rint(zp))
    return float(f32(scale)), zp


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    r"""PyTorch's fused moving-average observer and fake quantization: the steps of
    :class:`FakeQuantize` with a moving-average observer, except that the quantization
    parameters follow the fused kernel's rule (symmetric schemes use ``[-128, 127]``-style
    asymmetric bounds, ``max(|min| / 128, max / 127)``)."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                 **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process, (
                MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with "
                                 "MovingAverageMinMaxObserver")
        self.register_buffer("fake_quant_enabled", fw.tensor([1], dtype=fw.int64))
        self.register_buffer("observer_enabled", fw.tensor([1], dtype=fw.int64))
        self.is_symmetric_quant = self.qscheme in (per_tensor_symmetric,
                                                   per_channel_symmetric)

    def calculate_qparams(self):
        obs = self.activation_post_process
        if obs.min_val.numel() == 0 or math.isinf(obs.min_val.reshape(-1)[0].item()):
            return obs.calculate_qparams()   # not run yet: PyTorch's defaults and warning
        lows, highs = obs.min_val.reshape(-1).tolist(), obs.max_val.reshape(-1).tolist()
        pairs = [_choose_qparams(lo, hi, self.quant_min, self.quant_max,
                                 self.is_symmetric_quant) for lo, hi in zip(lows, highs)]
        device = self.scale.device
        return (fw.tensor([p[0] for p in pairs], dtype=fw.float32, device=device),
                fw.tensor([p[1] for p in pairs], dtype=fw.int32, device=device))


default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=quint8,
    qscheme=per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_tensor_symmetric, reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=qint8, qscheme=per_channel_symmetric, reduce_range=False, ch_axis=0)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=qint8, qscheme=per_channel_symmetric)


def _apply(mod, method):
    if isinstance(mod, FakeQuantizeBase):
        getattr(mod, method)()


def disable_fake_quant(mod):
    """Disables fake quantization for ``mod`` if it is a fake-quantize module
    (use as ``model.apply(disable_fake_quant)``)."""
    _apply(mod, "disable_fake_quant")


def enable_fake_quant(mod):
    """Enables fake quantization for ``mod`` if it is a fake-quantize module."""
    _apply(mod, "enable_fake_quant")


def disable_observer(mod):
    """Disables observation for ``mod`` if it is a fake-quantize module."""
    _apply(mod, "disable_observer")


def enable_observer(mod):
    """Enables observation for ``mod`` if it is a fake-quantize module."""
    _apply(mod, "enable_observer")
