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


def _conj(which):
    def fn(fw, device):
        out = []
        for nc, dt in ((False, fw.complex64), (True, fw.complex128)):
            t, a = _c(fw, device, nc, dtype=dt)
            c = getattr(fw, which)(t)
            assert c.dtype is dt and c._storage is not t._storage
            out += [(c, a.conj()), (getattr(t, which)(), a.conj())]
        r, ra = make((4,), fw.float32, device, seed=5)
        if which == "conj":
            assert fw.conj(r) is r
        out.append((getattr(fw, which)(r), ra))
        if which == "conj_physical":
            t, a = _c(fw, device, True)
            assert t.conj_physical_() is t
            out.append((t, a.conj()))
            o = fw.empty(3, 5, dtype=fw.complex64, device=device)
            out.append((fw.conj_physical(_c(fw, device)[0], out=o), a.conj()))
        return out
    return [Case(fn)]


def _same(which):
    def fn(fw, device):
        t, a = _c(fw, device)
        assert getattr(fw, which)(t) is t and getattr(t, which)() is t
        return t, a
    return [Case(fn)]


def _flag(which):
    def fn(fw, device):
        t, _ = _c(fw, device)
        assert getattr(fw, which)(t) is False and getattr(t, which)() is False
        assert getattr(fw, which)(t.conj()) is False
    return [Case(fn)]


def _angle(fw, device):
    out = []
    for nc in (False, True):
        t, a = _c(fw, device, nc, dtype=fw.complex128)
        out += [(fw.angle(t), np.angle(a)), (t.angle(), np.angle(a))]
    x = np.array([-1.5, 0.0, 2.0, np.nan, -np.inf])
    out.append((fw.angle(fw.tensor(x, device=device)),
                np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0))))
    out.append((fw.angle(fw.tensor([-3, 0, 4], device=device)), np.array([np.pi, 0, 0])))
    o = fw.empty(3, 5, device=device)
    t, a = _c(fw, device)
    out.append((fw.angle(t, out=o), np.angle(a)))
    return out


def _polar(fw, device):
    r, ra = make((3, 1), fw.float64, device, low=0, high=3, seed=6)
    th, tha = make((4,), fw.float64, device, seed=7)
    out = [(fw.polar(r, th), ra * np.exp(1j * tha))]
    r32, ra32 = make((5,), fw.float32, device, low=0, high=3, seed=8)
    th32, tha32 = make((5,), fw.float32, device, noncontig=True, seed=9)
    res = fw.polar(r32, th32)
    assert res.dtype is fw.complex64
    return out + [(res, ra32 * np.exp(1j * tha32))]


def _complex(fw, device):
    re, rea = make((3, 1), fw.float32, device, seed=10)
    im, ima = make((4,), fw.float32, device, noncontig=True, seed=11)
    res = fw.complex(re, im)
    assert res.dtype is fw.complex64
    o = fw.empty(3, 4, dtype=fw.complex64, device=device)
    return [(res, rea + 1j * ima), (fw.complex(re, im, out=o), rea + 1j * ima)]


CASES = {
    "view_as_real": [Case(_view_as_real)],
    "view_as_complex": [Case(_view_as_complex)],
    "real": _real_imag("real"),
    "imag": _real_imag("imag"),
    "conj": _conj("conj"),
    "conj_physical": _conj("conj_physical"),
    "resolve_conj": _same("resolve_conj"),
    "resolve_neg": _same("resolve_neg"),
    "is_conj": _flag("is_conj"),
    "is_neg": _flag("is_neg"),
    "angle": [Case(_angle)],
    "polar": [Case(_polar)],
    "complex": [Case(_complex)],
}
