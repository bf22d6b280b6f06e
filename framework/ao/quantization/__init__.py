"""``framework.ao.quantization``: quantization-aware training: observers, fake-quantize
modules, QConfigs and stubs. The framework has no quantized kernels, so ``prepare_qat``
and ``convert`` (which swap in quantized modules) are not available."""
from .fake_quantize import (FakeQuantize, FakeQuantizeBase,  # noqa: F401
                            FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_fused_act_fake_quant,
                            default_fused_per_channel_wt_fake_quant,
                            default_fused_wt_fake_quant, default_per_channel_weight_fake_quant,
                            default_weight_fake_quant, disable_fake_quant, disable_observer,
                            enable_fake_quant, enable_observer)
from .observer import (MinMaxObserver, MovingAverageMinMaxObserver,  # noqa: F401
                       MovingAveragePerChannelMinMaxObserver, ObserverBase,
                       PerChannelMinMaxObserver)
from .qconfig import QConfig, default_qat_qconfig, get_default_qat_qconfig  # noqa: F401
from .stubs import DeQuantStub, QuantStub  # noqa: F401


def _not_available(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(
            f"framework.ao.quantization.{name} is not supported: it swaps in quantized "
            f"modules, and the framework has no quantized tensors or kernels. Train with "
            f"FakeQuantize modules (quantization-aware training) and export the scales and "
            f"zero points instead.")
    fn.__name__ = name
    return fn


prepare = _not_available("prepare")
prepare_qat = _not_available("prepare_qat")
convert = _not_available("convert")
quantize = _not_available("quantize")
quantize_qat = _not_available("quantize_qat")
