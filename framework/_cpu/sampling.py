"""CPU launchers: sampling kernels (native/sampling.cpp)."""
from .. import _C  # noqa: F401
