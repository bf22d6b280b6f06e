"""Cases for the grouped_mm row of ops.yaml (nn.functional.grouped_mm) against a float64
NumPy loop over the groups. (The full checks, torch, gradients and errors included, are
tests/test_grouped_mm.py.)"""
import numpy as np

from opdb import Case


def _layouts(fw, device):
    rng = np.random.default_rng(0)
    offs = np.array([3, 3, 20], np.int32)     # an empty group; 2 rows past offs[-1]
    a2, b3 = rng.standard_normal((22, 16)), rng.standard_normal((3, 16, 24))
    a3, b2 = rng.standard_normal((3, 5, 16)), rng.standard_normal((16, 22))
    k2a, k2b = rng.standard_normal((5, 22)), rng.standard_normal((22, 24))
    t = lambda x: fw.tensor(x, dtype=fw.float32, device=device)  # noqa: E731
    o = fw.tensor(offs, device=device)
    f = fw.nn.functional.grouped_mm
    ref_rows, ref_cols = np.zeros((22, 24)), np.zeros((5, 22))
    ref_k = np.zeros((3, 5, 24))
    for g, (s, e) in enumerate(zip([0, 3, 3], offs)):
        ref_rows[s:e] = a2[s:e] @ b3[g]
        ref_cols[:, s:e] = a3[g] @ b2[:, s:e]
        ref_k[g] = k2a[:, s:e] @ k2b[s:e]
    return [(f(t(a2), t(b3), offs=o), ref_rows),
            (f(t(a3), t(b3), offs=None), a3 @ b3),
            (f(t(k2a), t(k2b), offs=o), ref_k),
            (f(t(a3), t(b2), offs=o), ref_cols)]


CASES = {
    "nn.functional.grouped_mm": [Case(_layouts)],
}
