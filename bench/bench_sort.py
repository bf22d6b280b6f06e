"""Sort-family benchmarks on the CPU: the framework beside NumPy and PyTorch (when
installed), same run, median times and ratios (> 1 means the framework is faster).
Speed is reported, never asserted.

    python bench/bench_sort.py [--repeat N] [--threads N]
"""
import argparse

import numpy as np

import framework as fw
from _timing import median_time

try:
    import torch
except ImportError:  # torch is an optional reference
    torch = None


def _np_topk(a, k):
    part = np.argpartition(-a, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(a, part, 1)
    order = np.argsort(-vals, axis=1, kind="stable")
    return np.take_along_axis(vals, order, 1), np.take_along_axis(part, order, 1)


def cases():
    """(name, framework fn, numpy fn, torch fn or None), inputs built once."""
    rng = np.random.default_rng(0)
    s_np = rng.standard_normal(1 << 20, dtype=np.float32)
    c_np = rng.standard_normal(1 << 22, dtype=np.float32)
    m_np = rng.standard_normal((4096, 1024), dtype=np.float32)
    r_np = rng.standard_normal((1024, 4096), dtype=np.float32)
    i_np = rng.integers(0, 1000, 1 << 20)
    s, c, m, r, i = (fw.from_numpy(a) for a in (s_np, c_np, m_np, r_np, i_np))
    T = torch is not None
    ts, tc, tm, tr, ti = ((torch.from_numpy(a) for a in (s_np, c_np, m_np, r_np, i_np)) if T
                          else (None,) * 5)
    return [
        ("sort 1M f32", lambda: fw.sort(s), lambda: (np.sort(s_np), np.argsort(s_np, kind="stable")),
         T and (lambda: torch.sort(ts))),
        ("sort 1M f32 stable", lambda: fw.sort(s, stable=True),
         lambda: np.argsort(s_np, kind="stable"), T and (lambda: torch.sort(ts, stable=True))),
        ("sort 4096x1024 dim1", lambda: fw.sort(m, 1), lambda: np.argsort(m_np, 1, kind="stable"),
         T and (lambda: torch.sort(tm, 1))),
        ("cumsum 4M f32", lambda: fw.cumsum(c, 0), lambda: np.cumsum(c_np),
         T and (lambda: torch.cumsum(tc, 0))),
        ("cumsum 1024x4096 dim0", lambda: fw.cumsum(r, 0), lambda: np.cumsum(r_np, 0),
         T and (lambda: torch.cumsum(tr, 0))),
        ("topk k=10 4096x1024", lambda: fw.topk(m, 10), lambda: _np_topk(m_np, 10),
         T and (lambda: torch.topk(tm, 10))),
        ("median dim1 4096x1024", lambda: fw.median(m, 1), lambda: np.median(m_np, 1),
         T and (lambda: torch.median(tm, 1))),
        ("unique 1M int64 (1000 values)", lambda: fw.unique(i, return_counts=True),
         lambda: np.unique(i_np, return_counts=True),
         T and (lambda: torch.unique(ti, return_counts=True))),
        ("bincount 1M int64", lambda: fw.bincount(i), lambda: np.bincount(i_np),
         T and (lambda: torch.bincount(ti))),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="framework and torch threads")
    args = ap.parse_args()
    if args.threads:
        fw.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    print(f"threads: framework {fw.get_num_threads()}"
          + (f", torch {torch.get_num_threads()}" if torch is not None else ""))
    head = (f"{'case':32s} {'framework':>11s} {'numpy':>11s} {'torch':>11s} {'np/fw':>7s} "
            f"{'torch/fw':>8s}")
    print(head)
    print("-" * len(head))
    for name, f_fw, f_np, f_t in cases():
        t_fw = median_time(f_fw, args.repeat)
        t_np = median_time(f_np, args.repeat)
        t_t = median_time(f_t, args.repeat) if f_t else None
        ts = f"{t_t * 1e3:9.3f}ms" if t_t else f"{'-':>11s}"
        rt = f"{t_t / t_fw:8.2f}" if t_t else f"{'-':>8s}"
        print(f"{name:32s} {t_fw * 1e3:9.3f}ms {t_np * 1e3:9.3f}ms {ts} {t_np / t_fw:7.2f} {rt}")


if __name__ == "__main__":
    main()
