"""Observers: modules that record running min/max statistics of the tensors passing
through them and compute quantization parameters (scale, zero_point) from them."""
import math
from functools import partial

import framework as fw
from framework import nn
from .. import (qint8, qint32, quint8, per_tensor_affine, per_tensor_symmetric,
                per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)

__all__ = ["ObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver",
           "PlaceholderObserver", "default_observer", "default_weight_observer",
           "default_per_channel_weight_observer", "default_dynamic_quant_observer"]

_SYMMETRIC = (per_tensor_symmetric, per_channel_symmetric)
_PER_CHANNEL = (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)


def resize_to_saved(module, state_dict, prefix, names):
    """Resizes ``module``'s buffers ``names`` to the shapes saved in ``state_dict`` (their
    per-channel sizes), so that loading copies into the right shapes."""
    for name in names:
        key = prefix + name
        if key in state_dict:
            getattr(module, name).resize_(state_dict[key].shape)

class _PartialWrapper:
    """A constructor with some arguments bound (what ``with_args`` returns)."""

    def __init__(self, p):
        self.p = p

    def __call__(self, *args, **kwargs):
        return self.p(*args, **kwargs)

    def __repr__(self):
        return self.p.__repr__()

    def with_args(self, **kwargs):
        return _PartialWrapper(partial(self.p, **kwargs))


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """Returns the quantization range for ``dtype``, halved if ``reduce_range``."""
    if has_customized_qrange:
        qrange_len = quant_max - quant_min + 1
        if dtype in (qint8, fw.int8) and not 0 < qrange_len <= 256:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=256).")
        if dtype in (qint32, fw.int32) and not 0 < qrange_len <= 2**32:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=4294967296).")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in (qint8, fw.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (quint8, fw.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (qint32, fw.int32):
        return -(2**31), 2**31 - 1
    if dtype == fw.int16:
        return -(2**15), 2**15 - 1
    return 0, 15


class ObserverBase(nn.Module):
    """Base observer module: subclasses implement ``forward`` (record statistics) and
    ``calculate_qparams``."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    with_args = classmethod(_with_args)


class UniformQuantizationObserverBase(ObserverBase):
    """Common code for observers that compute affine or symmetric qparams from min/max."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=float(fw.finfo(fw.float32).eps), is_dynamic=False, **kwargs):
        factory_kwargs = dict(factory_kwargs or {})
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme
        if reduce_range:
            import warnings
            warnings.warn("Please use quant_min and quant_max to specify the range for "
                          "observers. reduce_range will be deprecated in a future release "
                          "of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", fw.tensor([eps], **factory_kwargs))
        if self.qscheme not in (per_tensor_affine, per_tensor_symmetric, per_channel_affine,
                                per_channel_symmetric, per_channel_affine_float_qparams):
            raise AssertionError("Default Observer only works for per_tensor_affine, "
                                 "per_tensor_symmetric, per_channel_affine, "
                                 "per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        if self.dtype not in (qint8, quint8, qint32, fw.int8, fw.uint8, fw.int16, fw.int32):
            raise AssertionError(f"Default Observer only works for qint8, quint8 and quint4x2 "
                                 f"data type, got {dtype}")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            if not quant_min <= 0 <= quant_max:
                raise AssertionError("Used-specified quantization range must include 0.")
            if not quant_min < quant_max:
                raise AssertionError("qmin must be strictly less than qmax for "
                                     "user-specified quantization range.")
        self.quant_min, self.quant_max = calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, self.dtype, self.reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """Scales and zero points (shape ``(#channels,)``, or ``(1,)`` per tensor) from
        ``min_val`` and ``max_val``."""
        device = min_val.device
        if min_val.numel() == 0 or max_val.numel() == 0 or (
                min_val.dim() == 0 and (min_val.item() == math.inf
                                        and max_val.item() == -math.inf)):
            import warnings
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default values.", stacklevel=2)
            return fw.tensor([1.0], device=device), fw.tensor([0], device=device)
        if bool((min_val > max_val).any()):
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = fw.minimum(min_val, fw.zeros_like(min_val))
        max_val_pos = fw.maximum(max_val, fw.zeros_like(max_val))
        eps = self.eps.to(device)
        zero_point = fw.zeros(min_val_neg.shape, dtype=fw.int64, device=device)
        if self.qscheme in _SYMMETRIC:
            max_val_pos = fw.maximum(-min_val_neg, max_val_pos)
            scale = max_val_pos / (float(quant_max - quant_min) / 2)
            scale = fw.maximum(scale, eps)
            if self.dtype in (quint8, fw.uint8):
                mid = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = fw.full(zero_point.shape, mid, dtype=fw.int64, device=device)
        elif self.qscheme == per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = fw.where(scale > eps, scale, fw.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = (max_val_pos - min_val_neg) / float(quant_max - quant_min)
            scale = fw.maximum(scale, eps)
            zero_point = quant_min - fw.round(min_val_neg / scale).to(fw.int32)
            zero_point = fw.clamp(zero_point, quant_min, quant_max)
        if scale.dim() == 0:
            scale = scale.reshape(1)
        if zero_point.dim() == 0:
            zero_point = zero_point.reshape(1)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


class MinMaxObserver(UniformQuantizationObserverBase):
    """Observer computing the quantization parameters from the running min and max of
    the observed tensors."""

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=float(fw.finfo(fw.float32).eps), is_dynamic=False, **kwargs):
        if qscheme in _PER_CHANNEL and type(self) in (MinMaxObserver,
                                                      MovingAverageMinMaxObserver):
            raise NotImplementedError("MinMaxObserver's qscheme only support "
                                      "torch.per_tensor_symmetric                     and "
                                      "torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("MinMaxObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = dict(factory_kwargs or {})
        self.register_buffer("min_val", fw.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", fw.tensor(float("-inf"), **factory_kwargs))
        if (self.qscheme == per_tensor_symmetric and self.reduce_range
                and self.dtype == quint8):
            raise NotImplementedError("Cannot reduce range for symmetric quantization for "
                                      "quint8")

    def forward(self, x_orig):
        r"""Records the running minimum and maximum of ``x``."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_cur, max_cur = fw.aminmax(x)
        self.min_val.copy_(fw.minimum(min_cur, self.min_val))
        self.max_val.copy_(fw.maximum(max_cur, self.max_val))
        return x_orig

    def calculate_qparams(self):
        r"""Calculates the quantization parameters."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        """Resets the min/max values."""
        self.min_val.copy_(fw.tensor(float("inf")))
        self.max_val.copy_(fw.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Observer computing the quantization parameters from moving averages of the
    minimum and maximum values: ``x_min = (1 - c) * x_min + c * min(X)``."""

    def __init__(self, averaging_constant=0.01, dtype=quint8, qscheme=per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None,
                 eps=float(fw.finfo(fw.float32).eps), is_dynamic=False, **kwargs):
        if qscheme in _PER_CHANNEL:
            raise NotImplementedError("MovingAverageMinMaxObserver's qscheme only support "
                                      "torch.per_tensor_symmetric and "
                                      "torch.per_tensor_affine.")
        self.averaging_constant = averaging_constant
        if is_dynamic and self.averaging_constant != 1:
            raise NotImplementedError("MovingAverageMinMaxObserver doesn't support dynamic "
                                      "quantization for averaging constant of "
                                      f"{self.averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps,
                         is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        min_cur, max_cur = fw.aminmax(x)
        if min_val.item() == math.inf and max_val.item() == -math.inf:
            min_val, max_val = min_cur, max_cur
        else:
            c = self.averaging_constant
            min_val = min_val + c * (min_cur - min_val)
            max_val = max_val + c * (max_cur - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Observer computing the quantization parameters per channel (along ``ch_axis``)
    from the running per-channel min and max."""

    def __init__(self, ch_axis=0, dtype=quint8, qscheme=per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=float(fw.finfo(fw.float32).eps), is_dynamic=False, **kwargs):
        if qscheme not in _PER_CHANNEL:
            raise NotImplementedError("PerChannelMinMaxObserver's qscheme only support "
                                      "torch.per_channel_symmetric, "
                                      "torch.per_channel_affine and "
                                      "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("PerChannelMinMaxObserver doesn't support dynamic "
                                      "quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = dict(factory_kwargs or {})
        self.ch_axis = ch_axis
        self.register_buffer("min_val", fw.tensor([], **factory_kwargs))
        self.register_buffer("max_val", fw.tensor([], **factory_kwargs))

    def _channel_minmax(self, x_orig):
        x = x_orig.detach().to(self.min_val.dtype)
        # channels first, everything else flattened
        y = fw.flatten(x.movedim(self.ch_axis, 0), start_dim=1)
        return fw.aminmax(y, dim=1)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        min_cur, max_cur = self._channel_minmax(x_orig)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = min_cur, max_cur
        else:
            min_val = fw.minimum(min_cur, self.min_val)
            max_val = fw.maximum(max_cur, self.max_val)
        self._store(min_val, max_val)
        return x_orig

    def _store(self, min_val, max_val):
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        # the per-channel buffers take the saved shapes before the copy
        resize_to_saved(self, state_dict, prefix, ("min_val", "max_val"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def reset_min_max_vals(self):
        """Resets the min/max values."""
        self.min_val = fw.tensor([], device=self.min_val.device)
        self.max_val = fw.tensor([], device=self.max_val.device)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel observer whose min and max are moving averages with constant
    ``averaging_constant``."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=quint8,
                 qscheme=per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=float(fw.finfo(fw.float32).eps), is_dynamic=False,
                 **kwargs):
        if qscheme not in _PER_CHANNEL:
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver's qscheme only "
                                      "support torch.per_channel_symmetric, "
                                      "torch.per_channel_affine and "
                                      "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver doesn't support "
                                      "dynamic quantization")
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme,
                         reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        min_cur, max_cur = self._channel_minmax(x_orig)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = min_cur, max_cur
        else:
            c = self.averaging_constant
            min_val = self.min_val + c * (min_cur - self.min_val)
            max_val = self.max_val + c * (max_cur - self.max_val)
        self._store(min_val, max_val)
        return x_orig


class PlaceholderObserver(ObserverBase):
    """Records nothing: marks the dtype (and, for dynamic quantization, that the range is
    chosen at run time) of a tensor whose parameters are not observed."""

    def __init__(self, dtype=fw.float32, custom_op_name="", compute_dtype=None,
                 quant_min=None, quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max, self.eps = quant_min, quant_max, eps
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=qint8, qscheme=per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=quint8, quant_min=0, quant_max=255, is_dynamic=True)
