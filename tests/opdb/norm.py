"""Cases for the norm rows of ops.yaml (native_layer_norm, _fused_rms_norm,
native_group_norm, batch_norm_stats, batch_norm_elemt and their backward ops) against
NumPy float64 references. The full checks against torch are tests/nn/test_norm_fused.py."""
import numpy as np

from opdb import Case


def _x(fw, device, shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) + 1.0
    return fw.tensor(a, dtype=fw.float32, device=device), a


def _ln_ref(a, k, eps, rms=False):
    dims = tuple(range(a.ndim - k, a.ndim))
    m = 0.0 if rms else a.mean(dims, keepdims=True)
    v = ((a - m) ** 2).mean(dims, keepdims=True)
    r = 1 / np.sqrt(v + eps)
    return (a - m) * r, m, r


def _layer_norm(fw, device):
    t, a = _x(fw, device, (3, 4, 37))
    w, wa = _x(fw, device, (37,), 1)
    y, m, r = fw.native_layer_norm(t, [37], w, None, 1e-5)
    yr, mr, rr = _ln_ref(a, 1, 1e-5)
    return [(y, yr * wa), (m, mr), (r, rr)]


def _layer_norm_backward(fw, device):
    t, a = _x(fw, device, (5, 37))
    g, ga = _x(fw, device, (5, 37), 2)
    _, m, r = fw.native_layer_norm(t, [37], None, None, 1e-5)
    dx, dw, db = fw.native_layer_norm_backward(g, t, [37], m, r, None, None, 1e-5)
    xh, _, rr = _ln_ref(a, 1, 1e-5)
    dxr = rr * (ga - ga.mean(1, keepdims=True) - xh * (ga * xh).mean(1, keepdims=True))
    return [(dx, dxr), (dw, (ga * xh).sum(0)), (db, ga.sum(0))]


def _rms_norm(fw, device):
    t, a = _x(fw, device, (3, 40))
    y, r = fw._fused_rms_norm(t, [40], None, 1e-4)
    yr, _, rr = _ln_ref(a, 1, 1e-4, rms=True)
    return [(y, yr), (r, rr)]


def _rms_norm_backward(fw, device):
    t, a = _x(fw, device, (3, 40))
    g, ga = _x(fw, device, (3, 40), 2)
    _, r = fw._fused_rms_norm(t, [40], None, 1e-4)
    dx, dw = fw._fused_rms_norm_backward(g, t, [40], r, None, 1e-4)
    xh, _, rr = _ln_ref(a, 1, 1e-4, rms=True)
    return [(dx, rr * (ga - xh * (ga * xh).mean(1, keepdims=True))), (dw, (ga * xh).sum(0))]


def _gn_ref(a, g, eps):
    n = a.shape[0]
    xg = a.reshape(n, g, -1)
    m = xg.mean(2, keepdims=True)
    r = 1 / np.sqrt(xg.var(2, keepdims=True) + eps)
    return ((xg - m) * r).reshape(a.shape), m.reshape(n, g), r.reshape(n, g)


def _group_norm(fw, device):
    t, a = _x(fw, device, (2, 6, 5))
    y, m, r = fw.native_group_norm(t, None, None, 2, 6, 5, 3, 1e-5)
    yr, mr, rr = _gn_ref(a, 3, 1e-5)
    return [(y, yr), (m, mr), (r, rr)]


def _group_norm_backward(fw, device):
    t, a = _x(fw, device, (2, 6, 5))
    g, ga = _x(fw, device, (2, 6, 5), 2)
    _, m, r = fw.native_group_norm(t, None, None, 2, 6, 5, 3, 1e-5)
    _, dw, db = fw.native_group_norm_backward(g, t, m, r, None, 2, 6, 5, 3, 1e-5)
    xh, _, _ = _gn_ref(a, 3, 1e-5)
    return [(dw, (ga * xh).sum((0, 2))), (db, ga.sum((0, 2)))]


def _bn_stats(fw, device):
    t, a = _x(fw, device, (4, 3, 5))
    m, r = fw.batch_norm_stats(t, None, None, True, 0.1, 1e-5)
    return [(m, a.mean((0, 2))), (r, 1 / np.sqrt(a.var((0, 2)) + 1e-5))]


def _bn_elemt(fw, device):
    t, a = _x(fw, device, (4, 3, 5))
    m, r = fw.batch_norm_stats(t, None, None, True, 0.1, 1e-5)
    y = fw.batch_norm_elemt(t, None, None, m, r, True, 1e-5)
    return [(y, (a - a.mean((0, 2), keepdims=True)) / np.sqrt(a.var((0, 2), keepdims=True)
                                                               + 1e-5))]


def _bn_backward(fw, device):
    t, a = _x(fw, device, (4, 3, 5))
    g, ga = _x(fw, device, (4, 3, 5), 2)
    m, r = fw.batch_norm_stats(t, None, None, True, 0.1, 1e-5)
    dx, dw, db = fw.native_batch_norm_backward(g, t, None, m, r, True, 1e-5)
    mu = a.mean((0, 2), keepdims=True)
    rr = 1 / np.sqrt(a.var((0, 2), keepdims=True) + 1e-5)
    xh = (a - mu) * rr
    dxr = rr * (ga - ga.mean((0, 2), keepdims=True) - xh * (ga * xh).mean((0, 2), keepdims=True))
    return [(dx, dxr), (dw, (ga * xh).sum((0, 2))), (db, ga.sum((0, 2)))]


CASES = {
    "native_layer_norm": [Case(_layer_norm)],
    "native_layer_norm_backward": [Case(_layer_norm_backward)],
    "_fused_rms_norm": [Case(_rms_norm)],
    "_fused_rms_norm_backward": [Case(_rms_norm_backward)],
    "native_group_norm": [Case(_group_norm)],
    "native_group_norm_backward": [Case(_group_norm_backward)],
    "batch_norm_stats": [Case(_bn_stats)],
    "batch_norm_elemt": [Case(_bn_elemt)],
    "native_batch_norm_backward": [Case(_bn_backward)],
}
