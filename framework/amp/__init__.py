"""framework.amp: automatic mixed precision (``autocast``, ``GradScaler``)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
