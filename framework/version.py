"""Build versions, as ``torch.version``: ``__version__`` (a :class:`TorchVersion`, which
compares with strings and tuples) and the versions of the GPU toolkits built against
(None: kernels are Triton's, compiled at run time)."""
from .torch_version import __version__  # noqa: F401

git_version = "Unknown"
debug = False
cuda = None
hip = None
rocm = None
xpu = None
