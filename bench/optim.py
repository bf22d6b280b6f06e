"""One Adam and one AdamW step beside PyTorch in the same process: single-tensor
(foreach=False), foreach=True and fused=True. On the CPU ~12M float32 parameters in ~150
tensors; on cuda GPT-2 small's 124M parameters in 148 tensors. The framework is timed first,
then torch is imported. Prints ms per step (median), the framework/torch ratios, and the
bandwidth the step reaches (Adam reads param, grad and two moments and writes param and the
moments: 28 bytes a float32 parameter).

    python bench/optim.py [--device cpu|cuda] [--repeat N] [--threads N] [--quick]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402


def shapes(device="cpu"):
    """On the CPU 150 tensors, ~12.3M elements: 37 blocks of (256x256, 256x512, 512x256,
    512), an embedding-like (2048x64) and a bias. On cuda GPT-2 small (124M, 148 tensors):
    token and position embeddings, 12 blocks of two LayerNorms, the attention and MLP
    matrices and biases, and the final LayerNorm."""
    if device.startswith("cuda"):
        d = 768
        out = [(50257, d), (1024, d)]
        for _ in range(12):
            out += [(d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,),
                    (4 * d, d), (4 * d,), (d, 4 * d), (d,)]
        return out + [(d,), (d,)]
    out = []
    for _ in range(37):
        out += [(256, 256), (256, 512), (512, 256), (512,)]
    out += [(2048, 64), (4096,)]
    return out


MODES = [("single", dict(foreach=False)), ("foreach", dict(foreach=True)),
         ("fused", dict(fused=True))]


def run(T, device, repeat):
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal(s).astype(np.float32) for s in shapes(device)]
    res = {}
    for opt_name in ("Adam", "AdamW"):
        for mode, kw in MODES:
            params = [T.nn.Parameter(T.tensor(v, device=device)) for v in vals]
            for p in params:
                p.grad = T.ones_like(p) * 1e-3
            opt = getattr(T.optim, opt_name)(params, lr=1e-3, weight_decay=1e-2, **kw)

            def step():
                opt.step()
                if device == "cuda":
                    T.cuda.synchronize()
            res[(opt_name, mode)] = median_time(step, repeat) * 1e3
            del opt, params
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads for both")
    ap.add_argument("--quick", action="store_true", help="3 samples")
    args = ap.parse_args()
    if args.quick:
        args.repeat = 3
    if args.threads:
        fw.set_num_threads(args.threads)
    n = sum(int(np.prod(s)) for s in shapes(args.device))
    print(f"{len(shapes(args.device))} tensors, {n / 1e6:.1f}M float32 params, device {args.device}, "
          f"{fw.get_num_threads()} threads")
    mine = run(fw, args.device, args.repeat)
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    theirs = run(torch, args.device, args.repeat)
    print(f"{'optimizer':9} {'mode':8} {'framework ms':>13} {'GB/s':>7} {'torch ms':>9} "
          f"{'GB/s':>7} {'ratio':>6}")
    for (o, m), t in mine.items():
        th = theirs[(o, m)]
        print(f"{o:9} {m:8} {t:13.2f} {28 * n / t / 1e6:7.1f} {th:9.2f} "
              f"{28 * n / th / 1e6:7.1f} {t / th:6.2f}")


if __name__ == "__main__":
    main()
