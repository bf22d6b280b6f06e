"""CPU op benchmarks: the framework beside NumPy and PyTorch (when installed), same run.

Prints the median time of each and the ratios numpy/framework and torch/framework
(> 1 means the framework is faster). Speed is reported, never asserted.

    python bench/cpu_ops.py [--repeat N] [--markdown]
"""
import argparse

import numpy as np

import framework as fw
from _timing import median_time

try:
    import torch
except ImportError:  # torch is an optional reference
    torch = None


def cases():
    """(name, framework fn, numpy fn, torch fn or None) with inputs built once."""
    rng = np.random.default_rng(0)
    n = 1 << 22
    x_np = rng.standard_normal(n, dtype=np.float32)
    y_np = rng.standard_normal(n, dtype=np.float32)
    m_np = rng.standard_normal((4096, 1024), dtype=np.float32)
    r_np = rng.standard_normal(1024, dtype=np.float32)
    x, y, m, r = (fw.from_numpy(a) for a in (x_np, y_np, m_np, r_np))
    tx, ty, tm, tr = ((torch.from_numpy(a) for a in (x_np, y_np, m_np, r_np)) if torch
                      else (None,) * 4)
    one_np = np.ones(1, np.float32)
    one, t_one = fw.ones(1), (torch.ones(1) if torch else None)
    T = torch is not None

    out = [
        ("add 4M f32", lambda: x + y, lambda: x_np + y_np, T and (lambda: tx + ty)),
        ("mul 4M f32", lambda: x * y, lambda: x_np * y_np, T and (lambda: tx * ty)),
        ("add 4096x1024 + 1024", lambda: m + r, lambda: m_np + r_np, T and (lambda: tm + tr)),
        ("exp 4M f32", lambda: fw.exp(x), lambda: np.exp(x_np), T and (lambda: torch.exp(tx))),
    ]
    if hasattr(fw, "sin"):
        out.append(("chain (x*2+1).sin()*y 4M", lambda: ((x * 2 + 1).sin() * y),
                    lambda: np.sin(x_np * 2 + 1) * y_np,
                    T and (lambda: (tx * 2 + 1).sin() * ty)))
    if hasattr(fw, "sum"):
        out += [
            ("sum 4M f32", lambda: x.sum(), lambda: x_np.sum(), T and (lambda: tx.sum())),
            ("sum dim1 4096x1024", lambda: m.sum(1), lambda: m_np.sum(1),
             T and (lambda: tm.sum(1))),
        ]
    if hasattr(fw, "argmax"):
        out.append(("argmax 4M f32", lambda: x.argmax(), lambda: x_np.argmax(),
                    T and (lambda: tx.argmax())))
    if hasattr(fw, "amax") and hasattr(fw, "sum"):
        def fw_soft():
            e = (m - m.amax(1, keepdim=True)).exp()
            return e.sum(1)

        def np_soft():
            e = np.exp(m_np - m_np.max(1, keepdims=True))
            return e.sum(1)

        def t_soft():
            e = (tm - tm.amax(1, keepdim=True)).exp()
            return e.sum(1)
        out.append(("max-sub-exp-sum 4096x1024", fw_soft, np_soft, T and t_soft))
    if hasattr(fw, "matmul"):
        for s in (256, 1024, 2048):
            a_np = rng.standard_normal((s, s), dtype=np.float32)
            b_np = rng.standard_normal((s, s), dtype=np.float32)
            a, b = fw.from_numpy(a_np), fw.from_numpy(b_np)
            ta, tb = (torch.from_numpy(a_np), torch.from_numpy(b_np)) if T else (None, None)
            out.append((f"matmul f32 {s}", lambda a=a, b=b: a @ b,
                        lambda a=a_np, b=b_np: a @ b, T and (lambda a=ta, b=tb: a @ b)))
    # mid-size tensors (a layer's activations): the thread pool's hand-over cost shows here
    s_np = rng.standard_normal((64, 1024), dtype=np.float32)
    s, ts = fw.from_numpy(s_np), (torch.from_numpy(s_np) if T else None)
    out.append(("mul 64x1024 (256 KiB)", lambda: s * s, lambda: s_np * s_np,
                T and (lambda: ts * ts)))
    out.append(("sum dim0 64x1024", lambda: s.sum(0), lambda: s_np.sum(0),
                T and (lambda: ts.sum(0))))
    out.append(("add 1 element (overhead)", lambda: one + one, lambda: one_np + one_np,
                T and (lambda: t_one + t_one)))
    return out


def fmt_time(s):
    return f"{s * 1e6:9.2f} us" if s < 1e-3 else f"{s * 1e3:9.3f} ms"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = p.parse_args()
    rows = []
    for name, f_fw, f_np, f_t in cases():
        t_fw = median_time(f_fw, args.repeat)
        t_np = median_time(f_np, args.repeat)
        t_t = median_time(f_t, args.repeat) if f_t else None
        rows.append((name, t_fw, t_np, t_t))
        if not args.markdown:
            print(f"{name:28s} framework {fmt_time(t_fw)}  numpy {fmt_time(t_np)}  "
                  f"np/fw {t_np / t_fw:5.2f}x" +
                  (f"  torch {fmt_time(t_t)}  torch/fw {t_t / t_fw:5.2f}x" if t_t else ""),
                  flush=True)
    if args.markdown:
        print("| op | framework | numpy | torch | numpy/fw | torch/fw |")
        print("|---|---|---|---|---|---|")
        for name, t_fw, t_np, t_t in rows:
            tt = fmt_time(t_t).strip() if t_t else "n/a"
            rt = f"{t_t / t_fw:.2f}x" if t_t else "n/a"
            print(f"| {name} | {fmt_time(t_fw).strip()} | {fmt_time(t_np).strip()} | {tt} | "
                  f"{t_np / t_fw:.2f}x | {rt} |")
    print(f"\nthreads: framework {fw.get_num_threads()}"
          + (f", torch {torch.get_num_threads()}" if torch else ""))


if __name__ == "__main__":
    main()
