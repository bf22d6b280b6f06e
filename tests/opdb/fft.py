"""Cases for torch.fft (framework/_ops/fft.py) and stft/istft (fft_stft.py): values against
NumPy's pocketfft in float64/complex128 (tests/test_fft.py covers every length, dtype and
norm mode)."""
import numpy as np

from helpers import make
from opdb import Case


def _real(fw, device, shape=(4, 6), dtype=None, nc=False, seed=0):
    return make(shape, dtype or fw.float64, device, low=-1, high=1, noncontig=nc, seed=seed)


def _cplx(fw, device, shape=(4, 6), dtype=None, nc=False, seed=1):
    return make(shape, dtype or fw.complex128, device, low=-1, high=1, noncontig=nc, seed=seed)


def _c2c(fw, device):
    t, a = _cplx(fw, device, nc=True)
    return [(fw._fft_c2c(t, [1], 0, True), np.fft.fft(a, axis=1)),
            (fw._fft_c2c(t, [0], 2, False), np.fft.ifft(a, axis=0)),
            (fw._fft_c2c(t, [0, 1], 1, True), np.fft.fft2(a, norm="ortho")),
            (fw._fft_c2c(t, [-1], 0, False), np.fft.ifft(a, norm="forward"))]


def _r2c(fw, device):
    t, a = _real(fw, device, (4, 7), nc=True)
    return [(fw._fft_r2c(t, [1], 0, True), np.fft.rfft(a)),
            (fw._fft_r2c(t, [0], 2, False), np.fft.fft(a, axis=0, norm="forward")),
            (fw._fft_r2c(t, [1, 0], 1, True), np.fft.rfftn(a, axes=(1, 0), norm="ortho"))]


def _c2r(fw, device):
    t, a = _cplx(fw, device, (3, 4))
    return [(fw._fft_c2r(t, [1], 2, 6), np.fft.irfft(a, 6)),
            (fw._fft_c2r(t, [1], 0, 7), np.fft.irfft(a, 7, norm="forward")),
            (fw._fft_c2r(t, [0, 1], 1, 6), np.fft.irfftn(a, (3, 6), (0, 1), norm="ortho"))]


def _one_d(name):
    """fft, ifft, rfft, irfft, hfft, ihfft: default, padded and trimmed n, another dim, each
    norm, float32 and integer inputs, a strided input."""
    real_in = name in ("rfft", "ihfft")
    complex_in = name in ("irfft", "hfft")

    def fn(fw, device):
        f, ref = getattr(fw.fft, name), getattr(np.fft, name)
        t, a = (_cplx if complex_in else _real)(fw, device, (4, 6), nc=True)
        out = [(f(t), ref(a)), (f(t, n=9), ref(a, 9)), (f(t, n=3, dim=0, norm="ortho"),
                                                       ref(a, 3, axis=0, norm="ortho")),
               (f(t, 5, -1, "forward"), ref(a, 5, norm="forward"))]
        if not real_in and not complex_in:
            c, ca = _cplx(fw, device, (3, 5))
            out.append((f(c, norm="backward"), ref(ca)))
        s, sa = (_cplx if complex_in else _real)(fw, device, (8,), fw.complex64 if complex_in
                                                 else fw.float32)
        r = f(s)
        assert r.dtype is (fw.float32 if complex_in else fw.complex64)
        out.append((r, ref(sa.astype(np.complex128 if complex_in else np.float64))))
        i = fw.arange(6, device=device)
        r = f(i)
        assert r.dtype is (fw.float32 if complex_in else fw.complex64)
        out.append((r, ref(np.arange(6.0))))
        return out
    return [Case(fn)]


def _n_d(name, two=False):
    """The 2-d and n-d transforms: default dims, s with padding and trimming, chosen dims,
    norm modes, complex input where the transform takes it."""
    real_in = name.startswith(("rfft", "ihfft"))
    complex_in = name.startswith(("irfft", "hfft"))

    def fn(fw, device):
        f = getattr(fw.fft, name)
        ref = _np_nd(name)
        t, a = (_cplx if complex_in else _real)(fw, device, (3, 4, 5), nc=True)
        out = [(f(t), ref(a, None, (-2, -1) if two else None, None)),
               (f(t, s=(5, 6)), ref(a, (5, 6), (-2, -1), None)),
               (f(t, s=(2, 4), dim=(0, 2), norm="ortho"), ref(a, (2, 4), (0, 2), "ortho")),
               (f(t, dim=(2, 0), norm="forward"), ref(a, None, (2, 0), "forward"))]
        if not two:
            out.append((f(t, dim=1), ref(a, None, (1,), None)))
        if not real_in and not complex_in:
            c, ca = _cplx(fw, device, (3, 4))
            out.append((f(c), ref(ca, None, (-2, -1) if two else None, None)))
        return out
    return [Case(fn)]


def _np_nd(name):
    """NumPy's n-d transform for ``name`` (NumPy has no hfftn/ihfftn: they are built from
    its c2c and 1-d hfft/ihfft, as PyTorch defines them)."""
    base = name[:-1] + "n" if name.endswith("2") else name

    def ref(a, s, axes, norm):
        if axes is None:
            axes = tuple(range(a.ndim - len(s), a.ndim)) if s is not None else \
                tuple(range(a.ndim))
        if base in ("hfftn", "ihfftn"):
            last = axes[-1]
            if base == "hfftn":
                n = None if s is None else s[-1]
                if s is not None:
                    a = _fit(a, axes[:-1], s[:-1])
                x = np.fft.fftn(a, axes=axes[:-1], norm=norm) if len(axes) > 1 else a
                return np.fft.hfft(x, n, axis=last, norm=norm)
            if s is not None:
                a = _fit(a, axes, s)
            x = np.fft.ihfft(a, axis=last, norm=norm)
            return np.fft.ifftn(x, axes=axes[:-1], norm=norm) if len(axes) > 1 else x
        return getattr(np.fft, base)(a, s, axes, norm)
    return ref


def _fit(a, axes, sizes):
    """``a`` zero-padded or trimmed to ``sizes`` along ``axes``."""
    for ax, n in zip(axes, sizes):
        if a.shape[ax] > n:
            a = np.take(a, range(n), axis=ax)
        elif a.shape[ax] < n:
            pad = [(0, 0)] * a.ndim
            pad[ax] = (0, n - a.shape[ax])
            a = np.pad(a, pad)
    return a


def _freq(name):
    def fn(fw, device):
        f, ref = getattr(fw.fft, name), getattr(np.fft, name)
        out = []
        for n, d in ((1, 1.0), (7, 0.5), (8, 2.0)):
            out.append((f(n, d, device=device), ref(n, d)))
            r = f(n, d=d, dtype=fw.float64, device=device)
            assert r.dtype is fw.float64 and r.device.type == device.split(":")[0]
            out.append((r, ref(n, d)))
        return out
    return [Case(fn)]


def _stft_ref(a, n_fft, hop, window, center, onesided=True):
    """stft of a 1-d signal in NumPy: reflect-padded frames times the window."""
    if center:
        a = np.pad(a, n_fft // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(a, n_fft)[::hop] * window
    spec = np.fft.rfft(frames) if onesided else np.fft.fft(frames)
    return spec.T


def _stft(fw, device):
    t, a = _real(fw, device, (2, 30))
    w, wa = _real(fw, device, (8,), seed=5)
    out = []
    for center in (True, False):
        got = fw.stft(t, 8, hop_length=3, window=w, center=center, return_complex=True)
        out.append((got, np.stack([_stft_ref(r, 8, 3, wa, center) for r in a])))
    # win_length < n_fft: the window sits in the middle of the frame
    got = t[0].stft(8, 2, 6, w[:6], return_complex=True, onesided=False)
    out.append((got, _stft_ref(a[0], 8, 2, np.pad(wa[:6], 1), True, False)))
    return out


def _istft(fw, device):
    t, a = _real(fw, device, (2, 30))
    w = fw.hann_window(8, dtype=fw.float64, device=device)
    s = fw.stft(t, 8, hop_length=2, window=w, return_complex=True)
    return [(fw.istft(s, 8, hop_length=2, window=w), a),
            (s[0].istft(8, 2, window=w, length=30), a[0])]


CASES = {
    "_fft_c2c": [Case(_c2c)], "_fft_r2c": [Case(_r2c)], "_fft_c2r": [Case(_c2r)],
    **{f"fft.{n}": _one_d(n) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{f"fft.{n}": _n_d(n, two=True) for n in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2",
                                               "ihfft2")},
    **{f"fft.{n}": _n_d(n) for n in ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")},
    "fft.fftfreq": _freq("fftfreq"), "fft.rfftfreq": _freq("rfftfreq"),
    "stft": [Case(_stft)], "istft": [Case(_istft)],
}
