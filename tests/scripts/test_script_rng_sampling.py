"""Script sweep: random number generation and reproducibility, part 2: the samplers'
distributions, torch.distributions sample shapes, dropout inside autograd and checkpointing,
DataLoader worker seeding (part 1: test_script_rng.py).

Draws differ from PyTorch's (the framework's streams are Philox); each workload returns
shapes, dtypes, supports, moments checked inside the run and error texts.
"""
import math

import numpy as np
import pytest

from tests.scripts.rng_support import compare, dt as _dt, err as _err, same as _same
from tests.scripts.rng_support import within as _within
from tests.scripts.script_harness import oracle


# ---------------------------------------------------------------- 3. samplers' statistics

def _stats_run(torch, device="cpu", n=100_000):
    out = {}
    torch.manual_seed(0)
    x = torch.rand(n, device=device, dtype=torch.float64)
    out["rand"] = (_within(x.mean().item(), 0.5, math.sqrt(1 / 12), n),
                   0 <= x.min().item() and x.max().item() < 1, _dt(torch, x.dtype))
    x = torch.randn(n, device=device)
    out["randn"] = (_within(x.mean().item(), 0, 1, n),
                    abs(x.var().item() - 1) < 0.03, _dt(torch, x.dtype))
    r = torch.randint(-3, 4, (n,), device=device)
    out["randint"] = (r.min().item(), r.max().item(), _dt(torch, r.dtype),
                      _within(r.double().mean().item(), 0, 2, n))
    out["randint_dtypes"] = [_dt(torch, torch.randint(0, 5, (3,), dtype=d).dtype)
                             for d in (torch.int8, torch.uint8, torch.int32, torch.float32)]
    out["randint_high_only"] = torch.randint(3, (n,)).max().item()
    out["randint_bad"] = _err(lambda: torch.randint(5, 5, (3,)))
    p = torch.randperm(5000, device=device)
    out["randperm"] = (torch.equal(p.sort().values, torch.arange(5000, device=device)),
                       _dt(torch, p.dtype), torch.randperm(0).numel())

    probs = torch.tensor([0.1, 0.0, 0.6, 0.3], device=device)
    m = torch.multinomial(probs, 20000, replacement=True)
    counts = torch.bincount(m, minlength=4).double() / 20000
    out["multi_repl"] = (counts[1].item(),
                         all(_within(counts[i].item(), probs[i].item(),
                                     math.sqrt(probs[i].item() * (1 - probs[i].item())),
                                     20000) for i in range(4)))
    m = torch.multinomial(torch.ones(3, 6), 6)
    out["multi_norepl"] = all(sorted(row) == list(range(6)) for row in m.tolist())
    m = torch.multinomial(probs.expand(200, 4), 3)
    out["multi_zero_never"] = (tuple(m.shape), (m == 1).sum().item(),
                               all(len(set(row)) == 3 for row in m.tolist()))
    out["multi_neg"] = _err(lambda: torch.multinomial(torch.tensor([0.5, -0.1]), 1))
    out["multi_inf"] = _err(lambda: torch.multinomial(torch.tensor([1.0, math.inf]), 1))
    out["multi_zero"] = _err(lambda: torch.multinomial(torch.zeros(3), 1))
    out["multi_too_many"] = _err(lambda: torch.multinomial(torch.tensor([1.0, 0.0, 1.0]), 3))

    pr = torch.tensor([0.0, 0.25, 1.0], device=device).repeat(n // 10)
    b = torch.bernoulli(pr).view(-1, 3).mean(0)
    out["bernoulli"] = (b[0].item(), b[2].item(),
                        _within(b[1].item(), 0.25, math.sqrt(0.1875), n // 10))
    out["bernoulli_p"] = _within(torch.empty(n).bernoulli_(0.3).mean().item(), 0.3,
                                 math.sqrt(0.21), n)

    mean = torch.tensor([[-2.0], [3.0]])
    std = torch.tensor([0.5, 1.0, 2.0])
    z = torch.normal(mean.expand(2, 3).repeat(1, n // 6),
                     std.repeat(n // 6).expand(2, -1))
    out["normal_bcast_shape"] = tuple(torch.normal(mean, std).shape)
    zz = z.view(2, n // 6, 3)
    out["normal_moments"] = (
        _within(zz[0].mean().item(), -2.0, 1.3, n),
        all(abs(zz[0, :, j].std().item() - std[j].item()) < 0.05 * std[j].item()
            for j in range(3)))
    out["normal_neg_std"] = _err(lambda: torch.normal(torch.zeros(2), -torch.ones(2)))

    lam = torch.full((n,), 4.0)
    po = torch.poisson(lam)
    out["poisson"] = (_within(po.mean().item(), 4, 2, n), po.min().item() >= 0,
                      torch.equal(po, po.round()), _dt(torch, po.dtype))
    e = torch.empty(n, device=device).exponential_(2.0)
    out["exponential"] = (_within(e.mean().item(), 0.5, 0.5, n), e.min().item() > 0)
    g = torch.empty(n, device=device).geometric_(0.25)
    out["geometric"] = (g.min().item(), _within(g.mean().item(), 4.0, math.sqrt(12), n),
                        torch.equal(g, g.round()))
    c = torch.empty(n, device=device).cauchy_(1.0, 2.0)
    out["cauchy"] = (abs(c.median().item() - 1.0) < 0.1,
                     abs((c - 1).abs().median().item() - 2.0) < 0.1)
    ln = torch.empty(n, device=device, dtype=torch.float64).log_normal_(0.5, 0.25)
    out["log_normal"] = (_within(ln.log().mean().item(), 0.5, 0.25, n), ln.min().item() > 0)
    u = torch.empty(n, device=device).uniform_(-2, 3)
    out["uniform"] = (_within(u.mean().item(), 0.5, 5 / math.sqrt(12), n),
                      u.min().item() >= -2 and u.max().item() < 3)

    ri = torch.empty(2000, dtype=torch.int8).random_(-5, 5)
    out["random_int8"] = (ri.min().item(), ri.max().item())
    ri = torch.empty(2000, dtype=torch.int64).random_(-2 ** 63, 2 ** 63 - 1)
    out["random_int64_ext"] = (ri.min().item() < -2 ** 61, ri.max().item() > 2 ** 61)
    ri = torch.empty(2000, dtype=torch.int64).random_(2 ** 62, None)
    out["random_to_none"] = ri.min().item() >= 2 ** 62
    ri = torch.empty(2000, dtype=torch.uint8).random_()
    out["random_uint8"] = (ri.min().item(), ri.max().item())
    out["random_bad"] = _err(lambda: torch.empty(3, dtype=torch.int8).random_(0, 300))
    out["random_empty_range"] = _err(lambda: torch.empty(3).random_(5, 5))
    out["random_bool"] = sorted(set(torch.empty(100, dtype=torch.bool).random_().tolist()))
    return out


def test_sampler_statistics():
    compare(_stats_run)


def _stats_small_run(torch, device):
    torch.manual_seed(0)
    n = 4096
    x = torch.randn(n, device=device)
    p = torch.randperm(700, device=device)
    m = torch.multinomial(torch.tensor([0.0, 1.0, 3.0], device=device), 2)
    r = torch.randint(2, 9, (n,), device=device)
    g = torch.empty(n, device=device).geometric_(0.5)
    return {"randn": (x.device.type, _within(x.mean().item(), 0, 1, n)),
            "perm": torch.equal(p.sort().values.cpu(), torch.arange(700)),
            "multi": sorted(m.tolist()),
            "randint": (r.min().item(), r.max().item()),
            "geom": g.min().item()}


def test_sampler_statistics_cuda():
    import framework
    if not framework.cuda.is_available():
        pytest.skip("no cuda")
    want = _stats_small_run(oracle(), "cpu")
    _same(_stats_small_run(framework, "cuda"), dict(want, randn=("cuda", True)))


def _distributions_run(torch):
    D = torch.distributions
    torch.manual_seed(0)
    out = {}
    dists = {
        "Normal": D.Normal(torch.zeros(3), torch.ones(3)),
        "Uniform": D.Uniform(torch.zeros(3), torch.ones(3) * 2),
        "Bernoulli": D.Bernoulli(probs=torch.tensor([0.3, 0.6])),
        "Categorical": D.Categorical(logits=torch.zeros(2, 5)),
        "Beta": D.Beta(torch.tensor([2.0, 3.0]), torch.tensor([1.5, 1.0])),
        "Gamma": D.Gamma(torch.tensor([2.0]), torch.tensor([3.0])),
        "Exponential": D.Exponential(torch.tensor([1.5, 0.5])),
        "Dirichlet": D.Dirichlet(torch.ones(4)),
        "MultivariateNormal": D.MultivariateNormal(torch.zeros(2), torch.eye(2)),
        "Poisson": D.Poisson(torch.tensor([3.0])),
        "Laplace": D.Laplace(torch.zeros(2), torch.ones(2)),
        "OneHotCategorical": D.OneHotCategorical(probs=torch.tensor([0.2, 0.8])),
    }
    for name, d in dists.items():
        s = d.sample((4, 2))
        row = [tuple(s.shape), _dt(torch, s.dtype)]
        if d.has_rsample:
            rs = d.rsample((3,))
            row.append(tuple(rs.shape))
        row.append(tuple(d.log_prob(d.sample()).shape))
        out[name] = row
    n = 50_000
    out["gamma_mean"] = _within(D.Gamma(torch.tensor(2.0), torch.tensor(4.0))
                                .sample((n,)).mean().item(), 0.5, math.sqrt(2) / 4, n)
    out["beta_mean"] = _within(D.Beta(torch.tensor(2.0), torch.tensor(3.0))
                               .sample((n,)).mean().item(), 0.4, 0.2, n)
    return out


def test_distributions_sample_shapes():
    compare(_distributions_run)


# ---------------------------------------------------------------- 5. dropout and checkpoint

def _dropout_run(torch, device="cpu"):
    nn, F = torch.nn, torch.nn.functional
    ckpt = torch.utils.checkpoint.checkpoint
    out = {}

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 12)
            self.drop = nn.Dropout(0.5)
            self.fc2 = nn.Linear(12, 6)

        def forward(self, x):
            return self.fc2(self.drop(F.gelu(self.fc1(x))))

    block = Block().to(device)
    x = torch.tensor(np.random.default_rng(1).standard_normal((5, 6)),
                     dtype=torch.float32, device=device)

    def grads(use_ckpt, preserve=True):
        block.zero_grad()
        torch.manual_seed(17)
        xi = x.clone().requires_grad_()
        y = ckpt(block, xi, use_reentrant=False, preserve_rng_state=preserve) if use_ckpt \
            else block(xi)
        (y ** 2).sum().backward()
        return [y.detach(), xi.grad] + [p.grad.clone() for p in block.parameters()]

    plain, ck = grads(False), grads(True)
    out["ckpt_same"] = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(plain, ck))
    # the reentrant variant too
    block.zero_grad()
    torch.manual_seed(17)
    xi = x.clone().requires_grad_()
    y = ckpt(block, xi, use_reentrant=True)
    (y ** 2).sum().backward()
    out["ckpt_reentrant"] = torch.allclose(xi.grad, plain[1], atol=1e-6)
    # preserve_rng_state=False: PyTorch's recomputation draws a new mask; the framework's
    # fused dropout regenerates its mask from the (seed, offset) it saved, so its gradients
    # stay those of the forward (a divergence on the side of consistency): shapes only
    nopres = grads(True, preserve=False)
    out["ckpt_no_preserve"] = [tuple(t.shape) for t in nopres]

    v = torch.ones(4000, device=device)
    out["eval_identity"] = torch.equal(F.dropout(v, 0.5, training=False), v)
    block.eval()
    out["module_eval"] = torch.equal(block.drop(v), v)
    d = F.dropout(v, 0.25, training=True)
    kept = d != 0
    vals = d.unique().tolist()
    out["scaling"] = (len(vals) == 2 and vals[0] == 0 and abs(vals[1] - 1 / 0.75) < 1e-6,
                      _within(kept.float().mean().item(), 0.75, math.sqrt(0.1875), 4000))
    out["p0"] = torch.equal(nn.Dropout(p=0.0)(v), v)
    out["p1"] = nn.Dropout(p=1.0)(v).abs().sum().item()
    out["bad_p"] = _err(lambda: nn.Dropout(p=1.5))
    out["bad_p_fn"] = _err(lambda: F.dropout(v, -0.1))
    ints = torch.ones(3, dtype=torch.int64)
    out["int_input"] = (_err(lambda: F.dropout(ints, 0.5)),
                        _err(lambda: F.dropout2d(ints.view(1, 3, 1, 1) > 0, 0.5)),
                        F.dropout(ints, 0.0).tolist(), F.dropout(ints, 0.5, False).tolist())
    w = v.clone()
    F.dropout(w, 0.5, training=True, inplace=True)
    out["inplace"] = 0 < (w == 0).sum().item() < 4000

    # dropout's gradient uses the same mask
    t = torch.ones(64, device=device, requires_grad=True)
    o = F.dropout(t, 0.5)
    o.sum().backward()
    out["grad_mask"] = torch.equal(t.grad, o.detach())

    z = torch.randn(20000, device=device)
    a = F.alpha_dropout(z, 0.2, training=True)
    out["alpha"] = (tuple(a.shape), abs(a.mean().item()) < 0.05, abs(a.std().item() - 1) < 0.05)
    out["alpha_eval"] = torch.equal(F.alpha_dropout(z, 0.2, training=False), z)
    fa = F.feature_alpha_dropout(torch.randn(4, 50, 3, 3, device=device), 0.5, training=True)
    per_map = fa.view(4, 50, 9)
    out["feature_alpha"] = (tuple(fa.shape),
                            bool((per_map.std(-1) < 1e-5).any()),
                            bool((per_map.std(-1) > 0.1).any()))
    for k, shape in (("1d", (4, 30, 5)), ("2d", (4, 30, 3, 3)), ("3d", (2, 30, 2, 2, 2))):
        dd = getattr(F, "dropout" + k)(torch.ones(shape, device=device), 0.5, training=True)
        ch = dd.flatten(2)
        whole = ((ch == 0).all(-1) | (ch == 2).all(-1)).all().item()
        out["dropout" + k] = (tuple(dd.shape), whole, 0 < (ch == 0).sum().item())
    out["dropout2d_3d_input"] = tuple(F.dropout1d(torch.ones(30, 5), 0.5).shape)
    out["dropout1d_bad"] = _err(lambda: F.dropout1d(torch.ones(2, 3, 4, 5), 0.5))
    out["dropout2d_module"] = tuple(nn.Dropout2d(0.3)(torch.ones(2, 4, 3, 3)).shape)
    return out


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_dropout_and_checkpoint(device):
    import framework
    if device == "cuda" and not framework.cuda.is_available():
        pytest.skip("no cuda")
    torch = oracle()
    _same(_dropout_run(framework, device), _dropout_run(torch))


# ---------------------------------------------------------------- 6. DataLoader workers

class _SeedProbe:
    """A dataset whose items report the worker they came from and that worker's seeds."""

    def __init__(self, torch, n):
        self.torch, self.n = torch, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        torch = self.torch
        info = torch.utils.data.get_worker_info()
        wid = -1 if info is None else info.id
        base = -1 if info is None else info.seed - info.id
        return torch.tensor([i, wid, torch.initial_seed() % 2 ** 62, base % 2 ** 62,
                             int(np.random.randint(0, 2 ** 31)),
                             int(torch.randint(0, 2 ** 31, ()).item())])


def _worker_init_fn(worker_id):
    import framework
    mod = framework if framework.utils.data.get_worker_info() is not None else None
    try:
        import torch as real
        if real.utils.data.get_worker_info() is not None:
            mod = real
    except ImportError:
        pass
    np.random.seed(mod.initial_seed() % 2 ** 32)


def _workers_run(torch):
    out = {}
    ds = _SeedProbe(torch, 8)

    def epoch(loader):
        rows = torch.cat(list(loader)).tolist()
        by_worker = {}
        for i, wid, seed, base, np_draw, t_draw in rows:
            by_worker.setdefault(wid, set()).add((seed, base, np_draw))
        return rows, by_worker

    def make(seed, **kw):
        return torch.utils.data.DataLoader(
            ds, batch_size=2, num_workers=2, worker_init_fn=_worker_init_fn,
            generator=torch.Generator().manual_seed(seed), **kw)

    rows, by_worker = epoch(make(5))
    out["workers"] = sorted(by_worker)
    seeds = {w: next(iter(v))[0] for w, v in by_worker.items()}
    bases = {w: next(iter(v))[1] for w, v in by_worker.items()}
    out["seed_is_base_plus_id"] = all(seeds[w] == (bases[w] + w) % 2 ** 62 for w in seeds)
    out["seeds_differ"] = seeds[0] != seeds[1]
    out["one_seed_per_worker"] = all(len({s for s, _, _ in v}) == 1
                                     for v in by_worker.values())
    np_by_worker = {w: [r[4] for r in rows if r[1] == w] for w in seeds}
    out["numpy_differs"] = np_by_worker[0] != np_by_worker[1]
    out["order"] = [r[0] for r in rows]
    rows2, by_worker2 = epoch(make(5))
    out["same_generator_same_seeds"] = (by_worker == by_worker2,
                                        [r[5] for r in rows] == [r[5] for r in rows2])
    _, by_worker3 = epoch(make(6))
    out["other_seed_differs"] = by_worker != by_worker3
    # persistent workers: seeded once, the same seeds in every epoch
    loader = make(5, persistent_workers=True)
    e1, w1 = epoch(loader)
    e2, w2 = epoch(loader)
    out["persistent"] = ({w: {s for s, _, _ in v} for w, v in w1.items()} ==
                         {w: {s for s, _, _ in v} for w, v in w2.items()},
                         [r[4] for r in e1] != [r[4] for r in e2])
    # without worker_init_fn each worker's NumPy is still seeded apart (from base_seed, id)
    plain = torch.utils.data.DataLoader(ds, batch_size=2, num_workers=2,
                                        generator=torch.Generator().manual_seed(5))
    rows_plain = torch.cat(list(plain)).tolist()
    out["numpy_default_differs"] = ([r[4] for r in rows_plain if r[1] == 0] !=
                                    [r[4] for r in rows_plain if r[1] == 1])
    # a main-process loader sees no worker info
    out["main"] = torch.cat(list(torch.utils.data.DataLoader(ds, batch_size=4)))[:, 1].tolist()
    return out


def test_dataloader_worker_seeds():
    compare(_workers_run)
