"""framework.backends: backend switches (PyTorch's ``torch.backends``)."""
from . import cuda  # noqa: F401
