"""Cases for the _autocast_linear rows of ops.yaml against NumPy float64 (operands rounded
to bfloat16 as autocast's casts round them). The full checks (bit for bit against the
unfused casts, gradients, launches) are tests/amp/test_autocast_linear.py."""
import numpy as np

from opdb import Case


def _bf16(a):
    """float64 values rounded to bfloat16 (nearest even), as float64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _inputs(fw, device):
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s) for s in ((2, 3, 5), (4, 5), (4,))]
    return arrs, [fw.tensor(a, dtype=fw.float32, device=device) for a in arrs]


def _forward(fw, device):
    (x, w, b), (tx, tw, tb) = _inputs(fw, device)
    ref = _bf16(x) @ _bf16(w).T
    return [(fw._autocast_linear(tx, tw, tb, fw.bfloat16), ref + _bf16(b)),
            (fw._autocast_linear(tx, tw, None, fw.bfloat16), ref),
            (fw._autocast_linear(tx.double(), tw.double(), tb.double(), fw.float64),
             _f32(x) @ _f32(w).T + _f32(b))]


def _f32(a):
    return a.astype(np.float32).astype(np.float64)


def _backward(fw, device):
    (x, w, b), (tx, tw, tb) = _inputs(fw, device)
    g = _bf16(np.random.default_rng(1).standard_normal((2, 3, 4)))
    tg = fw.tensor(g, dtype=fw.bfloat16, device=device)
    gi, gw, gb = fw._autocast_linear_backward(tg, tx, tw, tb, fw.bfloat16, (True, True, True))
    assert gi.dtype is gw.dtype is gb.dtype is fw.float32
    none = fw._autocast_linear_backward(tg, tx, tw, None, fw.bfloat16, (False, True, False))
    assert none[0] is None and none[2] is None
    # float32 gradients holding bfloat16 values: compared at bfloat16's tolerance
    return [(t.to(fw.bfloat16), ref) for t, ref in (
        (gi, g @ _bf16(w)), (gw, g.reshape(6, 4).T @ _bf16(x).reshape(6, 5)),
        (gb, g.sum((0, 1))), (none[1], g.reshape(6, 4).T @ _bf16(x).reshape(6, 5)))]


CASES = {
    "_autocast_linear": [Case(_forward)],
    "_autocast_linear_backward": [Case(_backward)],
}
