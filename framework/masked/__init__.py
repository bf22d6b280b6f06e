"""framework.masked: torch.masked's reductions and normalizations over plain tensors with a
boolean ``mask=`` (``sum``, ``amax``, ``mean``, ``var``, ``softmax``, ...), and the prototype
``MaskedTensor`` (framework/masked/maskedtensor.py).

The functions are filled in from the ``masked.`` rows of ops.yaml (their code is in
framework/_ops/masked_reductions.py). ``MaskedTensor``, ``masked_tensor``,
``as_masked_tensor``, ``is_masked_tensor`` and the ``_ops`` module are imported on first use:
defining the MaskedTensor class turns ``__torch_function__`` dispatch on for the process."""

__all__ = [
    "amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
    "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
    "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin", "std",
    "sum", "var",
]

_LAZY = ("MaskedTensor", "masked_tensor", "as_masked_tensor", "is_masked_tensor")


def __getattr__(name):
    if name in _LAZY:
        from . import maskedtensor
        return getattr(maskedtensor, name)
    if name == "_ops":
        import importlib
        return importlib.import_module(__name__ + "._ops")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
