"""Run by test_ddp.py under ``mpiexec -n 2``: DDP against one process on the whole batch."""
import sys

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.nn as nn
import framework.nn.functional as F
from framework.nn.parallel import DistributedDataParallel as DDP
from framework.utils.data import DistributedSampler

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
quick = device != "cpu"     # simulated cuda runs in the interpreter: the first check only
failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


class Net(nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.register_buffer("scale", fw.ones(4))
        if unused:
            self.spare = nn.Linear(8, 4)

    def forward(self, x, use_spare=False):
        out = self.fc2(F.relu(self.fc1(x))) * self.scale
        return out + self.spare(x) if use_spare else out


def make(seed, unused=False):
    fw.manual_seed(seed)
    return Net(unused).to(device)


rng = np.random.default_rng(0)
X = fw.tensor(rng.standard_normal((16, 8)).astype(np.float32), device=device)
Y = fw.tensor(rng.standard_normal((16, 4)).astype(np.float32), device=device)
half = 16 // world
Xr, Yr = X[rank * half:(rank + 1) * half], Y[rank * half:(rank + 1) * half]


def train_reference(steps, unused=False):
    net = make(100, unused)
    opt = fw.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(net(X), Y).backward()
        opt.step()
    return net


def max_diff(a, b):
    return max(float((p.detach().cpu() - q.detach().cpu()).abs().max())
               for p, q in zip(a.parameters(), b.parameters()))


def train_ddp(steps, accumulate=1, unused=False, **kw):
    ddp = DDP(make(100 + rank, unused), **kw)    # rank-specific init: rank 0's wins
    opt = fw.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    m = half // accumulate
    for _ in range(steps):
        opt.zero_grad()
        for k in range(accumulate):
            xb, yb = Xr[k * m:(k + 1) * m], Yr[k * m:(k + 1) * m]
            if k < accumulate - 1:
                with ddp.no_sync():
                    (F.mse_loss(ddp(xb), yb) / accumulate).backward()
            else:
                (F.mse_loss(ddp(xb), yb) / accumulate).backward()
        opt.step()
    return ddp


ref = train_reference(3 if quick else 20)
for name, kw in [("default buckets", {}), ("many small buckets", {"bucket_cap_mb": 0.0002})]:
    ddp = train_ddp(3 if quick else 20, **kw)
    d = max_diff(ddp.module, ref)
    check(f"ddp equals one process, {name}, {device}", d < 1e-5, f"max diff {d:.2e}")
    if quick:
        dist.destroy_process_group()
        sys.exit(1 if failures else 0)
ddp = train_ddp(20, accumulate=2)
d = max_diff(ddp.module, ref)
check("ddp with no_sync accumulation equals one process", d < 1e-5, f"max diff {d:.2e}")

# overlap: with small buckets, the first bucket's all-reduce starts before backward reaches
# the first layer's weight (the last gradient to arrive)
events = []
ddp = DDP(make(11), bucket_cap_mb=0.0002)
real_all_reduce = dist.all_reduce


def logged(*a, **k):
    events.append("all_reduce")
    return real_all_reduce(*a, **k)


dist.all_reduce = logged
ddp.module.fc1.weight.register_hook(lambda g: events.append("fc1.weight grad"))
F.mse_loss(ddp(Xr), Yr).backward()
dist.all_reduce = real_all_reduce
check("bucket all-reduce overlaps backward", events.index("all_reduce") <
      events.index("fc1.weight grad") and len(ddp._buckets) > 2, str(events))

# no_sync alone leaves the local gradient
ddp = DDP(make(7))
with ddp.no_sync():
    F.mse_loss(ddp(Xr), Yr).backward()
local = make(7)
F.mse_loss(local(Xr), Yr).backward()
d = max(float((p.grad - q.grad).abs().max()) for p, q in zip(ddp.parameters(), local.parameters()))
check("no_sync keeps local gradients", d < 1e-6, f"max diff {d:.2e}")

# an unused parameter, with find_unused_parameters
ref_u = train_reference(20, unused=True)
ddp = train_ddp(20, unused=True, find_unused_parameters=True)
d = max_diff(ddp.module, ref_u)
check("find_unused_parameters equals one process", d < 1e-5, f"max diff {d:.2e}")
check("unused parameter keeps grad None", ddp.module.spare.weight.grad is None)

# a parameter only rank 0 uses: its gradient is rank 0's divided by the world size, as
# one process computes it on the whole batch (the mean of the two halves' losses)
net = make(100, unused=True)
opt = fw.optim.SGD(net.parameters(), lr=0.05)
ddp = DDP(make(100 + rank, unused=True), find_unused_parameters=True)
dopt = fw.optim.SGD(ddp.parameters(), lr=0.05)
for _ in range(5):
    opt.zero_grad()
    loss = sum(F.mse_loss(net(X[r * half:(r + 1) * half], r == 0),
                          Y[r * half:(r + 1) * half]) for r in range(world)) / world
    loss.backward()
    opt.step()
    dopt.zero_grad()
    F.mse_loss(ddp(Xr, rank == 0), Yr).backward()
    dopt.step()
d = max_diff(ddp.module, net)
check("parameter used by one rank only", d < 1e-5 and ddp.module.spare.weight.grad is not None,
      f"max diff {d:.2e}")

# ... and without it: the next forward says so
ddp = DDP(make(3, unused=True))
F.mse_loss(ddp(Xr), Yr).backward()
try:
    ddp(Xr)
    check("unused parameter without find_unused_parameters raises", False)
except RuntimeError as e:
    check("unused parameter without find_unused_parameters raises",
          "Expected to have finished reduction" in str(e))

# buffers follow rank 0 at every forward; state dict keys as PyTorch's
net = make(5)
net.scale.fill_(float(rank + 2))
ddp = DDP(net)
net.scale.fill_(float(rank + 5))
ddp(Xr)
check("broadcast_buffers", net.scale.tolist() == [5.0] * 4, str(net.scale.tolist()))
keys = list(ddp.state_dict())
check("state_dict keys", keys == ["module." + k for k in net.state_dict()], str(keys))
check("module attribute", ddp.module is net)

# ZeroRedundancyOptimizer: Adam's state sharded, same result as Adam on one process
from framework.distributed.optim import ZeroRedundancyOptimizer

ref = make(100)
opt = fw.optim.Adam(ref.parameters(), lr=0.01)
ddp = DDP(make(100 + rank))
zero = ZeroRedundancyOptimizer(ddp.parameters(), fw.optim.Adam, lr=0.01)
for _ in range(10):
    opt.zero_grad()
    F.mse_loss(ref(X), Y).backward()
    opt.step()
    zero.zero_grad()
    F.mse_loss(ddp(Xr), Yr).backward()
    zero.step()
d = max_diff(ddp.module, ref)
n_all = len(list(ref.parameters()))
check("ZeroRedundancyOptimizer equals Adam", d < 1e-5, f"max diff {d:.2e}")
check("ZeroRedundancyOptimizer shards state", 0 < len(zero.optim.state) < n_all,
      f"{len(zero.optim.state)} of {n_all}")
zero.consolidate_state_dict(to=0)
sd = zero.state_dict() if rank == 0 else None
objs = [sd]
dist.broadcast_object_list(objs, src=0)
full = objs[0]
ref_sd = opt.state_dict()
check("ZeroRedundancyOptimizer consolidated state",
      sorted(full["state"]) == sorted(ref_sd["state"]) and all(
          float((full["state"][k]["exp_avg"] - ref_sd["state"][k]["exp_avg"]).abs().max())
          < 1e-5 for k in full["state"]))
zero2 = ZeroRedundancyOptimizer(ddp.parameters(), fw.optim.Adam, lr=0.5)
zero2.load_state_dict(full)
check("ZeroRedundancyOptimizer load_state_dict", zero2.param_groups[0]["lr"] == 0.01
      and len(zero2.optim.state) == len(zero.optim.state))

# DistributedSampler asks the default group
s = DistributedSampler(list(range(10)), shuffle=True, seed=1)
mine = list(s)
every = [None] * world
dist.all_gather_object(every, mine)
check("DistributedSampler", s.num_replicas == world and s.rank == rank
      and sorted(sum(every, [])) == list(range(10)) + list(range(10))[:len(mine) * world - 10],
      str(every))

dist.destroy_process_group()
print(f"rank {rank} DONE failures={len(failures)}", flush=True)
sys.exit(1 if failures else 0)
