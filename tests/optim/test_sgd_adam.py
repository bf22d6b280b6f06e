"""SGD, Adam, AdamW, RMSprop and Adagrad: trajectories equal torch.optim's for each option
(float64 and float32, cpu and simulated cuda), foreach/fused equal the reference,
state_dict interrupt/resume, and torch's hyper-parameter errors."""
import numpy as np
import pytest
import torch

import framework as fw
from tests.optim.common import (assert_trajectories_close, run_trajectory,
                                state_dict_from_numpy, state_dict_to_numpy)

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, weight_decay=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.8, weight_decay=0.05, nesterov=True, maximize=True)),
    ("SGD", dict(lr=0.1, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.95), eps=1e-3)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
    ("AdamW", dict(lr=0.05, maximize=True, betas=(0.5, 0.9))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-4)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-3)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
]
IDS = [f"{n}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for n, kw in CASES]

# A subset for simulated cuda, where every kernel runs in Triton's interpreter.
CUDA_CASES = [CASES[i] for i in (5, 10, 14, 20, 23)]
CUDA_IDS = [IDS[i] for i in (5, 10, 14, 20, 23)]


def _factory(T, name, kw):
    return lambda ps: getattr(T.optim, name)(ps, **kw)


def _steps(device):
    return 50 if device == "cpu" else 3


def _torch_traj(name, kw, steps, dtype, **extra):
    return run_trajectory(torch, _factory(torch, name, kw), steps, dtype, "cpu", **extra)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_trajectory_cpu(name, kw, dtype):
    want = _torch_traj(name, kw, 50, dtype)
    got = run_trajectory(fw, _factory(fw, name, kw), 50, dtype, "cpu")
    assert_trajectories_close(got, want, dtype)


@pytest.mark.parametrize("name,kw", CUDA_CASES, ids=CUDA_IDS)
def test_trajectory_device(name, kw, device):
    steps = _steps(device)
    for dtype in ("float32", "float64"):
        want = _torch_traj(name, kw, steps, dtype)
        got = run_trajectory(fw, _factory(fw, name, kw), steps, dtype, device)
        assert_trajectories_close(got, want, dtype)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_resume_at_step_25(name, kw):
    """Save at step 25 (through NumPy), load into a fresh optimizer: same step 50."""
    want = run_trajectory(fw, _factory(fw, name, kw), 50, "float64", "cpu")
    got = run_trajectory(fw, _factory(fw, name, kw), 50, "float64", "cpu", resume_at=25,
                         sd_convert=lambda sd: state_dict_from_numpy(
                             fw, state_dict_to_numpy(sd)))
    assert_trajectories_close(got, want, "float64", rtol=0, atol=0)
    assert_trajectories_close(got, _torch_traj(name, kw, 50, "float64"), "float64")


@pytest.mark.parametrize("name,kw", CUDA_CASES, ids=CUDA_IDS)
def test_resume_device(name, kw, device):
    steps = 4 if device != "cpu" else 30
    want = _torch_traj(name, kw, steps, "float32")
    got = run_trajectory(fw, _factory(fw, name, kw), steps, "float32", device,
                         resume_at=steps // 2)
    assert_trajectories_close(got, want, "float32")


@pytest.mark.parametrize("name,kw", CUDA_CASES, ids=CUDA_IDS)
def test_foreach_and_fused_equal_reference(name, kw, device):
    """The multi-tensor paths (one native loop / one Triton launch over all tensors) agree
    with the single-tensor reference to float32 rounding (their fp32 math orders
    operations differently)."""
    steps = 20 if device == "cpu" else 3
    ref = run_trajectory(fw, _factory(fw, name, dict(kw, foreach=False)), steps,
                         "float32", device)
    for opt in (dict(foreach=True), dict(fused=True), dict(foreach=None, fused=None)):
        got = run_trajectory(fw, _factory(fw, name, dict(kw, **opt)), steps, "float32",
                             device)
        assert_trajectories_close(got, ref, "float32")


@pytest.mark.parametrize("name,kw", [CASES[3], CASES[8], CASES[15], CASES[20], CASES[22]],
                         ids=[IDS[3], IDS[8], IDS[15], IDS[20], IDS[22]])
def test_closure_loss_trajectory(name, kw):
    """The gradients come from a loss evaluated in the closure passed to step."""
    def loss(T, params):
        total = None
        for p in params:
            term = (p * p * p * 0.1 + p * p - p * 0.5).sum()
            total = term if total is None else total + term
        return total

    want = _torch_traj(name, kw, 30, "float64", loss=loss)
    got = run_trajectory(fw, _factory(fw, name, kw), 30, "float64", "cpu", loss=loss)
    assert_trajectories_close(got, want, "float64")


def test_state_keys_and_step_dtype():
    expect = {"SGD": {"momentum_buffer"},
              "Adam": {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
              "RMSprop": {"step", "square_avg", "momentum_buffer", "grad_avg"},
              "Adagrad": {"step", "sum"}}
    kws = {"SGD": dict(momentum=0.9), "Adam": dict(amsgrad=True),
           "RMSprop": dict(momentum=0.1, centered=True), "Adagrad": {}}
    for name, keys in expect.items():
        p = fw.zeros(3, dtype=fw.float64, requires_grad=True)
        opt = getattr(fw.optim, name)([p], **kws[name])
        p.grad = fw.ones(3, dtype=fw.float64)
        opt.step()
        assert set(opt.state[p]) == keys, name
        if "step" in keys:
            s = opt.state[p]["step"]
            assert s.dtype == fw.float32 and s.shape == () and s.item() == 1.0
    p = fw.zeros(3, requires_grad=True)
    assert fw.optim.SGD([p], lr=0.1).state_dict()["state"] == {}


def test_params_without_grad_are_skipped():
    a = fw.ones(2, dtype=fw.float64, requires_grad=True)
    b = fw.ones(2, dtype=fw.float64, requires_grad=True)
    opt = fw.optim.Adam([a, b], lr=0.1)
    a.grad = fw.ones(2, dtype=fw.float64)
    opt.step()
    assert b not in opt.state and np.all(b.detach().numpy() == 1.0)
    assert np.allclose(a.detach().numpy(), 0.9)


def test_parameter_object_kept():
    p = fw.nn.Parameter(fw.ones(3))
    opt = fw.optim.AdamW([p], lr=0.1)
    p.grad = fw.ones(3)
    opt.step()
    assert opt.param_groups[0]["params"][0] is p and p.grad_fn is None and p.requires_grad


BAD = [
    ("SGD", dict(lr=-1)),
    ("SGD", dict(lr=0.1, momentum=-0.1)),
    ("SGD", dict(lr=0.1, weight_decay=-1)),
    ("SGD", dict(lr=0.1, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
    ("SGD", dict(lr=0.1, fused=True, foreach=True)),
    ("SGD", dict(lr=0.1, fused=True, differentiable=True)),
    ("Adam", dict(lr=-1)),
    ("Adam", dict(eps=-1e-8)),
    ("Adam", dict(betas=(1.0, 0.999))),
    ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(weight_decay=-0.5)),
    ("Adam", dict(betas=(0.9, 1))),
    ("Adam", dict(fused=True, foreach=True)),
    ("AdamW", dict(lr=-0.01)),
    ("AdamW", dict(betas=(0.9, 1.5))),
    ("AdamW", dict(weight_decay=-1e-2)),
    ("RMSprop", dict(lr=-1)),
    ("RMSprop", dict(eps=-1)),
    ("RMSprop", dict(momentum=-1)),
    ("RMSprop", dict(weight_decay=-1)),
    ("RMSprop", dict(alpha=-1)),
    ("Adagrad", dict(lr=-1)),
    ("Adagrad", dict(lr_decay=-1)),
    ("Adagrad", dict(weight_decay=-1)),
    ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adagrad", dict(eps=-1)),
    ("Adagrad", dict(fused=True, foreach=True)),
]


@pytest.mark.parametrize("name,kw", BAD, ids=[f"{n}-{kw}" for n, kw in BAD])
def test_bad_hyper_parameters(name, kw):
    with pytest.raises(Exception) as te:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(type(te.value)) as fe:
        getattr(fw.optim, name)([fw.zeros(2, requires_grad=True)], **kw)
    assert str(fe.value) == str(te.value)


def test_beta_tensor_errors():
    for T in (torch, fw):
        with pytest.raises(ValueError, match="betas must be either both floats or both "
                                             "Tensors"):
            T.optim.Adam([T.zeros(2, requires_grad=True)], betas=(0.9, T.tensor(0.99)))
        with pytest.raises(ValueError, match=r"betas\[0\] as a Tensor is not supported"):
            T.optim.Adam([T.zeros(2, requires_grad=True)],
                         betas=(T.tensor(0.9), T.tensor(0.99)), foreach=True)


def test_tensor_betas_trajectory():
    kw_t = dict(lr=0.05, betas=(torch.tensor(0.8), torch.tensor(0.9)))
    kw_f = dict(lr=0.05, betas=(fw.tensor(0.8), fw.tensor(0.9)))
    want = _torch_traj("Adam", kw_t, 20, "float64")
    got = run_trajectory(fw, _factory(fw, "Adam", kw_f), 20, "float64", "cpu")
    assert_trajectories_close(got, want, "float64")


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                     ("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("AdamW", dict(lr=0.01, weight_decay=0.1)),
                                     ("RMSprop", dict(lr=0.005, centered=True)),
                                     ("Adagrad", dict(lr=0.05))])
def test_training_script_with_modules(name, kw):
    """The same PyTorch-style training loop, with `T` as torch or as framework."""
    rng = np.random.RandomState(0)
    x = rng.randn(16, 4)
    y = np.sin(x.sum(1, keepdims=True))
    init = {}

    def train(T):
        model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Linear(8, 1)).double()
        with T.no_grad():
            for i, p in enumerate(model.parameters()):
                if i not in init:
                    init[i] = rng.randn(*p.shape) * 0.5
                p.copy_(T.tensor(init[i]))
        opt = getattr(T.optim, name)(model.parameters(), **kw)
        xs, ys = T.tensor(x), T.tensor(y)
        losses = []
        for _ in range(20):
            opt.zero_grad()
            loss = T.nn.functional.mse_loss(model(xs), ys)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().numpy() for p in model.parameters()]

    want_l, want_p = train(torch)
    got_l, got_p = train(fw)
    np.testing.assert_allclose(got_l, want_l, rtol=1e-6)
    assert got_l[-1] < got_l[0]
    for g, w in zip(got_p, want_p):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_foreach_step_counters_advance_in_host_memory(dtype):
    """The multi-tensor steps advance cpu step counters in place in host memory: the count
    every step sees, an in-place version bump per step, and the values torch's Adam gives."""
    dt = getattr(fw, dtype)
    fw.set_default_dtype(dt)
    try:
        ps = [fw.tensor(np.linspace(-1, 1, n), dtype=dt, requires_grad=True) for n in (3, 5)]
    finally:
        fw.set_default_dtype(fw.float32)
    tps = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in ps]
    opt = fw.optim.AdamW(ps, lr=0.1, foreach=True)
    topt = torch.optim.AdamW(tps, lr=0.1, foreach=True)
    versions = []
    for k in range(1, 4):
        for p, tp in zip(ps, tps):
            g = np.cos(np.arange(p.numel()) * k)
            p.grad = fw.tensor(g, dtype=dt)
            tp.grad = torch.tensor(g, dtype=tp.dtype)
        opt.step()
        topt.step()
        s = opt.state[ps[0]]["step"]
        assert s.item() == k and s.shape == () and s.device.type == "cpu"
        versions.append(s._version)
    assert versions[0] < versions[1] < versions[2]
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-6)
