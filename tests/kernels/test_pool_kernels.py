"""The pooling family's launcher (max_pool: framework/_cpu/pool.py over native/pool.cpp, and
framework/kernels/pool.py) on both backends against a direct NumPy loop with PyTorch's
rules: regular windows (kernel, stride, padding, dilation) and adaptive bins, 1d/2d/3d
volumes, output counts that cross the Triton kernel's block edge, every numeric dtype,
NaN/-inf/ties and windows with no valid element; and the mirror rule."""
import inspect

import numpy as np
import pytest

import framework as fw
import framework._cpu.pool as C
from tests.helpers import to_np

DEVICES = ["cpu"] + (["cuda"] if fw.cuda.is_available() else [])


def _backend(device):
    if device == "cpu":
        return C
    import framework.kernels.pool as K
    return K


def _windows(size, out, k, s, p, d, adaptive):
    """Per output: the input positions of its window (PyTorch's rules) and the position the
    maximum starts at (the window's first valid one)."""
    res = []
    for o in range(out):
        if adaptive:
            b, e = (o * size) // out, -(-((o + 1) * size) // out)
            res.append((list(range(b, e)), b))
        else:
            st = o * s - p
            pos = [st + j * d for j in range(k)]
            first = st
            while first < 0:
                first += d
            res.append(([q for q in pos if 0 <= q < size], first))
    return res


def _ref(x, out, k, s, p, d, adaptive):
    """(values, indices) of max pooling x (planes, D, H, W), float64 values."""
    planes, D, H, W = x.shape
    wd = _windows(D, out[0], k[0], s[0], p[0], d[0], adaptive)
    wh = _windows(H, out[1], k[1], s[1], p[1], d[1], adaptive)
    ww = _windows(W, out[2], k[2], s[2], p[2], d[2], adaptive)
    vals = np.zeros((planes,) + tuple(out), np.float64)
    inds = np.zeros((planes,) + tuple(out), np.int64)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    for pl in range(planes):
        for a, (pd, fd) in enumerate(wd):
            for b, (ph, fh) in enumerate(wh):
                for c, (pw, fw_) in enumerate(ww):
                    best, at = low, (fd * H + fh) * W + fw_
                    for i in pd:
                        for j in ph:
                            for m in pw:
                                v = x[pl, i, j, m]
                                if v > best or v != v:
                                    best, at = v, (i * H + j) * W + m
                    vals[pl, a, b, c], inds[pl, a, b, c] = best, at
    return vals, inds


def _run(device, x_np, dtype, out, k, s, p, d, adaptive=False):
    planes = x_np.shape[0]
    x = fw.tensor(x_np, dtype=dtype, device=device)
    v = fw.empty((planes,) + tuple(out), dtype=dtype, device=device)
    i = fw.empty((planes,) + tuple(out), dtype=fw.int64, device=device)
    _backend(device).max_pool(x, v, i, planes, x_np.shape[1:], out, k, s, p, d, adaptive)
    return x, v, i


def _compare(device, x_np, dtype, out, k, s, p, d, adaptive=False):
    x, v, i = _run(device, x_np, dtype, out, k, s, p, d, adaptive)
    rv, ri = _ref(to_np(x), out, k, s, p, d, adaptive)
    np.testing.assert_array_equal(to_np(v).astype(np.float64), rv)
    np.testing.assert_array_equal(to_np(i), ri)


def _out(size, k, s, p, d, ceil):
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= size + p else o


# (volume, kernel, stride, padding, dilation, ceil_mode)
REGULAR = [
    ((1, 1, 17), (1, 1, 3), (1, 1, 2), (0, 0, 1), (1, 1, 1), False),
    ((1, 1, 700), (1, 1, 2), (1, 1, 1), (0, 0, 1), (1, 1, 1), True),   # > one block
    ((1, 9, 8), (1, 3, 2), (1, 2, 1), (0, 1, 1), (1, 1, 2), True),
    ((1, 20, 23), (1, 4, 3), (1, 3, 2), (0, 2, 1), (1, 1, 1), False),
    ((5, 4, 6), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), False),
    ((6, 5, 5), (3, 2, 2), (2, 1, 2), (1, 0, 1), (1, 2, 1), True),
    ((1, 1, 4), (1, 1, 2), (1, 1, 1), (0, 0, 2), (1, 1, 3), False),   # windows with no element
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", REGULAR)
def test_regular_windows(device, case):
    vol, k, s, p, d, ceil = case
    out = tuple(_out(vol[j], k[j], s[j], p[j], d[j], ceil) for j in range(3))
    x = np.random.default_rng(sum(vol)).standard_normal((3,) + vol)
    _compare(device, x, fw.float32, out, k, s, p, d)


@pytest.mark.parametrize("device", DEVICES)
def test_many_planes(device):
    """Enough planes for the CPU's threads to split the work."""
    x = np.random.default_rng(5).standard_normal((96, 1, 12, 12))
    _compare(device, x, fw.float32, (1, 6, 6), (1, 2, 2), (1, 2, 2), (0, 0, 0), (1, 1, 1))
    _compare(device, x, fw.float32, (1, 5, 7), (1, 4, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1),
             adaptive=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("vol,out", [((1, 1, 11), (1, 1, 4)), ((1, 1, 5), (1, 1, 9)),
                                     ((1, 7, 5), (1, 3, 7)), ((1, 30, 31), (1, 13, 17)),
                                     ((5, 7, 3), (2, 3, 4)), ((4, 4, 4), (4, 4, 4))])
def test_adaptive_bins(device, vol, out):
    x = np.random.default_rng(sum(vol)).standard_normal((2,) + vol)
    k = tuple(min(L, -(-L // o) + 1) for L, o in zip(vol, out))
    _compare(device, x, fw.float32, out, k, (1, 1, 1), (0, 0, 0), (1, 1, 1), adaptive=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [fw.float16, fw.bfloat16, fw.float64, fw.uint8, fw.int8,
                                   fw.int16, fw.int32, fw.int64])
def test_dtypes(device, dtype):
    rng = np.random.default_rng(0)
    if dtype.is_floating_point:
        x = rng.standard_normal((2, 1, 9, 10))
    else:
        info = np.iinfo(dtype.np)
        x = rng.integers(info.min, info.max, (2, 1, 9, 10), endpoint=True)
        x[0, 0, :3, :3] = info.min      # a window of the lowest value
    _compare(device, x, dtype, (1, 5, 5), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1))
    _compare(device, x, dtype, (1, 4, 3), (1, 3, 4), (1, 1, 1), (0, 0, 0), (1, 1, 1),
             adaptive=True)


@pytest.mark.parametrize("device", DEVICES)
def test_special_values(device):
    inf, nan = np.inf, np.nan
    x = np.array([[1.0, nan, 3.0, nan, 2.0, 0.0, 4.0], [-inf] * 7, [2.0, 5.0, 5.0, 1.0, 5.0, 0.0, 5.0],
                  [inf, 1.0, -inf, inf, nan, -inf, 1.0]])[:, None, None, :]
    for k, s, p, d in [(7, 7, 0, 1), (3, 1, 1, 1), (2, 2, 1, 1), (2, 1, 1, 3), (3, 2, 0, 2)]:
        out = (1, 1, _out(7, k, s, p, d, False))
        _compare(device, x, fw.float32, out, (1, 1, k), (1, 1, s), (0, 0, p), (1, 1, d))
    _compare(device, x, fw.float32, (1, 1, 3), (1, 1, 4), (1, 1, 1), (0, 0, 0), (1, 1, 1),
             adaptive=True)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_and_bool(device):
    x, v, i = _run(device, np.zeros((0, 1, 1, 4)), fw.float32, (1, 1, 2), (1, 1, 2), (1, 1, 2),
                   (0, 0, 0), (1, 1, 1))
    assert tuple(v.shape) == (0, 1, 1, 2)
    b = fw.ones((1, 1, 1, 4), dtype=fw.bool, device=device)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        _backend(device).max_pool(b, fw.empty((1, 1, 1, 2), dtype=fw.bool, device=device),
                                  fw.empty((1, 1, 1, 2), dtype=fw.int64, device=device), 1,
                                  (1, 1, 4), (1, 1, 2), (1, 1, 2), (1, 1, 2), (0, 0, 0),
                                  (1, 1, 1), False)


def test_cuda_mirrors_cpu():
    import framework.kernels.pool as K
    assert list(inspect.signature(C.max_pool).parameters) == \
        list(inspect.signature(K.max_pool).parameters)
