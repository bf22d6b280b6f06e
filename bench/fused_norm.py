"""Fused normalization layers beside PyTorch: forward and forward+backward, the same code run
with ``T = framework`` and ``T = torch`` on the same device, medians, as GB/s (bytes the op
must move: forward reads x and writes y, forward+backward also reads x and dy and writes dx;
parameters and statistics not counted) and as a ratio.

    python bench/fused_norm.py [--device cpu|cuda] [--quick] [--threads N] [--dtype D]
                               [--ops layer_norm,rms_norm,group_norm,batch_norm]

Shapes: layer_norm and rms_norm on (4096, 4096) and (32768, 1024) (the issue's); group_norm
and batch_norm on (32, 256, 56, 56) with 32 groups. --quick: (4096, 1024) and (512, 4096),
(8, 64, 28, 28) (CPU-sized).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402

FULL = {"rows": [(4096, 4096), (32768, 1024)], "image": [(32, 256, 56, 56)]}
QUICK = {"rows": [(4096, 1024), (512, 4096)], "image": [(8, 64, 28, 28)]}


def _sync(T, device):
    if device == "cuda":
        T.cuda.synchronize()


def case(T, device, op, shape, dtype, backward):
    F = T.nn.functional
    dt = getattr(T, dtype)
    x = T.randn(*shape, device=device, dtype=dt).requires_grad_(backward)
    c = shape[-1] if op in ("layer_norm", "rms_norm") else shape[1]
    # affine parameters in the input's dtype (torch's layer, RMS and group norms take one
    # dtype), float32 for batch norm, whose mixed case (16-bit input, float32 parameters
    # and statistics) torch supports on cuda
    pdt = T.float32 if op == "batch_norm" else dt
    w = T.ones(c, device=device, dtype=pdt).requires_grad_(backward)
    b = T.zeros(c, device=device, dtype=pdt).requires_grad_(backward)
    rm = T.zeros(c, device=device, dtype=T.float32)
    rv = T.ones(c, device=device, dtype=T.float32)
    g = T.randn(*shape, device=device, dtype=dt)
    fn = {"layer_norm": lambda: F.layer_norm(x, (c,), w, b),
          "rms_norm": lambda: F.rms_norm(x, (c,), w),
          "group_norm": lambda: F.group_norm(x, 32, w, b),
          "batch_norm": lambda: F.batch_norm(x, rm, rv, w, b, True)}[op]

    def run():
        out = fn()
        if backward:
            out.backward(g)
            x.grad = w.grad = b.grad = None
        _sync(T, device)
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default=None, help="default: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--ops", default="layer_norm,rms_norm,group_norm,batch_norm")
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
    size = {"float32": 4, "float64": 8}.get(dtype, 2)
    print(f"normalization layers, {dtype}, device {args.device}"
          + (f", {args.threads} threads" if args.device == "cpu" else ""))
    print(f"{'op':>11} {'shape':>16} {'pass':>8} "
          + " ".join(f"{name + ' ms':>12} {'GB/s':>7}" for name, _ in libs)
          + f" {'fw/torch':>9}")
    for op in args.ops.split(","):
        for shape in shapes["rows" if op in ("layer_norm", "rms_norm") else "image"]:
            n = 1
            for s in shape:
                n *= s
            for backward in (False, True):
                times = [median_time(case(T, args.device, op, shape, dtype, backward),
                                     args.repeat) for _, T in libs]
                nbytes = n * size * (5 if backward else 2)
                ratio = f"{times[1] / times[0]:9.2f}" if len(times) > 1 else ""
                print(f"{op:>11} {'x'.join(map(str, shape)):>16} "
                      f"{'fwd+bwd' if backward else 'fwd':>8} "
                      + " ".join(f"{t * 1e3:12.2f} {nbytes / t / 1e9:7.1f}" for t in times)
                      + f" {ratio}")
    print("fw/torch: torch time / framework time (above 1: framework faster)")


if __name__ == "__main__":
    main()
