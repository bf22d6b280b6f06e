"""`make demo`: trains a small MLP classifier end to end with framework's autograd and
prints what it did. Data: two interleaved spirals (synthetic, generated here). The model,
loss and SGD step are written with plain tensor ops (nn and optim come later).

    python examples/train.py [--device cuda] [--steps 300]
"""
import argparse
import math
import time

import framework as fw


def spirals(n, device, noise=0.15):
    """2n points on two spirals, labels 0/1."""
    t = fw.linspace(0.25, 3 * math.pi, n, device=device)
    r = t / (3 * math.pi)
    a = fw.stack([r * t.cos(), r * t.sin()], 1)
    x = fw.cat([a, -a]) + noise * fw.randn(2 * n, 2, device=device) * r.repeat(2)[:, None]
    y = fw.cat([fw.zeros(n, dtype=fw.int64, device=device),
                fw.ones(n, dtype=fw.int64, device=device)])
    return x, y


def init(shape, device):
    fan_in = shape[0]
    return (fw.randn(*shape, device=device) * math.sqrt(2.0 / fan_in)).requires_grad_()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.1)
    args = ap.parse_args()
    dev = args.device
    fw.manual_seed(0)
    x, y = spirals(500, dev)
    params = [init((2, 64), dev), fw.zeros(64, device=dev, requires_grad=True),
              init((64, 64), dev), fw.zeros(64, device=dev, requires_grad=True),
              init((64, 2), dev), fw.zeros(2, device=dev, requires_grad=True)]

    def forward(inp):
        w1, b1, w2, b2, w3, b3 = params
        h = (inp @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        return h @ w3 + b3

    def cross_entropy(logits, target):
        logp = logits - logits.logsumexp(1, keepdim=True)
        return -logp.gather(1, target[:, None]).mean()

    n_params = sum(p.numel() for p in params)
    print(f"training a 2-64-64-2 MLP ({n_params} parameters) on {x.shape[0]} spiral points, "
          f"device {dev}, {args.steps} steps of full-batch SGD with momentum 0.9")
    velocity = [fw.zeros_like(p) for p in params]
    t0 = time.perf_counter()
    for step in range(args.steps + 1):
        loss = cross_entropy(forward(x), y)
        loss.backward()
        with fw.no_grad():
            for p, v in zip(params, velocity):
                v.mul_(0.9).add_(p.grad)
                p.sub_(args.lr * v)
                p.grad = None
        if step % 50 == 0:
            with fw.no_grad():
                acc = (forward(x).argmax(1) == y).float().mean().item()
            print(f"step {step:4d}  loss {loss.item():.4f}  train accuracy {acc * 100:5.1f}%")
    elapsed = time.perf_counter() - t0
    print(f"done in {elapsed:.2f} s ({elapsed / (args.steps + 1) * 1e3:.1f} ms per step: "
          "forward, backward and update)")
    x_test, y_test = spirals(250, dev)
    with fw.no_grad():
        acc = (forward(x_test).argmax(1) == y_test).float().mean().item()
    print(f"held-out accuracy on fresh spiral points: {acc * 100:.1f}%")


if __name__ == "__main__":
    main()
