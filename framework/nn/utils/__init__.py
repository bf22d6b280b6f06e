"""nn utilities (PyTorch's ``torch.nn.utils``)."""
from . import rnn  # noqa: F401
