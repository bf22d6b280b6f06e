"""framework.linalg: linear algebra functions (filled in from ops.yaml rows with the
``linalg.`` prefix)."""
from ._ops.linalg_lapack import LinAlgError  # noqa: F401
