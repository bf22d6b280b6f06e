"""CPU launchers: dropout kernels (native/dropout.cpp)."""
from .. import _C  # noqa: F401
