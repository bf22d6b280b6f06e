"""Index ops on the CPU: the framework beside PyTorch (and NumPy where it has the op), as
times and ratios. No assertions; run `python bench/index_ops.py`."""
import time

import numpy as np

import framework as fw

try:
    import torch
except ImportError:
    torch = None


def _time(fn, reps=None):
    fn()
    t0 = time.perf_counter()
    n = 0
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if (reps and n >= reps) or (not reps and (dt > 0.2 and n >= 3)):
            return dt / n


def main():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((20000, 256)).astype(np.float32)
    rows = rng.integers(0, 20000, 8000)
    cols = rng.integers(0, 256, 128)
    mask = a[:, 0] > 0
    big_mask = a > 0
    gidx = rng.integers(0, 256, (20000, 32))
    sidx = rng.integers(0, 1000, 2_000_000)
    ones = np.ones(2_000_000, np.float32)
    seg = rng.integers(0, 1000, 100000)
    seg2 = np.repeat(seg[:, None], 64, 1)
    vals = rng.standard_normal((100000, 64)).astype(np.float32)
    x, r, c, m, bm = (fw.tensor(a), fw.tensor(rows), fw.tensor(cols), fw.tensor(mask),
                      fw.tensor(big_mask))
    g, si, on = fw.tensor(gidx), fw.tensor(sidx), fw.tensor(ones)
    sg, sg2, va = fw.tensor(seg), fw.tensor(seg2), fw.tensor(vals)
    cases = [
        ("x[rows]", lambda: x[r], lambda T: T["x"][T["r"]], lambda: a[rows]),
        ("x[:, cols]", lambda: x[:, c], lambda T: T["x"][:, T["c"]], lambda: a[:, cols]),
        ("x[mask]", lambda: x[m], lambda T: T["x"][T["m"]], lambda: a[mask]),
        ("x[big_mask]", lambda: x[bm], lambda T: T["x"][T["bm"]], lambda: a[big_mask]),
        ("x[rows] = 0", lambda: x.__setitem__(r, 0.0),
         lambda T: T["x"].__setitem__(T["r"], 0.0), None),
        ("index_select 0", lambda: x.index_select(0, r),
         lambda T: T["x"].index_select(0, T["r"]), None),
        ("gather 1", lambda: x.gather(1, g), lambda T: T["x"].gather(1, T["g"]),
         lambda: np.take_along_axis(a, gidx, 1)),
        ("scatter_add 2M->1K", lambda: fw.zeros(1000).scatter_add_(0, si, on),
         lambda T: torch.zeros(1000).scatter_add_(0, T["si"], T["on"]),
         lambda: np.add.at(np.zeros(1000, np.float32), sidx, ones)),
        ("scatter_add dim0 2-d", lambda: fw.zeros(1000, 64).scatter_add_(0, sg2, va),
         lambda T: torch.zeros(1000, 64).scatter_add_(0, T["sg2"], T["va"]), None),
        ("index_put_ acc", lambda: fw.zeros(1000, 64).index_put_((sg,), va, accumulate=True),
         lambda T: torch.zeros(1000, 64).index_put_((T["sg"],), T["va"], accumulate=True),
         None),
        ("index_add rows", lambda: x.index_add(0, r, x[:8000]),
         lambda T: T["x"].index_add(0, T["r"], T["x"][:8000]), None),
        ("nonzero", lambda: fw.nonzero(bm), lambda T: torch.nonzero(T["bm"]),
         lambda: np.argwhere(big_mask)),
        ("masked_fill", lambda: x.masked_fill(bm, 0.0),
         lambda T: T["x"].masked_fill(T["bm"], 0.0), None),
        ("tril", lambda: x[:4096, :256].tril(), lambda T: T["x"][:4096, :256].tril(), None),
    ]
    T = None
    if torch is not None:
        T = {"x": torch.tensor(a), "r": torch.tensor(rows), "c": torch.tensor(cols),
             "m": torch.tensor(mask), "bm": torch.tensor(big_mask), "g": torch.tensor(gidx),
             "si": torch.tensor(sidx), "on": torch.tensor(ones), "sg": torch.tensor(seg),
             "sg2": torch.tensor(seg2), "va": torch.tensor(vals)}
    print(f"{'op':<22}{'framework ms':>14}{'torch ms':>10}{'ratio':>8}{'numpy ms':>10}")
    for name, f, tf, nf in cases:
        tf_ms = _time(f) * 1e3
        tt_ms = _time(lambda: tf(T)) * 1e3 if T else float("nan")
        tn_ms = _time(nf) * 1e3 if nf else float("nan")
        print(f"{name:<22}{tf_ms:>14.3f}{tt_ms:>10.3f}{tf_ms / tt_ms:>8.2f}{tn_ms:>10.3f}")


if __name__ == "__main__":
    main()
