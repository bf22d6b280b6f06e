"""Cases for the window functions (framework/_ops/window_functions.py): torch.signal.windows'
and the top-level ones against NumPy float64 formulas, symmetric and periodic. Their tests
against torch are in tests/test_windows.py."""
import numpy as np

from opdb import Case


def _cos_sum(M, a, sym):
    if M <= 1:
        return np.ones(M)
    k = np.arange(M) * 2 * np.pi / (M - 1 if sym else M)
    return sum((-1) ** i * c * np.cos(i * k) for i, c in enumerate(a))


def _bartlett(M, sym):
    if M <= 1:
        return np.ones(M)
    return 1 - np.abs(np.arange(M) * 2.0 / (M - 1 if sym else M) - 1)


def _kaiser(M, beta, sym):
    if M <= 1:
        return np.ones(M)
    k = np.minimum(-beta + np.arange(M) * 2.0 * beta / (M - 1 if sym else M), beta)
    return np.i0(np.sqrt(np.maximum(beta * beta - k * k, 0))) / np.i0(beta)


def _half(M, sym):
    return (M if not sym and M > 1 else M - 1) / 2.0


def _gauss(M, std, sym):
    n = np.arange(M) - _half(M, sym)
    return np.exp(-n * n / (2 * std * std))


def _expo(M, tau, sym):
    return np.exp(-np.abs(np.arange(M) - _half(M, sym)) / tau)


def _cosine(M, sym):
    c = np.pi / (M + 1 if not sym and M > 1 else M) if M else 0
    return np.sin((np.arange(M) + 0.5) * c)


REFS = {
    "bartlett": ({}, _bartlett), "blackman": ({}, lambda M, s: _cos_sum(M, [.42, .5, .08], s)),
    "cosine": ({}, _cosine), "hamming": ({}, lambda M, s: _cos_sum(M, [.54, .46], s)),
    "hann": ({}, lambda M, s: _cos_sum(M, [.5, .5], s)),
    "nuttall": ({}, lambda M, s: _cos_sum(M, [0.3635819, 0.4891775, 0.1365995, 0.0106411], s)),
    "exponential": ({"tau": 2.0}, lambda M, s: _expo(M, 2.0, s)),
    "gaussian": ({"std": 2.5}, lambda M, s: _gauss(M, 2.5, s)),
    "general_cosine": ({"a": [0.5, 0.3, 0.2]}, lambda M, s: _cos_sum(M, [.5, .3, .2], s)),
    "general_hamming": ({"alpha": 0.6}, lambda M, s: _cos_sum(M, [.6, .4], s)),
    "kaiser": ({"beta": 5.0}, lambda M, s: _kaiser(M, 5.0, s)),
}
TOP = {
    "hann_window": lambda n, p: _cos_sum(n, [.5, .5], not p),
    "hamming_window": lambda n, p: _cos_sum(n, [.54, .46], not p),
    "blackman_window": lambda n, p: _cos_sum(n, [.42, .5, .08], not p),
    "bartlett_window": lambda n, p: _bartlett(n, not p),
    "kaiser_window": lambda n, p: _kaiser(n + 1, 12.0, True)[:n] if p and n > 1
    else _kaiser(n, 12.0, True),
}


def _signal(name):
    kw, ref = REFS[name]

    def fn(fw, d):
        fwf = getattr(fw.signal.windows, name)
        return [(fwf(M, sym=s, dtype=fw.float64, device=d, **kw), ref(M, s))
                for M in (1, 6, 11) for s in (True, False)]
    return fn


def _top(name):
    def fn(fw, d):
        return [(getattr(fw, name)(n, p, dtype=fw.float64, device=d), TOP[name](n, p))
                for n in (1, 8) for p in (True, False)]
    return fn


CASES = {f"signal.windows.{k}": [Case(_signal(k))] for k in REFS}
CASES.update({k: [Case(_top(k))] for k in TOP})
