"""framework.optim.lr_scheduler against torch.optim.lr_scheduler: lr (and momentum)
sequences over 100 steps, state_dict round trips at step 37, warnings and errors."""
import copy
import math
import warnings

import numpy as np
import pytest
import torch

import framework as fw
import framework.optim as fopt
from framework.optim import lr_scheduler as flrs

tlrs = torch.optim.lr_scheduler

N_STEPS = 100
SAVE_AT = 37


# ---------------------------------------------------------------- optimizers on both sides
def _params(lib, device="cpu"):
    if lib is torch:
        return [torch.zeros(3, dtype=torch.float64, requires_grad=True),
                torch.zeros(2, dtype=torch.float64, requires_grad=True)]
    return [fw.zeros(3, dtype=fw.float64, device=device, requires_grad=True),
            fw.zeros(2, dtype=fw.float64, device=device, requires_grad=True)]


def _make_opt(lib, kind="sgd", device="cpu", lr=(0.1, 0.05)):
    """Two param groups (different lrs). No grads are set: step() only counts."""
    optim = torch.optim if lib is torch else fopt
    p = _params(lib, device)
    groups = [{"params": [p[0]], "lr": lr[0]}, {"params": [p[1]], "lr": lr[1]}]
    if kind == "sgd":
        return optim.SGD(groups, lr=0.1, momentum=0.9)
    if kind == "adam":
        return optim.Adam(groups, lr=0.1, betas=(0.9, 0.999))
    # an optimizer with neither momentum nor betas
    base = optim.Optimizer

    class Plain(base):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            return None

    return Plain(groups)


def _lib_mod(lib):
    return tlrs if lib is torch else flrs


# ---------------------------------------------------------------- scheduler builders
# Each builder takes (lr_scheduler module, optimizer) and returns a scheduler.
class _Lam:
    """A callable object (its __dict__ is saved by LambdaLR.state_dict)."""

    def __init__(self, k):
        self.k = k

    def __call__(self, epoch):
        return 1.0 / (1.0 + self.k * epoch)


SCHEDULERS = {
    "lambda": lambda m, o: m.LambdaLR(o, lambda e: 0.97 ** e),
    "lambda_list_obj": lambda m, o: m.LambdaLR(o, [_Lam(0.1), lambda e: 1.0 + math.sin(e)]),
    "multiplicative": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95),
    "step": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "multistep": lambda m, o: m.MultiStepLR(o, milestones=[10, 30, 30, 80], gamma=0.3),
    "constant": lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=12),
    "linear": lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=40),
    "linear_down": lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=60),
    "exponential": lambda m, o: m.ExponentialLR(o, gamma=0.96),
    "polynomial": lambda m, o: m.PolynomialLR(o, total_iters=70, power=2.0),
    "cosine": lambda m, o: m.CosineAnnealingLR(o, T_max=30, eta_min=0.001),
    "cosine_zero": lambda m, o: m.CosineAnnealingLR(o, T_max=17),
    "warm_restarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=10, eta_min=1e-3),
    "warm_restarts_mult": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "cyclic_tri": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=7),
    "cyclic_tri2": lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3],
                                           step_size_up=5, step_size_down=9,
                                           mode="triangular2"),
    "cyclic_exp": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=6,
                                          mode="exp_range", gamma=0.97,
                                          base_momentum=0.7, max_momentum=0.95),
    "cyclic_scale_fn": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4,
                                               scale_fn=lambda x: 0.5 * (1 + math.sin(x)),
                                               scale_mode="iterations"),
    "cyclic_no_mom": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=8,
                                             cycle_momentum=False),
    "onecycle_cos": lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=N_STEPS + 1),
    "onecycle_linear": lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 0.2], epochs=11,
                                                 steps_per_epoch=10, pct_start=0.25,
                                                 anneal_strategy="linear", div_factor=10.0,
                                                 final_div_factor=100.0),
    "onecycle_three": lambda m, o: m.OneCycleLR(o, max_lr=0.3, total_steps=120,
                                                three_phase=True, base_momentum=0.8,
                                                max_momentum=0.9),
    "sequential": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=10),
            m.CosineAnnealingLR(o, T_max=40),
            m.ExponentialLR(o, gamma=0.9)], milestones=[10, 50]),
    "sequential_const_step": lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.5, total_iters=5), m.StepLR(o, 9, 0.7)], milestones=[20]),
    "chained": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=8), m.ExponentialLR(o, gamma=0.97),
         m.StepLR(o, step_size=13, gamma=0.5)]),
    "chained_opt_arg": lambda m, o: m.ChainedScheduler(
        [m.LinearLR(o, start_factor=0.2, total_iters=15), m.MultiStepLR(o, [25, 60])],
        optimizer=o),
}

MOMENTUM_KINDS = {"cyclic_exp": "adam", "onecycle_three": "adam"}


def _momentum(opt):
    out = []
    for g in opt.param_groups:
        if "betas" in g:
            out.append(float(g["betas"][0]))
        elif "momentum" in g:
            out.append(float(g["momentum"]))
    return out


def _record(opt, sched):
    return ([float(x) for x in sched.get_last_lr()],
            [float(g["lr"]) for g in opt.param_groups], _momentum(opt))


def _run(lib, name, steps=N_STEPS, device="cpu"):
    opt = _make_opt(lib, MOMENTUM_KINDS.get(name, "sgd"), device)
    sched = SCHEDULERS[name](_lib_mod(lib), opt)
    out = [_record(opt, sched)]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(_record(opt, sched))
    return out, opt, sched


def _assert_same(ours, ref, rtol=1e-12):
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref)):
        for xa, xb in zip(a, b):
            np.testing.assert_allclose(xa, xb, rtol=rtol, atol=1e-15, err_msg=f"step {i}")


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_sequence_matches_torch(name):
    ours, _, _ = _run(fw, name)
    ref, _, _ = _run(torch, name)
    _assert_same(ours, ref)
    # a schedule that never changes would make this test vacuous
    assert len({r[1][0] for r in ref}) >= 2


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_round_trip(name):
    ref, _, tsched = _run(torch, name)
    first, opt, sched = _run(fw, name, steps=SAVE_AT)
    opt_sd = copy.deepcopy(opt.state_dict())
    sched_sd = copy.deepcopy(sched.state_dict())
    assert "optimizer" not in sched_sd
    assert set(sched_sd) == set(tsched.state_dict())  # torch's layout
    # fresh optimizer and scheduler, then load both (torch's resume pattern)
    opt2 = _make_opt(fw, MOMENTUM_KINDS.get(name, "sgd"), lr=(0.7, 0.3))
    sched2 = SCHEDULERS[name](flrs, opt2)
    opt2.load_state_dict(opt_sd)
    sched2.load_state_dict(sched_sd)
    out = first
    for _ in range(N_STEPS - SAVE_AT):
        opt2.step()
        sched2.step()
        out.append(_record(opt2, sched2))
    _assert_same(out, ref)


def test_sequence_on_device(device):
    for name in ("cosine", "onecycle_cos"):
        ours, _, _ = _run(fw, name, steps=40, device=device)
        ref, _, _ = _run(torch, name, steps=40)
        _assert_same(ours, ref)


def test_warm_restarts_fractional_epochs():
    def run(lib):
        opt = _make_opt(lib)
        s = _lib_mod(lib).CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=0.01)
        out = []
        iters = 7
        for epoch in range(20):
            for i in range(iters):
                opt.step()
                s.step(epoch + i / iters)
                out.append((s.get_last_lr()[0], s.T_cur, s.T_i, s.last_epoch))
        s.step(3)  # an integer epoch below T_0 resets T_i
        out.append((s.get_last_lr()[0], s.T_cur, s.T_i, s.last_epoch))
        return out
    ours, ref = run(fw), run(torch)
    np.testing.assert_allclose(np.array(ours, dtype=float), np.array(ref, dtype=float),
                               rtol=1e-12)


@pytest.mark.parametrize("name", ["step", "multistep", "constant", "linear", "exponential",
                                  "polynomial", "cosine"])
def test_closed_form_with_epoch_argument(name):
    def run(lib):
        opt = _make_opt(lib)
        s = SCHEDULERS[name](_lib_mod(lib), opt)
        out = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for e in [3, 10, 11, 29, 30, 45, 80, 12]:
                opt.step()
                s.step(e)
                out.append(s.get_last_lr()[0])
        assert any("The epoch parameter in `scheduler.step()`" in str(x.message) for x in w)
        return out
    np.testing.assert_allclose(run(fw), run(torch), rtol=1e-12)


@pytest.mark.parametrize("name", ["step", "exponential", "cosine", "lambda", "multistep"])
def test_tensor_lr_updated_in_place(name, device):
    def run(lib):
        opt = _make_opt(lib, device=device if lib is fw else "cpu")
        mk = torch.tensor if lib is torch else fw.tensor
        opt.param_groups[0]["lr"] = mk(0.1, dtype=torch.float64 if lib is torch else fw.float64)
        lr_obj = opt.param_groups[0]["lr"]
        s = SCHEDULERS[name](_lib_mod(lib), opt)
        out = []
        for _ in range(40):
            opt.step()
            s.step()
            assert opt.param_groups[0]["lr"] is lr_obj
            last = s.get_last_lr()[0]
            assert last is not lr_obj  # a copy, never the group's tensor
            out.append(float(last))
        return out
    np.testing.assert_allclose(run(fw), run(torch), rtol=1e-12)


# ---------------------------------------------------------------- ReduceLROnPlateau
def _metrics():
    rng = np.random.RandomState(3)
    base = np.concatenate([np.linspace(1.0, 0.5, 20), np.full(25, 0.5),
                           np.linspace(0.5, 0.3, 15), np.full(40, 0.3)])
    return base + rng.uniform(0, 1e-3, size=base.size)


PLATEAU = {
    "default": dict(),
    "min_abs": dict(mode="min", threshold=0.01, threshold_mode="abs", patience=3),
    "max_rel": dict(mode="max", factor=0.5, patience=2, cooldown=3),
    "max_abs": dict(mode="max", threshold=1e-3, threshold_mode="abs", patience=0, factor=0.7),
    "min_lr_list": dict(patience=1, factor=0.3, min_lr=[0.004, 0.02], cooldown=1),
    "eps_big": dict(patience=1, factor=0.9, eps=5e-3),
}


def _plateau_run(lib, kw, start=0, sched=None, opt=None, upto=100):
    metrics = _metrics()
    if "max" == kw.get("mode"):
        metrics = -metrics
    if opt is None:
        opt = _make_opt(lib)
        sched = _lib_mod(lib).ReduceLROnPlateau(opt, **kw)
    out = []
    for i in range(start, upto):
        opt.step()
        sched.step(metrics[i])
        out.append([float(x) for x in sched.get_last_lr()] + [sched.num_bad_epochs,
                                                               sched.cooldown_counter])
    return out, opt, sched


@pytest.mark.parametrize("case", sorted(PLATEAU))
def test_reduce_on_plateau(case):
    kw = PLATEAU[case]
    ours, _, _ = _plateau_run(fw, kw)
    ref, _, _ = _plateau_run(torch, kw)
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-12)
    assert ref[-1][0] < ref[0][0]  # the lr did drop


@pytest.mark.parametrize("case", sorted(PLATEAU))
def test_reduce_on_plateau_round_trip(case):
    kw = PLATEAU[case]
    ref, _, _ = _plateau_run(torch, kw)
    first, opt, sched = _plateau_run(fw, kw, upto=SAVE_AT)
    sd, osd = copy.deepcopy(sched.state_dict()), copy.deepcopy(opt.state_dict())
    opt2 = _make_opt(fw)
    sched2 = flrs.ReduceLROnPlateau(opt2)
    opt2.load_state_dict(osd)
    sched2.load_state_dict(sd)
    rest, _, _ = _plateau_run(fw, kw, start=SAVE_AT, sched=sched2, opt=opt2)
    np.testing.assert_allclose(np.array(first + rest), np.array(ref), rtol=1e-12)


def test_reduce_on_plateau_tensor_lr():
    out = []
    for lib in (fw, torch):
        opt = _make_opt(lib)
        opt.param_groups[0]["lr"] = (fw.tensor if lib is fw else torch.tensor)(0.1)
        t = opt.param_groups[0]["lr"]
        s = _lib_mod(lib).ReduceLROnPlateau(opt, patience=1)
        for m in [1.0, 1.0, 1.0, 1.0, 1.0]:
            s.step(m)
        assert opt.param_groups[0]["lr"] is t
        out.append(float(t))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6)
    assert out[1] < 0.1


# ---------------------------------------------------------------- warnings
def _warned(fn, text):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return any(text in str(x.message) for x in w)


ORDER = "Detected call of `lr_scheduler.step()` before `optimizer.step()`"


@pytest.mark.parametrize("lib", [fw, torch], ids=["framework", "torch"])
def test_step_order_warning(lib):
    opt = _make_opt(lib)
    s = _lib_mod(lib).StepLR(opt, 3)
    assert _warned(s.step, ORDER)
    opt2 = _make_opt(lib)
    s2 = _lib_mod(lib).StepLR(opt2, 3)

    def good():
        opt2.step()
        s2.step()
    assert not _warned(good, ORDER)
    assert getattr(opt2.step, "_wrapped_by_lr_sched", False)
    # a second scheduler does not wrap twice
    step_fn = opt2.step
    _lib_mod(lib).ExponentialLR(opt2, 0.9)
    assert opt2.step is step_fn


@pytest.mark.parametrize("lib", [fw, torch], ids=["framework", "torch"])
def test_overridden_step_and_get_lr_warnings(lib):
    opt = _make_opt(lib)
    s = _lib_mod(lib).StepLR(opt, 3)
    opt.step = lambda closure=None: None
    assert _warned(s.step, "Seems like `optimizer.step()` has been overridden")
    assert _warned(s.get_lr, "please use `get_last_lr()`")


def test_lr_scheduler_alias_and_verbose():
    assert issubclass(flrs._LRScheduler, flrs.LRScheduler)
    assert flrs._LRScheduler.__name__ == "_LRScheduler"
    opt = _make_opt(fw)
    assert _warned(lambda: flrs.StepLR(opt, 3, verbose=True), "verbose parameter is deprecated")
    assert not _warned(lambda: flrs.StepLR(_make_opt(fw), 3), "verbose")


# ---------------------------------------------------------------- errors
def _err(lib, fn):
    with pytest.raises(Exception) as e:
        fn(_lib_mod(lib), lib)
    return type(e.value), str(e.value)


ERRORS = {
    "not_optimizer": lambda m, L: m.StepLR(object(), 3),
    "not_optimizer_plateau": lambda m, L: m.ReduceLROnPlateau(object()),
    "not_optimizer_cyclic": lambda m, L: m.CyclicLR(object(), 0.1, 1.0),
    "no_initial_lr": lambda m, L: m.StepLR(_make_opt(L), 3, last_epoch=5),
    "lambda_count": lambda m, L: m.LambdaLR(_make_opt(L), [lambda e: 1.0]),
    "multiplicative_not_callable": lambda m, L: m.MultiplicativeLR(_make_opt(L), [1.0, 2.0]),
    "constant_factor": lambda m, L: m.ConstantLR(_make_opt(L), factor=1.5),
    "linear_start": lambda m, L: m.LinearLR(_make_opt(L), start_factor=0.0),
    "linear_end": lambda m, L: m.LinearLR(_make_opt(L), end_factor=1.5),
    "plateau_factor": lambda m, L: m.ReduceLROnPlateau(_make_opt(L), factor=1.0),
    "plateau_mode": lambda m, L: m.ReduceLROnPlateau(_make_opt(L), mode="avg"),
    "plateau_threshold_mode": lambda m, L: m.ReduceLROnPlateau(_make_opt(L),
                                                               threshold_mode="x"),
    "plateau_min_lrs": lambda m, L: m.ReduceLROnPlateau(_make_opt(L), min_lr=[0.1]),
    "cyclic_mode": lambda m, L: m.CyclicLR(_make_opt(L), 0.1, 1.0, mode="sine"),
    "cyclic_no_momentum": lambda m, L: m.CyclicLR(_make_opt(L, "plain"), 0.1, 1.0),
    "cyclic_base_len": lambda m, L: m.CyclicLR(_make_opt(L), [0.1], 1.0),
    "warm_T0": lambda m, L: m.CosineAnnealingWarmRestarts(_make_opt(L), T_0=0),
    "warm_Tmult": lambda m, L: m.CosineAnnealingWarmRestarts(_make_opt(L), T_0=2, T_mult=0),
    "warm_eta": lambda m, L: m.CosineAnnealingWarmRestarts(_make_opt(L), 2, eta_min="a"),
    "warm_neg_epoch": lambda m, L: m.CosineAnnealingWarmRestarts(_make_opt(L), 2).step(-1),
    "onecycle_no_total": lambda m, L: m.OneCycleLR(_make_opt(L), 0.1),
    "onecycle_total": lambda m, L: m.OneCycleLR(_make_opt(L), 0.1, total_steps=0),
    "onecycle_epochs": lambda m, L: m.OneCycleLR(_make_opt(L), 0.1, epochs=0,
                                                 steps_per_epoch=3),
    "onecycle_spe": lambda m, L: m.OneCycleLR(_make_opt(L), 0.1, epochs=2,
                                              steps_per_epoch=-1),
    "onecycle_pct": lambda m, L: m.OneCycleLR(_make_opt(L), 0.1, total_steps=9, pct_start=2.0),
    "onecycle_anneal": lambda m, L: m.OneCycleLR(_make_opt(L), 0.1, total_steps=9,
                                                 anneal_strategy="exp"),
    "onecycle_no_momentum": lambda m, L: m.OneCycleLR(_make_opt(L, "plain"), 0.1,
                                                      total_steps=9),
    "onecycle_overrun": lambda m, L: [s.step() for s in [m.OneCycleLR(_make_opt(L), 0.1,
                                                                      total_steps=3)]
                                      for _ in range(5)],
    "sequential_empty": lambda m, L: m.SequentialLR(_make_opt(L), [], []),
    "sequential_milestones": lambda m, L: (lambda o: m.SequentialLR(
        o, [m.StepLR(o, 2), m.StepLR(o, 3)], milestones=[1, 2]))(_make_opt(L)),
    "sequential_plateau": lambda m, L: (lambda o: m.SequentialLR(
        o, [m.StepLR(o, 2), m.ReduceLROnPlateau(o)], milestones=[1]))(_make_opt(L)),
    "sequential_no_opt": lambda m, L: m.SequentialLR(_make_opt(L), [object()], []),
    "chained_empty": lambda m, L: m.ChainedScheduler([]),
    "chained_other_opt": lambda m, L: m.ChainedScheduler(
        [m.StepLR(_make_opt(L), 2), m.StepLR(_make_opt(L), 3)]),
    "swalr_strategy": lambda m, L: L.optim.swa_utils.SWALR(_make_opt(L), 0.1,
                                                           anneal_strategy="exp"),
    "swalr_epochs": lambda m, L: L.optim.swa_utils.SWALR(_make_opt(L), 0.1, anneal_epochs=-1),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    ours = _err(fw, ERRORS[case])
    ref = _err(torch, ERRORS[case])
    assert ours[0] is ref[0] or ours[0].__name__ == ref[0].__name__, (ours, ref)
    if case in ("chained_other_opt",):  # the message holds the optimizers' reprs
        assert ours[1].split(" has ")[0] == ref[1].split(" has ")[0]
    else:
        assert ours[1] == ref[1]


# ---------------------------------------------------------------- end to end
@pytest.mark.parametrize("sched", ["onecycle", "cyclic_adam"])
def test_training_loop_matches_torch(sched, device):
    """A PyTorch-style loop: real gradients, the schedule (and momentum cycling) feeds
    the optimizer; the weights after 12 steps equal torch's."""
    rng = np.random.RandomState(7)
    w0, x, y = rng.standard_normal((3, 4)), rng.standard_normal((8, 4)), rng.standard_normal((8, 3))

    def run(lib):
        dev = {} if lib is torch else {"device": device}
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True, **dev)
        X, Y = lib.tensor(x, dtype=lib.float64, **dev), lib.tensor(y, dtype=lib.float64, **dev)
        m = _lib_mod(lib)
        if sched == "onecycle":
            opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
            s = m.OneCycleLR(opt, max_lr=0.2, total_steps=12, pct_start=0.4)
        else:
            opt = lib.optim.Adam([w], lr=0.1)
            s = m.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3)
        for _ in range(12):
            opt.zero_grad()
            loss = ((X @ w.T - Y) ** 2).mean()
            loss.backward()
            opt.step()
            s.step() if sched == "cyclic_adam" or s.last_epoch < 11 else None
        return w.detach().cpu().numpy() if lib is torch else w.detach().to("cpu").numpy()
    np.testing.assert_allclose(run(fw), run(torch), rtol=1e-9, atol=1e-12)
