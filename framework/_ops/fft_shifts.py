"""torch.fft's ``fftshift`` and ``ifftshift``: rolls that move the zero-frequency term to the
centre of the spectrum and back."""
import framework as _fw


def _dims(input, dim):
    if dim is None:
        return list(range(input.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    n = max(input.dim(), 1)
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {d})")
    return [d % n for d in dims]


def fftshift(input, dim=None):
    """``input`` rolled by half its size along ``dim`` (every dim by default): the
    zero-frequency term moves to the centre."""
    dims = _dims(input, dim)
    if not dims or input.dim() == 0:
        return input.clone()
    return _fw.roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: rolled back by half the size along ``dim``."""
    dims = _dims(input, dim)
    if not dims or input.dim() == 0:
        return input.clone()
    return _fw.roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
