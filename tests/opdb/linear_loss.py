"""Cases for nn.functional.linear_cross_entropy (framework/_ops/linear_loss.py) against a
NumPy log-softmax of the projected logits."""
import numpy as np

from opdb import Case


def _ref(x, w, b, t):
    z = x @ w.T + b
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -logp[np.arange(len(t)), t]


def _lce(fw, d):
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((6, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    t = rng.integers(0, 5, 6)
    T = lambda a: fw.tensor(a, device=d)  # noqa: E731
    f = fw.nn.functional.linear_cross_entropy
    ref = _ref(x, w, b, t)
    return [(f(T(x), T(w), T(t), linear_bias=T(b), reduction="none"), ref),
            (f(T(x), T(w), T(t), linear_bias=T(b)), ref.mean()),
            (f(T(x), T(w), T(t), linear_bias=T(b), reduction="sum", ignore_index=2),
             ref[t != 2].sum())]


CASES = {"nn.functional.linear_cross_entropy": [Case(_lce)]}
