"""Run by test_functional_collectives.py under ``mpiexec -n 2``: the collectives of
``framework.distributed.nn`` forward and backward, against a float64 one-process reference
(every rank rebuilds every rank's inputs from seeds)."""
import sys
import warnings

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.distributed.nn as dnn
import framework.nn.functional as F

warnings.simplefilter("ignore", FutureWarning)
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
failures = []


def check(name, got, want):
    got = [g.detach().cpu().numpy() if g is not None else None for g in got]
    ok = len(got) == len(want) and all(
        g is not None and g.shape == np.shape(w) and np.allclose(g, w, rtol=1e-10, atol=1e-12)
        for g, w in zip(got, want))
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} got={got} want={want}"
          if not ok else f"rank {rank} PASS {name}", flush=True)


def data(r, tag, shape):
    """Rank ``r``'s input ``tag``: the same numbers on every rank."""
    seed = [r, sum(map(ord, tag))]
    return np.random.default_rng(seed).standard_normal(shape)


def leaf(a):
    return fw.tensor(a, dtype=fw.float64, device=device, requires_grad=True)


def const(a):
    return fw.tensor(a, dtype=fw.float64, device=device)


R = range(world)

# all_gather: loss_r = sum_i <out_i, W_r,i>; d x_k = sum_r W_r,k
x = leaf(data(rank, "ag", (3, 2)))
outs = dnn.all_gather(x)
sum((o * const(data(rank, f"agw{i}", (3, 2)))).sum() for i, o in enumerate(outs)).backward()
check("all_gather value", outs, [data(r, "ag", (3, 2)) for r in R])
check("all_gather grad", [x.grad], [sum(data(r, f"agw{rank}", (3, 2)) for r in R)])

# contrastive loss over the features of every rank (the use this module is for)
feats = leaf(data(rank, "cf", (2, 4)))
z = F.normalize(feats, dim=1)
allz = fw.cat(dnn.all_gather(z))
logits = z @ allz.t() / 0.5
loss = F.cross_entropy(logits, fw.arange(2, device=device) + 2 * rank)
loss.backward()
ref = [leaf(data(r, "cf", (2, 4))) for r in R]
rz = [F.normalize(f, dim=1) for f in ref]
rall = fw.cat(rz)
sum(F.cross_entropy(rz[r] @ rall.t() / 0.5, fw.arange(2, device=device) + 2 * r)
    for r in R).backward()
check("contrastive grad", [feats.grad], [ref[rank].grad.cpu().numpy()])

# all_reduce: y = sum_r x_r^2, loss_r = <y, W_r>; d x_k = 2 x_k sum_r W_r
x = leaf(data(rank, "ar", (5,)))
y = dnn.all_reduce(x * x)
(y * const(data(rank, "arw", (5,)))).sum().backward()
check("all_reduce value", [y], [sum(data(r, "ar", (5,)) ** 2 for r in R)])
check("all_reduce grad", [x.grad],
      [2 * data(rank, "ar", (5,)) * sum(data(r, "arw", (5,)) for r in R)])

# broadcast from 1: the source's grad sums every rank's; the others get zeros
x = leaf(data(rank, "bc", (4,)))
y = dnn.broadcast(x, 1)
(y * const(data(rank, "bcw", (4,)))).sum().backward()
check("broadcast value", [y], [data(1, "bc", (4,))])
check("broadcast grad", [x.grad],
      [sum(data(r, "bcw", (4,)) for r in R) if rank == 1 else np.zeros(4)])

# reduce to 0: every input gets the destination's output gradient
x = leaf(data(rank, "rd", (4,)))
y = dnn.reduce(x, 0)
(y * const(data(rank, "rdw", (4,)))).sum().backward()
if rank == 0:
    check("reduce value", [y], [sum(data(r, "rd", (4,)) for r in R)])
check("reduce grad", [x.grad], [data(0, "rdw", (4,))])

# gather to 0: rank k's input gets part k of the destination's gradients
x = leaf(data(rank, "ga", (2, 3)))
outs = dnn.gather(x, dst=0)
sum((o * const(data(rank, f"gaw{i}", (2, 3)))).sum() for i, o in enumerate(outs)).backward()
check("gather value", outs,
      [data(r, "ga", (2, 3)) for r in R] if rank == 0 else [np.zeros((2, 3))] * world)
check("gather grad", [x.grad], [data(0, f"gaw{rank}", (2, 3))])

# scatter from 1: the source's part i gets rank i's gradient, other ranks' inputs zeros
xs = [leaf(data(rank, f"sc{i}", (3,))) for i in R]
y = dnn.scatter(xs, src=1)
(y * const(data(rank, "scw", (3,)))).sum().backward()
check("scatter value", [y], [data(1, f"sc{rank}", (3,))])
check("scatter grad", [t.grad for t in xs],
      [data(i, "scw", (3,)) if rank == 1 else np.zeros(3) for i in R])

# reduce_scatter: out_r = sum_k in_k,r; d in_i (on any rank) = W_i
ins = [leaf(data(rank, f"rs{i}", (2, 2))) for i in R]
out = dnn.reduce_scatter(fw.empty(2, 2, dtype=fw.float64, device=device), ins)
(out * const(data(rank, "rsw", (2, 2)))).sum().backward()
check("reduce_scatter value", [out], [sum(data(k, f"rs{rank}", (2, 2)) for k in R)])
check("reduce_scatter grad", [t.grad for t in ins], [data(i, "rsw", (2, 2)) for i in R])

# all_to_all: out_i on rank r is in_r of rank i; d in_j on rank r = W_j,r
ins = [leaf(data(rank, f"aa{i}", (i + 1, 2))) for i in R]
outs = dnn.all_to_all([fw.empty(rank + 1, 2, dtype=fw.float64, device=device) for _ in R], ins)
sum((o * const(data(rank, f"aaw{i}", (rank + 1, 2)))).sum()
    for i, o in enumerate(outs)).backward()
check("all_to_all value", outs, [data(i, f"aa{rank}", (rank + 1, 2)) for i in R])
check("all_to_all grad", [t.grad for t in ins], [data(j, f"aaw{rank}", (j + 1, 2)) for j in R])

# all_to_all_single with uneven splits: rank r sends splits[r][j] rows to rank j
splits = [[1, 2], [3, 1]]
rows_in = sum(splits[rank])
rows_out = [splits[j][rank] for j in R]
x = leaf(data(rank, "as", (rows_in, 2)))
y = dnn.all_to_all_single(fw.empty(sum(rows_out), 2, dtype=fw.float64, device=device), x,
                          output_split_sizes=rows_out, input_split_sizes=splits[rank])
(y * const(data(rank, "asw", (sum(rows_out), 2)))).sum().backward()


def part(a, sizes, i):
    return a[sum(sizes[:i]):sum(sizes[:i + 1])]


check("all_to_all_single value", [y],
      [np.concatenate([part(data(j, "as", (sum(splits[j]), 2)), splits[j], rank) for j in R])])
want = np.concatenate([
    part(data(j, "asw", (sum(splits[k][j] for k in R), 2)), [splits[k][j] for k in R], rank)
    for j in R])
check("all_to_all_single grad", [x.grad], [want])

print(f"rank {rank} DONE failures={len(failures)}", flush=True)
