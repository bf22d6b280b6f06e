"""Device-independent op implementations, one module per family; the dispatcher
(``dispatcher.py``) turns ``ops.yaml`` rows into public functions and methods."""
from . import alloc  # noqa: F401
