"""CPU random-op benchmarks: the framework beside NumPy's Generator and PyTorch (when
installed), same run. Ratios > 1 mean the framework is faster. Speed is reported, never
asserted.

    python bench/random_ops.py [--repeat N] [--n N]
"""
import argparse
import os
import sys

import numpy as np

import framework as fw

sys.path.insert(0, os.path.dirname(__file__))
from cpu_ops import fmt_time, median_time  # noqa: E402

try:
    import torch
except ImportError:  # torch is an optional reference
    torch = None


def cases(n):
    """(name, framework fn, numpy fn, torch fn or None)."""
    rng = np.random.default_rng(0)
    t = torch
    f32 = np.float32
    return [
        ("rand f32", lambda: fw.rand(n), lambda: rng.random(n, dtype=f32),
         t and (lambda: t.rand(n))),
        ("randn f32", lambda: fw.randn(n), lambda: rng.standard_normal(n, dtype=f32),
         t and (lambda: t.randn(n))),
        ("randn f64", lambda: fw.randn(n, dtype=fw.float64), lambda: rng.standard_normal(n),
         t and (lambda: t.randn(n, dtype=t.float64))),
        ("randint [0,100) i64", lambda: fw.randint(0, 100, (n,)),
         lambda: rng.integers(0, 100, n), t and (lambda: t.randint(0, 100, (n,)))),
        ("bernoulli_(0.3) f32", lambda: fw.empty(n).bernoulli_(0.3),
         lambda: rng.random(n, dtype=f32) < 0.3, t and (lambda: t.empty(n).bernoulli_(0.3))),
        ("exponential_ f32", lambda: fw.empty(n).exponential_(),
         lambda: rng.standard_exponential(n, dtype=f32), t and (lambda: t.empty(n).exponential_())),
        ("randperm n/10", lambda: fw.randperm(n // 10), lambda: rng.permutation(n // 10),
         t and (lambda: t.randperm(n // 10))),
        ("multinomial 1000x100 k=10", lambda: fw.multinomial(fw.ones(1000, 100), 10),
         lambda: [rng.choice(100, 10, replace=False) for _ in range(1000)],
         t and (lambda: t.multinomial(t.ones(1000, 100), 10))),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--n", type=int, default=4_000_000)
    args = p.parse_args()
    for name, f_fw, f_np, f_t in cases(args.n):
        t_fw = median_time(f_fw, args.repeat)
        t_np = median_time(f_np, args.repeat)
        t_t = median_time(f_t, args.repeat) if f_t else None
        print(f"{name:28s} framework {fmt_time(t_fw)}  numpy {fmt_time(t_np)}  "
              f"np/fw {t_np / t_fw:5.2f}x" +
              (f"  torch {fmt_time(t_t)}  torch/fw {t_t / t_fw:5.2f}x" if t_t else ""),
              flush=True)
    print(f"\nthreads: framework {fw.get_num_threads()}"
          + (f", torch {torch.get_num_threads()}" if torch else ""))


if __name__ == "__main__":
    main()
