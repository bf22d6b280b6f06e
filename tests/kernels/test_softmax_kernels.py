"""The softmax family's launchers on both backends (framework/kernels/softmax.py and
framework/_cpu/softmax.py over native/softmax.cpp) against a float64 NumPy reference, on
(outer, n, inner) layouts that cross the kernels' tile edges: rows of one tile and of
several (the online max/sum), many short rows per program, column reductions (inner > 1)
with partial column blocks, every float dtype, special values; and the mirror rule (same
launchers, same parameters)."""
import inspect

import numpy as np
import pytest

import framework as fw
import framework._cpu.softmax as C
from tests.helpers import TOL, to_np

pytestmark = [pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                         "ignore:divide by zero:RuntimeWarning",
                                         "ignore:overflow encountered:RuntimeWarning")]

DEVICES = ["cpu"] + (["cuda"] if fw.cuda.is_available() else [])


def _backend(device):
    if device == "cpu":
        return C
    import framework.kernels.softmax as K
    return K


def _ref(a, log):
    """float64 softmax / log_softmax of a (outer, n, inner) array along axis 1."""
    a = a.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = a.max(axis=1, keepdims=True)
        z = a - m
        s = np.exp(z).sum(axis=1, keepdims=True)
        return z - np.log(s) if log else np.exp(z) / s


def _run(device, a, dtype, log):
    outer, n, inner = a.shape
    x = fw.tensor(a, dtype=dtype, device=device)
    y = fw.empty(a.shape, dtype=dtype, device=device)
    _backend(device).softmax(log, x, y, outer, n, inner)
    return x, y


LAYOUTS = [(1, 1, 1), (3, 7, 1), (2, 16, 1), (5, 17, 1), (1, 4096, 1), (2, 4097, 1),
           (3, 5000, 1), (700, 3, 1), (513, 9, 1), (2, 3, 5), (3, 7, 64), (2, 5, 65),
           (1, 300, 3), (2, 70, 70), (4, 1, 6),
           (64, 2000, 1), (8, 300, 70)]     # big enough for the CPU's threads to split


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts(device, log, layout):
    a = np.random.default_rng(sum(layout)).standard_normal(layout) * 5
    x, y = _run(device, a, fw.float32, log)
    rtol, atol = (2e-6, 2e-6) if not log else (2e-6, 1e-5)
    np.testing.assert_allclose(to_np(y), _ref(to_np(x), log), rtol=rtol, atol=atol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [fw.float16, fw.bfloat16, fw.float32, fw.float64])
def test_dtypes(device, log, dtype):
    for layout in [(3, 37, 1), (2, 9, 6)]:
        a = np.random.default_rng(3).standard_normal(layout) * 3
        x, y = _run(device, a, dtype, log)
        assert y.dtype is dtype
        rtol, atol = TOL[dtype]
        # the 16-bit results are float32 results rounded once
        np.testing.assert_allclose(to_np(y), _ref(to_np(x), log), rtol=rtol,
                                   atol=atol * (4 if log else 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", [False, True])
def test_online_rescaling(device, log):
    """A maximum in a late tile, and a row whose first tiles are all -inf."""
    a = np.random.default_rng(0).standard_normal((3, 4500, 1))
    a[0, 4400, 0] = 80.0
    a[1, :4200, 0] = -np.inf
    a[2, :, 0] -= 1000.0
    b = np.random.default_rng(1).standard_normal((2, 300, 3))
    b[0, 290, 1] = 50.0
    b[1, :280, :] = -np.inf
    for arr in (a, b):
        x, y = _run(device, arr, fw.float32, log)
        np.testing.assert_allclose(to_np(y), _ref(to_np(x), log), rtol=2e-6, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("n", [3, 5000])
def test_special_values(device, log, n):
    inf, nan = np.inf, np.nan
    rows = np.zeros((6, n))
    rows[0, 0] = -inf               # one -inf: 0 / -inf there
    rows[1, :] = -inf               # all -inf: NaN
    rows[2, 1] = inf                # +inf: NaN row
    rows[3, n - 1] = nan            # NaN: NaN row
    rows[4, :] = np.linspace(-3, 3, n)
    rows[5, 0], rows[5, 1:] = 30.0, -inf
    for layout in (rows[:, :, None], np.ascontiguousarray(rows.T)[None]):
        x, y = _run(device, layout, fw.float32, log)
        np.testing.assert_allclose(to_np(y), _ref(to_np(x), log), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_refuses_integers(device):
    x = fw.ones((2, 3), dtype=fw.int64, device=device)
    y = fw.empty((2, 3), dtype=fw.int64, device=device)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        _backend(device).softmax(False, x, y, 1, 2, 3)


def test_cuda_mirrors_cpu():
    import framework.kernels.softmax as K
    assert list(inspect.signature(C.softmax).parameters) == \
        list(inspect.signature(K.softmax).parameters)
