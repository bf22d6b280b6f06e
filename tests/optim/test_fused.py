"""Fused (fused=True) and multi-tensor (foreach=True) Adam, AdamW and SGD, which run
framework/optim/_fused.py: 50-step trajectories equal torch's fused/foreach ones and the
framework's single-tensor reference (float64 to 1e-6, float32 to float32 tolerance; cpu
and simulated cuda), 16-bit params against torch's fused CPU path, state_dict resume,
non-contiguous and mixed-dtype params, params that miss gradients on some steps, and the
option errors."""
import numpy as np
import pytest
import torch

import framework as fw
from tests.optim.common import (assert_trajectories_close, gradients, initial_values,
                                make_params, run_trajectory, to_numpy)

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.8, weight_decay=0.05, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.95), eps=1e-3, weight_decay=0.1,
                  decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
    ("AdamW", dict(lr=0.05, maximize=True, betas=(0.5, 0.9))),
]
IDS = [f"{n}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for n, kw in CASES]
MODES = [dict(fused=True), dict(foreach=True)]
MODE_IDS = ["fused", "foreach"]


def _factory(T, name, kw):
    return lambda ps: getattr(T.optim, name)(ps, **kw)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_trajectory_matches_torch(name, kw, mode, dtype, device):
    steps = 50
    kw = dict(kw, **mode)
    want = run_trajectory(torch, _factory(torch, name, kw), steps, dtype, "cpu")
    got = run_trajectory(fw, _factory(fw, name, kw), steps, dtype, device)
    assert_trajectories_close(got, want, dtype)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_fused_matches_single_tensor_reference(name, kw, device):
    ref = run_trajectory(fw, _factory(fw, name, dict(kw, foreach=False)), 50, "float32",
                         device)
    got = run_trajectory(fw, _factory(fw, name, dict(kw, fused=True)), 50, "float32", device)
    assert_trajectories_close(got, ref, "float32")


def _run16(T, name, kw, dtype, device, steps):
    """Trajectory of 16-bit params (read back through float32: NumPy has no bfloat16)."""
    dt = getattr(T, dtype)
    params = [T.nn.Parameter(T.tensor(v, dtype=dt, device=device)) for v in initial_values()]
    opt = getattr(T.optim, name)(params, **kw)
    out = []
    for k in range(1, steps + 1):
        for p, g in zip(params, gradients(k)):
            p.grad = T.tensor(g, dtype=dt, device=device)
        opt.step()
        out.append([p.detach().float().cpu().numpy().astype(np.float64) for p in params])
    for p in params:        # the state keeps the param dtype
        for k, v in opt.state[p].items():
            if k != "step":
                assert v.dtype == dt, k
    return out


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,kw", [CASES[2], CASES[5], CASES[7]],
                         ids=[IDS[2], IDS[5], IDS[7]])
def test_16bit_params_match_torch_fused(name, kw, dtype, device):
    """State in the param dtype, math in float32, as torch's fused CPU kernels."""
    kw = dict(kw, fused=True)
    want = _run16(torch, name, kw, dtype, "cpu", 10)
    got = _run16(fw, name, kw, dtype, device, 10)
    tol = 1e-2 if dtype == "float16" else 5e-2
    assert_trajectories_close(got, want, dtype, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("name,kw", [CASES[3], CASES[5], CASES[7]],
                         ids=[IDS[3], IDS[5], IDS[7]])
def test_state_dict_resume(name, kw, mode, device):
    """Save at step 20, load into a fresh optimizer, go on: the uninterrupted run."""
    kw = dict(kw, **mode)
    want = run_trajectory(torch, _factory(torch, name, kw), 40, "float64", "cpu")
    got = run_trajectory(fw, _factory(fw, name, kw), 40, "float64", device, resume_at=20)
    assert_trajectories_close(got, want, "float64")
    opt = _factory(fw, name, kw)(make_params(fw, initial_values(), "float64", device))
    topt = _factory(torch, name, kw)(make_params(torch, initial_values(), "float64", "cpu"))
    for o, T in ((opt, fw), (topt, torch)):
        for p in o.param_groups[0]["params"]:
            p.grad = T.ones_like(p)
        o.step()
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"][0].keys() == tsd["param_groups"][0].keys()
    for i in tsd["state"]:
        assert sorted(sd["state"][i]) == sorted(tsd["state"][i])
        step, tstep = sd["state"][i].get("step"), tsd["state"][i].get("step")
        if tstep is not None:
            assert step.dtype.name == str(tstep.dtype).split(".")[1]
            assert float(step) == float(tstep)


def _run_mixed(T, name, kw, device, steps=8):
    """Two groups; a non-contiguous param, mixed float32/float64 params and a param that
    only gets a gradient on odd steps (so the per-param step counts differ)."""
    rng = np.random.RandomState(3)
    vals = [rng.randn(4, 3), rng.randn(5), rng.randn(3, 2), rng.randn(2, 2, 3)]
    a = T.nn.Parameter(T.tensor(vals[0], device=device).t())          # (3, 4), strided
    b = T.nn.Parameter(T.tensor(vals[1], dtype=T.float32, device=device))
    c = T.nn.Parameter(T.tensor(vals[2], device=device))
    d = T.nn.Parameter(T.tensor(vals[3], dtype=T.float32, device=device))
    params = [a, b, c, d]
    opt = getattr(T.optim, name)([{"params": [a, b]}, {"params": [c, d], "lr": 0.03}], **kw)
    out = []
    for k in range(steps):
        for i, p in enumerate(params):
            g = rng.randn(*p.shape)
            p.grad = None if (i == 2 and k % 2 == 0) else T.tensor(g, dtype=p.dtype,
                                                                    device=device)
        opt.step()
        out.append([to_numpy(p) for p in params])
    assert not a.is_contiguous()
    return out


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("name,kw", [CASES[1], CASES[3], CASES[5], CASES[7]],
                         ids=[IDS[1], IDS[3], IDS[5], IDS[7]])
def test_mixed_params_match_torch(name, kw, mode, device):
    """Against torch's single-tensor path: torch 2.13's fused CPU kernels give wrong values
    for a transposed param (whose grad has other strides), and its fused SGD raises
    TypeError when only some params have a momentum buffer; the framework's fused path
    handles both like the single-tensor one."""
    want = _run_mixed(torch, name, dict(kw, foreach=False), "cpu")
    got = _run_mixed(fw, name, dict(kw, **mode), device)
    assert_trajectories_close(got, want, "float32")


def test_one_call_per_device_and_dtype(monkeypatch):
    """All the tensors of one dtype go to the backend in a single call."""
    from framework import _cpu
    calls = []
    real = _cpu.optim.fused_adam
    monkeypatch.setattr(_cpu.optim, "fused_adam",
                        lambda ps, *a: (calls.append(len(ps)), real(ps, *a)))
    ps = [fw.nn.Parameter(fw.randn(3)) for _ in range(5)]
    ps += [fw.nn.Parameter(fw.randn(2, dtype=fw.float64)) for _ in range(2)]
    opt = fw.optim.AdamW(ps, fused=True)
    for p in ps:
        p.grad = fw.ones_like(p)
    opt.step()
    assert sorted(calls) == [2, 5]


@pytest.mark.parametrize("T", [torch, fw], ids=["torch", "framework"])
def test_option_errors(T):
    p = [T.nn.Parameter(T.zeros(2))]
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        T.optim.Adam(p, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        T.optim.SGD(p, lr=0.1, fused=True, differentiable=True)
