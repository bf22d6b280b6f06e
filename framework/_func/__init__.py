"""Implementation of ``framework.func``'s function transforms (see framework/func.py)."""
