"""Fused cross-entropy (class indices) beside PyTorch: forward and forward+backward, the same
code run with ``T = framework`` and ``T = torch`` on the same device, medians. On cuda also
GB/s (logits read once forward; read once and gradient written once backward) and the peak
memory of forward+backward above the logits (``cuda.max_memory_allocated``).

    python bench/fused_loss.py [--device cpu|cuda] [--quick] [--threads N]

Shapes: batch 8192 with vocabularies 50,257 and 128,256 (the issue's); --quick uses 4096 x
32,000 and 4096 x 50,257 (CPU-sized).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402

FULL = [(8192, 50257), (8192, 128256)]
QUICK = [(4096, 32000), (4096, 50257)]


def _sync(T, device):
    if device == "cuda":
        T.cuda.synchronize()


def case(T, device, n, c, dtype, backward):
    x = T.randn(n, c, device=device, dtype=getattr(T, dtype)).requires_grad_(backward)
    y = T.randint(0, c, (n,), device=device)

    def run():
        loss = T.nn.functional.cross_entropy(x, y)
        if backward:
            loss.backward()
            x.grad = None
        _sync(T, device)
    return run, x


def peak_above_logits(T, device, n, c, dtype):
    """Peak bytes allocated during one forward+backward, minus the logits' own bytes."""
    run, x = case(T, device, n, c, dtype, True)
    run()
    _sync(T, device)
    T.cuda.reset_peak_memory_stats()
    base = T.cuda.memory_allocated()
    run()
    return T.cuda.max_memory_allocated() - base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    try:
        import torch
        if args.device == "cuda" and not torch.cuda.is_available():
            torch = None        # (a CPU-only torch: the framework alone)
    except ImportError:
        torch = None
    if args.device == "cpu":
        fw.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    shapes = QUICK if args.quick else FULL
    libs = [("framework", fw)] + ([("torch", torch)] if torch is not None else [])
    item = 2 if args.dtype in ("float16", "bfloat16") else 4
    print(f"cross_entropy, {args.dtype}, device {args.device}"
          + (f", {args.threads} threads" if args.device == "cpu" else ""))
    print(f"{'shape':>16} {'pass':>8} " + " ".join(f"{name:>12}" for name, _ in libs)
          + f" {'fw/torch':>9}" + (f" {'fw GB/s':>8}" if args.device == "cuda" else ""))
    for n, c in shapes:
        for backward in (False, True):
            times = []
            for _, T in libs:
                run, _ = case(T, args.device, n, c, args.dtype, backward)
                times.append(median_time(run, args.repeat))
            ratio = f"{times[1] / times[0]:9.2f}" if len(times) > 1 else ""
            line = (f"{f'{n}x{c}':>16} {'fwd+bwd' if backward else 'fwd':>8} "
                    + " ".join(f"{t * 1e3:10.2f}ms" for t in times) + f" {ratio}")
            if args.device == "cuda":
                nbytes = n * c * item * (3 if backward else 1)
                line += f" {nbytes / times[0] / 1e9:8.0f}"
            print(line)
        if args.device == "cuda":
            peaks = [peak_above_logits(T, "cuda", n, c, args.dtype) / 2**20 for _, T in libs]
            print(f"{f'{n}x{c}':>16} {'peak':>8} "
                  + " ".join(f"{p:10.0f}MB" for p in peaks)
                  + f"   (logits {n * c * item / 2**20:.0f}MB)")
    print("fw/torch: torch time / framework time (above 1: framework faster)")


if __name__ == "__main__":
    main()
