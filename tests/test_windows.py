"""framework.signal.windows and the top-level window functions (hann_window, ...) against
torch on both devices: symmetric and periodic windows of lengths 0, 1, 2 and odd/even ones
past a block edge, both float dtypes, their parameters, requires_grad and the errors."""
import math

import numpy as np
import pytest

import framework as fw
from helpers import to_np

torch = pytest.importorskip("torch")

WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("hamming", {}), ("hann", {}),
           ("nuttall", {}), ("exponential", {"tau": 2.5}), ("gaussian", {"std": 3.0}),
           ("general_cosine", {"a": [0.46, 0.23, 0.31]}), ("general_hamming", {"alpha": 0.6}),
           ("kaiser", {"beta": 4.0})]


# windows that also run under Triton's interpreter (the others are the same composites)
CUDA_WINDOWS = ("nuttall", "kaiser", "gaussian", "hann_window", "bartlett_window")


def _cmp(got, ref):
    assert got.dtype == getattr(fw, str(ref.dtype).split(".")[-1])
    assert tuple(got.shape) == tuple(ref.shape)
    tol = 1e-6 if ref.dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(to_np(got).astype(np.float64), ref.double().numpy(),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kw", WINDOWS, ids=[f"{w[0]}{i}" for i, w in enumerate(WINDOWS)])
def test_signal_windows(name, kw, device):
    if device == "cuda" and name not in CUDA_WINDOWS:
        pytest.skip("the same composite as on the cpu; a few windows cover the cuda path")
    fn, tfn = getattr(fw.signal.windows, name), getattr(torch.signal.windows, name)
    # the whole grid on the cpu; under Triton's interpreter one length past a block edge
    for M in ((0, 1, 2, 7, 70) if device == "cpu" else (70,)):
        for sym in (True, False):
            _cmp(fn(M, sym=sym, device=device, **kw), tfn(M, sym=sym, **kw))
    if device == "cpu":
        _cmp(fn(9, dtype=fw.float64, **kw), tfn(9, dtype=torch.float64, **kw))
    w = fn(5, requires_grad=True, device=device, **kw)
    assert w.requires_grad and w.device.type == device
    with pytest.raises(ValueError):
        fn(-1, **kw)
    with pytest.raises(ValueError):
        fn(4, dtype=fw.int64, **kw)


def test_signal_window_parameters():
    _cmp(fw.signal.windows.exponential(6, center=1.5, sym=False),
         torch.signal.windows.exponential(6, center=1.5, sym=False))
    with pytest.raises(ValueError):
        fw.signal.windows.exponential(6, center=1.5)
    with pytest.raises(ValueError):
        fw.signal.windows.exponential(6, tau=0)
    with pytest.raises(ValueError):
        fw.signal.windows.gaussian(6, std=-1.0)
    with pytest.raises(ValueError):
        fw.signal.windows.kaiser(6, beta=-1.0)
    with pytest.raises(ValueError):
        fw.signal.windows.general_cosine(6, a=[])
    _cmp(fw.signal.windows.kaiser(8, beta=0.0), torch.signal.windows.kaiser(8, beta=0.0))


TOP = [("hann_window", {}), ("hamming_window", {}), ("hamming_window", {"alpha": 0.5}),
       ("blackman_window", {}), ("bartlett_window", {}), ("kaiser_window", {}),
       ("kaiser_window", {"beta": 5.0})]


@pytest.mark.parametrize("name,kw", TOP, ids=[f"{w[0]}{i}" for i, w in enumerate(TOP)])
def test_top_level_windows(name, kw, device):
    if device == "cuda" and (name not in CUDA_WINDOWS or kw):
        pytest.skip("the same composite as on the cpu; a few windows cover the cuda path")
    fn, tfn = getattr(fw, name), getattr(torch, name)
    for n in ((0, 1, 2, 5, 66) if device == "cpu" else (66,)):
        for periodic in (True, False):
            _cmp(fn(n, periodic, device=device, **kw), tfn(n, periodic, **kw))
    _cmp(fn(7, True, dtype=fw.float64, device=device, **kw),
         tfn(7, True, dtype=torch.float64, **kw))
    with pytest.raises(RuntimeError):
        fn(-2)
    with pytest.raises(RuntimeError):
        fn(4, dtype=fw.int32)


def test_hamming_window_beta():
    _cmp(fw.hamming_window(8, False, 0.6, 0.3), torch.hamming_window(8, False, 0.6, 0.3))
    assert math.isclose(float(fw.hann_window(4)[2]), 1.0)
