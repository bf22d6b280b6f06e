"""The fused dropout, embedding, linear+activation and implicit-GEMM convolution kernels
beside PyTorch eager: forward and forward+backward, the same code run with
``T = framework`` and ``T = torch`` on one device, medians, with GB/s (memory-bound ops:
the bytes the op must move) or TFLOP/s (GEMM-shaped ops) and the ratio.

    python bench/fused_layers.py [--device cpu|cuda] [--quick] [--threads N] [--dtype D]
                                 [--ops dropout,dropout_add,embedding,linear_gelu,conv2d]

Shapes: dropout on (8192, 4096); embedding (50257, 768) with 8192 indices; linear
8192x1024 -> 4096 with gelu (the framework's internal fused entry point, as the
Transformer feed-forward calls it, beside torch's gelu(linear)); conv2d on ResNet-50's
3x3 stages, batch 32 (--quick: smaller shapes that fit a 2-core CPU).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402

FULL = {"rows": (8192, 4096), "emb": (50257, 768, 8192), "linear": (8192, 1024, 4096),
        "conv": [(32, 64, 56), (32, 128, 28), (32, 256, 14), (32, 512, 7)]}
QUICK = {"rows": (2048, 1024), "emb": (50257, 256, 2048), "linear": (1024, 512, 1024),
         "conv": [(4, 64, 28), (4, 128, 14)]}


def _sync(T, device):
    if device == "cuda":
        T.cuda.synchronize()


def _linear_gelu(T):
    """gelu(linear(x)): the framework's fused entry point, torch's two calls."""
    if T is fw:
        from framework._ops.fused_linear import linear_act
        return lambda x, w, b: linear_act(x, w, b, "gelu")
    return lambda x, w, b: T.nn.functional.gelu(T.nn.functional.linear(x, w, b))


def case(T, device, op, shape, dtype, backward):
    """(run, bytes moved, flops) of one op at one shape; one of the last two is 0."""
    F = T.nn.functional
    dt = getattr(T, dtype)
    size = {"float32": 4, "float64": 8}.get(dtype, 2)

    def param(*s):
        return (T.randn(*s, device=device, dtype=dt) * 0.05).requires_grad_(backward)

    if op in ("dropout", "dropout_add"):
        x, r = param(*shape), param(*shape)
        g = T.randn(*shape, device=device, dtype=dt)
        if op == "dropout":
            fn = lambda: F.dropout(x, 0.1, True)  # noqa: E731
        elif T is fw:
            from framework.nn.functional.dropout import _dropout_add
            fn = lambda: _dropout_add(x, r, 0.1, True)  # noqa: E731
        else:
            fn = lambda: r + F.dropout(x, 0.1, True)  # noqa: E731
        n = x.numel()
        nbytes = n * size * ((2 if op == "dropout" else 3) + (2 if backward else 0))
        flops, leaves = 0, (x, r)
    elif op == "embedding":
        rows, dim, count = shape
        w = param(rows, dim)
        idx = T.randint(0, rows, (count,), device=device)
        g = T.randn(count, dim, device=device, dtype=dt)
        fn = lambda: F.embedding(idx, w)  # noqa: E731
        nbytes = count * dim * size * (2 if not backward else 3) + (rows * dim * size
                                                                  if backward else 0)
        flops, leaves = 0, (w,)
    elif op == "linear_gelu":
        m, k, n = shape
        x, w, b = param(m, k), param(n, k), param(n)
        g = T.randn(m, n, device=device, dtype=dt)
        lin = _linear_gelu(T)
        fn = lambda: lin(x, w, b)  # noqa: E731
        nbytes, flops, leaves = 0, 2 * m * k * n * (3 if backward else 1), (x, w, b)
    else:   # conv2d, 3x3, padding 1, channels in = out
        nb, c, hw = shape
        x, w = param(nb, c, hw, hw), param(c, c, 3, 3)
        g = T.randn(nb, c, hw, hw, device=device, dtype=dt)
        fn = lambda: F.conv2d(x, w, padding=1)  # noqa: E731
        nbytes = 0
        flops, leaves = 2 * nb * c * hw * hw * c * 9 * (3 if backward else 1), (x, w)

    def run():
        out = fn()
        if backward:
            out.backward(g)
            for t in leaves:
                t.grad = None
        _sync(T, device)
    return run, nbytes, flops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default=None, help="default: bfloat16 on cuda, float32 on cpu")
    ap.add_argument("--ops", default="dropout,dropout_add,embedding,linear_gelu,conv2d")
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
    print(f"fused layers, {dtype}, device {args.device}"
          + (f", {args.threads} threads" if args.device == "cpu" else ""))
    print(f"{'op':>12} {'shape':>18} {'pass':>8} "
          + " ".join(f"{name + ' ms':>12} {'rate':>12}" for name, _ in libs)
          + f" {'fw/torch':>9}")
    for op in args.ops.split(","):
        key = {"dropout": "rows", "dropout_add": "rows", "embedding": "emb",
               "linear_gelu": "linear", "conv2d": "conv"}[op]
        for shape in (shapes[key] if key == "conv" else [shapes[key]]):
            for backward in (False, True):
                times, rates = [], []
                for _, T in libs:
                    T.manual_seed(0)
                    run, nbytes, flops = case(T, args.device, op, shape, dtype, backward)
                    t = median_time(run, args.repeat)
                    times.append(t)
                    rates.append(f"{nbytes / t / 1e9:7.1f} GB/s" if nbytes else
                                 f"{flops / t / 1e12:5.2f} TFLOP/s")
                ratio = f"{times[1] / times[0]:9.2f}" if len(times) > 1 else ""
                print(f"{op:>12} {'x'.join(map(str, shape)):>18} "
                      f"{'fwd+bwd' if backward else 'fwd':>8} "
                      + " ".join(f"{t * 1e3:12.2f} {r:>12}" for t, r in zip(times, rates))
                      + f" {ratio}")
    print("fw/torch: torch time / framework time (above 1: framework faster)")


if __name__ == "__main__":
    main()
