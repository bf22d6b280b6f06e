"""framework.linalg: linear algebra functions (filled in from ops.yaml rows with the
``linalg.`` prefix)."""
