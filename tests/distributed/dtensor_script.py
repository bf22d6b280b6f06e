"""Run by test_dtensor.py under ``mpiexec -n N``: DTensor placements and redistribution
(values and gradients against the dense computation, uneven shards included), ops with
sharding propagation, and tensor parallelism (an MLP, a transformer block and embeddings)
trained for a few steps against one process (float64)."""
import sys
import time
import warnings

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.nn as nn
import framework.nn.functional as F
import framework.distributed.tensor as dtensor_factories
from framework.distributed.tensor import (DTensor, Partial, Replicate, Shard,
                                          distribute_module, distribute_tensor,
                                          init_device_mesh)
from framework.distributed.tensor.parallel import (
    ColwiseParallel, PrepareModuleInput, RowwiseParallel, SequenceParallel,
    parallelize_module)

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
quick = device != "cpu"     # simulated cuda runs in the interpreter: fewer cases
failures = []


T0 = time.time()


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail} "
          f"[{time.time() - T0:.1f}s]", flush=True)


def diff(a, b):
    a, b = a.detach().cpu().double(), b.detach().cpu().double()
    if tuple(a.shape) != tuple(b.shape):
        return float("inf")
    return float((a - b).abs().max()) if a.numel() else 0.0


def chunk(t, dim, k=None, i=None):
    """This rank's torch.chunk part (the reference for Shard)."""
    parts = t.chunk(world if k is None else k, dim)
    i = rank if i is None else i
    if i < len(parts):
        return parts[i]
    shape = list(t.shape)
    shape[dim] = 0
    return fw.zeros(shape, dtype=t.dtype, device=t.device)


rng = np.random.default_rng(0)


def rand(*shape):
    return fw.tensor(rng.standard_normal(shape), device=device)


mesh = init_device_mesh(device, (world,))

# ---- placements, round trips, uneven shards -------------------------------------------
check("placements", Shard(0) == Shard(0) and Shard(0) != Shard(1) and
      Partial() == Partial("sum") and repr(Shard(1)) == "Shard(dim=1)" and
      repr(Partial()) == "Partial(sum)" and repr(Replicate()) == "Replicate()")
for rows in (2 * world, 2 * world + 1, world - 1):   # even, uneven, one rank empty
    full = rand(rows, 3)
    for dim in (0, -1) if rows != world - 1 else (0,):
        d = distribute_tensor(full, mesh, [Shard(dim)])
        ok = isinstance(d, DTensor) and tuple(d.shape) == tuple(full.shape) and \
            diff(d.to_local(), chunk(full, dim)) == 0 and diff(d.full_tensor(), full) == 0
        check(f"distribute_tensor/full_tensor rows={rows} Shard({dim})", ok,
              f"local {tuple(d.to_local().shape)}")
r = distribute_tensor(rand(3, 2), mesh, [Replicate()])
check("Replicate keeps the whole tensor", tuple(r.to_local().shape) == (3, 2))
loc = rand(2, 3)
d = DTensor.from_local(loc, mesh, [Shard(0)])
check("from_local: global shape of even shards", tuple(d.shape) == (2 * world, 3) and
      d.placements == (Shard(0),) and d.device_mesh == mesh)
d = DTensor.from_local(loc[:1] if rank else loc, mesh, [Shard(0)], shape=(world + 1, 3))
check("from_local with shape (uneven)", tuple(d.shape) == (world + 1, 3) and
      tuple(d.full_tensor().shape) == (world + 1, 3))
p = DTensor.from_local(loc, mesh, [Partial()])
want = loc.clone()
dist.all_reduce(want)
check("Partial full_tensor is the sum", diff(p.full_tensor(), want) < 1e-12)
ps = DTensor.from_local(fw.tensor(1.5 + rank, device=device), mesh, [Partial()])
check("float() of a Partial scalar is the reduced value",
      float(ps) == sum(1.5 + r for r in range(world)))


mine_ = rand(2, 2) + rank
rep = DTensor.from_local(mine_, mesh, [Replicate()], run_check=True)
first = mine_.clone()
dist.broadcast(first, src=0)
check("from_local(run_check=True) makes the replicas rank 0's", diff(rep.to_local(), first) == 0)

z = dtensor_factories.zeros(2 * world + 1, 3, device_mesh=mesh, placements=[Shard(0)])
f = dtensor_factories.full((3, world + 1), 2.5, dtype=fw.float64, device_mesh=mesh,
                           placements=[Shard(1)])
check("zeros/full factories allocate the local shard",
      tuple(z.shape) == (2 * world + 1, 3) and
      diff(z.to_local(), chunk(fw.zeros(2 * world + 1, 3, dtype=z.dtype), 0)) == 0 and
      diff(f.to_local(), chunk(fw.full((3, world + 1), 2.5, dtype=fw.float64), 1)) == 0)

# a 2-D mesh (4 ranks): nested shards as PyTorch lays them out (mesh dim 0 first)
if world == 4:
    mesh2 = init_device_mesh(device, (2, 2), mesh_dim_names=("dp", "tp"))
    i, j = mesh2.get_coordinate()
    full = rand(7, 5)
    want = {(Shard(0), Shard(1)): chunk(chunk(full, 0, 2, i), 1, 2, j),
            (Shard(0), Shard(0)): chunk(chunk(full, 0, 2, i), 0, 2, j),
            (Replicate(), Shard(1)): chunk(full, 1, 2, j),
            (Shard(1), Replicate()): chunk(full, 1, 2, i)}
    for src in want:
        for dst in want:
            x = want[src].detach().requires_grad_(True)
            d = DTensor.from_local(x, mesh2, src, shape=full.shape)
            e = d.redistribute(mesh2, dst)
            (e.full_tensor() * full).sum().backward()
            check(f"2-D mesh redistribute {src} -> {dst}",
                  diff(e.to_local(), want[dst]) < 1e-12 and
                  diff(e.full_tensor(), full) < 1e-12 and diff(x.grad, want[src]) < 1e-12)
    p2 = DTensor.from_local(full, mesh2, [Partial(), Shard(0)], shape=(7 * 2, 5))
    check("2-D mesh Partial on one dim, Shard on the other",
          diff(p2.redistribute(mesh2, [Replicate(), Shard(0)]).to_local(), full * 2) < 1e-12)

# ---- every redistribute pair: values and gradients ---------------------------------------
def dense_of(src, full):
    """What each rank holds for placement src of the global tensor `full` (Partial: the
    global value split over the ranks as v * (rank + 1) / sum)."""
    if isinstance(src, Shard):
        return chunk(full, src.dim)
    if isinstance(src, Partial):
        return full * ((rank + 1) / (world * (world + 1) / 2))
    return full


places = [Shard(0), Shard(1), Replicate(), Partial()]
for rows in (2 * world + 1,) if quick else (2 * world, 2 * world + 1):
    full = rand(rows, world + 1)
    wgt = rand(rows, world + 1)       # the loss is sum(full_tensor * wgt), on every rank
    for src in places:
        for dst in places:
            x = dense_of(src, full).detach().requires_grad_(True)
            d = DTensor.from_local(x, mesh, [src], shape=full.shape)
            e = d.redistribute(mesh, [dst])
            ok = e.placements == (dst,) and diff(e.full_tensor(), full) < 1e-12
            if isinstance(dst, Shard):
                ok = ok and diff(e.to_local(), chunk(full, dst.dim)) < 1e-12
            if isinstance(dst, Replicate):
                ok = ok and diff(e.to_local(), full) < 1e-12
            (e.full_tensor() * wgt).sum().backward()
            # d loss / d local: the local chunk of wgt for Shard, wgt itself otherwise
            gw = chunk(wgt, src.dim) if isinstance(src, Shard) else wgt
            ok = ok and x.grad is not None and diff(x.grad, gw) < 1e-12
            check(f"redistribute {src} -> {dst} rows={rows}", ok)

# ---- ops --------------------------------------------------------------------------------
A, Bm, Cw = rand(5, 4), rand(5, 4), rand(4, 2 * world + 1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a = distribute_tensor(A, mesh, [Shard(0)])
    b = distribute_tensor(Bm, mesh, [Shard(0)])
    s = a * b + a - 2.0 * b
    check("elementwise keeps Shard(0)", s.placements == (Shard(0),) and
          diff(s.full_tensor(), A * Bm + A - 2.0 * Bm) < 1e-12)
    ar = distribute_tensor(A, mesh, [Replicate()])
    w1 = distribute_tensor(Cw, mesh, [Shard(1)])
    y = ar @ w1
    check("Replicate @ Shard(1) -> Shard(-1)", y.placements == (Shard(1),) and
          diff(y.full_tensor(), A @ Cw) < 1e-12)
    ac = distribute_tensor(A, mesh, [Shard(1)])
    w0 = distribute_tensor(Cw, mesh, [Shard(0)])
    z = ac @ w0
    check("Shard(-1) @ Shard(0) -> Partial", z.placements == (Partial(),) and
          diff(z.full_tensor(), A @ Cw) < 1e-12)
    sm = a.sum()
    check("sum over a sharded dim is Partial", sm.placements == (Partial(),) and
          diff(sm.full_tensor(), A.sum()) < 1e-12)
    s1 = a.sum(1)
    check("sum over another dim keeps Shard", s1.placements == (Shard(0),) and
          diff(s1.full_tensor(), A.sum(1)) < 1e-12)
    bias = distribute_tensor(Cw[0], mesh, [Replicate()])
    yb = (y + bias).relu()
    check("Shard + Replicate (broadcast) and relu", yb.placements == (Shard(1),) and
          diff(yb.full_tensor(), (A @ Cw + Cw[0]).relu()) < 1e-12)
    check("no warning from ops with a sharding rule", not caught, str(caught[:1]))
    sm = a.softmax(-1)
    sm2 = a.softmax(0)
    check("fallback: Replicate result with one warning", sm.placements == (Replicate(),) and
          diff(sm.full_tensor(), A.softmax(-1)) < 1e-12 and
          diff(sm2.full_tensor(), A.softmax(0)) < 1e-12 and
          sum("softmax" in str(w.message) for w in caught) == 1)

# gradients through ops, against the dense computation
Ad = A.clone().requires_grad_(True)
Cd = Cw.clone().requires_grad_(True)
((Ad @ Cd).tanh() * 3.0).sum().backward()
a = distribute_tensor(A, mesh, [Replicate()])
a.requires_grad_(True)
c = distribute_tensor(Cw, mesh, [Shard(1)])
c.requires_grad_(True)
loss = ((a @ c).tanh() * 3.0).sum()
loss.full_tensor().backward()
check("gradients through matmul/tanh/sum: Replicate input",
      diff(a.grad.full_tensor(), Ad.grad) < 1e-12 and a.grad.placements == (Replicate(),))
check("gradients through matmul/tanh/sum: Shard(1) weight",
      diff(c.grad.to_local(), chunk(Cd.grad, 1)) < 1e-12 and
      diff(c.grad.full_tensor(), Cd.grad) < 1e-12)

# ---- free functions (__torch_function__): the full-tensor results ----------------------
def check_free_functions():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X, W, Bv = rand(2 * world + 1, 4), rand(3, 4), rand(3)
        x0 = distribute_tensor(X, mesh, [Shard(0)])
        wr = distribute_tensor(W, mesh, [Replicate()])
        br = distribute_tensor(Bv, mesh, [Replicate()])
        y = F.linear(x0, wr, br)
        check("F.linear(Shard(0) input, Replicate weight and bias) keeps Shard(0)",
              isinstance(y, DTensor) and y.placements == (Shard(0),) and
              diff(y.full_tensor(), F.linear(X, W, Bv)) < 1e-12)
        x1 = distribute_tensor(X, mesh, [Shard(1)])
        w1 = distribute_tensor(W, mesh, [Shard(1)])
        check("F.linear(Shard(-1), Shard(1) weight) is Partial",
              F.linear(x1, w1).placements == (Partial(),) and
              diff(F.linear(x1, w1).full_tensor(), F.linear(X, W)) < 1e-12)
        Y = rand(2 * world + 1, 4)
        y0 = distribute_tensor(Y, mesh, [Shard(0)])
        check("framework.add/mul/sub(alpha) on DTensors",
              diff(fw.add(x0, y0).full_tensor(), X + Y) < 1e-12 and
              diff(fw.mul(x0, 3.0).full_tensor(), X * 3.0) < 1e-12 and
              diff(fw.sub(x0, y0, alpha=2).full_tensor(), X - 2 * Y) < 1e-12 and
              fw.add(x0, y0).placements == (Shard(0),))
        check("framework.sum (all and dim) of a Shard(0) DTensor",
              diff(fw.sum(x0).full_tensor(), X.sum()) < 1e-12 and
              diff(fw.sum(x0, 0).full_tensor(), X.sum(0)) < 1e-12 and
              diff(fw.mean(x0, 1).full_tensor(), X.mean(1)) < 1e-12)
        check("framework.matmul(Shard(0), Replicate) and F.gelu",
              diff(fw.matmul(x0, distribute_tensor(W.t(), mesh, [Replicate()])).full_tensor(),
                   X @ W.t()) < 1e-12 and diff(F.gelu(x0).full_tensor(), F.gelu(X)) < 1e-12 and
              F.gelu(x0).placements == (Shard(0),))
        check("no warning from free functions with a sharding rule", not caught,
              str(caught[:1]))
        cs = fw.cumsum(x0, 0)
        check("free function without a rule: gathered, with a warning",
              cs.placements == (Replicate(),) and diff(cs.full_tensor(), fw.cumsum(X, 0))
              < 1e-12 and sum("cumsum" in str(w.message) for w in caught) == 1)
        wp = nn.Parameter(distribute_tensor(W, mesh, [Shard(0)]))
        F.linear(distribute_tensor(X, mesh, [Replicate()]), wp).sum().full_tensor().backward()
        G = fw.ones(X.shape[0], 3, dtype=X.dtype).t() @ X
        norm = nn.utils.clip_grad_norm_([wp], 1.0, foreach=False)
        check("clip_grad_norm_ of Shard(0) DTensor gradients: the global norm",
              abs(float(norm) - float(G.norm())) < 1e-12 and
              diff(wp.grad.full_tensor(), G / G.norm()) < 1e-6)
    try:
        fw.add(x0, X)
        check("framework.add(DTensor, Tensor) raises the mixed-tensor error", False)
    except RuntimeError as e:
        check("framework.add(DTensor, Tensor) raises the mixed-tensor error",
              "mixed framework.Tensor and DTensor" in str(e))


if not quick:     # cpu only: the rules are device-independent
    check_free_functions()

# ---- distribute_module -------------------------------------------------------------------
seen = []


class Affine(nn.Module):
    """A layer written with DTensor methods (the free functions see local shards here)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(rand(2 * world, 4))
        self.bias = nn.Parameter(rand(2 * world))

    def forward(self, x):
        return x @ self.weight.t() + self.bias


lin = Affine()
W0, B0, XA = lin.weight.detach().clone(), lin.bias.detach().clone(), rand(3, 4)


def shard_weight(name, mod, mesh_):
    if name == "":
        mod.weight = nn.Parameter(distribute_tensor(mod.weight.detach(), mesh_, [Shard(0)]))


def to_replicate(mod, inputs, mesh_):
    seen.append("in")
    return (DTensor.from_local(inputs[0], mesh_, [Replicate()]),)


distribute_module(lin, mesh, shard_weight, input_fn=to_replicate,
                  output_fn=lambda mod, out, m_: seen.append("out") or out.full_tensor())
out = lin(XA)
check("distribute_module: partition_fn, the rest Replicate, the hooks",
      diff(out, XA @ W0.t() + B0) < 1e-12 and
      isinstance(lin.weight, nn.Parameter) and isinstance(lin.weight, DTensor) and
      lin.weight.placements == (Shard(0),) and lin.bias.placements == (Replicate(),) and
      diff(lin.weight.full_tensor(), W0) == 0 and seen == ["in", "out"] and
      [n for n, _ in lin.named_parameters()] == ["weight", "bias"])

# ---- tensor parallelism ------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, d=6, h=4 * world + 2):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Attention(nn.Module):
    def __init__(self, d=8, heads=2 * world):
        super().__init__()
        self.hd = d // heads
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        b, s, _ = x.shape

        def split(t):     # the local heads: (b, heads on this rank, s, hd)
            return t.view(b, s, -1, self.hd).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = (q @ k.transpose(-2, -1) / self.hd ** 0.5).softmax(-1)
        return self.o((att @ v).transpose(1, 2).reshape(b, s, -1))


class Block(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = MLP(d, 12)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def make(cls, seed=0):
    fw.manual_seed(seed)
    return cls().to(device=device, dtype=fw.float64)


def train(model, x, y, steps=2 if quick else 3, opt_cls=fw.optim.SGD, lr=0.1):
    opt = opt_cls(model.parameters(), lr=lr)
    outs = []
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        F.mse_loss(out, y).backward()
        outs.append(out.detach())
        if steps > 1:
            opt.step()
    return outs


def full_of(p):
    return p.full_tensor() if isinstance(p, DTensor) else p


def compare(name, model, ref, x, y, steps=2 if quick else 3, opt_cls=fw.optim.SGD):
    outs = train(model, x, y, steps, opt_cls)
    routs = train(ref, x, y, steps, opt_cls)
    d_out = max(diff(o, r) for o, r in zip(outs, routs))
    d_par = max(diff(full_of(p.data), q) for p, q in zip(model.parameters(),
                                                          ref.parameters()))
    check(f"{name}: outputs on every rank equal one process", d_out < 1e-12, f"{d_out:.1e}")
    check(f"{name}: parameters after {steps} {opt_cls.__name__} steps", d_par < 1e-12,
          f"{d_par:.1e}")


# one step: gradients of the sharded weights are the slices of the dense gradients
X, Y = rand(4, 6), rand(4, 6)
m, ref = make(MLP), make(MLP)
parallelize_module(m, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
check("colwise/rowwise placements", m.fc1.weight.placements == (Shard(0),) and
      m.fc1.bias.placements == (Shard(0),) and m.fc2.weight.placements == (Shard(1),) and
      m.fc2.bias.placements == (Replicate(),) and isinstance(m.fc1.weight, nn.Parameter)
      and tuple(m.fc1.weight.shape) == (4 * world + 2, 6))
train(m, X, Y, 1)
train(ref, X, Y, 1)
check("MLP gradients are slices of the dense ones",
      diff(m.fc1.weight.grad.to_local(), chunk(ref.fc1.weight.grad, 0)) < 1e-12 and
      diff(m.fc1.bias.grad.to_local(), chunk(ref.fc1.bias.grad, 0)) < 1e-12 and
      diff(m.fc2.weight.grad.to_local(), chunk(ref.fc2.weight.grad, 1)) < 1e-12 and
      diff(m.fc2.bias.grad.to_local(), ref.fc2.bias.grad) < 1e-12)
m, ref = make(MLP), make(MLP)
parallelize_module(m, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
compare("MLP colwise/rowwise", m, ref, X, Y)
if not quick:       # the optimizer states are local shards too
    m, ref = make(MLP), make(MLP)
    parallelize_module(m, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
    compare("MLP colwise/rowwise", m, ref, X, Y, opt_cls=fw.optim.AdamW)

XT, YT = rand(2, 3, 8), rand(2, 3, 8)
m, ref = make(Block), make(Block)
parallelize_module(m, mesh, {"attn.q": ColwiseParallel(), "attn.k": ColwiseParallel(),
                             "attn.v": ColwiseParallel(), "attn.o": RowwiseParallel(),
                             "mlp.fc1": ColwiseParallel(), "mlp.fc2": RowwiseParallel()})
compare("transformer block", m, ref, XT, YT)

def check_sequence_parallel():
    """The norms run on sequence shards, fc1 all-gathers them, fc2 reduce-scatters."""
    XS, YS = rand(2, 2 * world, 8), rand(2, 2 * world, 8)
    m, ref = make(Block), make(Block)
    parallelize_module(m, mesh, {
        "ln1": SequenceParallel(), "ln2": SequenceParallel(),
        "attn": PrepareModuleInput(input_layouts=(Shard(1),),
                                   desired_input_layouts=(Replicate(),), use_local_output=True),
        "attn.q": ColwiseParallel(), "attn.k": ColwiseParallel(), "attn.v": ColwiseParallel(),
        "attn.o": RowwiseParallel(output_layouts=Shard(1)),
        "mlp.fc1": ColwiseParallel(input_layouts=Shard(1)),
        "mlp.fc2": RowwiseParallel(output_layouts=Shard(1))})

    class SPWrap(nn.Module):
        """Shards the input's sequence and gathers the output (residuals stay sharded)."""

        def __init__(self, block):
            super().__init__()
            self.block = block

        def forward(self, x):
            out = self.block.forward_sp(chunk(x, 1))
            return DTensor.from_local(out, mesh, [Shard(1)]).full_tensor()

    def forward_sp(self, x):
        h = self.ln1(x).to_local()
        x = x + self.attn(h)
        return x + self.mlp(self.ln2(x).to_local())

    Block.forward_sp = forward_sp
    outs = train(SPWrap(m), XS, YS)
    routs = train(ref, XS, YS)
    d_out = max(diff(o, r) for o, r in zip(outs, routs))
    d_par = max(diff(full_of(p.data), q) for p, q in zip(m.parameters(), ref.parameters()))
    check("sequence parallel block: outputs", d_out < 1e-12, f"{d_out:.1e}")
    check("sequence parallel block: parameters after the steps", d_par < 1e-12,
          f"{d_par:.1e}")


if not quick:       # cpu only, for time
    check_sequence_parallel()


class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(2 * world + 1, 6)      # vocab rows do not divide evenly
        self.col = nn.Embedding(5, 2 * world)
        self.head = nn.Linear(6 + 2 * world, 3)

    def forward(self, ids):
        return self.head(fw.cat([self.tok(ids), self.col(ids % 5)], -1))


ids = fw.tensor(rng.integers(0, 2 * world + 1, (3, 4)), device=device)
m, ref = make(Emb), make(Emb)
# as in PyTorch, a row-wise embedding is told that its ids are replicated
parallelize_module(m, mesh, {"tok": RowwiseParallel(input_layouts=Replicate()),
                             "col": ColwiseParallel(output_layouts=Replicate())})
check("embedding placements", m.tok.weight.placements == (Shard(0),) and
      m.col.weight.placements == (Shard(1),))
compare("embedding rowwise (vocab) and colwise", m, ref, ids, rand(3, 4, 3))

# ---- errors -----------------------------------------------------------------------------
for what, fn, exc in [
        ("placements length", lambda: distribute_tensor(A, mesh, [Shard(0), Shard(1)]),
         ValueError),
        ("Shard dim out of range", lambda: distribute_tensor(A, mesh, [Shard(2)]),
         IndexError),
        ("mixed Tensor and DTensor", lambda: distribute_tensor(A, mesh, [Shard(0)]) + A,
         RuntimeError),
        ("in-place op on differently laid out operands", lambda: distribute_tensor(
            A, mesh, [Shard(0)]).add_(distribute_tensor(A, mesh, [Replicate()])),
         RuntimeError),
        ("__setitem__", lambda: distribute_tensor(A, mesh, [Shard(0)]).__setitem__(0, 1.0),
         NotImplementedError),
        ("ColwiseParallel on a LayerNorm", lambda: parallelize_module(
            nn.LayerNorm(4), mesh, ColwiseParallel()), NotImplementedError)]:
    try:
        fn()
        check(f"error: {what}", False, "no exception")
    except exc as e:
        check(f"error: {what}", True, str(e)[:80])

dist.destroy_process_group()
print(f"rank {rank} DONE failures={len(failures)}", flush=True)
sys.exit(1 if failures else 0)
