"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop against torch.optim (the oracle): 50-step
trajectories for each option, state_dict resume, state layout and hyper-parameter errors."""
import numpy as np
import pytest
import torch

import framework as fw
from tests.optim.common import (assert_trajectories_close, gradients, run_trajectory,
                                state_dict_from_numpy, state_dict_to_numpy)

# (optimizer name, keyword arguments): every option of each optimizer at least once
CASES = [
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4)),
    ("Adadelta", dict(weight_decay=0.1)),
    ("Adadelta", dict(maximize=True, lr=0.3)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-3)),
    ("Adamax", dict(weight_decay=0.1)),
    ("Adamax", dict(maximize=True)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-3, momentum_decay=0.01)),
    ("NAdam", dict(weight_decay=0.1)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3)),
    ("RAdam", dict(weight_decay=0.1)),
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=10)),
    ("ASGD", dict(weight_decay=0.1, t0=20)),
    ("ASGD", dict(maximize=True)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(maximize=True)),
]
IDS = [f"{n}-{'-'.join(k for k in kw) or 'default'}" for n, kw in CASES]


def factory(T, name, kw):
    return lambda ps: getattr(T.optim, name)(ps, **kw)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_trajectory_matches_torch(case, dtype, device):
    name, kw = case
    steps = 50 if device == "cpu" else 3
    ours = run_trajectory(fw, factory(fw, name, kw), steps, dtype, device)
    ref = run_trajectory(torch, factory(torch, name, kw), steps, dtype, "cpu")
    assert_trajectories_close(ours, ref, dtype)
    assert not np.allclose(ours[-1][0], ours[0][0])  # the optimizer did move


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_foreach_and_lr_tensor_and_groups(name):
    """foreach=True/False run the same update; lr as a 0-d tensor; per-group options."""
    def make(T, foreach):
        def f(ps):
            return getattr(T.optim, name)(
                [{"params": ps[:1], "lr": T.tensor(0.02, dtype=T.float64)},
                 {"params": ps[1:]}], lr=0.01, foreach=foreach)
        return f
    ref = run_trajectory(torch, make(torch, False), 20)
    for foreach in (None, True, False):
        assert_trajectories_close(run_trajectory(fw, make(fw, foreach), 20), ref)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_state_dict_resume(case):
    """Interrupted at step 25, saved, loaded into a fresh optimizer: same step 50."""
    name, kw = case
    full = run_trajectory(fw, factory(fw, name, kw), 50)
    resumed = run_trajectory(fw, factory(fw, name, kw), 50, resume_at=25)
    assert_trajectories_close(resumed, full)
    ref_resumed = run_trajectory(torch, factory(torch, name, kw), 50, resume_at=25)
    assert_trajectories_close(resumed, ref_resumed)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_state_layout_and_torch_state_dict_loads(name, dtype):
    """Same state keys, dtypes and values as torch; torch's state dict loads and resumes."""
    th_params = []

    def th_factory(ps):
        th_params[:] = ps
        return torch.optim.__dict__[name](ps, lr=0.01)

    torch_opt = {}

    def keep(opt, k):
        torch_opt["opt"] = opt
    run_trajectory(torch, th_factory, 10, dtype, on_step=keep)
    th_sd = torch_opt["opt"].state_dict()
    fw_opt = {}
    run_trajectory(fw, lambda ps: fw.optim.__dict__[name](ps, lr=0.01), 10, dtype,
                   on_step=lambda opt, k: fw_opt.__setitem__("opt", opt))
    fw_sd = fw_opt["opt"].state_dict()
    assert fw_sd["param_groups"] == th_sd["param_groups"]
    assert fw_sd["state"].keys() == th_sd["state"].keys()
    for i, st in th_sd["state"].items():
        assert set(fw_sd["state"][i]) == set(st)
        for key, v in st.items():
            ours = fw_sd["state"][i][key]
            assert str(ours.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], key
            assert tuple(ours.shape) == tuple(v.shape), key
            np.testing.assert_allclose(ours.numpy(), v.numpy(), rtol=1e-5, atol=1e-7)
    # a torch checkpoint (through NumPy) resumes in framework as it does in torch
    params = [fw.nn.Parameter(fw.tensor(p.detach().numpy())) for p in th_params]
    opt = fw.optim.__dict__[name](params, lr=0.01)
    opt.load_state_dict(state_dict_from_numpy(fw, state_dict_to_numpy(th_sd)))
    th_opt = torch_opt["opt"]
    for k in range(11, 16):
        gs = gradients(k)
        for p, q, g in zip(params, th_params, gs):
            p.grad = fw.tensor(g.astype(dtype))
            q.grad = torch.tensor(g.astype(dtype))
        opt.step()
        th_opt.step()
    for p, q in zip(params, th_params):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(),
                                   rtol=1e-6 if dtype == "float64" else 2e-4, atol=1e-7)


def test_closure_returns_loss():
    p = fw.nn.Parameter(fw.tensor([1.0, 2.0]))
    for name in ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]:
        opt = fw.optim.__dict__[name]([p])

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        assert float(opt.step(closure)) == pytest.approx(float((p * p).sum()), rel=0.5)
        assert opt.step() is None


BAD = [
    ("Adadelta", dict(lr=-1.0)), ("Adadelta", dict(rho=1.1)), ("Adadelta", dict(rho=-0.1)),
    ("Adadelta", dict(eps=-1e-6)), ("Adadelta", dict(weight_decay=-0.1)),
    ("Adamax", dict(lr=-0.5)), ("Adamax", dict(eps=-1.0)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1)), ("NAdam", dict(eps=-1.0)), ("NAdam", dict(betas=(-0.1, 0.9))),
    ("NAdam", dict(betas=(0.9, 1.0))), ("NAdam", dict(weight_decay=-1.0)),
    ("NAdam", dict(momentum_decay=-0.1)),
    ("RAdam", dict(lr=-1e-3)), ("RAdam", dict(eps=-1.0)), ("RAdam", dict(betas=(1.5, 0.9))),
    ("RAdam", dict(betas=(0.9, 1.5))), ("RAdam", dict(weight_decay=-2.0)),
    ("ASGD", dict(lr=-0.1)), ("ASGD", dict(weight_decay=-0.1)),
    ("Rprop", dict(lr=-0.1)), ("Rprop", dict(etas=(1.0, 1.2))), ("Rprop", dict(etas=(0.5, 1.0))),
    ("Rprop", dict(etas=(0.0, 1.2))),
]


@pytest.mark.parametrize("name,kw", BAD, ids=[f"{n}-{k}" for n, k in BAD])
def test_invalid_hyperparameters(name, kw):
    with pytest.raises(ValueError) as ref:
        torch.optim.__dict__[name]([torch.nn.Parameter(torch.zeros(2))], **kw)
    with pytest.raises(ValueError) as ours:
        fw.optim.__dict__[name]([fw.nn.Parameter(fw.zeros(2))], **kw)
    assert str(ours.value) == str(ref.value)


def test_tensor_lr_must_be_one_element():
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        fw.optim.NAdam([fw.nn.Parameter(fw.zeros(2))], lr=fw.tensor([0.1, 0.2]))


def test_signatures_match_torch():
    import inspect
    for name in ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS"]:
        ours = inspect.signature(fw.optim.__dict__[name].__init__).parameters
        ref = inspect.signature(torch.optim.__dict__[name].__init__).parameters
        assert list(ours) == list(ref), name
        for k in ref:
            assert ours[k].kind == ref[k].kind, (name, k)
            assert ours[k].default == ref[k].default, (name, k)
