"""An MLP classifier trained data-parallel on N processes with DistributedDataParallel.

Each process reads its own share of the data (DistributedSampler), computes gradients on
it, and DDP averages the gradients across processes during backward, so every replica
takes the same optimizer step. Start it with either

    python -m framework.distributed.run --nproc-per-node 2 examples/ddp_train.py
    mpiexec -n 2 python examples/ddp_train.py [--steps 200] [--batch-size 64]

(one process, started plainly, works too: a world of 1).
"""
import argparse
import time

import numpy as np

import framework as torch
import framework.distributed as dist
import framework.nn as nn
import framework.nn.functional as F
from framework.nn.parallel import DistributedDataParallel as DDP
from framework.utils.data import DataLoader, DistributedSampler, TensorDataset


def blobs(n=2048, dim=32, classes=8, seed=0):
    """Gaussian clusters around random centers: a task an MLP learns in a few steps."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, dim)).astype(np.float32) * 2
    y = rng.integers(0, classes, n)
    x = centers[y] + rng.standard_normal((n, dim)).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=64, help="per process")
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)     # different inits on purpose: DDP starts from rank 0's

    x, y = blobs()
    data = TensorDataset(x, y)
    sampler = DistributedSampler(data, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                          nn.Linear(128, 8))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)

    step, epoch, first, loss = 0, 0, None, None
    start = time.perf_counter()
    while step < args.steps:
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(ddp(xb), yb)
            loss.backward()
            opt.step()
            # the loss of the whole global batch: the mean of the ranks' losses
            avg = loss.detach().clone()
            dist.all_reduce(avg, dist.ReduceOp.AVG)
            if first is None:
                first = avg.item()
            step += 1
            if rank == 0 and (step % 50 == 0 or step == args.steps):
                print(f"step {step:4d}  loss {avg.item():.4f}", flush=True)
            if step == args.steps:
                break
        epoch += 1
    took = time.perf_counter() - start

    # every replica must hold the same parameters
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    lo, hi = flat.clone(), flat.clone()
    dist.all_reduce(lo, dist.ReduceOp.MIN)
    dist.all_reduce(hi, dist.ReduceOp.MAX)
    same = bool((hi - lo).abs().max().item() == 0)
    if rank == 0:
        print(f"{world} process(es), {args.steps} steps of {args.batch_size * world} samples "
              f"in {took:.1f}s: first loss {first:.4f} last loss {avg.item():.4f} "
              f"replicas equal: {same}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
