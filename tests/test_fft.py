"""framework.fft and stft/istft: values against NumPy's pocketfft (float64/complex128
references) for every length 1..64 and a few large primes, every norm mode, padding and
trimming, dims, 2-d/n-d, the hfft family and out=; gradients (first and second order),
errors and stft/istft against torch."""
import warnings

import numpy as np
import pytest

import framework as fw
from helpers import to_np

torch = pytest.importorskip("torch")

LENGTHS = list(range(1, 65)) + [127, 257, 1009]
NORMS = (None, "backward", "ortho", "forward")
PAIRS = ((fw.float32, fw.complex64), (fw.float64, fw.complex128))


def _check(got, ref, dtype):
    """``got`` has ``dtype`` and matches the float64/complex128 ``ref`` to the dtype's
    precision, relative to the largest entry (an FFT's error scales with the whole
    signal, not with each output)."""
    assert got.dtype is dtype, (got.dtype, dtype)
    g, ref = to_np(got), np.asarray(ref)
    assert g.shape == ref.shape, (g.shape, ref.shape)
    tol = 1e-5 if dtype in (fw.float32, fw.complex64) else 1e-12
    np.testing.assert_allclose(g, ref, rtol=0, atol=tol * (1 + np.abs(ref).max(initial=0)))


def _np(t):
    """The exact values of a framework tensor, widened (the reference's input)."""
    a = to_np(t)
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def _torch(t):
    return torch.from_numpy(to_np(t))


def _resolved(t):
    return t.resolve_conj() if t.is_complex() else t


def test_every_length(device):
    """All six 1-d transforms at every length 1..64 and at 127, 257, 1009, in float32 and
    float64, real and complex inputs; the norm mode cycles with the length."""
    rng = np.random.default_rng(0)
    for n in LENGTHS:
        a = rng.standard_normal((2, n))
        c = a + 1j * rng.standard_normal((2, n))
        norm = NORMS[n % 4]
        for real, cplx in PAIRS:
            x = fw.tensor(a, dtype=real, device=device)
            z = fw.tensor(c, dtype=cplx, device=device)
            xa, za = _np(x), _np(z)
            _check(fw.fft.fft(x, norm=norm), np.fft.fft(xa, norm=norm), cplx)
            _check(fw.fft.fft(z, norm=norm), np.fft.fft(za, norm=norm), cplx)
            _check(fw.fft.ifft(z, norm=norm), np.fft.ifft(za, norm=norm), cplx)
            _check(fw.fft.ifft(x, norm=norm), np.fft.ifft(xa, norm=norm), cplx)
            _check(fw.fft.rfft(x, norm=norm), np.fft.rfft(xa, norm=norm), cplx)
            _check(fw.fft.ihfft(x, norm=norm), np.fft.ihfft(xa, norm=norm), cplx)
            # the c2r transforms read the first n // 2 + 1 entries of a length-n input
            _check(fw.fft.irfft(z, n, norm=norm), np.fft.irfft(za, n, norm=norm), real)
            _check(fw.fft.hfft(z, n, norm=norm), np.fft.hfft(za, n, norm=norm), real)


@pytest.mark.parametrize("norm", NORMS)
def test_norm_modes(norm, device):
    """Every norm mode for every transform, 1-d and n-d, odd and even sizes."""
    rng = np.random.default_rng(1)
    for shape in ((5,), (3, 8), (2, 3, 5)):
        x = fw.tensor(rng.standard_normal(shape), device=device)
        z = fw.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape),
                      device=device)
        xa, za = _np(x), _np(z)
        f64, c128 = fw.float64, fw.complex128
        for name in ("fft", "ifft", "fftn", "ifftn"):
            _check(getattr(fw.fft, name)(z, norm=norm), getattr(np.fft, name)(za, norm=norm),
                   c128)
        for name in ("rfft", "ihfft", "rfftn"):
            _check(getattr(fw.fft, name)(x, norm=norm), getattr(np.fft, name)(xa, norm=norm),
                   c128)
        for name in ("irfft", "hfft", "irfftn"):
            _check(getattr(fw.fft, name)(z, norm=norm), getattr(np.fft, name)(za, norm=norm),
                   f64)
        for name in ("hfftn", "ihfftn"):     # NumPy has none: torch is the reference
            src = z if name == "hfftn" else x
            ref = _resolved(getattr(torch.fft, name)(_torch(src), norm=norm)).numpy()
            _check(getattr(fw.fft, name)(src, norm=norm), ref, f64 if name == "hfftn" else c128)


def test_n_padding_trimming_and_dims(device):
    """``n`` shorter and longer than the input along each dim, on strided inputs."""
    rng = np.random.default_rng(2)
    base = fw.tensor(rng.standard_normal((4, 7, 6)), device=device)
    cbase = fw.tensor(rng.standard_normal((4, 7, 6)) + 1j * rng.standard_normal((4, 7, 6)),
                      device=device)
    for x, z in ((base, cbase), (base.transpose(0, 2), cbase.transpose(0, 2)),
                 (base[:, ::2], cbase[:, ::2])):
        xa, za = _np(x), _np(z)
        for dim in (0, 1, -1):
            for n in (1, 3, x.shape[dim], 2 * x.shape[dim] + 1):
                _check(fw.fft.fft(z, n, dim), np.fft.fft(za, n, dim), fw.complex128)
                _check(fw.fft.ifft(x, n=n, dim=dim), np.fft.ifft(xa, n, dim), fw.complex128)
                _check(fw.fft.rfft(x, n, dim=dim), np.fft.rfft(xa, n, dim), fw.complex128)
                _check(fw.fft.irfft(z, n, dim), np.fft.irfft(za, n, dim), fw.float64)
                _check(fw.fft.hfft(z, n, dim), np.fft.hfft(za, n, dim), fw.float64)
                _check(fw.fft.ihfft(x, n, dim), np.fft.ihfft(xa, n, dim), fw.complex128)
            _check(fw.fft.irfft(z, dim=dim), np.fft.irfft(za, axis=dim), fw.float64)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
                                  "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"])
def test_nd(name, device):
    """The 2-d and n-d transforms against torch (itself checked against NumPy where NumPy
    has the transform): default dims, s with -1, padding and trimming, dims in any order,
    float32 and integer inputs."""
    rng = np.random.default_rng(3)
    takes_real = name.startswith(("rfft", "ihfft"))
    a = rng.standard_normal((3, 4, 6))
    x = fw.tensor(a if takes_real else a + 1j * rng.standard_normal(a.shape), device=device)
    f, tf = getattr(fw.fft, name), getattr(torch.fft, name)
    two = name.endswith("2")
    calls = [{}, {"s": (5, 3)}, {"s": (-1, 7), "dim": (0, 2)}, {"dim": (2, 0), "norm": "ortho"},
             {"s": (2, 8), "dim": (-1, 1), "norm": "forward"}]
    if not two:
        calls += [{"dim": 1}, {"s": (2, 3, 4)}, {"dim": (0, 1, 2), "s": (3, 3, 3)}]
    for kw in calls:
        want = _resolved(tf(_torch(x), **kw))
        _check(f(x, **kw), want.numpy(), getattr(fw, str(want.dtype).split(".")[-1]))
        if name in ("fftn", "rfftn", "irfftn", "fft2", "rfft2", "irfft2"):
            np_kw = {"s": kw.get("s"), "axes": kw.get("dim", (-2, -1) if two else None),
                     "norm": kw.get("norm")}
            if isinstance(np_kw["axes"], int):
                np_kw["axes"] = (np_kw["axes"],)
            if np_kw["s"] is not None and -1 in np_kw["s"]:
                continue
            if np_kw["s"] is not None and np_kw["axes"] is None:
                np_kw["axes"] = tuple(range(x.dim() - len(np_kw["s"]), x.dim()))
            _check(f(x, **kw), getattr(np.fft, name)(_np(x), **np_kw), f(x, **kw).dtype)
    # float32 and integer inputs promote as torch does
    src = fw.tensor(a, dtype=fw.float32, device=device) if takes_real else \
        fw.tensor(a, device=device).to(fw.complex64)
    want = _resolved(tf(_torch(src)))
    _check(f(src), want.numpy(), getattr(fw, str(want.dtype).split(".")[-1]))
    i = fw.arange(24, device=device).reshape(2, 3, 4)
    want = _resolved(tf(_torch(i)))
    assert f(i).dtype is getattr(fw, str(want.dtype).split(".")[-1])
    _check(f(i), want.numpy(), f(i).dtype)


def test_fftn_without_dims(device):
    """A 0-d input or dim=() transforms nothing: a complex copy, as torch."""
    x = fw.tensor(2.5, device=device)
    _check(fw.fft.fftn(x), np.array(2.5 + 0j), fw.complex64)
    y = fw.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    _check(fw.fft.ifftn(y, dim=()), _np(y).astype(np.complex128), fw.complex64)


def test_empty_batch(device):
    """Batch dims of size 0 give empty results (torch's MKL build fails there)."""
    x = fw.zeros(0, 5, device=device)
    assert fw.fft.fft(x).shape == (0, 5) and fw.fft.rfft(x).shape == (0, 3)
    assert fw.fft.irfft(fw.fft.rfft(x)).shape == (0, 4)


def test_default_dtype_promotion(device):
    """Integers and bools take the default float dtype (complex128 under float64)."""
    b = fw.tensor([True, False, True], device=device)
    _check(fw.fft.fft(b), np.fft.fft([1.0, 0.0, 1.0]), fw.complex64)
    old = fw.get_default_dtype()
    fw.set_default_dtype(fw.float64)
    try:
        _check(fw.fft.rfft(fw.arange(5, device=device)), np.fft.rfft(np.arange(5.0)),
               fw.complex128)
    finally:
        fw.set_default_dtype(old)


def test_out(device):
    """out= holds the result (resized, with torch's warning when not empty), may be of a
    wider dtype, must be complex (or real for c2r) and refuses autograd."""
    x = fw.tensor(np.arange(6.0), device=device)
    out = fw.empty(0, dtype=fw.complex128, device=device)
    r = fw.fft.fft(x, out=out)
    assert r is out
    _check(out, np.fft.fft(np.arange(6.0)), fw.complex128)
    out = fw.empty(2, dtype=fw.complex128, device=device)
    with pytest.warns(UserWarning, match="was resized"):
        fw.fft.rfft(x, out=out)
    _check(out, np.fft.rfft(np.arange(6.0)), fw.complex128)
    wide = fw.empty(4, dtype=fw.complex128, device=device)    # computed in float32, as torch
    fw.fft.rfft(x.float(), out=wide)
    np.testing.assert_array_equal(to_np(wide), to_np(fw.fft.rfft(x.float())))
    real_out = fw.empty(10, dtype=fw.float64, device=device)
    z = fw.fft.rfft(x)
    assert fw.fft.irfft(z, n=10, out=real_out) is real_out
    _check(real_out, np.fft.irfft(np.fft.rfft(np.arange(6.0)), 10), fw.float64)
    n2 = fw.empty((2, 3), dtype=fw.complex128, device=device)
    fw.fft.fft2(x.reshape(2, 3), out=n2)
    _check(n2, np.fft.fft2(np.arange(6.0).reshape(2, 3)), fw.complex128)
    with pytest.raises(RuntimeError, match="fft expects a complex output tensor, but got "
                                           "Double"):
        fw.fft.fft(x, out=fw.empty(6, dtype=fw.float64, device=device))
    with pytest.raises(RuntimeError, match="irfft expects a floating point output tensor, but "
                                           "got ComplexDouble"):
        fw.fft.irfft(z, out=fw.empty(10, dtype=fw.complex128, device=device))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        fw.fft.fft(x.clone().requires_grad_(), out=fw.empty(6, dtype=fw.complex128,
                                                            device=device))


_ERRORS = [
    ("n=0", lambda T, x, z: T.fft.fft(x, n=0)),
    ("n<0", lambda T, x, z: T.fft.irfft(z, n=-2)),
    ("default n of a 1-point irfft", lambda T, x, z: T.fft.irfft(z[:, :1])),
    ("dim", lambda T, x, z: T.fft.fft(x, dim=2)),
    ("0-d", lambda T, x, z: T.fft.fft(x[0, 0])),
    ("norm", lambda T, x, z: T.fft.rfft(x, norm="bad")),
    ("half", lambda T, x, z: T.fft.fft(x.half())),
    ("bfloat16", lambda T, x, z: T.fft.rfftn(x.bfloat16())),
    ("rfft of complex", lambda T, x, z: T.fft.rfft(z)),
    ("ihfft of complex", lambda T, x, z: T.fft.ihfft(z)),
    ("rfftn of complex", lambda T, x, z: T.fft.rfftn(z)),
    ("ihfftn of complex", lambda T, x, z: T.fft.ihfftn(z)),
    ("duplicate dims", lambda T, x, z: T.fft.fftn(x, dim=(0, -2))),
    ("s and dim", lambda T, x, z: T.fft.fftn(x, s=(2, 3), dim=(0,))),
    ("long s", lambda T, x, z: T.fft.ifftn(x, s=(2, 3, 4))),
    ("s=0", lambda T, x, z: T.fft.fft2(x, s=(0, 3))),
    ("s=-2", lambda T, x, z: T.fft.fftn(x, s=(-2, 3))),
    ("rfftn no dims", lambda T, x, z: T.fft.rfftn(x, dim=())),
    ("irfftn no dims", lambda T, x, z: T.fft.irfftn(z, dim=())),
    ("hfftn no dims", lambda T, x, z: T.fft.hfftn(z, dim=())),
    ("ihfftn no dims", lambda T, x, z: T.fft.ihfftn(x, dim=())),
    ("fft2 of 1-d", lambda T, x, z: T.fft.fft2(x[0])),
    ("fftfreq dtype", lambda T, x, z: T.fft.fftfreq(4, dtype=T.int64)),
    ("fftfreq n<0", lambda T, x, z: T.fft.fftfreq(-1)),
    ("rfftfreq n<0", lambda T, x, z: T.fft.rfftfreq(-4)),
]


@pytest.mark.parametrize("what,fn", _ERRORS, ids=[e[0] for e in _ERRORS])
def test_errors_as_torch(what, fn, device):
    """Invalid calls raise torch's exception with torch's message."""
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(Exception) as want:
        fn(torch, torch.tensor(a, dtype=torch.float32), torch.tensor(a, dtype=torch.complex64))
    with pytest.raises(Exception) as got:
        fn(fw, fw.tensor(a, dtype=fw.float32, device=device),
           fw.tensor(a, dtype=fw.complex64, device=device))
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def test_fftfreq(device):
    """fftfreq/rfftfreq: torch's values (bit for bit in float32), dtype, device, out=."""
    for n in (0, 1, 2, 7, 10, -1, -3):
        for d in (1.0, 0.25, 3):
            for dt in (fw.float32, fw.float64):
                tdt = getattr(torch, str(dt).split(".")[-1])
                for name in ("fftfreq", "rfftfreq") if n >= 0 else ("rfftfreq",):
                    got = getattr(fw.fft, name)(n, d, dtype=dt, device=device)
                    want = getattr(torch.fft, name)(n, d, dtype=tdt).numpy()
                    assert got.dtype is dt and got.device.type == fw.device(device).type
                    np.testing.assert_array_equal(to_np(got), want)
    out = fw.empty(3, dtype=fw.float64, device=device)
    assert fw.fft.rfftfreq(4, out=out) is out
    np.testing.assert_array_equal(to_np(out), [0.0, 0.25, 0.5])
    assert fw.fft.fftfreq(4, requires_grad=True).requires_grad


# ---- gradients ----------------------------------------------------------------------------

def _grads(fn, arrays, device, create_graph=False):
    xs = [fw.tensor(a, device=device).requires_grad_() for a in arrays]
    ts = [torch.tensor(a).requires_grad_() for a in arrays]
    out, tout = fn(fw, *xs), fn(torch, *ts)
    np.testing.assert_allclose(to_np(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    return xs, ts, out, tout


def _vr(T, z):
    return T.view_as_real(z.resolve_conj() if hasattr(z, "resolve_conj") else z)


_ONE_D = {
    "fft": lambda T, a, kw: _vr(T, T.fft.fft(T.view_as_complex(a), **kw)),
    "ifft": lambda T, a, kw: _vr(T, T.fft.ifft(T.view_as_complex(a), **kw)),
    "fft_real": lambda T, a, kw: _vr(T, T.fft.fft(a[..., 0], **kw)),
    "ifft_real": lambda T, a, kw: _vr(T, T.fft.ifft(a[..., 0], **kw)),
    "rfft": lambda T, a, kw: _vr(T, T.fft.rfft(a[..., 0], **kw)),
    "ihfft": lambda T, a, kw: _vr(T, T.fft.ihfft(a[..., 0], **kw)),
    "irfft": lambda T, a, kw: T.fft.irfft(T.view_as_complex(a), **kw),
    "hfft": lambda T, a, kw: T.fft.hfft(T.view_as_complex(a), **kw),
}


@pytest.mark.parametrize("name", sorted(_ONE_D))
def test_gradients_match_torch(name, device):
    """First-order gradients of every 1-d transform for each norm mode and for n shorter,
    equal and longer than the input, against torch's."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 6, 2))
    for norm in NORMS:
        for n in (None, 4, 6, 9):
            kw = {"norm": norm, "n": n}
            xs, ts, out, tout = _grads(lambda T, x: _ONE_D[name](T, x, kw), [a], device)
            w = rng.standard_normal(tuple(tout.shape))
            g, = fw.autograd.grad((out * fw.tensor(w, device=device)).sum(), xs)
            tg, = torch.autograd.grad((tout * torch.tensor(w)).sum(), ts)
            np.testing.assert_allclose(to_np(g), tg.numpy(), rtol=1e-10, atol=1e-12)


_SQUARES = {
    "c2c": (lambda T, a: (_vr(T, T.fft.fft(T.view_as_complex(a), n=5)) ** 2).sum(),
            (3, 4, 2)),
    "r2c": (lambda T, a: (_vr(T, T.fft.rfftn(a, s=(2, 7), norm="ortho")) ** 3).sum(), (3, 6)),
    "c2r": (lambda T, a: (T.fft.irfft2(T.view_as_complex(a), s=(3, 5)) ** 3).sum(),
            (3, 4, 2)),
    "hfft": (lambda T, a: (T.fft.hfft(T.view_as_complex(a), norm="forward") ** 3).sum(),
             (2, 4, 2)),
}


@pytest.mark.parametrize("name", sorted(_SQUARES))
def test_double_backward(name, device):
    """Second derivatives of non-linear functions of the transforms (the first derivative
    then depends on the input: create_graph goes through the derivative formulas)."""
    fn, shape = _SQUARES[name]
    rng = np.random.default_rng(5)
    xs, ts, out, tout = _grads(fn, [rng.standard_normal(shape)], device)
    g, = fw.autograd.grad(out, xs, create_graph=True)
    tg, = torch.autograd.grad(tout, ts, create_graph=True)
    np.testing.assert_allclose(to_np(g), tg.detach().numpy(), rtol=1e-10, atol=1e-10)
    v = rng.standard_normal(shape)
    gg, = fw.autograd.grad((g * fw.tensor(v, device=device)).sum(), xs)
    tgg, = torch.autograd.grad((tg * torch.tensor(v)).sum(), ts)
    np.testing.assert_allclose(to_np(gg), tgg.numpy(), rtol=1e-9, atol=1e-10)


def test_gradcheck_float64():
    """Finite differences of a chain through all three primitives."""
    def f(a):
        z = fw.fft.rfft(a, n=7)                                 # r2c
        z = fw.fft.fft(z, n=5, norm="ortho")                    # c2c
        return fw.fft.irfft(z, n=6) * fw.fft.hfft(z, n=6)       # c2r
    a = fw.tensor(np.random.default_rng(6).standard_normal((2, 6))).requires_grad_()
    assert fw.autograd.gradcheck(f, [a])
    assert fw.autograd.gradgradcheck(f, [a])


# ---- stft and istft -----------------------------------------------------------------------

_STFT = [
    {},
    {"hop_length": 3, "center": False},
    {"pad_mode": "constant", "normalized": True},
    {"pad_mode": "circular", "onesided": False},
    {"win_length": 6, "window": "hann"},
    {"win_length": 5, "center": False, "align_to_window": True, "window": "rand"},
    {"win_length": 6, "center": False, "align_to_window": False},
    {"window": "rand", "return_complex": False},
]


def _window(spec, n, device=None):
    if spec == "hann":
        return torch.hann_window(n, dtype=torch.float64)
    if spec == "rand":
        return torch.tensor(np.random.default_rng(7).uniform(0.5, 1.5, n))
    return None


@pytest.mark.parametrize("kw", _STFT, ids=[str(k) for k in _STFT])
def test_stft_matches_torch(kw, device):
    """stft's values and the gradients of signal and window, 1-d and 2-d signals."""
    rng = np.random.default_rng(8)
    kw = dict(kw)
    spec = kw.pop("window", None)
    win = kw.get("win_length", 8)
    kw.setdefault("return_complex", True)
    # (torch's align_to_window reads past a 2-d signal's storage: 1-d only there)
    for shape in ((30,),) if kw.get("align_to_window") else ((30,), (2, 25)):
        a = rng.standard_normal(shape)
        tw = _window(spec, win)
        arrays = [a] if tw is None else [a, tw.numpy()]

        def fn(T, x, w=None):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = T.stft(x, 8, window=w, **kw)
            return _vr(T, s) if s.is_complex() else s
        xs, ts, out, tout = _grads(fn, arrays, device)
        v = rng.standard_normal(tuple(tout.shape))
        g = fw.autograd.grad((out * fw.tensor(v, device=device)).sum(), xs)
        tg = torch.autograd.grad((tout * torch.tensor(v)).sum(), ts)
        for x, y in zip(g, tg):
            np.testing.assert_allclose(to_np(x), y.numpy(), rtol=1e-10, atol=1e-10)


def test_stft_complex_signal(device):
    """A complex signal gives the two-sided spectrum (real window) through real views."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2, 24, 2))
    w = rng.uniform(0.5, 1.5, 8)

    def fn(T, x, w):
        return _vr(T, T.stft(T.view_as_complex(x), 8, 2, window=w, pad_mode="reflect"))
    xs, ts, out, tout = _grads(fn, [a, w], device)
    g = fw.autograd.grad(out.sum(), xs)
    tg = torch.autograd.grad(tout.sum(), ts)
    for x, y in zip(g, tg):
        np.testing.assert_allclose(to_np(x), y.numpy(), rtol=1e-10, atol=1e-10)


_ISTFT = [
    ({"hop_length": 2}, {}),
    ({"hop_length": 3, "center": False}, {"length": 27}),
    ({"normalized": True}, {"length": 40}),        # longer than the signal: zero tail
    ({"onesided": False}, {}),
    ({"win_length": 6}, {"length": 20}),
    ({"onesided": False}, {"return_complex": True}),
]


@pytest.mark.parametrize("kw,ikw", _ISTFT, ids=[str(k) for k in _ISTFT])
def test_istft_matches_torch(kw, ikw, device):
    """istft of stft's output, its values and the gradients of spectrum and window."""
    rng = np.random.default_rng(10)
    win = kw.get("win_length", 8)
    for shape in ((30,), (2, 30)):
        a = rng.standard_normal(shape)
        w = rng.uniform(0.5, 1.5, win)

        def fn(T, x, w):
            s = T.stft(x, 8, window=w, return_complex=True, **kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = T.istft(s, 8, window=w, **kw, **ikw)
            return _vr(T, y) if y.is_complex() else y
        xs, ts, out, tout = _grads(fn, [a, w], device)
        v = rng.standard_normal(tuple(tout.shape))
        g = fw.autograd.grad((out * fw.tensor(v, device=device)).sum(), xs)
        tg = torch.autograd.grad((tout * torch.tensor(v)).sum(), ts)
        for x, y in zip(g, tg):
            np.testing.assert_allclose(to_np(x), y.numpy(), rtol=1e-9, atol=1e-10)
        if "length" not in ikw and kw.get("center", True):      # a round trip
            y = to_np(out)
            if ikw.get("return_complex"):
                y = y[..., 0] + 1j * y[..., 1]
            np.testing.assert_allclose(y, a, rtol=1e-10, atol=1e-10)


def test_stft_istft_float32_round_trip(device):
    x = fw.tensor(np.random.default_rng(11).standard_normal((3, 64)), dtype=fw.float32,
                  device=device)
    w = fw.hann_window(16, device=device)
    s = x.stft(16, 4, window=w, return_complex=True)
    assert s.dtype is fw.complex64 and s.shape == (3, 9, 17)
    y = s.istft(16, 4, window=w, length=64)
    assert y.dtype is fw.float32
    np.testing.assert_allclose(to_np(y), to_np(x), atol=1e-5)


def _has_complex_mul():
    try:
        fw.tensor([1j]) * fw.tensor([1j])
        return True
    except RuntimeError:
        return False


@pytest.mark.skipif(not _has_complex_mul(), reason="complex * needs complex arithmetic")
def test_complex_windows(device):
    """Complex windows: two-sided spectra, and istft back to a complex signal."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((2, 24))
    w = rng.uniform(0.5, 1.5, 8) + 0.3j * rng.standard_normal(8)
    for signal in (a, a + 1j * rng.standard_normal(a.shape)):
        s = fw.stft(fw.tensor(signal, device=device), 8, 2, window=fw.tensor(w, device=device))
        ts = torch.stft(torch.tensor(signal), 8, 2, window=torch.tensor(w))
        np.testing.assert_allclose(to_np(s), ts.numpy(), rtol=1e-10, atol=1e-10)
        y = fw.istft(s, 8, 2, window=fw.tensor(w, device=device), return_complex=True)
        ty = torch.istft(ts, 8, 2, window=torch.tensor(w), return_complex=True)
        np.testing.assert_allclose(to_np(y), ty.numpy(), rtol=1e-9, atol=1e-10)
    with pytest.raises(RuntimeError, match="Complex windows are incompatible"):
        fw.istft(s, 8, 2, window=fw.tensor(w, device=device), onesided=False)


_STFT_ERRORS = [
    ("return_complex required", lambda T, x, s, w: T.stft(x, 8, window=w)),
    ("3-d", lambda T, x, s, w: T.stft(x[None], 8, window=w, return_complex=True)),
    ("n_fft too big", lambda T, x, s, w: T.stft(x, 64, center=False, return_complex=True)),
    ("hop", lambda T, x, s, w: T.stft(x, 8, 0, window=w, return_complex=True)),
    ("win_length", lambda T, x, s, w: T.stft(x, 8, win_length=9, return_complex=True)),
    ("window size", lambda T, x, s, w: T.stft(x, 8, window=w[:7], return_complex=True)),
    ("onesided complex", lambda T, x, s, w: T.stft(x * 1j, 8, window=w, onesided=True)),
    ("align with center", lambda T, x, s, w: T.stft(x, 8, window=w, align_to_window=True,
                                                    return_complex=True)),
    ("istft of real", lambda T, x, s, w: T.istft(x, 8, window=w)),
    ("istft NOLA", lambda T, x, s, w: T.istft(s, 8, window=w * 0)),
    ("istft onesided size", lambda T, x, s, w: T.istft(s, 10, window=T.cat([w, w[:2]]))),
    ("istft hop", lambda T, x, s, w: T.istft(s, 8, hop_length=9, window=w)),
    ("istft window size", lambda T, x, s, w: T.istft(s, 8, window=w[:7])),
    ("istft empty", lambda T, x, s, w: T.istft(s[:, :, :0], 8, window=w)),
    ("istft 1-d", lambda T, x, s, w: T.istft(s[0, :, 0], 8, window=w)),
    ("istft onesided complex", lambda T, x, s, w: T.istft(s, 8, window=w,
                                                          return_complex=True)),
]


@pytest.mark.filterwarnings("ignore:A window was not provided")
@pytest.mark.parametrize("what,fn", _STFT_ERRORS, ids=[e[0] for e in _STFT_ERRORS])
def test_stft_errors_as_torch(what, fn, device):
    """stft/istft refuse what torch refuses, with torch's exception type and words (the
    tensor descriptions in the messages name each library's types)."""
    a = np.random.default_rng(13).standard_normal((2, 40))

    def args(T, dev):
        x = T.tensor(a)
        w = T.ones(8, dtype=T.float64)
        if T is fw:
            x, w = x.to(dev), w.to(dev)
        return x, T.stft(x, 8, 2, window=w, return_complex=True), w
    with pytest.raises(Exception) as want:
        fn(torch, *args(torch, "cpu"))
    with pytest.raises(Exception) as got:
        fn(fw, *args(fw, device))
    assert type(got.value) is type(want.value)
    tail = lambda e: str(e).split(") ")[-1].split("\n")[0]   # noqa: E731
    assert tail(got.value) == tail(want.value)


def test_methods_and_namespace():
    assert fw.Tensor.stft is fw.stft and fw.Tensor.istft is fw.istft
    assert set(fw.fft.__all__) <= set(dir(fw.fft))
    for name in fw.fft.__all__:
        assert callable(getattr(fw.fft, name))
