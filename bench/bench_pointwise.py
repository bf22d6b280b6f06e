"""Pointwise ops on 4M float32 elements: framework vs NumPy vs PyTorch (CPU), medians.

Run: python bench/bench_pointwise.py [--repeat N] [--threads T]
NumPy runs on one thread; --threads 1 compares the kernels themselves, the default (the
pool's size) shows what users get. On a machine shared with other jobs, prefer --threads 1:
a descheduled worker thread stalls every parallel call.
"""
import argparse
import time

import numpy as np

import framework as fw
import framework.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the table just leaves the column out
    torch = None

N = 4096 * 1024


def timings_ms(fn, repeat):
    """(median, min) wall time of fn in ms; the min shows the kernel without the time
    slices lost to other processes on a shared machine."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times)), 1e3 * min(times)


def np_gelu(x):
    # NumPy has no erf; this tanh form is the cheapest faithful NumPy equivalent
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    if args.threads:
        fw.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    a2, row = a.reshape(4096, 1024), b[:1024].copy()
    x, y = fw.from_numpy(a), fw.from_numpy(b)
    x2, r = fw.from_numpy(a2), fw.from_numpy(row)
    cases = [
        ("add", lambda: x + y, lambda: a + b, "t_add"),
        ("mul", lambda: x * y, lambda: a * b, "t_mul"),
        ("add 4096x1024 + 1024", lambda: x2 + r, lambda: a2 + row, "t_badd"),
        ("exp", lambda: fw.exp(x), lambda: np.exp(a), "t_exp"),
        ("sin", lambda: fw.sin(x), lambda: np.sin(a), "t_sin"),
        ("tanh", lambda: fw.tanh(x), lambda: np.tanh(a), "t_tanh"),
        ("sigmoid", lambda: fw.sigmoid(x), lambda: 1 / (1 + np.exp(-a)), "t_sigmoid"),
        ("gelu", lambda: F.gelu(x), lambda: np_gelu(a), "t_gelu"),
        ("(x*2+1).sin()*y", lambda: (x * 2 + 1).sin() * y, lambda: np.sin(a * 2 + 1) * b,
         "t_chain"),
    ]
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        ta2, tr = torch.from_numpy(a2), torch.from_numpy(row)
        tcases = {"t_add": lambda: ta + tb, "t_mul": lambda: ta * tb, "t_badd": lambda: ta2 + tr,
                  "t_exp": lambda: torch.exp(ta), "t_sin": lambda: torch.sin(ta),
                  "t_tanh": lambda: torch.tanh(ta), "t_sigmoid": lambda: torch.sigmoid(ta),
                  "t_gelu": lambda: TF.gelu(ta),
                  "t_chain": lambda: (ta * 2 + 1).sin() * tb}
    print(f"4M float32, median (min) of {args.repeat} runs in ms; framework threads: "
          f"{fw.get_num_threads()}" + (f", torch threads: {torch.get_num_threads()}" if torch else ""))
    head = f"{'op':22s} {'framework':>15s} {'numpy':>15s} {'np/fw':>6s}"
    print(head + (f" {'torch':>15s} {'torch/fw':>8s}" if torch else ""))
    for name, f_fw, f_np, key in cases:
        (m_fw, b_fw), (m_np, b_np) = timings_ms(f_fw, args.repeat), timings_ms(f_np, args.repeat)
        line = f"{name:22s} {m_fw:7.2f} ({b_fw:5.2f}) {m_np:7.2f} ({b_np:5.2f}) {m_np / m_fw:6.2f}"
        if torch is not None:
            m_t, b_t = timings_ms(tcases[key], args.repeat)
            line += f" {m_t:7.2f} ({b_t:5.2f}) {m_t / m_fw:8.2f}"
        print(line)


if __name__ == "__main__":
    main()
