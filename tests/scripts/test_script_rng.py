"""Script sweep: random number generation and reproducibility, part 1: seeding helpers,
RNG state save/restore, Generator objects, deterministic-algorithm switches (part 2,
test_script_rng_sampling.py: the samplers' distributions, dropout under checkpointing,
DataLoader worker seeds).

The framework's random streams are its own (Philox, not PyTorch's Mersenne Twister), so
each workload returns what both libraries define: shapes, dtypes, reproducibility within
the library, state round trips, moments checked inside the run, error types and texts.
"""
import random
import warnings

import numpy as np
import pytest

from tests.scripts.rng_support import compare, dt as _dt, err as _err, same as _same
from tests.scripts.script_harness import oracle


# ---------------------------------------------------------------- 1. seeding helpers

def _seeding_run(torch, device="cpu"):
    nn, F = torch.nn, torch.nn.functional
    from_numpy = np.random.default_rng(0)
    xs = torch.tensor(from_numpy.standard_normal((24, 6)), dtype=torch.float32)
    ys = torch.tensor(from_numpy.integers(0, 3, 24))
    ds = torch.utils.data.TensorDataset(xs, ys)

    def set_seed(seed):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)

    def train():
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3),
                              nn.Linear(16, 3)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
        losses, orders = [], []
        for _ in range(2):
            for x, y in loader:
                orders.append(y.tolist())
                loss = F.cross_entropy(model(x.to(device)), y.to(device))
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses, orders, random.random(), float(np.random.rand())

    set_seed(123)
    first = train()
    set_seed(123)
    second = train()
    set_seed(7)
    third = train()
    out = {"same_twice": first == second, "seed_matters": first[0] != third[0],
           "python_numpy_same": first[2:] == second[2:]}
    g = torch.random.manual_seed(5)
    out["manual_seed_returns"] = type(g).__name__
    out["initial_seed"] = torch.initial_seed()
    new = torch.seed()
    out["seed_is_int"] = isinstance(new, int) and new == torch.initial_seed()
    out["seed_new"] = new != 5
    torch.manual_seed(-1)
    out["negative_wraps"] = torch.initial_seed()
    out["bad_seed"] = _err(lambda: torch.manual_seed(2 ** 64))
    out["float_seed"] = (torch.manual_seed(3.0), torch.initial_seed())[1]
    return out


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_seeding_helpers(device):
    import framework
    if device == "cuda" and not framework.cuda.is_available():
        pytest.skip("no cuda")
    torch = oracle()
    want = _seeding_run(torch)
    got = _seeding_run(framework, device)
    _same(got, want)


# ---------------------------------------------------------------- 2. state and generators

def _state_run(torch):
    out = {}
    torch.manual_seed(0)
    torch.rand(3)
    state = torch.get_rng_state()
    out["state_type"] = (type(state).__name__, _dt(torch, state.dtype), state.dim(),
                         state.device.type)
    a = torch.rand(5)
    b = torch.randn(2, 3)
    torch.set_rng_state(state)
    out["restored"] = torch.equal(torch.rand(5), a) and torch.equal(torch.randn(2, 3), b)
    out["wrong_dtype"] = _err(lambda: torch.set_rng_state(state.float()))
    out["not_tensor"] = (_err(lambda: torch.set_rng_state([1, 2])),
                         _err(lambda: torch.Generator().set_state(5)))

    torch.set_rng_state(state)
    with torch.random.fork_rng(devices=[]):
        torch.rand(100)
    out["fork_restores"] = torch.equal(torch.rand(5), a)
    torch.set_rng_state(state)
    with torch.random.fork_rng(devices=[], enabled=False):
        torch.rand(100)
    out["fork_disabled_advances"] = not torch.equal(torch.rand(5), a)

    g = torch.Generator()
    out["gen_device"] = str(g.device)
    out["chain"] = type(g.manual_seed(42)).__name__
    out["gen_initial"] = g.initial_seed()
    gs = g.get_state()
    x = torch.rand(4, generator=g)
    g.set_state(gs)
    out["gen_restore"] = torch.equal(torch.rand(4, generator=g), x)
    g2 = torch.Generator().manual_seed(42)
    out["same_seed_same"] = torch.equal(torch.rand(4, generator=g2), x)
    g.manual_seed(42)
    c = g.clone_state()
    out["clone"] = (type(c).__name__, torch.equal(torch.rand(3, generator=c),
                                                  torch.rand(3, generator=g)))
    s = g.seed()
    out["gen_seed"] = isinstance(s, int) and s == g.initial_seed()
    out["set_state_bad"] = _err(lambda: g.set_state(gs.float()))
    out["graphsafe_cpu"] = (_err(g.graphsafe_get_state),
                            _err(lambda: g.graphsafe_set_state(torch.Generator())))
    out["thread_safe_main"] = torch.random.thread_safe_generator()

    # generator= on every sampler: same seed, same draws
    def draws(seed):
        g = torch.Generator().manual_seed(seed)
        r = [torch.rand(3, generator=g), torch.randn(3, generator=g),
             torch.randint(0, 10, (3,), generator=g), torch.randperm(6, generator=g),
             torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 4, True, generator=g),
             torch.bernoulli(torch.full((5,), 0.5), generator=g),
             torch.normal(torch.zeros(3), torch.ones(3), generator=g),
             torch.normal(0.0, 1.0, (3,), generator=g)]
        for name, args in [("normal_", ()), ("uniform_", ()), ("exponential_", ()),
                           ("geometric_", (0.3,)), ("log_normal_", ()), ("cauchy_", ()),
                           ("random_", (0, 5))]:
            r.append(getattr(torch.empty(4), name)(*args, generator=g))
        return r, g.get_state()

    d1, s1 = draws(3)
    d2, s2 = draws(3)
    d3, _ = draws(4)
    out["sampler_same"] = all(torch.equal(p, q) for p, q in zip(d1, d2)) and \
        torch.equal(s1, s2)
    out["sampler_differs"] = sum(not torch.equal(p, q) for p, q in zip(d1, d3))
    out["sampler_shapes"] = [(tuple(t.shape), _dt(torch, t.dtype)) for t in d1]

    # default generator unaffected by a private generator
    torch.set_rng_state(state)
    draws(9)
    out["private_isolated"] = torch.equal(torch.rand(5), a)

    # DataLoader / RandomSampler / random_split with generator=
    ds = torch.utils.data.TensorDataset(torch.arange(10))
    def loader_order(seed):
        dl = torch.utils.data.DataLoader(ds, batch_size=3, shuffle=True,
                                         generator=torch.Generator().manual_seed(seed))
        return [b[0].tolist() for b in dl]
    out["loader_same"] = loader_order(1) == loader_order(1)
    out["loader_perm"] = sorted(sum(loader_order(1), [])) == list(range(10))
    rs = torch.utils.data.RandomSampler(range(8), generator=torch.Generator().manual_seed(2))
    rs2 = torch.utils.data.RandomSampler(range(8), generator=torch.Generator().manual_seed(2))
    out["sampler"] = (list(rs) == list(rs2), sorted(rs) == list(range(8)))
    rs3 = torch.utils.data.RandomSampler(range(8), replacement=True, num_samples=20,
                                         generator=torch.Generator().manual_seed(2))
    out["sampler_repl"] = (len(list(rs3)), all(0 <= i < 8 for i in rs3))
    parts = torch.utils.data.random_split(range(10), [0.7, 0.3],
                                          generator=torch.Generator().manual_seed(42))
    parts2 = torch.utils.data.random_split(range(10), [7, 3],
                                           generator=torch.Generator().manual_seed(42))
    out["split"] = ([len(p) for p in parts], list(parts[0]) == list(parts2[0]),
                    sorted(list(parts[0]) + list(parts[1])) == list(range(10)))
    out["split_bad"] = _err(lambda: torch.utils.data.random_split(range(10), [3, 3]))
    return out


def test_rng_state_and_generators():
    compare(_state_run)


def _cuda_state_run(torch, dev):
    out = {}
    torch.cuda.manual_seed(11)
    out["cuda_initial"] = torch.cuda.initial_seed()
    st = torch.cuda.get_rng_state()
    out["cuda_state"] = (_dt(torch, st.dtype), st.device.type, st.dim())
    a = torch.rand(5, device=dev)
    torch.cuda.set_rng_state(st)
    out["cuda_restore"] = torch.equal(torch.rand(5, device=dev), a)
    out["all"] = (type(torch.cuda.get_rng_state_all()).__name__,
                  len(torch.cuda.get_rng_state_all()))
    torch.cuda.set_rng_state_all(torch.cuda.get_rng_state_all())
    with torch.random.fork_rng(devices=[0]):
        torch.rand(50, device=dev)
    torch.cuda.set_rng_state(st)
    with torch.random.fork_rng(devices=[0]):
        torch.rand(50, device=dev)
    out["fork_cuda"] = torch.equal(torch.rand(5, device=dev), a)
    g = torch.Generator(device=dev).manual_seed(3)
    out["gen_dev"] = g.device.type
    x = torch.randn(4, device=dev, generator=g)
    out["gen_dev_draw"] = x.device.type
    out["mismatch"] = _err(lambda: torch.randn(4, generator=g))
    snap = g.graphsafe_get_state()
    y = torch.randn(4, device=dev, generator=g)
    g.graphsafe_set_state(snap)
    out["graphsafe"] = (type(snap).__name__,
                        torch.equal(torch.randn(4, device=dev, generator=g), y))
    out["mismatch2"] = _err(lambda: torch.rand(3, device=dev,
                                               generator=torch.Generator()))
    return out


def test_cuda_rng_state():
    import framework
    if not framework.cuda.is_available():
        pytest.skip("no cuda")
    torch = oracle()
    got = _cuda_state_run(framework, "cuda")
    # PyTorch's CPU build has no cuda: pin the values it defines
    assert got["cuda_state"] == ("uint8", "cpu", 1)
    assert got["cuda_initial"] == 11 and got["cuda_restore"] and got["fork_cuda"]
    assert got["all"] == ("list", 1) and got["gen_dev"] == "cuda"
    assert got["gen_dev_draw"] == "cuda" and got["graphsafe"] == ("Generator", True)
    # the messages PyTorch gives on a cuda machine
    assert got["mismatch"] == ("RuntimeError",
                               "Expected a 'cpu' device type for generator but found 'cuda'")
    assert got["mismatch2"] == ("RuntimeError",
                                "Expected a 'cuda' device type for generator but found 'cpu'")
    del torch


# ---------------------------------------------------------------- 4. deterministic mode

def _deterministic_run(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {"default": (torch.are_deterministic_algorithms_enabled(),
                       torch.backends.cudnn.deterministic,
                       torch.utils.deterministic.fill_uninitialized_memory)}
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    out["cudnn"] = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    torch.backends.cudnn.deterministic = False
    idx = torch.tensor([0, 0, 2])
    val = torch.ones(3)
    x = torch.randn(1, 1, 4, 4)
    pooled, ind = F.max_pool2d(x, 2, return_indices=True)
    try:
        torch.use_deterministic_algorithms(True)
        out["on"] = (torch.are_deterministic_algorithms_enabled(),
                     torch.is_deterministic_algorithms_warn_only_enabled(),
                     torch.get_deterministic_debug_mode())
        e = torch.empty(3)
        out["empty_filled"] = (bool(e.isnan().all()),
                               torch.empty(2, dtype=torch.int32).tolist(),
                               torch.empty(2, dtype=torch.bool).tolist(),
                               bool(torch.empty_like(val).isnan().all()))
        grown = torch.zeros(2).resize_(5)
        out["resize_filled"] = (grown[:2].tolist(), bool(grown[2:].isnan().all()),
                                torch.zeros(1, dtype=torch.int16).resize_(3).tolist())
        torch.utils.deterministic.fill_uninitialized_memory = False
        out["fill_off_empty"] = torch.zeros(2).resize_(1).tolist()
        out["fill_off"] = torch.utils.deterministic.fill_uninitialized_memory
        torch.utils.deterministic.fill_uninitialized_memory = True
        # cpu: put_ without accumulate has no deterministic form; the rest are fine
        out["put"] = _err(lambda: torch.zeros(4).put_(idx, val))
        out["put_acc"] = torch.zeros(4).put_(idx, val, accumulate=True).tolist()
        out["index_add"] = torch.zeros(4).index_add_(0, idx, val).tolist()
        out["scatter_add"] = torch.zeros(4).scatter_add_(0, idx, val).tolist()
        out["index_put_acc"] = torch.zeros(4).index_put_((idx,), val, accumulate=True).tolist()
        out["bincount_w"] = torch.bincount(idx, val).tolist()
        out["unpool"] = _err(lambda: F.max_unpool2d(pooled, ind, 2))
        out["unpool_mod"] = _err(lambda: nn.MaxUnpool1d(2)(*F.max_pool1d(
            torch.randn(1, 1, 4), 2, return_indices=True)))
        torch.use_deterministic_algorithms(True, warn_only=True)
        out["warn_only"] = (torch.is_deterministic_algorithms_warn_only_enabled(),
                            torch.get_deterministic_debug_mode())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = torch.zeros(4).put_(idx, val)
            F.max_unpool2d(pooled, ind, 2)
        out["warned"] = ([str(m.message)[:40] for m in w], r.tolist())
        torch.set_deterministic_debug_mode("error")
        out["debug_mode"] = (torch.get_deterministic_debug_mode(),
                             torch.is_deterministic_algorithms_warn_only_enabled())
        out["bad_mode"] = _err(lambda: torch.use_deterministic_algorithms(1))
    finally:
        torch.use_deterministic_algorithms(False)
        torch.utils.deterministic.fill_uninitialized_memory = True
    out["off"] = (torch.are_deterministic_algorithms_enabled(),
                  torch.zeros(4).put_(idx, val).tolist())
    return out


def test_deterministic_algorithms():
    compare(_deterministic_run)


def test_deterministic_algorithms_cuda_alerts():
    """On cuda PyTorch also refuses bincount with weights; ops the framework makes
    deterministic there (put_ with accumulate, index_add_, scatter_add_, histc, median) run,
    and give the same bits twice."""
    import framework as torch
    if not torch.cuda.is_available():
        pytest.skip("no cuda")
    idx = torch.tensor([0, 0, 2, 0], device="cuda")
    val = torch.tensor([0.1, 0.2, 0.3, 0.4], device="cuda")
    try:
        torch.use_deterministic_algorithms(True)
        e = _err(lambda: torch.bincount(idx, val))
        assert e == ("RuntimeError", "_bincount_cuda does not have a deterministic "
                     "implementation, but you set 'torch.use_deterministic_algorithms(True)'."
                     " You can turn off determinism just for this operation, or you can use "
                     "the 'warn_only=True' option, if that's acceptable for your application."
                     " You can also file an issue at https://github.com/pytorch/pytorch/"
                     "issues to help us prioritize adding deterministic support for this "
                     "operation.")
        assert _err(lambda: torch.zeros(4, device="cuda").put_(idx, val))[0] == "RuntimeError"
        a = torch.zeros(4, device="cuda").index_add_(0, idx, val)
        b = torch.zeros(4, device="cuda").index_add_(0, idx, val)
        assert torch.equal(a, b)
        np.testing.assert_allclose(a.cpu().numpy(), [0.7, 0, 0.3, 0], rtol=1e-6)
        assert bool(torch.empty(3, device="cuda").isnan().all())
    finally:
        torch.use_deterministic_algorithms(False)
