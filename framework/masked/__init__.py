"""framework.masked: torch.masked's reductions and normalizations over plain tensors with a
boolean ``mask=`` (``sum``, ``amax``, ``mean``, ``var``, ``softmax``, ...).

The functions are filled in from the ``masked.`` rows of ops.yaml (their code is in
framework/_ops/masked_reductions.py)."""

__all__ = [
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
    "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin", "std",
    "sum", "var",
]
