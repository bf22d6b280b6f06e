"""framework.compile on a pointwise chain: eager (13 kernels) beside compiled (one
generated Triton kernel), and PyTorch eager and torch.compile where installed with CUDA,
at 2^24 elements, float32 and bfloat16, forward only. GB/s counts the bytes the fused
kernel must move (the four inputs, x and y full-size, w a row, b a column, and the
output); the ratio is against framework eager.

Then GPT's MLP layers, where compile fuses the epilogue into the GEMM (one generated GEMM
kernel each): ``gelu(linear(x, W_fc, b_fc))`` (tokens x C -> 4C) and the residual
``x + linear(h, W_proj, b_proj)`` (4C -> C), at GPT-2 small's C = 768 and 8192 tokens;
TFLOP/s counts the GEMM's 2 * M * N * K.

    python bench/compile.py [--n 24] [--dtypes float32,bfloat16] [--tokens 8192] [--embd 768]

CUDA only: on the simulator (TRITON_INTERPRET=1) the timings mean nothing.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402


def chain(T):
    F = T.nn.functional

    def f(x, w, b, y):
        z = F.gelu(x * w + b) * T.sigmoid(y)
        z = T.tanh(z) - 0.5 * F.gelu(z, approximate="tanh")
        return F.silu(T.relu(z).exp() / (1.0 + y.abs())) ** 2
    return f


def make_inputs(T, log2n, dtype):
    cols = 1 << 12
    rows = (1 << log2n) // cols
    dt = getattr(T, dtype)
    x, y = (T.randn(rows, cols, device="cuda", dtype=dt) for _ in range(2))
    w, b = T.randn(cols, device="cuda", dtype=dt), T.randn(rows, 1, device="cuda", dtype=dt)
    return (x, w, b, y), (2 * rows * cols + cols + rows + rows * cols) * x.element_size()


def mlp_layers(T):
    """GPT's MLP layers with their epilogues: c_fc + gelu, c_proj + residual."""
    F = T.nn.functional

    def fc_gelu(x, w, b):
        return F.gelu(F.linear(x, w, b))

    def proj_residual(h, w, b, x):
        return x + F.linear(h, w, b)
    return {"linear+gelu": fc_gelu, "linear+residual": proj_residual}


def mlp_inputs(T, tokens, embd, dtype):
    """{layer: (args, flops)}: nn.Linear's weight layout (out, in), row-major."""
    dt = getattr(T, dtype)

    def randn(*shape):
        return T.randn(*shape, device="cuda", dtype=dt)
    x, h = randn(tokens, embd), randn(tokens, 4 * embd)
    return {"linear+gelu": ((x, randn(4 * embd, embd), randn(4 * embd)),
                            2 * tokens * embd * 4 * embd),
            "linear+residual": ((h, randn(embd, 4 * embd), randn(embd), x),
                                2 * tokens * 4 * embd * embd)}


def time_it(T, fn, args):
    fn(*args)   # trace / compile outside the timing
    fn(*args)

    def run():
        fn(*args)
        T.cuda.synchronize()
    return median_time(run, repeat=7)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=24, help="log2 of the element count")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--tokens", type=int, default=8192, help="GPT MLP rows (batch x seq)")
    ap.add_argument("--embd", type=int, default=768, help="GPT MLP width C")
    a = ap.parse_args()
    if not fw.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1":
        sys.exit("bench/compile.py needs a GPU (the simulator's timings mean nothing)")
    try:
        import torch
        torch = torch if torch.cuda.is_available() else None
    except ImportError:
        torch = None
    print(f"pointwise chain, 2^{a.n} elements ({fw.cuda.get_device_name()})")
    print(f"{'dtype':<10}{'impl':<22}{'ms':>9}{'GB/s':>9}{'vs fw eager':>13}")
    for dtype in a.dtypes.split(","):
        rows = []
        args, nbytes = make_inputs(fw, a.n, dtype)
        rows.append(("framework eager", time_it(fw, chain(fw), args)))
        rows.append(("framework.compile", time_it(fw, fw.compile(chain(fw)), args)))
        if torch is not None:
            targs, _ = make_inputs(torch, a.n, dtype)
            rows.append(("torch eager", time_it(torch, chain(torch), targs)))
            rows.append(("torch.compile", time_it(torch, torch.compile(chain(torch)), targs)))
        base = rows[0][1]
        for name, t in rows:
            print(f"{dtype:<10}{name:<22}{t * 1e3:>9.3f}{nbytes / t / 1e9:>9.1f}"
                  f"{base / t:>12.2f}x")
    print(f"\nGPT MLP layers, {a.tokens} tokens, C = {a.embd}")
    print(f"{'dtype':<10}{'layer':<17}{'impl':<22}{'ms':>9}{'TFLOP/s':>9}{'vs fw eager':>13}")
    for dtype in a.dtypes.split(","):
        inputs = mlp_inputs(fw, a.tokens, a.embd, dtype)
        tinputs = mlp_inputs(torch, a.tokens, a.embd, dtype) if torch is not None else None
        for layer, fn in mlp_layers(fw).items():
            args, flops = inputs[layer]
            rows = [("framework eager", time_it(fw, fn, args)),
                    ("framework.compile", time_it(fw, fw.compile(fn), args))]
            if torch is not None:
                tfn, targs = mlp_layers(torch)[layer], tinputs[layer][0]
                rows.append(("torch eager", time_it(torch, tfn, targs)))
                rows.append(("torch.compile", time_it(torch, torch.compile(tfn), targs)))
            base = rows[0][1]
            for name, t in rows:
                print(f"{dtype:<10}{layer:<17}{name:<22}{t * 1e3:>9.3f}"
                      f"{flops / t / 1e12:>9.1f}{base / t:>12.2f}x")


if __name__ == "__main__":
    main()
