"""Triton dropout kernels (the cuda backend of framework/_cpu/dropout.py)."""
