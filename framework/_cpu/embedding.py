"""CPU launchers: embedding kernels (native/embedding.cpp)."""
from .. import _C  # noqa: F401
