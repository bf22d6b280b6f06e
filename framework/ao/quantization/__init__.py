"""``framework.ao.quantization``: observers, fake-quantize modules, QConfigs, stubs, and
post-training quantization: dynamic (``quantize_dynamic``) and eager-mode static
(``prepare``, calibration, ``convert``)."""
from .fake_quantize import (FakeQuantize, FakeQuantizeBase,  # noqa: F401
                            FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_fused_act_fake_quant,
                            default_fused_per_channel_wt_fake_quant,
                            default_fused_wt_fake_quant, default_per_channel_weight_fake_quant,
                            default_weight_fake_quant, disable_fake_quant, disable_observer,
                            enable_fake_quant, enable_observer)
from .observer import (MinMaxObserver, MovingAverageMinMaxObserver,  # noqa: F401
                       MovingAveragePerChannelMinMaxObserver, ObserverBase,
                       PerChannelMinMaxObserver, PlaceholderObserver,
                       default_dynamic_quant_observer, default_observer,
                       default_per_channel_weight_observer, default_weight_observer)
from .qconfig import (QConfig, default_dynamic_qconfig, default_qat_qconfig,  # noqa: F401
                      default_qconfig, get_default_qat_qconfig, per_channel_dynamic_qconfig)
from .quantize import (convert, get_default_dynamic_quant_module_mappings,  # noqa: F401
                       get_default_static_quant_module_mappings, prepare, quantize,
                       quantize_dynamic)
from .stubs import DeQuantStub, QuantStub  # noqa: F401


def _not_available(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(
            f"framework.ao.quantization.{name} is not supported: there are no quantized "
            f"modules for quantization-aware training (QAT Linear/Conv) yet. Train with "
            f"FakeQuantize modules and export the scales and zero points, or quantize after "
            f"training with prepare/convert or quantize_dynamic.")
    fn.__name__ = name
    return fn


prepare_qat = _not_available("prepare_qat")
quantize_qat = _not_available("quantize_qat")
from .fuse_modules import fuse_known_modules, fuse_modules, get_fuser_method  # noqa: E402,F401
