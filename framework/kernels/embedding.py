"""Triton embedding kernels (the cuda backend of framework/_cpu/embedding.py)."""
