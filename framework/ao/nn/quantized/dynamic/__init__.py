"""``framework.ao.nn.quantized.dynamic``: modules with quantized weights whose activations
are quantized on the fly (``quantize_dynamic`` swaps them in)."""
from .linear import Linear  # noqa: F401
from .rnn import LSTM  # noqa: F401

__all__ = ["Linear", "LSTM"]
