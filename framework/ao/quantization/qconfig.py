"""``QConfig`` and the default quantization configurations (quantization-aware training,
post-training static and dynamic)."""
from collections import namedtuple

from framework import nn
from .fake_quantize import (FakeQuantize, FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_fused_per_channel_wt_fake_quant,
                            default_fused_wt_fake_quant, default_per_channel_weight_fake_quant,
                            default_weight_fake_quant)
from . import observer as _obs
from .observer import MovingAverageMinMaxObserver

__all__ = ["QConfig", "default_qat_qconfig", "get_default_qat_qconfig", "default_qconfig",
           "default_dynamic_qconfig", "per_channel_dynamic_qconfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to quantize a layer: observer (or fake-quantize) constructors for its
    activations and its weights, e.g. ``QConfig(activation=default_fake_quant,
    weight=default_weight_fake_quant)``. Holds classes or ``with_args`` partials, not
    instances."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class "
                             "instead. Use MyObserver.with_args(x=1) to override arguments "
                             "to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)


def get_default_qat_qconfig(backend="x86", version=1):
    """Returns the default QAT qconfig for ``backend`` (``"x86"``, ``"fbgemm"``,
    ``"qnnpack"`` or ``"onednn"``); ``version`` 1 uses the fused fake-quantize modules."""
    supported_backends = ["fbgemm", "x86", "qnnpack", "onednn"]
    if backend not in supported_backends:
        raise AssertionError("backend: " + str(backend) +
                             f" not supported. backend must be one of {supported_backends}")
    if version == 0:
        act, per_channel_wt, wt = FakeQuantize, default_per_channel_weight_fake_quant, \
            default_weight_fake_quant
    elif version == 1:
        act, per_channel_wt, wt = FusedMovingAvgObsFakeQuantize, \
            default_fused_per_channel_wt_fake_quant, default_fused_wt_fake_quant
    else:
        return default_qat_qconfig
    # fbgemm and x86 reduce the activation range (their int8 kernels can overflow otherwise)
    act_kwargs = dict(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
    if backend in ("fbgemm", "x86", "qnnpack"):
        act_kwargs["reduce_range"] = backend != "qnnpack"
    return QConfig(activation=act.with_args(**act_kwargs),
                   weight=wt if backend == "qnnpack" else per_channel_wt)


# ---- post-training quantization -----------------------------------------------------------
default_qconfig = QConfig(activation=_obs.default_observer, weight=_obs.default_weight_observer)
default_dynamic_qconfig = QConfig(activation=_obs.default_dynamic_quant_observer,
                                  weight=_obs.default_weight_observer)
per_channel_dynamic_qconfig = QConfig(activation=_obs.default_dynamic_quant_observer,
                                      weight=_obs.default_per_channel_weight_observer)
