"""Passes over FX graphs."""
from . import shape_prop  # noqa: F401
