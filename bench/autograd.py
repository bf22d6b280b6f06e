"""Autograd engine overhead beside PyTorch (CPU, same process, medians):
forward+backward of a chain of 10,000 small ops, and of a 3-layer MLP.

    python bench/autograd.py [--out FILE]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402

CHAIN = 10_000


def chain(T):
    x = T.ones(4, requires_grad=True)

    def run():
        y = x
        for _ in range(CHAIN // 2):
            y = (y * 1.0001).sin()
        y.sum().backward()
        x.grad = None
    return run


def mlp(T, batch=64, width=256):
    g = T.Generator().manual_seed(0) if T is not fw else None
    ws = [T.randn(width, width, generator=g) * 0.05 for _ in range(3)]
    ws = [w.requires_grad_() for w in ws]
    bs = [T.zeros(width, requires_grad=True) for _ in range(3)]
    x = T.randn(batch, width, generator=g)

    def run():
        h = x
        for w, b in zip(ws, bs):
            h = (h @ w + b).relu()
        h.sum().backward()
        for p in ws + bs:
            p.grad = None
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    cases = [("chain of 10,000 ops (fwd+bwd)", chain, CHAIN + 1),
             ("3-layer MLP 64x256 (fwd+bwd)", mlp, 10)]
    # framework first: importing torch adds ~10^5 Python objects that every full garbage
    # collection then walks, which slows a Python-level graph (not torch's C++ one)
    ours = [median_time(make(fw), 5, 1.0) for _, make, _ in cases]
    try:
        import torch
        torch.set_num_threads(fw.get_num_threads())
        refs = [median_time(make(torch), 5, 1.0) for _, make, _ in cases]
    except ImportError:
        refs = [float("nan")] * len(cases)
    rows = [(name, o, r, nodes) for (name, _, nodes), o, r in zip(cases, ours, refs)]
    lines = ["| case | framework | torch | per node fw | per node torch | fw/torch |",
             "|---|---|---|---|---|---|"]
    for name, ours, ref, nodes in rows:
        lines.append(f"| {name} | {ours * 1e3:.2f} ms | {ref * 1e3:.2f} ms | "
                     f"{ours / nodes * 1e6:.2f} us | {ref / nodes * 1e6:.2f} us | "
                     f"{ours / ref:.2f}x |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
