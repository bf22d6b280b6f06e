"""Multi-tensor gradient norm and clipping: the CPU has none. clip_grad_norm_ takes its
per-tensor path there (native reductions and in-place multiplies, a few microseconds of
host time each), as the cuda backend does for what its kernels do not take
(framework/kernels/grad_norm.py)."""


def supports(tensors):
    """Whether total_norm/scale_ take ``tensors``: never on the CPU."""
    return False
