"""framework.distributed over MPI: all_reduce bandwidth from 4 KiB to 256 MiB beside raw
mpi4py (``comm.Allreduce`` in place on NumPy buffers) in the same run, and the step time of
DistributedDataParallel on N processes beside one process doing its share alone.

    python bench/distributed.py [--nproc 2] [--quick]      # starts itself under mpiexec

``--quick`` stops at 16 MiB. Bus bandwidth is the ring all-reduce's 2(n-1)/n x size / time.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np


def relaunch(args):
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or \
        shutil.which("mpiexec")
    if mpiexec is None:
        sys.exit("bench/distributed.py: no mpiexec (pip install mpich mpi4py)")
    cmd = [mpiexec, "-n", str(args.nproc), sys.executable, os.path.abspath(__file__),
           "--child"] + (["--quick"] if args.quick else [])
    sys.exit(subprocess.call(cmd))


def timed(comm, fn, reps):
    """Median seconds of ``fn`` over ``reps`` samples, the ranks lined up before each; every
    rank runs the same count (a collective must be called by all)."""
    fn()
    samples = []
    for _ in range(reps):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    # the slowest rank decides the collective's time
    return comm.allreduce(statistics.median(samples), op=MPI.MAX)


def bench_allreduce(quick):
    import framework as fw
    import framework.distributed as dist
    comm = MPI.COMM_WORLD
    n, rank = comm.Get_size(), comm.Get_rank()
    top = 16 if quick else 256
    sizes = [4 << 10]
    while sizes[-1] < top << 20:
        sizes.append(sizes[-1] * 4)
    rows = []
    for nbytes in sizes:
        count = nbytes // 4
        reps = int(max(5, min(50, (64 << 20) // nbytes)))
        t = fw.ones(count)
        a = np.ones(count, np.float32)
        t_fw = timed(comm, lambda: dist.all_reduce(t), reps)
        t_np = timed(comm, lambda: comm.Allreduce(MPI.IN_PLACE, a), reps)
        bus = 2 * (n - 1) / n * nbytes
        rows.append((nbytes, t_fw, t_np, bus / t_fw / 1e9, bus / t_np / 1e9))
    if rank == 0:
        print(f"all_reduce float32 SUM on {n} processes (median time; bus GB/s)")
        print(f"{'size':>10} {'framework':>12} {'mpi4py':>12} {'fw GB/s':>9} {'np GB/s':>9} "
              f"{'fw/mpi4py':>10}")
        for nbytes, a, b, ga, gb in rows:
            size = f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"
            print(f"{size:>10} {a * 1e6:10.1f}us {b * 1e6:10.1f}us {ga:9.2f} {gb:9.2f} "
                  f"{a / b:10.2f}x")


def bench_ddp():
    import framework as fw
    import framework.distributed as dist
    import framework.nn as nn
    import framework.nn.functional as F
    from framework.nn.parallel import DistributedDataParallel as DDP
    comm = MPI.COMM_WORLD
    n = comm.Get_size()
    batch = 64

    def model():
        fw.manual_seed(0)
        return nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                             nn.ReLU(), nn.Linear(1024, 10))
    x = fw.randn(batch, 256)
    y = fw.randint(0, 10, (batch,))

    def stepper(m):
        opt = fw.optim.SGD(m.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
        return step
    alone = timed(comm, stepper(model()), 10)
    ddp = timed(comm, stepper(DDP(model())), 10)
    if comm.Get_rank() == 0:
        nparam = sum(p.numel() for p in model().parameters())
        print(f"\nDDP step, MLP of {nparam / 1e6:.2f}M parameters, batch {batch} per process")
        print(f"  one process alone on its batch: {alone * 1e3:8.2f} ms")
        print(f"  DDP on {n} processes:            {ddp * 1e3:8.2f} ms  ({ddp / alone:.2f}x)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.child:
        relaunch(args)
    global MPI
    from mpi4py import MPI
    import framework.distributed as dist
    dist.init_process_group("mpi")
    bench_allreduce(args.quick)
    bench_ddp()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
