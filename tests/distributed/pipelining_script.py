"""Run by test_pipelining.py under ``mpiexec -n 2`` (or 4): a 4-layer MLP split into one
stage per rank, trained by GPipe and 1F1B, against one process on the whole batch."""
import sys

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.nn as nn
import framework.nn.functional as F
from framework.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe,
                                              ScheduleInterleaved1F1B, ScheduleLoopedBFS,
                                              TensorChunkSpec, merge_chunks,
                                              split_args_kwargs_into_chunks)

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
failures = []
B, N_MB, STEPS, LR = 8, 4, 3, 0.1


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


def make_layers():
    fw.manual_seed(0)
    return [nn.Sequential(nn.Linear(6 if i == 0 else 8, 8 if i < 3 else 3), nn.Tanh())
            for i in range(4)]


def diff(a, b):
    return float((a.detach().cpu() - b.detach().cpu()).abs().max())


rng = np.random.default_rng(0)
X = fw.tensor(rng.standard_normal((B, 6)), dtype=fw.float64, device=device)
Y = fw.tensor(rng.standard_normal((B, 3)), dtype=fw.float64, device=device)

# one process, whole batch
ref = nn.Sequential(*make_layers()).to(device, fw.float64)
ref_opt = fw.optim.SGD(ref.parameters(), lr=LR)
ref_losses, ref_outs = [], []
for _ in range(STEPS):
    ref_opt.zero_grad()
    out = ref(X)
    loss = F.mse_loss(out, Y)
    loss.backward()
    ref_opt.step()
    ref_losses.append(float(loss))
    ref_outs.append(out.detach())
per = 4 // world
mine = slice(rank * per, (rank + 1) * per)
ref_params = [p for layer in list(ref)[mine] for p in layer.parameters()]


def train(schedule_cls):
    stage_mod = nn.Sequential(*make_layers()[mine]).to(device, fw.float64)
    stage = PipelineStage(stage_mod, rank, world, device)
    sched = schedule_cls(stage, N_MB, loss_fn=F.mse_loss)
    opt = fw.optim.SGD(stage_mod.parameters(), lr=LR)
    step_losses, outs = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        losses = []
        out = sched.step(*([X] if stage.is_first else []),
                         target=Y if stage.is_last else None, losses=losses)
        opt.step()
        step_losses.append(losses)
        outs.append(out)
    return stage, stage_mod, step_losses, outs


for cls in (ScheduleGPipe, Schedule1F1B):
    name = f"{cls.__name__} {world} ranks {device}"
    stage, mod, step_losses, outs = train(cls)
    d = max(diff(p, q) for p, q in zip(mod.parameters(), ref_params))
    check(f"{name}: parameters equal one process", d < 1e-12, f"max diff {d:.2e}")
    if stage.is_last:
        ok = all(len(ls) == N_MB for ls in step_losses)
        means = [sum(float(x) for x in ls) / N_MB for ls in step_losses]
        dl = max(abs(a - b) for a, b in zip(means, ref_losses))
        check(f"{name}: {N_MB} losses per step, mean equals full-batch loss", ok and dl < 1e-12,
              f"{means} vs {ref_losses}")
        # each microbatch loss is the loss of its rows
        mb = [float(F.mse_loss(ref_outs[0][i * 2:(i + 1) * 2], Y[i * 2:(i + 1) * 2]))
              for i in range(N_MB)]
        check(f"{name}: per-microbatch losses", max(
            abs(float(a) - b) for a, b in zip(step_losses[0], mb)) < 1e-12)
        do = max(diff(o, r) for o, r in zip(outs, ref_outs))
        check(f"{name}: merged output", all(tuple(o.shape) == (B, 3) and not o.requires_grad
                                            for o in outs) and do < 1e-12, f"max diff {do:.2e}")
    else:
        check(f"{name}: no output off the last stage",
              all(o is None for o in outs) and all(ls == [] for ls in step_losses))

# two stages per rank (2 ranks: stages rank and rank + 2, one layer each)
if world == 2:
    for cls in (ScheduleLoopedBFS, ScheduleInterleaved1F1B):
        layers = make_layers()
        mods = [layers[s].to(device, fw.float64) for s in (rank, rank + 2)]
        stages = [PipelineStage(m, s, 4, device) for m, s in zip(mods, (rank, rank + 2))]
        sched = cls(stages, N_MB, loss_fn=F.mse_loss)
        opt = fw.optim.SGD([p for m in mods for p in m.parameters()], lr=LR)
        step_losses, outs = [], []
        for _ in range(STEPS):
            opt.zero_grad()
            losses = []
            outs.append(sched.step(*([X] if rank == 0 else []),
                                   target=Y if rank == 1 else None, losses=losses))
            opt.step()
            step_losses.append(losses)
        theirs = [p for s in (rank, rank + 2) for p in list(ref)[s].parameters()]
        d = max(diff(p, q) for p, q in zip([p for m in mods for p in m.parameters()], theirs))
        ok = d < 1e-12
        if rank == 1:
            means = [sum(float(x) for x in ls) / N_MB for ls in step_losses]
            ok = ok and max(abs(a - b) for a, b in zip(means, ref_losses)) < 1e-12 and \
                max(diff(o, r) for o, r in zip(outs, ref_outs)) < 1e-12
        else:
            ok = ok and all(o is None for o in outs)
        check(f"{cls.__name__} 4 stages on 2 ranks {device}: equals one process", ok,
              f"max param diff {d:.2e}")

# a stage sending two tensors, one of them integer (no gradient goes back for it)
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)

    def forward(self, x):
        return self.fc(x), (x[:, :1] > 0).long()


class Tail(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, h, sign):
        return self.fc(h.tanh()) * (sign + 1)


if world == 2:
    fw.manual_seed(1)
    head, tail = Head().to(device, fw.float64), Tail().to(device, fw.float64)
    F.mse_loss(tail(*head(X)), Y).backward()
    mod = (head, tail)[rank]
    want = [p.grad.clone() for p in mod.parameters()]
    mod.zero_grad()
    sched = Schedule1F1B(PipelineStage(mod, rank, 2, device), N_MB, loss_fn=F.mse_loss)
    for _ in range(2):      # the second step reuses the cached shapes
        mod.zero_grad()
        sched.step(*([X] if rank == 0 else []), target=Y if rank == 1 else None)
    d = max(diff(p.grad, g) for p, g in zip(mod.parameters(), want))
    check("stage with a float and an int64 output", d < 1e-12, f"max diff {d:.2e}")

# eval: forward only, output merged on the last stage, gradients untouched
stage_mod = nn.Sequential(*make_layers()[mine]).to(device, fw.float64)
sched = ScheduleGPipe(PipelineStage(stage_mod, rank, world, device), N_MB)
out = sched.step(*([X] if rank == 0 else []))
full = nn.Sequential(*make_layers()).to(device, fw.float64)(X)
check("forward-only schedule", (out is None) != (rank == world - 1) and
      (out is None or diff(out, full) < 1e-12) and
      all(p.grad is None for p in stage_mod.parameters()))

# scale_grads=False leaves the gradients summed over microbatches
stage_mod = nn.Sequential(*make_layers()[mine]).to(device, fw.float64)
sched = Schedule1F1B(PipelineStage(stage_mod, rank, world, device), N_MB, loss_fn=F.mse_loss,
                     scale_grads=False)
sched.step(*([X] if rank == 0 else []), target=Y if rank == world - 1 else None)
fresh = nn.Sequential(*make_layers()).to(device, fw.float64)
F.mse_loss(fresh(X), Y).backward()
fresh_params = [p for layer in list(fresh)[mine] for p in layer.parameters()]
d = max(diff(p.grad, q.grad * N_MB) for p, q in zip(stage_mod.parameters(), fresh_params))
check("scale_grads=False sums microbatch gradients", d < 1e-12, f"max diff {d:.2e}")


# errors, all raised on every rank before any message is exchanged
def raises(exc, text, fn):
    try:
        fn()
    except exc as e:
        return text in str(e), str(e)
    return False, "no error"


st = PipelineStage(nn.Linear(8, 8).to(device, fw.float64), rank, world, device)
check("stage index out of range", *raises(
    ValueError, f"Stage index {world} is out of range of {world}",
    lambda: PipelineStage(nn.Linear(2, 2), world, world, device)))
check("1F1B needs n_microbatches >= stages", *raises(
    ValueError, f"Number of microbatches (1) must be greater than or equal to the number of "
    f"stages ({world}).", lambda: Schedule1F1B(st, 1, loss_fn=F.mse_loss)))
Xe = fw.zeros(10, 8, dtype=fw.float64, device=device)
check("n_microbatches must divide the batch", *raises(
    ValueError, "must divide the batch size", lambda: ScheduleGPipe(st, 4, F.mse_loss).step(
        Xe, target=Xe)))
check("batch smaller than n_microbatches", *raises(
    AssertionError, "Tensor size 2 is smaller than num_chunks",
    lambda: ScheduleGPipe(st, 4, F.mse_loss).step(Xe[:2], target=Xe[:2])))
with fw.no_grad():
    check("step under no_grad", *raises(
        RuntimeError, "Please call eval() instead",
        lambda: ScheduleGPipe(st, 4, F.mse_loss).step(Xe, target=Xe)))

# microbatch helpers (local)
a = fw.arange(12.0).reshape(6, 2)
args_split, kwargs_split = split_args_kwargs_into_chunks((a, 5), {"m": a.T}, 3,
                                                         kwargs_chunk_spec={
                                                             "m": TensorChunkSpec(1)})
check("split_args_kwargs_into_chunks", len(args_split) == 3 and all(
    x[1] == 5 and tuple(x[0].shape) == (2, 2) and tuple(k["m"].shape) == (2, 2)
    for x, k in zip(args_split, kwargs_split)) and diff(kwargs_split[2]["m"], a.T[:, 4:]) == 0)
check("merge_chunks", diff(merge_chunks([x[0] for x in args_split], None), a) == 0 and
      diff(merge_chunks([k for k in kwargs_split], {"m": TensorChunkSpec(1)})["m"], a.T) == 0)

dist.destroy_process_group()
print(f"rank {rank} DONE failures={len(failures)}", flush=True)
sys.exit(1 if failures else 0)
