"""Script sweep: training infrastructure recipes, part 1: automatic mixed precision, the
data loading tutorial and learning-rate schedulers (part 2, test_script_training_loop.py:
optimizer features, weight averaging, a full training script and torch.compile).

Each workload is tutorial-style PyTorch code run under the framework and under PyTorch.
"""
import collections
import warnings

import numpy as np

import framework
from tests.scripts.script_harness import assert_same, compare, data, init_params, oracle


# ---------------------------------------------------------------------------------------
# 1. Automatic mixed precision recipe
# ---------------------------------------------------------------------------------------

def run_amp_cpu_bf16(torch):
    nn = torch.nn
    out = {}
    model = init_params(torch, nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = data(torch, 1, 6, 8), data(torch, 2, 6, 4)
    losses = []
    for _ in range(3):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            assert torch.get_autocast_dtype("cpu") == torch.bfloat16
            assert torch.is_autocast_enabled("cpu")
            h = model(x)
            out["act_dtype"] = str(h.dtype).split(".")[-1]
            with torch.autocast(device_type="cpu", enabled=False):
                # an fp32 region inside autocast: its inputs are cast back by hand
                assert not torch.is_autocast_enabled("cpu")
                fp32 = h.float() @ torch.ones(4, 4)
                out["inner_dtype"] = str(fp32.dtype).split(".")[-1]
            loss = torch.nn.functional.mse_loss(h, y)
            out["loss_dtype"] = str(loss.dtype).split(".")[-1]
        loss.backward()
        out["grad_dtype"] = str(model[0].weight.grad.dtype).split(".")[-1]
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    out["grad_after_zero"] = model[0].weight.grad is None
    out["losses"] = losses
    out["weight"] = model[2].weight
    return out


def run_amp_scaler(torch, device="cpu", dtype_name="bfloat16"):
    nn = torch.nn
    model = init_params(torch, nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4)))
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    dtype = getattr(torch, dtype_name)
    scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 10, growth_interval=2)
    x, y = data(torch, 3, 5, 8).to(device), data(torch, 4, 5, 4).to(device)
    out = {"scales": [], "losses": []}
    for step in range(5):
        with torch.autocast(device_type=device, dtype=dtype):
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        if step == 2:
            # an overflowing gradient: the step is skipped and the scale halves
            model[0].weight.grad[0, 0] = float("inf")
            before = [p.detach().clone() for p in model.parameters()]
        scaler.unscale_(opt)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(opt)
        scaler.update()
        if step == 2:
            out["skipped"] = all(torch.equal(b, p.detach())
                                 for b, p in zip(before, model.parameters()))
            out["norm_inf"] = bool(torch.isinf(norm).item())
        opt.zero_grad(set_to_none=True)
        out["scales"].append(scaler.get_scale())
        out["losses"].append(loss.item())
    state = scaler.state_dict()
    out["state"] = {k: state[k] for k in ("scale", "growth_factor", "backoff_factor",
                                          "growth_interval", "_growth_tracker")}
    fresh = torch.amp.GradScaler(device)
    fresh.load_state_dict(state)
    out["loaded_scale"] = fresh.get_scale()
    out["params"] = [p.detach().cpu() for p in model.parameters()]
    return out


def run_amp_custom_fwd(torch):
    seen = {}

    class MyMM(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            seen["fwd_inputs"] = [str(t.dtype).split(".")[-1] for t in (a, b)]
            return a.mm(b)

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            seen["bwd_autocast"] = torch.is_autocast_enabled("cpu")
            return grad.mm(b.t()), a.t().mm(grad)

    class Scale(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            seen["plain_fwd_autocast"] = torch.is_autocast_enabled("cpu")
            return a * 2

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen["plain_bwd_autocast"] = torch.is_autocast_enabled("cpu")
            return grad * 2

    a = data(torch, 5, 3, 4).requires_grad_()
    b = data(torch, 6, 4, 2).to(torch.bfloat16).requires_grad_()
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        c = MyMM.apply(a, b)
        plain = a.mm(b.float())
        d = Scale.apply(c)
    (c.sum() + d.sum()).backward()
    return {"out": c, "dtype": str(c.dtype).split(".")[-1],
            "plain_dtype": str(plain.dtype).split(".")[-1], "seen": seen,
            "ga": a.grad, "gb": b.grad, "gb_dtype": str(b.grad.dtype).split(".")[-1]}


def test_amp_cpu_bfloat16():
    compare(run_amp_cpu_bf16, rtol=2e-2, atol=2e-2)


def test_amp_grad_scaler_cpu():
    compare(run_amp_scaler, rtol=2e-2, atol=2e-2)


def test_amp_grad_scaler_cuda_float16():
    """fp16 on simulated cuda, against PyTorch's CPU GradScaler with fp16 autocast."""
    want = run_amp_scaler(oracle(), "cpu", "float16")
    got = run_amp_scaler(framework, "cuda", "float16")
    for k in ("scales", "skipped", "norm_inf", "state", "loaded_scale"):
        assert_same(got[k], want[k], 0, 0, k)
    assert_same(got, want, 2e-3, 2e-3)


def test_amp_custom_fwd_bwd():
    compare(run_amp_custom_fwd, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------
# 2. Data loading tutorial
# ---------------------------------------------------------------------------------------

class Rescale:
    """Rescale the image in a sample to a given size (nearest, on NumPy arrays)."""

    def __init__(self, output_size):
        self.output_size = output_size

    def __call__(self, sample):
        image, marks = sample["image"], sample["marks"]
        h, w = image.shape[:2]
        rows = (np.arange(self.output_size) * h) // self.output_size
        cols = (np.arange(self.output_size) * w) // self.output_size
        return {"image": image[rows][:, cols], "marks": marks * [self.output_size / w,
                                                                 self.output_size / h]}


class ToTensor:
    """Convert ndarrays in a sample to tensors (HWC -> CHW)."""

    def __init__(self, torch):
        self.torch = torch

    def __call__(self, sample):
        image = sample["image"].transpose((2, 0, 1))
        return {"image": self.torch.from_numpy(image),
                "marks": self.torch.from_numpy(sample["marks"])}


def _face_dataset(torch):
    class FaceDataset(torch.utils.data.Dataset):
        def __init__(self, n, transform=None):
            rng = np.random.default_rng(0)
            self.images = rng.random((n, 6, 5, 3)).astype(np.float32)
            self.marks = rng.random((n, 2, 2)) * 5
            self.transform = transform

        def __len__(self):
            return len(self.images)

        def __getitem__(self, idx):
            if torch.is_tensor(idx):
                idx = idx.tolist()
            sample = {"image": self.images[idx], "marks": self.marks[idx]}
            if self.transform:
                sample = self.transform(sample)
            return sample

    return FaceDataset


def _seed_worker(worker_id):
    np.random.seed(1234 + worker_id)


class _Compose:
    """transforms.Compose, without torchvision."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


def run_data_tutorial(torch):
    data_mod = torch.utils.data
    FaceDataset = _face_dataset(torch)
    ds = FaceDataset(10, transform=_Compose([Rescale(4), ToTensor(torch)]))
    out = {"len": len(ds), "first": ds[0]}
    loader = data_mod.DataLoader(ds, batch_size=4, shuffle=True,
                                 generator=torch.Generator().manual_seed(0))
    batches = list(loader)
    out["len_loader"] = len(loader)
    out["batch_shapes"] = [list(b["image"].shape) for b in batches]
    # shuffled order depends on each library's RNG: compare the multiset of samples
    marks = torch.cat([b["marks"] for b in batches]).reshape(10, 4).tolist()
    out["marks_sorted"] = sorted(marks)
    again = data_mod.DataLoader(ds, batch_size=4, shuffle=True,
                                generator=torch.Generator().manual_seed(0))
    out["same_seed_same_order"] = all(torch.equal(a["marks"], b["marks"])
                                      for a, b in zip(batches, again))
    out["dtypes"] = [str(batches[0]["image"].dtype).split(".")[-1],
                     str(batches[0]["marks"].dtype).split(".")[-1]]
    # drop_last and a plain sequential loader, compared exactly
    seq = data_mod.DataLoader(ds, batch_size=3, drop_last=True, pin_memory=True)
    out["len_drop"] = len(seq)
    out["seq_marks"] = [b["marks"] for b in seq]
    return out


def run_data_workers(torch):
    data_mod = torch.utils.data
    out = {}

    class Squares(data_mod.Dataset):
        def __len__(self):
            return 9

        def __getitem__(self, i):
            info = data_mod.get_worker_info()
            # each worker's torch seed is its base seed + id (the reproducibility recipe)
            assert torch.initial_seed() == info.seed
            return torch.tensor([i * i]), (info.id if info is not None else -1)

    loader = data_mod.DataLoader(Squares(), batch_size=2, num_workers=2,
                                 worker_init_fn=_seed_worker, persistent_workers=True,
                                 prefetch_factor=2)
    for epoch in range(2):
        xs, ids = zip(*[(x, w) for x, w in loader])
        out[f"epoch{epoch}"] = torch.cat(xs).flatten().tolist()
        out[f"workers{epoch}"] = sorted(set(torch.cat(ids).tolist()))
    out["main_info"] = data_mod.get_worker_info() is None

    class Range(data_mod.IterableDataset):
        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            info = data_mod.get_worker_info()
            if info is None:
                lo, hi = self.start, self.end
            else:
                per = int(np.ceil((self.end - self.start) / info.num_workers))
                lo = self.start + info.id * per
                hi = min(lo + per, self.end)
            return iter(range(lo, hi))

    ds = Range(3, 10)
    out["single"] = [int(v) for v in data_mod.DataLoader(ds, num_workers=0)]
    out["sharded"] = sorted(int(v) for v in data_mod.DataLoader(ds, num_workers=2))
    return out


def run_collate(torch):
    data_mod = torch.utils.data
    default_collate = data_mod.default_collate
    Point = collections.namedtuple("Point", ["x", "y"])
    out = {}
    d = default_collate([{"a": np.array([1.0, 2.0]), "b": 3, "s": "u"},
                         {"a": np.array([4.0, 5.0]), "b": 6, "s": "v"}])
    out["dict"] = {"a": d["a"], "b": d["b"], "s": d["s"],
                   "a_dtype": str(d["a"].dtype).split(".")[-1],
                   "b_dtype": str(d["b"].dtype).split(".")[-1]}
    t = default_collate([(torch.ones(2), 1.5), (torch.zeros(2), 2.5)])
    out["tuple"] = [t[0], t[1], type(t).__name__, str(t[1].dtype).split(".")[-1]]
    p = default_collate([Point(1, torch.tensor(2.0)), Point(3, torch.tensor(4.0))])
    out["namedtuple"] = [type(p).__name__, p.x, p.y]

    def pad_collate(batch):
        seqs, labels = zip(*batch)
        n = max(len(s) for s in seqs)
        padded = torch.zeros(len(seqs), n)
        for i, s in enumerate(seqs):
            padded[i, :len(s)] = s
        return padded, torch.tensor(labels)

    ds = [(torch.arange(k, dtype=torch.float32), k % 2) for k in (1, 3, 2, 4)]
    out["custom"] = list(data_mod.DataLoader(ds, batch_size=2, collate_fn=pad_collate))
    return out


def run_datasets_samplers(torch):
    data_mod = torch.utils.data
    out = {}
    x = torch.arange(20, dtype=torch.float32).reshape(10, 2)
    y = torch.arange(10)
    tds = data_mod.TensorDataset(x, y)
    out["tds"] = list(tds[3])
    a, b, c = data_mod.random_split(tds, [0.5, 0.3, 0.2],
                                    generator=torch.Generator().manual_seed(42))
    out["split_sizes"] = [len(a), len(b), len(c)]
    a2, b2 = data_mod.random_split(range(10), [7, 3])
    out["split_int"] = [len(a2), len(b2), sorted(list(a2) + list(b2)) == list(range(10))]
    sub = data_mod.Subset(tds, [1, 4, 7])
    out["subset"] = [sub[i][1] for i in range(len(sub))]
    cat = data_mod.ConcatDataset([sub, tds])
    out["concat"] = [len(cat), cat[3][1], cat[2][0], cat.cumulative_sizes]
    seq = data_mod.SequentialSampler(range(5))
    out["sequential"] = list(seq)
    out["batch"] = list(data_mod.BatchSampler(seq, batch_size=2, drop_last=False))
    out["batch_drop"] = list(data_mod.BatchSampler(range(5), batch_size=2, drop_last=True))
    sub_rand = data_mod.SubsetRandomSampler([2, 5, 8], generator=torch.Generator())
    out["subset_random"] = sorted(sub_rand)
    w = data_mod.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], num_samples=50,
                                       replacement=True)
    drawn = list(w)
    out["weighted"] = [len(w), set(drawn) <= {1, 3}, len(drawn)]
    wn = data_mod.WeightedRandomSampler([0.1, 0.5, 0.2, 0.2], num_samples=4,
                                        replacement=False)
    out["weighted_norep"] = sorted(wn)
    loader = data_mod.DataLoader(tds, batch_sampler=data_mod.BatchSampler(
        data_mod.SequentialSampler(tds), batch_size=4, drop_last=False))
    out["loader_batches"] = [list(b) for b in loader]
    out["len_loader"] = len(loader)
    return out


def test_data_loading_tutorial():
    compare(run_data_tutorial)


def test_data_workers_and_iterable():
    compare(run_data_workers)


def test_collate():
    compare(run_collate)


def test_datasets_and_samplers():
    compare(run_datasets_samplers)


# ---------------------------------------------------------------------------------------
# 3. Learning-rate schedulers
# ---------------------------------------------------------------------------------------

def _sched_opt(torch, kind="sgd"):
    w1 = torch.nn.Parameter(torch.zeros(2))
    w2 = torch.nn.Parameter(torch.zeros(2))
    groups = [{"params": [w1]}, {"params": [w2], "lr": 0.5}]
    if kind == "adam":
        return torch.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99))
    return torch.optim.SGD(groups, lr=0.1, momentum=0.9)


def _trace(torch, make, steps=30, epoch_fn=None, kind="sgd"):
    """lrs (and momenta) of every group after each of ``steps`` scheduler steps, with a
    state_dict round trip into a fresh scheduler half way."""
    opt = _sched_opt(torch, kind)
    sched = make(opt)
    lrs = [sched.get_last_lr()]
    mom = []
    for i in range(steps):
        opt.step()
        if epoch_fn is None:
            sched.step()
        else:
            sched.step(epoch_fn(i))
        if i == steps // 2:
            state = sched.state_dict()
            sched = make(opt)
            sched.load_state_dict(state)
        lrs.append([g["lr"] for g in opt.param_groups])
        g0 = opt.param_groups[0]
        mom.append(g0["betas"][0] if "betas" in g0 else g0.get("momentum", 0.0))
    assert lrs[-1] == sched.get_last_lr()
    return {"lrs": lrs, "momentum": mom}


def run_schedulers(torch):
    S = torch.optim.lr_scheduler
    out = {}
    out["lambda"] = _trace(torch, lambda o: S.LambdaLR(o, [lambda e: 0.9 ** e,
                                                           lambda e: 1 / (e + 1)]))
    out["multiplicative"] = _trace(torch, lambda o: S.MultiplicativeLR(o, lambda e: 0.95))
    out["step"] = _trace(torch, lambda o: S.StepLR(o, step_size=4, gamma=0.5))
    out["multistep"] = _trace(torch, lambda o: S.MultiStepLR(o, [3, 7, 20], gamma=0.3))
    out["exponential"] = _trace(torch, lambda o: S.ExponentialLR(o, gamma=0.9))
    out["cosine"] = _trace(torch, lambda o: S.CosineAnnealingLR(o, T_max=10, eta_min=0.01))
    out["warm_restarts"] = _trace(
        torch, lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
        epoch_fn=lambda i: (i + 1) * 0.7)
    out["warm_restarts_int"] = _trace(
        torch, lambda o: S.CosineAnnealingWarmRestarts(o, T_0=4))
    for strat in ("cos", "linear"):
        out[f"onecycle_{strat}"] = _trace(
            torch, lambda o: S.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=31,
                                          anneal_strategy=strat, three_phase=strat == "linear"))
    out["onecycle_adam"] = _trace(
        torch, lambda o: S.OneCycleLR(o, max_lr=0.3, epochs=3, steps_per_epoch=11),
        kind="adam")
    out["cyclic_tri2"] = _trace(
        torch, lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                    mode="triangular2"))
    out["cyclic_exp"] = _trace(
        torch, lambda o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3],
                                    step_size_up=3, step_size_down=5, mode="exp_range",
                                    gamma=0.95))
    out["cyclic_adam"] = _trace(
        torch, lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
        kind="adam")
    out["linear"] = _trace(torch, lambda o: S.LinearLR(o, start_factor=0.25, total_iters=6))
    out["constant"] = _trace(torch, lambda o: S.ConstantLR(o, factor=0.5, total_iters=4))
    out["poly"] = _trace(torch, lambda o: S.PolynomialLR(o, total_iters=12, power=2.0))
    out["sequential"] = _trace(torch, lambda o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5),
            S.CosineAnnealingLR(o, T_max=20)], milestones=[5]))
    out["chained"] = _trace(torch, lambda o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=5), S.ExponentialLR(o, gamma=0.9)]))
    return out


def run_plateau(torch):
    S = torch.optim.lr_scheduler
    metrics = [1.0, 0.9, 0.9, 0.91, 0.92, 0.89, 0.95, 0.95, 0.95, 0.95, 0.5, 0.5, 0.5,
               0.5, 0.5, 0.5, 0.5, 0.6, 0.6, 0.6]
    out = {}
    for mode, tmode in (("min", "rel"), ("min", "abs"), ("max", "rel"), ("max", "abs")):
        opt = _sched_opt(torch)
        sched = S.ReduceLROnPlateau(opt, mode=mode, factor=0.5, patience=1,
                                    threshold=0.05, threshold_mode=tmode, cooldown=2,
                                    min_lr=[0.02, 0.1])
        lrs = []
        for i, m in enumerate(metrics):
            sched.step(m)
            if i == 8:
                state = sched.state_dict()
                sched = S.ReduceLROnPlateau(opt)
                sched.load_state_dict(state)
            lrs.append(sched.get_last_lr())
        out[f"{mode}_{tmode}"] = lrs
    return out


def run_scheduler_warning(torch):
    opt = _sched_opt(torch)
    sched = torch.optim.lr_scheduler.StepLR(opt, 2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sched.step()  # before opt.step(): PyTorch warns
    first = [str(w.message)[:60] for w in rec]
    opt = _sched_opt(torch)
    sched = torch.optim.lr_scheduler.StepLR(opt, 2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        opt.step()
        sched.step()
    return {"warned": first, "clean": [str(w.message) for w in rec]}


def run_custom_scheduler_optimizer(torch):
    """A research repo's own warmup-cosine LRScheduler and momentum optimizer."""
    import math
    nn = torch.nn

    class WarmupCosine(torch.optim.lr_scheduler.LRScheduler):
        def __init__(self, optimizer, warmup, total, last_epoch=-1):
            self.warmup, self.total = warmup, total
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            e = self.last_epoch
            if e < self.warmup:
                return [b * (e + 1) / self.warmup for b in self.base_lrs]
            t = (e - self.warmup) / max(1, self.total - self.warmup)
            return [b * 0.5 * (1 + math.cos(math.pi * t)) for b in self.base_lrs]

    class MomentumSGD(torch.optim.Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.9):
            super().__init__(params, dict(lr=lr, momentum=momentum))

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if "buf" not in state:
                        state["buf"] = torch.zeros_like(p)
                    buf = state["buf"]
                    buf.mul_(group["momentum"]).add_(p.grad)
                    p.add_(buf, alpha=-group["lr"])
            return loss

    model = init_params(torch, nn.Linear(3, 2))
    opt = MomentumSGD(model.parameters())
    sched = WarmupCosine(opt, 3, 10)
    lrs = []
    for i in range(10):
        opt.zero_grad()
        model(data(torch, i, 4, 3)).pow(2).mean().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return {"lrs": lrs, "weight": model.weight, "last_epoch": sched.state_dict()["last_epoch"],
            "initial_lr": opt.param_groups[0]["initial_lr"],
            "state_keys": sorted(opt.state_dict()["state"][0])}


def test_custom_scheduler_and_optimizer():
    compare(run_custom_scheduler_optimizer, rtol=1e-5, atol=1e-6)


def test_lr_schedulers():
    compare(run_schedulers, rtol=1e-6, atol=1e-9)


def test_reduce_lr_on_plateau():
    compare(run_plateau, rtol=1e-6, atol=1e-9)


def test_scheduler_step_order_warning():
    got = compare(run_scheduler_warning)
    assert len(got["warned"]) == 1
