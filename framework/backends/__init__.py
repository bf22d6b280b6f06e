"""framework.backends: backend switches (PyTorch's ``torch.backends``)."""
from . import cuda, cudnn, mha, opt_einsum  # noqa: F401
from . import cpu, mkl, mkldnn, mps, nnpack, openmp, quantized  # noqa: F401,E402
