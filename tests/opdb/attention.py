"""Cases for the attention rows of ops.yaml (_fused_sdpa, _fused_sdpa_backward) against
NumPy float64. (The full checks, against torch too, are tests/nn/test_sdpa_fused.py.)"""
import math

import numpy as np

from helpers import to_np
from opdb import Case


def _inputs(fw, device):
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s) for s in ((1, 2, 5, 8), (1, 1, 7, 8), (1, 1, 7, 4))]
    return arrs, [fw.tensor(a, dtype=fw.float64, device=device) for a in arrs]


def _probs(q, k, scale, causal):
    k = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True), s


def _forward(fw, device):
    (q, k, v), ts = _inputs(fw, device)
    out = []
    for causal in (False, True):
        p, s = _probs(q, k, 0.5, causal)
        o, lse = fw._fused_sdpa(ts, None, 0.0, causal, 0.5)
        m = s.max(-1)
        out.append((o, p @ np.repeat(v, 2, axis=1)))
        out.append((lse, m + np.log(np.exp(s - m[..., None]).sum(-1))))
    return out


def _backward(fw, device):
    (q, k, v), ts = _inputs(fw, device)
    scale = 1 / math.sqrt(8)
    o, lse = fw._fused_sdpa(ts, None, 0.0, False, scale)
    g = np.random.default_rng(1).standard_normal(o.shape)
    dq, dk, dv = fw._fused_sdpa_backward(fw.tensor(g, dtype=fw.float64, device=device), ts,
                                         None, o, lse, 0.0, False, scale, 0, 0)
    p, _ = _probs(q, k, scale, False)
    kr, vr = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
    dp = g @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (g * to_np(o)).sum(-1, keepdims=True))
    return [(dq, ds @ kr * scale),
            (dk, (np.swapaxes(ds, -1, -2) @ q * scale).sum(1, keepdims=True)),
            (dv, (np.swapaxes(p, -1, -2) @ g).sum(1, keepdims=True))]


CASES = {
    "_fused_sdpa": [Case(_forward)],
    "_fused_sdpa_backward": [Case(_backward)],
}
