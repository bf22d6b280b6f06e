"""``framework.ao.nn``: quantized modules (``quantized``, ``quantized.dynamic``)."""
from . import quantized  # noqa: F401
