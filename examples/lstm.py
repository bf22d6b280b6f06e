"""An LSTM sequence model on a synthetic task: read a sequence of digits 0-9 and, at every
position, predict the running sum of the digits so far modulo 10. The answer depends on
the whole prefix, so the model has to carry a state through time (a bag of the last few
inputs is not enough).

    python examples/lstm.py [--steps 300] [--seq-len 20] [--device cpu]
"""
import argparse
import time

import framework as torch
import framework.nn as nn
import framework.nn.functional as F


def batch(n, seq_len, generator=None):
    """Digits (n, seq_len) int64 and their running sums mod 10 (n, seq_len)."""
    x = torch.randint(0, 10, (n, seq_len), generator=generator)
    return x, x.cumsum(1) % 10


class RunningSum(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(10, 16)
        self.lstm = nn.LSTM(16, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 10)

    def forward(self, x):
        out, _ = self.lstm(self.embed(x))       # (batch, seq, hidden)
        return self.head(out)                    # (batch, seq, 10)


def main(argv=None):
    ap = argparse.ArgumentParser(description="an LSTM on running sums modulo 10")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=12)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    dev = args.device
    model = RunningSum().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    x_test, y_test = batch(500, args.seq_len, torch.Generator().manual_seed(1))
    x_test, y_test = x_test.to(dev), y_test.to(dev)

    def accuracy():
        with torch.no_grad():
            return (model(x_test).argmax(-1) == y_test).float().mean().item()

    t0, first = time.perf_counter(), None
    for step in range(1, args.steps + 1):
        x, y = batch(args.batch_size, args.seq_len)
        logits = model(x.to(dev))
        loss = F.cross_entropy(logits.reshape(-1, 10), y.to(dev).reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        first = loss.item() if first is None else first
        if step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    acc = accuracy()
    print(f"trained {args.steps} steps in {time.perf_counter() - t0:.1f} s: loss {first:.4f} -> "
          f"{loss.item():.4f}")
    print(f"final test accuracy: {acc:.4f} (per position; chance 0.1)")
    return acc


if __name__ == "__main__":
    main()
