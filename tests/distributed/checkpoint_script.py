"""Run by test_checkpoint.py under ``mpiexec -n N``: ``save <dir>`` trains a fully_shard
model (and keeps a DTensor Shard(0)) on N ranks, saves both as distributed checkpoints
and the full state dicts with framework.save; ``load <dir>`` loads the checkpoints into a
fully_shard model on N ranks (any N: resharding) and the DTensor as Replicate and as
Shard(1), checks them against the full state dicts exactly, and trains on from there.
Also async_save on N ranks."""
import os
import sys

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.distributed.checkpoint as dcp
import framework.nn as nn
from framework.distributed.checkpoint.state_dict import (
    StateDictOptions, get_state_dict, set_state_dict)
from framework.distributed.fsdp import fully_shard
from framework.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
mode, root = sys.argv[1], sys.argv[2]
failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 5), nn.Linear(5, 3)])
        self.head = nn.Linear(3, 2, bias=False)

    def forward(self, x):
        for b in self.blocks:
            x = b(x).tanh()
        return self.head(x)


def make(seed):
    fw.manual_seed(seed)
    model = Net()
    for b in model.blocks:
        fully_shard(b)
    fully_shard(model)
    return model, fw.optim.Adam(model.parameters(), lr=0.05)


def train(model, opt, steps, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = fw.tensor(rng.standard_normal((4, 4)), dtype=fw.float32)
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()


def _same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, fw.Tensor):
        return isinstance(b, fw.Tensor) and a.dtype == b.dtype and fw.equal(a, b)
    return a == b


FULL = StateDictOptions(full_state_dict=True)
X = fw.arange(35, dtype=fw.float32).reshape(5, 7)       # 5 rows: uneven Shard(0) chunks
mesh = init_device_mesh("cpu", (world,))

if mode == "save":
    model, opt = make(0)
    train(model, opt, 2)
    msd, osd = get_state_dict(model, opt)
    dcp.save({"model": msd, "optim": osd, "step": 2}, checkpoint_id=os.path.join(root, "fsdp"))
    # model.state_dict() of a fully_shard model: local shards that know where they sit
    dcp.save(model.state_dict(), checkpoint_id=os.path.join(root, "plain"))
    dt = distribute_tensor(X, mesh, [Shard(0)])
    dcp.save({"dt": dt}, checkpoint_id=os.path.join(root, "dt"))
    fmsd, fosd = get_state_dict(model, opt, options=FULL)
    if rank == 0:     # now: the state dicts hold references (Adam's step) that train on
        fw.save({"model": fmsd, "optim": fosd}, os.path.join(root, "full.pt"))
    fut = dcp.async_save({"model": get_state_dict(model, opt)[0]},
                         checkpoint_id=os.path.join(root, "async"))
    check("async_save", fut.result(timeout=60).state_dict_metadata.keys() ==
          {"model." + k for k in fmsd})
    train(model, opt, 2, seed=2)
    final = get_state_dict(model, opt, options=FULL)[0]
    if rank == 0:
        fw.save(final, os.path.join(root, "final.pt"))
    check("saved", os.path.exists(os.path.join(root, "fsdp", ".metadata")))
else:
    model, opt = make(7)
    train(model, opt, 1)                # optimizer state to load into
    msd, osd = get_state_dict(model, opt)
    sd = {"model": msd, "optim": osd, "step": 0}
    dcp.load(sd, checkpoint_id=os.path.join(root, "fsdp"))
    set_state_dict(model, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    ref = fw.load(os.path.join(root, "full.pt"))
    fmsd, fosd = get_state_dict(model, opt, options=FULL)
    check("model reshards exactly", _same(fmsd, ref["model"]))
    check("optimizer state reshards exactly", _same(fosd["state"], ref["optim"]["state"]))
    check("non-tensor values", sd["step"] == 2 and
          fosd["param_groups"][0]["lr"] == ref["optim"]["param_groups"][0]["lr"])
    other, other_opt = make(9)
    train(other, other_opt, 1)
    set_state_dict(other, other_opt, model_state_dict=ref["model"], optim_state_dict=ref["optim"],
                   options=FULL)
    m2, o2 = get_state_dict(other, other_opt, options=FULL)
    check("set_state_dict of full state dicts", _same(m2, ref["model"]) and
          _same(o2["state"], ref["optim"]["state"]))
    sd = {"model": get_state_dict(model, opt)[0]}
    dcp.load(sd, checkpoint_id=os.path.join(root, "async"))
    bad = [k for k in ref["model"] if not fw.equal(ref["model"][k],
                                                   get_state_dict(model, opt, options=FULL)[0][k])]
    check("async_save checkpoint loads", not bad, bad)
    train(model, opt, 2, seed=2)        # resumed: as the run that went on after saving
    final = get_state_dict(model, opt, options=FULL)[0]
    ref_final = fw.load(os.path.join(root, "final.pt"))
    err = max(float((final[k] - ref_final[k]).abs().max()) for k in final)
    check("training resumes", err < 1e-6, f"max diff {err:.1e}")
    dt = distribute_tensor(fw.zeros(5, 7), mesh, [Replicate()])
    dcp.load({"dt": dt}, checkpoint_id=os.path.join(root, "dt"))
    check("Shard(0) saved, Replicate loaded", fw.equal(dt.to_local(), X))
    dt = distribute_tensor(fw.zeros(5, 7), mesh, [Shard(1)])
    dcp.load({"dt": dt}, checkpoint_id=os.path.join(root, "dt"))
    check("Shard(0) saved, Shard(1) loaded", fw.equal(dt.full_tensor(), X))
print(f"rank {rank} DONE failures={len(failures)}", flush=True)
