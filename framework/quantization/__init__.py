"""``framework.quantization``: the legacy name of ``framework.ao.quantization`` (as
``torch.quantization``); everything here is re-exported from there."""
from framework.ao.quantization import *  # noqa: F401,F403
from framework.ao.quantization import (  # noqa: F401
    DeQuantStub, QConfig, QuantStub, convert, default_dynamic_qconfig, default_qconfig,
    per_channel_dynamic_qconfig, prepare, prepare_qat, quantize, quantize_dynamic,
    quantize_qat)
