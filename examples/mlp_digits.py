"""An MLP classifier on scikit-learn's bundled digits (8x8 images of handwritten digits,
1797 of them, no download). Without scikit-learn it falls back to a synthetic set of the
same shape: ten random 8x8 stroke prototypes, shifted by a pixel and noised.

    python examples/mlp_digits.py [--steps 300] [--batch-size 64] [--device cpu]
"""
import argparse
import time

import numpy as np

import framework as torch
import framework.nn as nn
import framework.nn.functional as F
from framework.utils.data import DataLoader, TensorDataset


def load_digits():
    """(images float32 (n, 64) in [0, 1], labels int64 (n,), name of the data set)."""
    try:
        from sklearn.datasets import load_digits as sk_load
    except ImportError:
        return synthetic_digits() + ("synthetic digits (scikit-learn not installed)",)
    d = sk_load()
    return d.data.astype(np.float32) / 16.0, d.target.astype(np.int64), "scikit-learn digits"


def synthetic_digits(n=1800, seed=0):
    rng = np.random.default_rng(seed)
    protos = (rng.random((10, 10, 10)) < 0.3).astype(np.float32)     # 10x10, cropped to 8x8
    y = rng.integers(0, 10, n)
    dx, dy = rng.integers(0, 3, n), rng.integers(0, 3, n)
    x = np.stack([protos[c, i:i + 8, j:j + 8] for c, i, j in zip(y, dy, dx)])
    x = np.clip(x + 0.3 * rng.standard_normal(x.shape), 0, 1).astype(np.float32)
    return x.reshape(n, 64), y.astype(np.int64)


def main(argv=None):
    ap = argparse.ArgumentParser(description="MLP on the digits data set")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    torch.manual_seed(0)

    x, y, name = load_digits()
    perm = np.random.default_rng(0).permutation(len(y))
    x, y = torch.from_numpy(x[perm]), torch.from_numpy(y[perm])
    n_test = len(y) // 5
    train = TensorDataset(x[n_test:], y[n_test:])
    x_test, y_test = x[:n_test].to(args.device), y[:n_test].to(args.device)
    print(f"data: {name}, {len(train)} train / {n_test} test images of 8x8")

    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1),
                          nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)).to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, drop_last=True)

    def accuracy():
        model.eval()
        with torch.no_grad():
            acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        model.train()
        return acc

    print(f"untrained test accuracy: {accuracy():.4f}")
    step, t0, first = 0, time.perf_counter(), None
    while step < args.steps:
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb.to(args.device)), yb.to(args.device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
            step += 1
            if step % 100 == 0:
                print(f"step {step}: loss {loss.item():.4f}")
            if step == args.steps:
                break
    acc = accuracy()
    print(f"trained {step} steps in {time.perf_counter() - t0:.1f} s: loss {first:.4f} -> "
          f"{loss.item():.4f}")
    print(f"final test accuracy: {acc:.4f} (chance 0.1)")
    return acc


if __name__ == "__main__":
    main()
