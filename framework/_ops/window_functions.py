"""Window functions: torch.signal.windows (``hann``, ``kaiser``, ...) and the top-level
``hann_window``, ``hamming_window``, ``blackman_window``, ``bartlett_window`` and
``kaiser_window``. Computed in float64 on the target device from framework ops, then cast:
float32 windows are correctly rounded rather than carrying linspace's error."""
import math

import framework as _fw


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout != _fw.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_fw.float32, _fw.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _finish(w, dtype, requires_grad):
    return w.to(dtype).detach().requires_grad_(bool(requires_grad))


def _trivial(M, dtype, device, requires_grad):
    """The window of length 0 or 1, or None."""
    if M == 0:
        return _fw.empty((0,), dtype=dtype, device=device, requires_grad=bool(requires_grad))
    if M == 1:
        return _fw.ones((1,), dtype=dtype, device=device, requires_grad=bool(requires_grad))
    return None


def _ramp(M, start, step, device):
    """start + step * n for n in [0, M), in float64."""
    return _fw.arange(M, dtype=_fw.float64, device=device) * step + start


def _default(dtype):
    return _fw.get_default_dtype() if dtype is None else dtype


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """The generalized cosine window: sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _default(dtype)
    _checks("general_cosine", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    try:
        coeffs = list(a)
    except TypeError:
        raise TypeError("general_cosine: Coefficients must be a list/tuple") from None
    if not coeffs:
        raise ValueError("general_cosine: Coefficients cannot be empty")
    k = _ramp(M, 0.0, 2 * math.pi / (M - 1 if sym else M), device)
    w = _fw.zeros(M, dtype=_fw.float64, device=device)
    for i, c in enumerate(coeffs):
        w = w + ((-1) ** i * float(c)) * _fw.cos(k * i)
    return _finish(w, dtype, requires_grad)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The generalized Hamming window: alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window (general_hamming with alpha = 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window (general_hamming with alpha = 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window: general_cosine with a = [0.42, 0.5, 0.08]."""
    dtype = _default(dtype)
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Bartlett (triangular) window: 1 - |2n / (M - 1) - 1|."""
    dtype = _default(dtype)
    _checks("bartlett", M, dtype, layout)
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    k = _ramp(M, -1.0, 2.0 / (M - 1 if sym else M), device)
    return _finish(1 - k.abs(), dtype, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window: sin(pi (n + 0.5) / M)."""
    dtype = _default(dtype)
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    return _finish(_fw.sin(_ramp(M, 0.5 * c, c, device)), dtype, requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """The exponential (Poisson) window: exp(-|n - center| / tau)."""
    dtype = _default(dtype)
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"exponential: Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("exponential: Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _ramp(M, -center / tau, 1.0 / tau, device)
    return _finish(_fw.exp(-k.abs()), dtype, requires_grad)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The Gaussian window: exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    dtype = _default(dtype)
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"gaussian: Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _ramp(M, start * c, c, device)
    return _finish(_fw.exp(-k * k), dtype, requires_grad)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """The Kaiser window: I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    dtype = _default(dtype)
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"kaiser: beta must be non-negative, got: {beta} instead.")
    t = _trivial(M, dtype, device, requires_grad)
    if t is not None:
        return t
    beta = float(beta)
    k = _fw.clamp_max(_ramp(M, -beta, 2.0 * beta / (M - 1 if sym else M), device), beta)
    b = _fw.tensor(beta, dtype=_fw.float64, device=device)
    w = _fw.i0(_fw.sqrt(_fw.clamp_min(b * b - k * k, 0))) / _fw.i0(b)
    return _finish(w, dtype, requires_grad)


# ---- torch's top-level window functions ----------------------------------------------------
def _top(name, window_length, dtype, layout):
    dtype = _default(dtype)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if layout is not None and layout != _fw.strided:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    return dtype


def _top_finish(w, dtype, requires_grad):
    return w.to(dtype).detach().requires_grad_(bool(requires_grad))


def _periodic(fn, window_length, periodic, device, **kw):
    """A float64 window of window_length (from window_length + 1 when periodic)."""
    if window_length == 0:
        return _fw.empty((0,), dtype=_fw.float64, device=device)
    if window_length == 1:
        return _fw.ones((1,), dtype=_fw.float64, device=device)
    return fn(window_length, sym=not periodic, dtype=_fw.float64, device=device, **kw)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """The Hann window; periodic (for spectral analysis) by default."""
    dtype = _top("hann_window", window_length, dtype, layout)
    return _top_finish(_periodic(hann, window_length, periodic, device), dtype, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """The Hamming window alpha - beta cos(2 pi n / N); periodic by default."""
    dtype = _top("hamming_window", window_length, dtype, layout)
    w = _periodic(general_cosine, window_length, periodic, device, a=[alpha, beta])
    return _top_finish(w, dtype, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The Blackman window; periodic by default."""
    dtype = _top("blackman_window", window_length, dtype, layout)
    return _top_finish(_periodic(blackman, window_length, periodic, device), dtype,
                       requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The Bartlett (triangular) window; periodic by default."""
    dtype = _top("bartlett_window", window_length, dtype, layout)
    return _top_finish(_periodic(bartlett, window_length, periodic, device), dtype,
                       requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """The Kaiser window of shape parameter ``beta``; periodic by default."""
    dtype = _top("kaiser_window", window_length, dtype, layout)
    if window_length <= 1:
        w = _periodic(kaiser, window_length, periodic, device)
    else:
        # torch's periodic Kaiser window is the symmetric one of length + 1, cut
        n = window_length + 1 if periodic else window_length
        w = kaiser(n, beta=beta, sym=True, dtype=_fw.float64, device=device)[:window_length]
    return _top_finish(w, dtype, requires_grad)
