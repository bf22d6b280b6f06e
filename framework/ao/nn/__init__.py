"""``framework.ao.nn``: quantized modules (``quantized``, ``quantized.dynamic``)."""
from . import intrinsic, quantized  # noqa: F401
