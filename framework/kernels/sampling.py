"""Triton sampling kernels (the cuda backend of framework/_cpu/sampling.py)."""
