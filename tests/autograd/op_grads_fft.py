"""Gradient cases of torch.fft and stft/istft: real inputs through complex spectra to real
outputs (view_as_real / view_as_complex at the ends), so that gradcheck's real finite
differences see the whole chain and torch's gradients of the same chain are the reference.
They exercise the three primitives (_fft_c2c, _fft_r2c, _fft_c2r) and their formulas."""
R = "real"


def _vr(T, z):
    """view_as_real of a spectrum (torch's inverse real transforms return lazy conjugates,
    which must be resolved first)."""
    return T.view_as_real(z.resolve_conj() if hasattr(z, "resolve_conj") else z)


def _c(T, a):
    return T.view_as_complex(a)


# small signals: gradcheck on simulated cuda runs each column's kernels in the interpreter
def _stft(T, a, w):
    return _vr(T, T.stft(a, 4, hop_length=3, window=w, center=False, return_complex=True))


def _istft(T, a, w):
    # a valid one-sided spectrum (imaginary DC and Nyquist are dropped by the c2r)
    s = T.stft(a, 4, hop_length=2, window=w + 3, return_complex=True)
    return T.istft(s, 4, hop_length=2, window=w + 3, length=5)


CASES = [
    ("fft_real", lambda T, a: _vr(T, T.fft.fft(a, n=5, norm="ortho")), [(2, 4)], R),
    ("ifft_real", lambda T, a: _vr(T, T.fft.ifft(a, dim=0)), [(3, 2)], R),
    ("fft_complex_trim", lambda T, a: _vr(T, T.fft.fft(_c(T, a), n=3)), [(2, 5, 2)], R),
    ("ifft_complex_pad", lambda T, a: _vr(T, T.fft.ifft(_c(T, a), n=6, norm="forward")),
     [(2, 4, 2)], R),
    ("rfft_odd", lambda T, a: _vr(T, T.fft.rfft(a, n=7)), [(2, 6)], R),
    ("rfft_even", lambda T, a: _vr(T, T.fft.rfft(a, dim=0, norm="forward")), [(6, 2)], R),
    ("irfft_odd", lambda T, a: T.fft.irfft(_c(T, a), n=7), [(2, 4, 2)], R),
    ("irfft_even", lambda T, a: T.fft.irfft(_c(T, a), norm="ortho"), [(2, 4, 2)], R),
    ("hfft", lambda T, a: T.fft.hfft(_c(T, a), n=7), [(2, 4, 2)], R),
    ("ihfft", lambda T, a: _vr(T, T.fft.ihfft(a, n=6)), [(2, 5)], R),
    ("fftn_real", lambda T, a: _vr(T, T.fft.fftn(a, s=(3, 4))), [(2, 5)], R),
    ("ifft2_complex", lambda T, a: _vr(T, T.fft.ifft2(_c(T, a), norm="ortho")), [(2, 3, 3, 2)],
     R),
    ("rfftn", lambda T, a: _vr(T, T.fft.rfftn(a, dim=(0, 2))), [(2, 2, 5)], R),
    ("irfftn", lambda T, a: T.fft.irfftn(_c(T, a), s=(3, 6)), [(2, 4, 2)], R),
    ("hfftn", lambda T, a: T.fft.hfftn(_c(T, a), s=(3, 5), norm="forward"), [(2, 4, 2)], R),
    ("ihfftn", lambda T, a: _vr(T, T.fft.ihfftn(a)), [(2, 2, 4)], R),
    ("stft", lambda T, a, w: _stft(T, a, w), [(7,), (4,)], R),
    ("istft", lambda T, a, w: _istft(T, a, w), [(6,), (4,)], R),
]
