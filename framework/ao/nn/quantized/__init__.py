"""``framework.ao.nn.quantized``: modules over quantized tensors."""
from . import dynamic  # noqa: F401
from .linear_conv import Conv2d, Linear, ReLU  # noqa: F401
from .modules import DeQuantize, LinearPackedParams, Quantize  # noqa: F401

__all__ = ["Conv2d", "DeQuantize", "Linear", "LinearPackedParams", "Quantize", "ReLU",
           "dynamic"]
