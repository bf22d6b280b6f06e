"""framework._inductor: the compiler behind ``framework.compile``.

``cache.py`` guards and caches per compiled callable, ``trace.py`` traces with
``framework.fx`` and rewrites the graph, ``fuse.py`` picks the pointwise and row-reduction
groups and ``codegen.py`` writes and launches their Triton kernels; ``gemm.py`` does both for
matmuls with pointwise epilogues.
"""
from .cache import CompiledCallable, reset
from .trace import FusedCall, counters

__all__ = ["CompiledCallable", "FusedCall", "counters", "reset"]
