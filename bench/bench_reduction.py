"""Reduction benchmarks on the CPU: framework vs NumPy vs PyTorch (if installed), medians of
repeated runs in the same process. Prints times in ms and the ratio framework/numpy."""
import statistics
import time

import numpy as np

import framework as fw

try:
    import torch
except ImportError:  # torch is only a reference here
    torch = None


def median_ms(fns, repeat=40, warmup=3):
    """Median time of each function in ms; the functions take turns so that load from other
    processes on the machine affects them alike."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) * 1e3 for ts in times]


def cases():
    rng = np.random.default_rng(0)
    v = rng.standard_normal(4 * 1024 * 1024).astype(np.float32)
    m = rng.standard_normal((4096, 1024)).astype(np.float32)
    yield "sum 4M f32", v, lambda x: x.sum(), lambda a: a.sum(), lambda t: t.sum()
    yield "sum dim1 4096x1024", m, lambda x: x.sum(1), lambda a: a.sum(1), lambda t: t.sum(1)
    yield "sum dim0 4096x1024", m, lambda x: x.sum(0), lambda a: a.sum(0), lambda t: t.sum(0)
    yield "argmax 4M f32", v, lambda x: x.argmax(), lambda a: a.argmax(), lambda t: t.argmax()
    yield ("amax dim1 4096x1024", m, lambda x: fw.amax(x, 1), lambda a: a.max(1),
           lambda t: torch.amax(t, 1))
    yield "mean dim1 4096x1024", m, lambda x: x.mean(1), lambda a: a.mean(1), lambda t: t.mean(1)
    yield ("sum dim1 of transpose", m, lambda x: x.T.sum(1), lambda a: a.T.sum(1),
           lambda t: t.T.sum(1))
    yield ("var dim1 4096x1024", m, lambda x: x.var(1), lambda a: a.var(1, ddof=1),
           lambda t: t.var(1))
    yield "max dim0 4096x1024", m, lambda x: x.max(0), lambda a: (a.max(0), a.argmax(0)), \
        lambda t: t.max(0)


def main():
    print(f"threads: framework {fw.get_num_threads()}"
          + (f", torch {torch.get_num_threads()}" if torch else ""))
    print(f"{'case':26s} {'framework':>10s} {'numpy':>10s} {'torch':>10s} {'fw/np':>7s}")
    for name, arr, f_fw, f_np, f_t in cases():
        x = fw.from_numpy(arr)
        t_fw, t_np = median_ms([lambda: f_fw(x), lambda: f_np(arr)])
        # torch runs apart: its idle OpenMP threads spin and would slow the others down
        t_t = median_ms([lambda: f_t(tt)])[0] if torch and (tt := torch.from_numpy(arr)) \
            is not None else float("nan")
        print(f"{name:26s} {t_fw:10.3f} {t_np:10.3f} {t_t:10.3f} {t_fw / t_np:7.2f}")


if __name__ == "__main__":
    main()
