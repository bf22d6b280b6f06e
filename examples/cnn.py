"""A small CNN with BatchNorm on synthetic 16x16 images: each image holds one of four
shapes (a horizontal bar, a vertical bar, a square outline, a cross) at a random place, with
random brightness and noise; the network names the shape.

    python examples/cnn.py [--steps 150] [--batch-size 32] [--device cpu]
"""
import argparse
import time

import numpy as np

import framework as torch
import framework.nn as nn
import framework.nn.functional as F

SHAPES = ["horizontal bar", "vertical bar", "square", "cross"]


def make_images(n, size=16, seed=0):
    """(images float32 (n, 1, size, size), labels int64 (n,))."""
    rng = np.random.default_rng(seed)
    x = 0.3 * rng.standard_normal((n, 1, size, size)).astype(np.float32)
    y = rng.integers(0, len(SHAPES), n)
    for k in range(n):
        i, j = rng.integers(1, size - 7, 2)
        v = rng.uniform(0.8, 1.5)
        img = x[k, 0]
        if y[k] == 0:
            img[i + 3, j:j + 7] += v
        elif y[k] == 1:
            img[i:i + 7, j + 3] += v
        elif y[k] == 2:
            img[i, j:j + 6] += v
            img[i + 5, j:j + 6] += v
            img[i:i + 6, j] += v
            img[i:i + 6, j + 5] += v
        else:
            img[i + 3, j:j + 7] += v
            img[i:i + 7, j + 3] += v
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))


class Net(nn.Module):
    def __init__(self, classes=len(SHAPES)):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def main(argv=None):
    ap = argparse.ArgumentParser(description="a small CNN with BatchNorm")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    dev = args.device
    x, y = make_images(args.steps * args.batch_size if args.steps < 100 else 3200, seed=0)
    x_test, y_test = make_images(400, seed=1)
    x_test, y_test = x_test.to(dev), y_test.to(dev)

    model = Net().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)

    def accuracy():
        model.eval()                     # BatchNorm uses its running statistics
        with torch.no_grad():
            acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        model.train()
        return acc

    print(f"{sum(p.numel() for p in model.parameters())} parameters; "
          f"untrained test accuracy {accuracy():.4f}")
    t0, first = time.perf_counter(), None
    n = x.shape[0]
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, n, (args.batch_size,))
        loss = F.cross_entropy(model(x[idx].to(dev)), y[idx].to(dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        first = loss.item() if first is None else first
        if step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    bn = model.features[1]
    print(f"BatchNorm running mean[:4] {[round(v, 3) for v in bn.running_mean[:4].tolist()]}")
    acc = accuracy()
    print(f"trained {args.steps} steps in {time.perf_counter() - t0:.1f} s: loss {first:.4f} -> "
          f"{loss.item():.4f}")
    print(f"final test accuracy: {acc:.4f} (chance {1 / len(SHAPES):.2f})")
    return acc


if __name__ == "__main__":
    main()
