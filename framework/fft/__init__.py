"""framework.fft: as torch.fft, for the ops that need no complex dtype (``fftshift``,
``ifftshift``); the transforms themselves wait for complex dtypes.

The functions are filled in from the ``fft.`` rows of ops.yaml (their code is in
framework/_ops/fft_shifts.py)."""

__all__ = ["fftshift", "ifftshift"]
