"""Cases for the fused_linear row of ops.yaml (_fused_linear) against NumPy float64. (The full
checks, gradients and torch included, are tests/nn/test_fused_linear.py.)"""
import math

import numpy as np

from opdb import Case


def _act(y, activation):
    if activation == "relu":
        return np.maximum(y, 0)
    if activation == "gelu":
        erf = np.vectorize(math.erf)
        return 0.5 * y * (1 + erf(y / math.sqrt(2)))
    if activation == "gelu_tanh":
        return 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y ** 3)))
    if activation == "silu":
        return y / (1 + np.exp(-y))
    return y


def _forward(fw, device):
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 5)), rng.standard_normal((4, 5)), rng.standard_normal(4)
    fx, fwt, fb = (fw.tensor(a, dtype=fw.float64, device=device) for a in (x, w, b))
    pre = x @ w.T + b
    out = []
    for activation in ("none", "relu", "gelu", "gelu_tanh", "silu"):
        y, saved = fw._fused_linear(fx, fwt, fb, activation)
        out.append((y, _act(pre, activation)))
        if activation in ("gelu", "gelu_tanh", "silu"):
            out.append((saved, pre))
    y, _ = fw._fused_linear(fx, fwt, None, "relu")
    out.append((y, np.maximum(x @ w.T, 0)))
    return out


CASES = {
    "_fused_linear": [Case(_forward)],
}
