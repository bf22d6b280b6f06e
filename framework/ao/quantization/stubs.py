"""Quantize/dequantize stubs: identity modules in float that mark where a model's
quantized region starts and ends."""
from framework import nn

__all__ = ["QuantStub", "DeQuantStub"]


class QuantStub(nn.Module):
    """Quantize stub: the identity before calibration; ``convert`` would swap it for a
    quantize op."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(nn.Module):
    """Dequantize stub: the identity before calibration; ``convert`` would swap it for a
    dequantize op."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x
