"""Cases for the complex ops (framework/_ops/complex_views.py, complex_ops.py): values
against NumPy's complex arithmetic, on contiguous and strided inputs."""
import numpy as np

from helpers import make
from opdb import Case


def _c(fw, device, noncontig=False, shape=(3, 5), dtype=None):
    return make(shape, dtype or fw.complex64, device, noncontig=noncontig, seed=3)


def _view_as_real(fw, device):
    out = []
    for nc in (False, True):
        t, a = _c(fw, device, nc)
        v = fw.view_as_real(t)
        assert v._storage is t._storage and v.dtype is fw.float32
        out.append((v, np.stack([a.real, a.imag], -1)))
    return out


def _view_as_complex(fw, device):
    t, a = make((4, 3, 2), fw.float64, device, seed=4)
    v = fw.view_as_complex(t)
    assert v._storage is t._storage and v.dtype is fw.complex128
    return [(v, a[..., 0] + 1j * a[..., 1]), (fw.view_as_complex(t[1:3]), a[1:3, :, 0] + 1j * a[1:3, :, 1])]


def _real_imag(which):
    def fn(fw, device):
        out = []
        for nc in (False, True):
            t, a = _c(fw, device, nc, dtype=fw.complex128)
            v = getattr(fw, which)(t)
            assert v._storage is t._storage
            out.append((v, getattr(a, which)))
        if which == "real":
            r, ra = make((4,), fw.float32, device, seed=5)
            assert fw.real(r) is r
            out.append((fw.real(r), ra))
        return out
    return [Case(fn)]


CASES = {
    "view_as_real": [Case(_view_as_real)],
    "view_as_complex": [Case(_view_as_complex)],
    "real": _real_imag("real"),
    "imag": _real_imag("imag"),
}
