"""framework.backends: backend switches (PyTorch's ``torch.backends``)."""
from . import cuda, cudnn, mha, opt_einsum  # noqa: F401
