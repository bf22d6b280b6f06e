"""Benchmark of the CPU matrix products: framework vs NumPy vs PyTorch (where installed),
median wall time of float32 products, all in this process. Prints a table; asserts nothing.

Each library runs its repetitions in one block, with a pause before the block, because
every library keeps its own BLAS/OpenMP thread pool and a pool that is still spinning
from the previous block would steal cores from the next one.

    python bench/bench_linalg.py [--reps N]     (framework installed, or PYTHONPATH=.)
"""
import argparse
import time

import numpy as np

import framework as fw

try:
    import torch
except ImportError:  # torch is only a reference
    torch = None

CASES = [  # (label, shape a, shape b)
    ("matmul 256", (256, 256), (256, 256)),
    ("matmul 1024", (1024, 1024), (1024, 1024)),
    ("matmul 2048", (2048, 2048), (2048, 2048)),
    ("bmm 512x32^3", (512, 32, 32), (512, 32, 32)),
    ("mv 4096", (4096, 4096), (4096,)),
]


def median_time(fn, reps):
    time.sleep(0.3)
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=0, help="repetitions (default: by size)")
    args = parser.parse_args()
    if torch is not None:
        torch.set_num_threads(fw.get_num_threads())
    print(f"threads: framework {fw.get_num_threads()}, OpenBLAS {fw._C.blas_num_threads()}"
          + (f", torch {torch.get_num_threads()}" if torch is not None else ""))
    head = f"{'case':16} {'framework ms':>13} {'numpy ms':>10} {'torch ms':>10} " \
           f"{'np/fw':>7} {'torch/fw':>9} {'fw GFLOP/s':>11}"
    print(head)
    print("-" * len(head))
    rng = np.random.default_rng(0)
    for label, sa, sb in CASES:
        na = rng.standard_normal(sa, dtype=np.float32)
        nb = rng.standard_normal(sb, dtype=np.float32)
        flops = 2 * np.prod(np.matmul(na, nb).shape) * sa[-1]
        reps = args.reps or max(3, min(200, int(2e10 / flops)))
        a, b = fw.from_numpy(na), fw.from_numpy(nb)
        t_fw = median_time(lambda: fw.matmul(a, b), reps)
        t_np = median_time(lambda: np.matmul(na, nb), reps)
        t_t = float("nan")
        if torch is not None:
            ta, tb = torch.from_numpy(na), torch.from_numpy(nb)
            t_t = median_time(lambda: torch.matmul(ta, tb), reps)
        print(f"{label:16} {t_fw * 1e3:13.3f} {t_np * 1e3:10.3f} {t_t * 1e3:10.3f} "
              f"{t_np / t_fw:7.2f} {t_t / t_fw:9.2f} {flops / t_fw / 1e9:11.1f}")


if __name__ == "__main__":
    main()
