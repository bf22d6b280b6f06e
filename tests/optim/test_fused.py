"""Fused (fused=True) and multi-tensor (foreach=True) Adam, AdamW, SGD, RMSprop and
Adagrad, which run framework/optim/_fused.py: 50-step trajectories equal torch's
fused/foreach ones (torch's RMSprop has no fused: its foreach path is the oracle) and the
framework's single-tensor reference (float64 to 1e-6, float32 to float32 tolerance; cpu
and simulated cuda), 16-bit params against torch's fused CPU path or the single-tensor
reference, state_dict resume, non-contiguous and mixed-dtype params, params that miss
gradients on some steps, GradScaler's grad_scale/found_inf in the fused steps (against
torch's fused CPU steps), and the option errors."""
import numpy as np
import pytest
import torch

import framework as fw
from tests.helpers import skip_unless_torch
from tests.optim.common import (assert_trajectories_close, gradients, initial_values,
                                make_params, run_trajectory, to_numpy, tolerances)

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
N_ADAM_SGD = len(CASES)
CASES += [
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, momentum=0.8)),
    ("RMSprop", dict(lr=0.005, momentum=0.5, weight_decay=0.1, maximize=True, eps=1e-4)),
    ("RMSprop", dict(lr=0.01, centered=True, weight_decay=0.05)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, maximize=True, eps=1e-3)),
]
IDS = [f"{n}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for n, kw in CASES]
MODES = [dict(fused=True), dict(foreach=True)]
MODE_IDS = ["fused", "foreach"]


def _factory(T, name, kw):
    if T is torch and name == "RMSprop" and kw.get("fused"):
        # torch's RMSprop has no fused step (the framework's is an extension): its
        # multi-tensor path is the oracle
        kw = dict(kw, foreach=True)
        del kw["fused"]
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


@pytest.mark.parametrize("name,kw", CASES[:N_ADAM_SGD], ids=IDS[:N_ADAM_SGD])
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
@pytest.mark.parametrize("name,kw", [CASES[2], CASES[5], CASES[7], CASES[-1]],
                         ids=[IDS[2], IDS[5], IDS[7], IDS[-1]])
def test_16bit_params_match_torch_fused(name, kw, dtype, device):
    """State in the param dtype, math in float32, as torch's fused CPU kernels."""
    kw = dict(kw, fused=True)
    want = _run16(torch, name, kw, dtype, "cpu", 10)
    got = _run16(fw, name, kw, dtype, device, 10)
    tol = 1e-2 if dtype == "float16" else 5e-2
    assert_trajectories_close(got, want, dtype, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kw,dtype", [CASES[-5] + ("float16",),
                                           CASES[-1] + ("bfloat16",)],
                         ids=[IDS[-5] + "-float16", IDS[-1] + "-bfloat16"])
def test_16bit_rmsprop_adagrad_match_single_tensor(name, kw, dtype, device):
    """16-bit state, float32 math: the single-tensor reference rounds after each op, so
    the trajectories agree to the 16-bit tolerance (eps 1e-3: a smaller one rounds to 0 in
    the 16-bit reference, whose sqrt(0) + eps then divides 0 by 0)."""
    kw = dict(kw, eps=1e-3)
    want = _run16(fw, name, dict(kw, foreach=False), dtype, device, 10)
    got = _run16(fw, name, dict(kw, fused=True), dtype, device, 10)
    tol = 1e-2 if dtype == "float16" else 5e-2
    assert_trajectories_close(got, want, dtype, rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("name,kw", [CASES[3], CASES[5], CASES[7], CASES[-5], CASES[-1]],
                         ids=[IDS[3], IDS[5], IDS[7], IDS[-5], IDS[-1]])
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
    extra = {"fused"} if name == "RMSprop" and "fused" in mode else set()  # torch: none
    assert set(sd["param_groups"][0]) == set(tsd["param_groups"][0]) | extra
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
@pytest.mark.parametrize("name,kw", [CASES[1], CASES[3], CASES[5], CASES[7], CASES[-4],
                                     CASES[-1]],
                         ids=[IDS[1], IDS[3], IDS[5], IDS[7], IDS[-4], IDS[-1]])
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
                        lambda ps, *a, **k: (calls.append(len(ps)), real(ps, *a, **k)))
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


AMP_CASES = [
    ("Adam", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.05, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.05, maximize=True)),
    ("SGD", dict(lr=0.05)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
]
AMP_IDS = [f"{n}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for n, kw in AMP_CASES]
SCALES = (1024.0, 3.0, 65536.0, 0.5)
SKIPPED = (3, 4, 9)          # steps whose found_inf is 1


def _run_amp(T, name, kw, dtype, device, steps=12):
    """Fused steps fed gradients scaled by grad_scale (changing each step), with found_inf
    1 on the SKIPPED steps, GradScaler's way (attributes set before step, deleted after).
    torch's RMSprop has no fused step: there the scaler's work is done by hand (unscale,
    skip). Returns per step the params and the grads after the step, and the final
    state."""
    params = make_params(T, initial_values(), dtype, device)
    by_hand = T is torch and name == "RMSprop"
    opt = getattr(T.optim, name)(params, **kw, **({} if by_hand else {"fused": True}))
    if not by_hand and T is torch and not hasattr(opt, "_step_supports_amp_scaling"):
        skip_unless_torch(torch, f"fused {name} with GradScaler")
    assert by_hand or opt._step_supports_amp_scaling is True
    dt = getattr(T, dtype)
    out = []
    for k in range(1, steps + 1):
        scale, inf = SCALES[k % 4], 1.0 if k in SKIPPED else 0.0
        for p, g in zip(params, gradients(k)):
            p.grad = T.tensor(g * scale, dtype=dt, device=device)
        if by_hand:
            if not inf:
                for p in params:
                    p.grad.div_(scale)
                opt.step()
        else:
            opt.grad_scale = T.tensor(scale, dtype=T.float32, device=device)
            opt.found_inf = T.tensor(inf, dtype=T.float32, device=device)
            opt.step()
            del opt.grad_scale, opt.found_inf
        out.append([to_numpy(p) for p in params] + [to_numpy(p.grad) for p in params])
    state = [{k: to_numpy(v) for k, v in opt.state[p].items()} for p in params]
    return out, state


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kw", AMP_CASES, ids=AMP_IDS)
def test_grad_scale_found_inf_match_torch(name, kw, dtype, device):
    """grad_scale divides the gradients (written back unscaled, as torch's fused kernels
    do); found_inf = 1 leaves params, grads, state and step counters as they were."""
    want, want_state = _run_amp(torch, name, kw, dtype, "cpu")
    got, got_state = _run_amp(fw, name, kw, dtype, device)
    assert_trajectories_close(got, want, dtype)
    for g, w in zip(got_state, want_state):
        assert sorted(g) == sorted(w)
        for k in w:
            np.testing.assert_allclose(g[k], w[k], *tolerances(dtype), err_msg=k)
    if "step" in want_state[0]:
        assert want_state[0]["step"] == 12 - len(SKIPPED)


@pytest.mark.parametrize("name,kw", AMP_CASES, ids=AMP_IDS)
def test_found_inf_on_first_step_changes_nothing(name, kw, device):
    """A skipped first step: params and grads untouched, step counters 0, state as
    created (a 1-element found_inf works like GradScaler's 0-d one)."""
    params = make_params(fw, initial_values(), "float32", device)
    opt = getattr(fw.optim, name)(params, **kw, fused=True)
    grads = [fw.tensor(g * 8, dtype=fw.float32, device=device) for g in gradients(1)]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    opt.grad_scale = fw.full((1,), 8.0, device=device)
    opt.found_inf = fw.ones((1,), device=device)
    opt.step()
    for p, v, g in zip(params, initial_values(), grads):
        np.testing.assert_array_equal(to_numpy(p), v.astype(np.float32))
        np.testing.assert_array_equal(to_numpy(p.grad), to_numpy(g))
        for k, s in opt.state[p].items():
            assert s.device == p.device
            np.testing.assert_array_equal(to_numpy(s), np.zeros(s.shape), err_msg=k)
    # the next step (found_inf 0) is a first step again for the torch comparison
    opt.found_inf = fw.zeros((1,), device=device)
    opt.step()
    del opt.grad_scale, opt.found_inf
    for p, g in zip(params, grads):
        np.testing.assert_allclose(to_numpy(p.grad), to_numpy(g) / 8, rtol=1e-6)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "Adagrad", "RMSprop"])
def test_amp_scaling_only_when_fused(name):
    """``_step_supports_amp_scaling`` comes with fused=True only, as in torch; a foreach
    step ignores grad_scale/found_inf (GradScaler unscales the grads before such steps)."""
    p = [fw.nn.Parameter(fw.ones(3))]
    assert getattr(getattr(fw.optim, name)(p, lr=0.1, fused=True),
                   "_step_supports_amp_scaling", False)
    opt = getattr(fw.optim, name)(p, lr=0.1, foreach=True)
    assert not getattr(opt, "_step_supports_amp_scaling", False)
    if name != "RMSprop":
        assert not getattr(getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(3))],
                                                      lr=0.1), "_step_supports_amp_scaling",
                           False)
    p[0].grad = fw.ones(3)
    opt.grad_scale, opt.found_inf = fw.tensor(2.0), fw.tensor(1.0)
    opt.step()
    assert (p[0].grad == 1).all() and (p[0] != 1).all()
