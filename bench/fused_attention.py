"""Fused scaled dot-product attention beside PyTorch: forward and forward+backward, the same
code run with ``T = framework`` and ``T = torch`` on the same device, medians, as TFLOP/s
(forward 4*B*H*L*L*D flops, backward 2.5x that; half of both when causal) and as a ratio.

    python bench/fused_attention.py [--device cpu|cuda] [--quick] [--threads N] [--dtype D]

Shapes: batch 8, 16 heads, sequence 1024 and 4096, head dim 64 and 128, causal and not (the
issue's); --quick uses batch 4, 8 heads, sequence 256 and 512, head dim 64 (CPU-sized).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402

FULL = [(8, 16, L, D) for L in (1024, 4096) for D in (64, 128)]
QUICK = [(4, 8, 256, 64), (4, 8, 512, 64)]


def _sync(T, device):
    if device == "cuda":
        T.cuda.synchronize()


def case(T, device, shape, dtype, causal, backward):
    B, H, L, D = shape
    dt = getattr(T, dtype)
    q, k, v = (T.randn(B, H, L, D, device=device, dtype=dt).requires_grad_(backward)
               for _ in range(3))
    g = T.randn(B, H, L, D, device=device, dtype=dt)

    def run():
        out = T.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if backward:
            out.backward(g)
            q.grad = k.grad = v.grad = None
        _sync(T, device)
    return run


def flops(shape, causal, backward):
    B, H, L, D = shape
    f = 4.0 * B * H * L * L * D * (3.5 if backward else 1.0)
    return f / 2 if causal else f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default=None, help="default: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    dtype = args.dtype or ("bfloat16" if args.device == "cuda" else "float32")
    try:
        import torch
    except ImportError:
        torch = None
    if args.device == "cpu":
        fw.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    shapes = QUICK if args.quick else FULL
    libs = [("framework", fw)] + ([("torch", torch)] if torch is not None else [])
    print(f"scaled_dot_product_attention, {dtype}, device {args.device}"
          + (f", {args.threads} threads" if args.device == "cpu" else ""))
    print(f"{'B,H,L,D':>16} {'causal':>6} {'pass':>8} "
          + " ".join(f"{name + ' ms':>12} {'TFLOP/s':>8}" for name, _ in libs)
          + f" {'fw/torch':>9}")
    for shape in shapes:
        for causal in (False, True):
            for backward in (False, True):
                times = []
                for _, T in libs:
                    times.append(median_time(case(T, args.device, shape, dtype, causal,
                                                  backward), args.repeat))
                f = flops(shape, causal, backward)
                ratio = f"{times[1] / times[0]:9.2f}" if len(times) > 1 else ""
                print(f"{','.join(map(str, shape)):>16} {str(causal):>6} "
                      f"{'fwd+bwd' if backward else 'fwd':>8} "
                      + " ".join(f"{t * 1e3:12.2f} {f / t / 1e12:8.3f}" for t in times)
                      + f" {ratio}")
    print("fw/torch: torch time / framework time (above 1: framework faster)")


if __name__ == "__main__":
    main()
