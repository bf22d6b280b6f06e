"""Run by test_fsdp.py under ``mpiexec -n N``: fully_shard and FullyShardedDataParallel
against one process training on the whole batch (float64), gradient accumulation, mixed
precision, memory (shards only between steps, full parameters freed after forward),
unshard/reshard, state dicts and gradient clipping."""
import gc
import sys
import weakref

import numpy as np

import framework as fw
import framework.distributed as dist
import framework.distributed.collectives as collectives
import framework.nn as nn
import framework.nn.functional as F
from framework.distributed.checkpoint.state_dict import (
    StateDictOptions, get_model_state_dict, set_model_state_dict)
from framework.distributed.fsdp import (
    FSDP, FSDPModule, FullStateDictConfig, FullyShardedDataParallel, MixedPrecisionPolicy,
    ShardingStrategy, StateDictType, fully_shard)
from framework.distributed.fsdp import _fsdp_state

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
quick = device != "cpu"     # simulated cuda runs in the interpreter: the core checks only
failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(name)
    print(f"rank {rank} {'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        # 7 and 3 rows do not divide by 2 or 4 ranks: padded shards, and an empty one
        self.blocks = nn.ModuleList([nn.Linear(6, 7), nn.Linear(7, 6)])
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        for b in self.blocks:
            x = F.gelu(b(x))
        return self.head(x)


class Block(nn.Module):
    """A small pre-norm transformer block."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 12), nn.GELU(), nn.Linear(12, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return self.out(x)


def make(cls=MLP, dtype=fw.float64, seed=0):
    fw.manual_seed(seed)
    return cls().to(device=device, dtype=dtype)


rng = np.random.default_rng(0)
B = 8
X = fw.tensor(rng.standard_normal((B, 6)), device=device)
Y = fw.tensor(rng.standard_normal((B, 3)), device=device)
XT = fw.tensor(rng.standard_normal((B, 3, 4)), device=device)
YT = fw.tensor(rng.standard_normal((B, 3, 2)), device=device)
h = B // world


def maxabs(t):
    """Largest absolute entry (0 for an empty shard: with 4 ranks, 3 rows leave one)."""
    return float(t.abs().max()) if t.numel() else 0.0


def mine(t):
    return t[rank * h:(rank + 1) * h]


def shard_all(model, **kw):
    for b in model.blocks:
        fully_shard(b, **kw)
    return fully_shard(model, **kw)


def all_mean(x):
    t = fw.tensor([float(x)], dtype=fw.float64)
    dist.all_reduce(t)
    return float(t) / world


def full_params(model):
    return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))


def max_diff(sd, ref):
    ref_sd = ref.state_dict()
    if sorted(sd) != sorted(ref_sd):
        return float("inf")
    return max(float((sd[k].detach().cpu().double() - ref_sd[k].cpu().double()).abs().max())
               for k in ref_sd)


def train(model, x, y, steps, opt_cls=fw.optim.SGD, **okw):
    opt = opt_cls(model.parameters(), **okw)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def check_shards_only(model, name):
    """Between steps each rank holds only its shards: about 1/world of every parameter."""
    ok = not _fsdp_state._LIVE
    detail = []
    for m in model.modules():
        if not isinstance(m, FSDPModule):
            continue
        for fp in m._fsdp_state.fsdp_params:
            full = int(np.prod(fp.full_shape))
            local = fp.sharded_param.numel()
            total = [None] * world
            dist.all_gather_object(total, local)
            rows = -(-fp.full_shape[0] // world)
            ok &= sum(total) == full and local <= rows * full // fp.full_shape[0]
            ok &= fp.bwd_full is None and fp.acc_grad is None and not fp.keep_full
            # what the module holds is the shard
            mod, attr = fp.slots[0]
            ok &= mod._parameters[attr] is fp.sharded_param
            detail.append(f"{local}/{full}")
    check(f"shards only between steps, {name}", ok, " ".join(detail[:4]))


# ---- fully_shard trains as one process on the whole batch -------------------------------
steps = 2 if quick else 4
for raf in ([True] if quick else [True, False]):
    ref = make()
    ref_losses = train(ref, X, Y, steps, lr=0.1)
    model = shard_all(make(), reshard_after_forward=raf)
    losses = [all_mean(v) for v in train(model, mine(X), mine(Y), steps, lr=0.1)]
    d = max_diff(full_params(model), ref)
    dl = max(abs(a - b) for a, b in zip(losses, ref_losses))
    check(f"fully_shard equals one process, reshard_after_forward={raf}, {device}",
          d < 1e-12 and dl < 1e-12, f"param diff {d:.1e} loss diff {dl:.1e}")
    check_shards_only(model, f"reshard_after_forward={raf}")
check("class is a dynamic FSDPModule subclass",
      isinstance(model, FSDPModule) and isinstance(model, MLP) and
      type(model).__name__ == "FSDPMLP" and isinstance(model.blocks[0], nn.Linear))

# ---- reshard_after_forward frees the full parameters after forward and backward gathers
# them again; False keeps them (no gather in backward)
real_gather = collectives.all_gather_into_tensor
for raf in (True, False):
    model = shard_all(make(), reshard_after_forward=raf)
    seen = []
    # FSDP's pre-hook runs first (prepended): a later pre-hook sees the full parameter
    model.blocks[0].register_forward_pre_hook(
        lambda m, a: seen.append((weakref.ref(m.weight), tuple(m.weight.shape))))
    loss = F.mse_loss(model(mine(X)), mine(Y))
    gc.collect()
    alive = seen[0][0]() is not None
    gathers = []
    collectives.all_gather_into_tensor = lambda *a, **k: (gathers.append(1),
                                                          real_gather(*a, **k))[1]
    try:
        loss.backward()
    finally:
        collectives.all_gather_into_tensor = real_gather
    check(f"full parameter in forward, freed after it: reshard_after_forward={raf}",
          seen[0][1] == (7, 6) and alive is (not raf) and (len(gathers) > 0) is raf,
          f"alive {alive} backward gathers {len(gathers)}")

# ---- FullyShardedDataParallel: the whole module as one unit
for strategy in ([ShardingStrategy.FULL_SHARD] if quick else [
        ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP,
        ShardingStrategy.NO_SHARD]):
    ref = make()
    ref_losses = train(ref, X, Y, steps, lr=0.1)
    model = FSDP(make(), sharding_strategy=strategy)
    losses = [all_mean(v) for v in train(model, mine(X), mine(Y), steps, lr=0.1)]
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        sd = model.state_dict()
    d = max_diff(sd, ref)
    dl = max(abs(a - b) for a, b in zip(losses, ref_losses))
    n_local = sum(p.numel() for p in model.parameters())
    n_full = sum(p.numel() for p in ref.parameters())
    sharded = n_local < n_full if strategy is not ShardingStrategy.NO_SHARD else \
        n_local == n_full
    check(f"FullyShardedDataParallel {strategy.name} equals one process",
          d < 1e-12 and dl < 1e-12 and sharded, f"param diff {d:.1e} {n_local}/{n_full}")
check("FSDP alias and wrapped module", FSDP is FullyShardedDataParallel
      and isinstance(model.module, MLP) and model.head is model.module.head)

# ---- mixed precision: bfloat16 compute, float32 shards and reduction
ref = make(dtype=fw.float32)
mp_steps = 1 if quick else 3
train(ref, X.float(), Y.float(), mp_steps, lr=0.1)
model = make(dtype=fw.float32)
for b in model.blocks:
    fully_shard(b, mp_policy=MixedPrecisionPolicy(param_dtype=fw.bfloat16,
                                                  reduce_dtype=fw.float32))
# the root casts its output back (the blocks' bfloat16 outputs feed its head)
fully_shard(model, mp_policy=MixedPrecisionPolicy(
    param_dtype=fw.bfloat16, reduce_dtype=fw.float32, output_dtype=fw.float32))
dts = []
model.blocks[1].register_forward_pre_hook(lambda m, a: dts.append(m.weight.dtype))
model.blocks[1].register_forward_hook(lambda m, a, o: dts.append((a[0].dtype, o.dtype)))
out_dtype = model(mine(X).float()).dtype
train(model, mine(X).float(), mine(Y).float(), mp_steps, lr=0.1)
d = max_diff(full_params(model), ref)
check("mixed precision bfloat16 params: close to float32 training",
      d < 3e-2 and dts[:2] == [fw.bfloat16, (fw.bfloat16, fw.bfloat16)]
      and out_dtype == fw.float32
      and all(p.dtype == fw.float32 and p.grad.dtype == fw.float32
              for p in model.parameters()), f"max diff {d:.1e} {dts[:2]}")

if not quick:
    # ---- a small transformer: blocks and root sharded, Adam
    ref = make(Transformer)
    ref_losses = train(ref, XT, YT, 3, fw.optim.Adam, lr=0.01)
    model = shard_all(make(Transformer))
    losses = [all_mean(v) for v in train(model, mine(XT), mine(YT), 3, fw.optim.Adam,
                                         lr=0.01)]
    d = max_diff(full_params(model), ref)
    dl = max(abs(a - b) for a, b in zip(losses, ref_losses))
    check("transformer blocks with fully_shard equal one process", d < 1e-10 and dl < 1e-12,
          f"param diff {d:.1e} loss diff {dl:.1e}")
    check_shards_only(model, "transformer")

    # ---- a saved view at an offset into the full parameter, gathered again in backward
    class Sliced(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(fw.randn(5, 6, dtype=fw.float64, device=device))

        def forward(self, x):
            # the product's backward needs the saved view weight[1, :3] (offset 6)
            return (x @ self.weight[2:].t()) * self.weight[1, :3]

    fw.manual_seed(1)
    ref = Sliced()
    F.mse_loss(ref(X), Y).backward()
    fw.manual_seed(1)
    model = fully_shard(Sliced(), reshard_after_forward=True)
    F.mse_loss(model(mine(X)), mine(Y)).backward()
    d = maxabs(model.weight.grad - model.weight._fsdp_param.shard_of(ref.weight.grad))
    check("saved views at an offset are gathered again in backward", d < 1e-12,
          f"max grad diff {d:.1e}")

    # ---- gradient accumulation: no sync on the first micro-batch, sync on the second
    ref = make()
    F.mse_loss(ref(X), Y).backward()
    model = shard_all(make())
    xs, ys = mine(X), mine(Y)
    m = h // 2
    model.set_requires_gradient_sync(False)
    (F.mse_loss(model(xs[:m]), ys[:m]) / 2).backward()
    no_grad_yet = all(p.grad is None for p in model.parameters())
    model.set_requires_gradient_sync(True)
    (F.mse_loss(model(xs[m:]), ys[m:]) / 2).backward()
    d = 0.0
    refp = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        d = max(d, maxabs(p.grad - p._fsdp_param.shard_of(refp[name].grad)))
    check("set_requires_gradient_sync(False) then True equals one process", d < 1e-12
          and no_grad_yet, f"max grad diff {d:.1e}")

    # ... and with set_reshard_after_backward(False): the blocks keep what backward
    # gathered, so the next forward gathers only the root's own parameters (head weight
    # and bias, in one all-gather)
    model = shard_all(make())
    model.set_requires_gradient_sync(False)
    model.set_reshard_after_backward(False)
    (F.mse_loss(model(xs[:m]), ys[:m]) / 2).backward()
    model.set_requires_gradient_sync(True)
    model.set_reshard_after_backward(True)
    gathers = []
    collectives.all_gather_into_tensor = lambda *a, **k: (gathers.append(1),
                                                          real_gather(*a, **k))[1]
    try:
        out = model(xs[m:])
    finally:
        collectives.all_gather_into_tensor = real_gather
    (F.mse_loss(out, ys[m:]) / 2).backward()
    d = 0.0
    for name, p in model.named_parameters():
        d = max(d, maxabs(p.grad - p._fsdp_param.shard_of(refp[name].grad)))
    check("set_reshard_after_backward(False) keeps the gathered parameters", d < 1e-12
          and len(gathers) == 1, f"max grad diff {d:.1e}, forward gathers {len(gathers)}")
    check_shards_only(model, "after reshard_after_backward=False then True")

    # ---- unshard / reshard by hand
    model = shard_all(make())
    ref = make()
    model.blocks[0].unshard()
    w = model.blocks[0].weight
    ok = tuple(w.shape) == (7, 6) and float((w - ref.blocks[0].weight).abs().max()) == 0
    model.blocks[0].reshard()
    ok &= model.blocks[0].weight is model.blocks[0]._fsdp_state.fsdp_params[0].sharded_param
    check("unshard() shows the full parameters, reshard() the shard", ok)

    # ---- state dicts: full on every rank; set_model_state_dict loads full tensors
    model = shard_all(make())
    other = make(seed=5)
    set_model_state_dict(model, other.state_dict(),
                         options=StateDictOptions(full_state_dict=True))
    d = max_diff(full_params(model), other)
    local = get_model_state_dict(model)
    check("set_model_state_dict / get_model_state_dict full tensors", d == 0 and
          tuple(local["blocks.0.weight"].shape)[0] <= -(-7 // world), f"max diff {d:.1e}")
    sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True,
                                                              cpu_offload=True))
    check("full state dict with cpu_offload on rank 0 only",
          (len(sd) == 6 and sd["head.weight"].device.type == "cpu") if rank == 0
          else sd == {})

    # load a full state dict, then clip_grad_norm_ over shards as one process clips
    model = FSDP(make(seed=3))
    ref = make()
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        model.load_state_dict(ref.state_dict())
    with FSDP.state_dict_type(model, StateDictType.LOCAL_STATE_DICT):
        local_keys = sorted(model.state_dict())
    F.mse_loss(model(mine(X)), mine(Y)).backward()
    F.mse_loss(ref(X), Y).backward()
    for norm_type in (2.0, float("inf")):
        total = model.clip_grad_norm_(0.05, norm_type)
        ref_total = nn.utils.clip_grad_norm_(ref.parameters(), 0.05, norm_type)
        d = max(maxabs(p.grad - q._fsdp_param.shard_of(r.grad))
                for (_, q), p, r in zip(model.named_parameters(), model.parameters(),
                                        ref.parameters()))
        check(f"clip_grad_norm_ over shards, norm {norm_type}",
              abs(float(total) - float(ref_total)) < 1e-12 and d < 1e-12,
              f"total {float(total):.6f} vs {float(ref_total):.6f}, grad diff {d:.1e}")
    check("local state dict keys", local_keys == sorted(ref.state_dict()), str(local_keys))
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
        sd = model.state_dict()
    check("FullStateDictConfig(offload_to_cpu, rank0_only)",
          sd == {} if rank else (sorted(sd) == sorted(ref.state_dict()) and
                                 all(v.device.type == "cpu" for v in sd.values())))

    # no_sync on the wrapper accumulates locally
    model = FSDP(make())
    with model.no_sync():
        F.mse_loss(model(mine(X)), mine(Y)).backward()
    check("FSDP.no_sync keeps gradients unreduced",
          all(p.grad is None for p in model.parameters()))

dist.destroy_process_group()
print(f"rank {rank} DONE failures={len(failures)}", flush=True)
sys.exit(1 if failures else 0)
