"""framework.backends: backend switches (PyTorch's ``torch.backends``)."""
from . import cuda, cudnn  # noqa: F401
