"""framework.fft: as torch.fft. The discrete Fourier transforms ``fft``, ``ifft``, ``rfft``,
``irfft``, ``hfft``, ``ihfft``, their 2-d (``fft2``, ...) and n-d (``fftn``, ...) forms, the
sample frequencies ``fftfreq`` and ``rfftfreq``, and ``fftshift``/``ifftshift``.

The functions are filled in from the ``fft.`` rows of ops.yaml (their code is in
framework/_ops/fft.py and fft_shifts.py). On the CPU the transforms run NumPy's pocketfft;
on cuda they are, for now, a round trip through the host (see framework/_ops/fft.py)."""

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]
