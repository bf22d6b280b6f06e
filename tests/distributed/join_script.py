"""Run by test_join.py under ``mpiexec -n 2``: DDP with uneven inputs inside ``Join``
against a float64 NumPy reference of PyTorch's semantics (a joined rank contributes zero
gradients; the average is over the initial world size, or over the ranks not joined)."""
import numpy as np

import framework as fw
import framework.distributed as dist
import framework.nn as nn
from framework.distributed.algorithms import Join
from framework.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
failures = []
LR = 0.1


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


class Net(nn.Module):
    def __init__(self, spare=False):
        super().__init__()
        self.fc = nn.Linear(4, 3, dtype=fw.float64)
        self.register_buffer("count", fw.zeros(1, dtype=fw.float64))
        if spare:
            self.spare = nn.Linear(4, 3, dtype=fw.float64)

    def forward(self, x):
        self.count += 1
        return self.fc(x)


def batch(r, k):
    g = np.random.default_rng(10 * r + k)
    return g.standard_normal((5, 4)), g.standard_normal((5, 3))


def grads(W, b, x, t):
    """d mean((x W^T + b - t)^2) / d(W, b), by hand."""
    d = 2.0 * (x @ W.T + b - t) / t.size
    return d.T @ x, d.sum(0)


def reference(W, b, nb, divide_by_initial):
    W, b = W.copy(), b.copy()
    last = None
    for k in range(max(nb)):
        active = [r for r in range(world) if k < nb[r]]
        gW, gb = np.zeros_like(W), np.zeros_like(b)
        for r in active:
            dW, db = grads(W, b, *batch(r, k))
            gW += dW
            gb += db
        n = world if divide_by_initial else len(active)
        last = (gW / n, gb / n)
        W -= LR * gW / n
        b -= LR * gb / n
    return W, b, last


def run(nb, divide_by_initial=True, spare=False, use_join_method=True):
    fw.manual_seed(0)
    model = DDP(Net(spare), find_unused_parameters=spare)
    W0 = model.module.fc.weight.detach().numpy().copy()
    b0 = model.module.fc.bias.detach().numpy().copy()
    opt = fw.optim.SGD(model.parameters(), lr=LR)
    ctx = model.join(divide_by_initial_world_size=divide_by_initial) if use_join_method \
        else Join([model], divide_by_initial_world_size=divide_by_initial)
    with ctx:
        for k in range(nb[rank]):
            x, t = (fw.tensor(a) for a in batch(rank, k))
            opt.zero_grad()
            ((model(x) - t) ** 2).mean().backward()
            last = (model.module.fc.weight.grad.numpy().copy(),
                    model.module.fc.bias.grad.numpy().copy())
            opt.step()
    W, b, ref_last = reference(W0, b0, nb, divide_by_initial)
    tag = f"nb={nb} divide_by_initial={divide_by_initial} spare={spare}"
    check(f"params {tag}", np.allclose(model.module.fc.weight.detach().numpy(), W, atol=1e-12) and
          np.allclose(model.module.fc.bias.detach().numpy(), b, atol=1e-12),
          f"{np.abs(model.module.fc.weight.detach().numpy() - W).max():.3g}")
    if nb[rank] == max(nb):     # the last joiner saw the last step's gradients
        check(f"last grads {tag}", np.allclose(last[0], ref_last[0], atol=1e-12) and
              np.allclose(last[1], ref_last[1], atol=1e-12))
    # buffers follow the ranks still training, and the last joiner's at the end
    check(f"buffer {tag}", model.module.count.item() == max(nb),
          str(model.module.count.item()))
    if spare:
        check(f"unused grad {tag}", model.module.spare.weight.grad is None)


run([1, 3])                                   # rank 0 joins first
run([3, 1], divide_by_initial=False, use_join_method=False)
run([2, 3], spare=True)

# throw_on_early_termination: every rank raises once one runs out
fw.manual_seed(0)
model = DDP(Net())
try:
    with model.join(throw_on_early_termination=True):
        for k in range([2, 4][rank]):
            x, t = (fw.tensor(a) for a in batch(rank, k))
            ((model(x) - t) ** 2).mean().backward()
    check("throw", False, "no error")
except RuntimeError as e:
    want = "Rank 0 exhausted all inputs." if rank == 0 else \
        "Detected at least one rank that exhausted inputs. Throwing across all ranks."
    check("throw", str(e) == want, str(e))

try:
    Join([])
    check("empty", False)
except ValueError as e:
    check("empty", "requires at least one joinable" in str(e), str(e))

dist.barrier()
print(f"rank {rank} DONE failures={failures}", flush=True)
dist.destroy_process_group()
