"""Hogwild training (PyTorch's mnist_hogwild example): one model whose parameters live in
shared memory (``model.share_memory()``), trained at once by several processes, each with
its own SGD optimizer and data order, updating the shared weights in place without locks.
The parent then evaluates the shared model and, for comparison, a model trained the same
way by a single process.

Data: a synthetic 10-class problem (Gaussian clusters in 32 dimensions pushed through a
fixed random nonlinearity), generated here.

    python examples/hogwild.py [--num-processes 2] [--epochs 2] [--batch-size 64]
"""
import argparse
import time

import framework as torch
import framework.multiprocessing as mp
import framework.nn as nn
import framework.nn.functional as F


class Net(nn.Module):
    def __init__(self, d_in=32, hidden=64, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def make_data(n, seed=0, d=32, classes=10):
    """``n`` points of ``classes`` clusters in ``d`` dimensions, bent by a fixed tanh map."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, d, generator=g) * 0.6
    mix = torch.randn(d, d, generator=g) / d ** 0.5
    y = torch.randint(0, classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, d, generator=g)
    return torch.tanh(x @ mix) + 0.5 * x, y


def train(rank, args, model, x, y):
    """One worker: its own seed (data order) and optimizer, the shared parameters."""
    torch.manual_seed(args.seed + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    n = x.shape[0]
    for _ in range(args.epochs):
        order = torch.randperm(n)
        for i in range(0, n, args.batch_size):
            idx = order[i:i + args.batch_size]
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            optimizer.step()


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main(argv=None):
    ap = argparse.ArgumentParser(description="hogwild training on shared parameters")
    ap.add_argument("--num-processes", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.5)
    ap.add_argument("--train-size", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start-method", default="fork", choices=["fork", "spawn", "forkserver"])
    args = ap.parse_args(argv)

    x_all, y_all = make_data(args.train_size + 2000, seed=0)   # train, then 2000 to test
    x, y = x_all[:args.train_size], y_all[:args.train_size]
    x_test, y_test = x_all[args.train_size:], y_all[args.train_size:]

    torch.manual_seed(args.seed)
    model = Net()
    init = {k: v.clone() for k, v in model.state_dict().items()}
    init_acc = accuracy(model, x_test, y_test)
    model.share_memory()       # the parameters move to shared memory; workers alias them

    ctx = mp.get_context(args.start_method)
    t0 = time.perf_counter()
    processes = []
    for rank in range(args.num_processes):
        p = ctx.Process(target=train, args=(rank, args, model, x, y))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    bad = [p.exitcode for p in processes if p.exitcode != 0]
    if bad:
        raise SystemExit(f"a worker failed (exit codes {bad})")
    hog_time = time.perf_counter() - t0
    hog_acc = accuracy(model, x_test, y_test)

    # the same training in one process, from the same initial weights
    single = Net()
    single.load_state_dict(init)
    t0 = time.perf_counter()
    train(0, args, single, x, y)
    single_time = time.perf_counter() - t0
    single_acc = accuracy(single, x_test, y_test)

    print(f"untrained:           test accuracy {init_acc:.4f}")
    print(f"hogwild, {args.num_processes} processes: test accuracy {hog_acc:.4f} "
          f"({hog_time:.1f} s)")
    print(f"single process:      test accuracy {single_acc:.4f} ({single_time:.1f} s)")
    return init_acc, hog_acc, single_acc


if __name__ == "__main__":
    main()
