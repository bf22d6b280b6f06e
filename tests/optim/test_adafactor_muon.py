"""Adafactor and Muon against torch.optim (the oracle): short trajectories for each option
on cpu and cuda, state layout and values, state_dict resume (ours and torch's),
lr as a tensor, param groups, argument errors (type and message) and signatures."""
import inspect
import os

import numpy as np
import pytest
import torch

import framework as fw
from tests.optim.common import (gradients, run_trajectory, state_dict_from_numpy,
                                state_dict_to_numpy, to_numpy)

ADA_SHAPES = ((5, 3), (3,), (2, 3, 2))  # matrix, vector, 3-D (factored on the last two)
MUON_SHAPES = ((5, 3), (3, 5))  # tall and wide

ADA_CASES = [
    {},
    dict(lr=0.05, weight_decay=0.1),
    dict(maximize=True),
    dict(lr=0.9),  # rho = min(lr, 1 / sqrt(t)) takes 1 / sqrt(t) from step 2 on
    dict(beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5),
    dict(lr=0.3, eps=(1e-12, 0.5), weight_decay=0.01, maximize=True, foreach=True),
]
MUON_CASES = [
    dict(lr=0.02),
    dict(lr=0.05, nesterov=False),
    dict(lr=0.05, adjust_lr_fn="match_rms_adamw", weight_decay=0.0),
    dict(lr=0.1, adjust_lr_fn="original", momentum=0.5, weight_decay=0.3),
    dict(lr=0.03, ns_coefficients=(2.0, -1.5, 0.5), ns_steps=3, eps=1e-5, nesterov=False),
]


def _ids(cases):
    return ["-".join(f"{k}={v}" for k, v in kw.items()) or "default" for kw in cases]


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=1e-5, atol=1e-6)


def _real_gpu(device):
    """Muon's Newton-Schulz runs in bfloat16: on the cpu and in Triton's interpreter the
    matmuls round exactly as torch's cpu ones; a real GPU sums in another order, which can
    move a bfloat16 result by one unit in the last place."""
    return device == "cuda" and not os.environ.get("TRITON_INTERPRET")


_BF16_TOL = dict(rtol=0, atol=3e-3)  # one bfloat16 ulp of an update of size ~1, times lr


def _run(T, name, kw, steps, dtype, device, shapes, **extra):
    """run_trajectory that also returns the optimizer (its state after the last step)."""
    box = {}

    def factory(ps):
        box["opt"] = getattr(T.optim, name)(ps, **kw)
        return box["opt"]
    traj = run_trajectory(T, factory, steps, dtype, device, shapes=shapes, **extra)
    return traj, box["opt"]


def _compare(name, kw, dtype, device, shapes, steps):
    ours, opt = _run(fw, name, kw, steps, dtype, device, shapes)
    ref, th_opt = _run(torch, name, kw, steps, dtype, "cpu", shapes)
    ptol = _BF16_TOL if name == "Muon" and _real_gpu(device) else _tol(dtype)
    for k, (pa, pb) in enumerate(zip(ours, ref)):
        for i, (x, y) in enumerate(zip(pa, pb)):
            np.testing.assert_allclose(x, y, err_msg=f"step {k}, parameter {i}", **ptol)
    assert not np.allclose(ours[-1][0], ours[0][0])  # the optimizer did move
    # state: same keys, shapes, dtypes, values (step on the cpu, as torch)
    sd, th_sd = opt.state_dict(), th_opt.state_dict()
    assert sd["param_groups"] == th_sd["param_groups"]
    assert sd["state"].keys() == th_sd["state"].keys()
    for i, st in th_sd["state"].items():
        assert set(sd["state"][i]) == set(st)
        for key, v in st.items():
            t = sd["state"][i][key]
            assert str(t.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], key
            assert tuple(t.shape) == tuple(v.shape), key
            if key == "step":
                assert t.device.type == "cpu"
            else:
                assert t.device.type == device
            np.testing.assert_allclose(to_numpy(t), to_numpy(v), err_msg=key, **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", ADA_CASES, ids=_ids(ADA_CASES))
def test_adafactor_matches_torch(kw, dtype, device):
    _compare("Adafactor", kw, dtype, device, ADA_SHAPES, 4 if device == "cpu" else 2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", MUON_CASES, ids=_ids(MUON_CASES))
def test_muon_matches_torch(kw, dtype, device):
    _compare("Muon", kw, dtype, device, MUON_SHAPES, 4 if device == "cpu" else 2)


def test_newton_schulz_matches_torch(device):
    """The orthogonalization itself: bfloat16 result, tall and wide inputs, coefficients,
    step counts; and it does orthogonalize (singular values near 1)."""
    from torch.optim._muon import _zeropower_via_newtonschulz as th_ns

    from framework.optim.muon import _zeropower_via_newtonschulz as ns
    rng = np.random.RandomState(3)
    for shape, coeffs, steps, eps in [((5, 3), (3.4445, -4.7750, 2.0315), 5, 1e-7),
                                      ((3, 6), (3.4445, -4.7750, 2.0315), 5, 1e-7),
                                      ((4, 4), (2.0, -1.5, 0.5), 2, 1e-3)]:
        g = rng.randn(*shape).astype(np.float32)
        out = ns(fw.tensor(g, device=device), coeffs, steps, eps)
        ref = th_ns(torch.tensor(g), coeffs, steps, eps)
        assert out.dtype == fw.bfloat16 and tuple(out.shape) == shape
        if _real_gpu(device):
            np.testing.assert_allclose(to_numpy(out.float()), to_numpy(ref.float()),
                                       rtol=0, atol=3e-2)
        else:
            np.testing.assert_array_equal(to_numpy(out.float()), to_numpy(ref.float()))
    sv = np.linalg.svd(to_numpy(ns(fw.tensor(rng.randn(6, 4), device=device),
                                   (3.4445, -4.7750, 2.0315), 5, 1e-7).float()),
                       compute_uv=False)
    assert np.all((sv > 0.5) & (sv < 1.5))
    # a zero matrix stays zero (the norm is clamped at eps)
    z = ns(fw.zeros(3, 2, device=device), (3.4445, -4.7750, 2.0315), 5, 1e-7)
    assert not to_numpy(z.float()).any()


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_lr_tensor_groups_and_resume(name):
    """lr as a 0-d tensor and per-group options; a state dict taken at step 3 and loaded
    into a fresh optimizer (ours, and torch's through NumPy) resumes identically."""
    shapes = ADA_SHAPES if name == "Adafactor" else MUON_SHAPES

    def make(T, **extra):
        def f(ps):
            return getattr(T.optim, name)(
                [{"params": ps[:1], "lr": T.tensor(0.02, dtype=T.float64)},
                 {"params": ps[1:], "weight_decay": 0.05}], lr=0.01, **extra)
        return f
    extras = [{}, {"foreach": False}, {"foreach": True}] if name == "Adafactor" else [{}]
    ref = run_trajectory(torch, make(torch), 6, shapes=shapes)
    for extra in extras:
        ours = run_trajectory(fw, make(fw, **extra), 6, shapes=shapes)
        np.testing.assert_allclose(np.concatenate([a.ravel() for a in ours[-1]]),
                                   np.concatenate([a.ravel() for a in ref[-1]]),
                                   rtol=1e-12, atol=1e-14)
    resumed = run_trajectory(fw, make(fw), 6, shapes=shapes, resume_at=3)
    from_torch = run_trajectory(
        torch, make(torch), 6, shapes=shapes, resume_at=3)  # torch's own resume
    for a, b, c in zip(resumed[-1], ref[-1], from_torch[-1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(c, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_torch_state_dict_loads(name):
    """A torch checkpoint (through NumPy) resumes in framework as it does in torch."""
    shapes = ADA_SHAPES if name == "Adafactor" else MUON_SHAPES
    kw = dict(lr=0.05, weight_decay=0.1)
    _, th_opt = _run(torch, name, kw, 3, "float64", "cpu", shapes, zero_grad=False)
    th_params = [p for g in th_opt.param_groups for p in g["params"]]
    sd = state_dict_from_numpy(fw, state_dict_to_numpy(th_opt.state_dict()))
    params = [fw.nn.Parameter(fw.tensor(p.detach().numpy())) for p in th_params]
    opt = getattr(fw.optim, name)(params, **kw)
    opt.load_state_dict(sd)
    if name == "Adafactor":  # a loaded step stays a float64 cpu scalar
        assert opt.state[params[0]]["step"].item() == 3.0
    for k in range(4, 7):
        for p, q, g in zip(params, th_params, gradients(k, shapes=shapes)):
            p.grad = fw.tensor(g)
            q.grad = torch.tensor(g)
        opt.step()
        th_opt.step()
    for p, q in zip(params, th_params):
        np.testing.assert_allclose(to_numpy(p), to_numpy(q), rtol=1e-12, atol=1e-14)


def test_adafactor_details():
    """Lazy state, grad-less params skipped, 0-d params, the closure, eps1=None taken
    from the parameter dtype, and a zero-size parameter failing as in torch."""
    for T in (fw, torch):
        a = T.nn.Parameter(T.tensor([1.0, -2.0, 3.0]))
        b = T.nn.Parameter(T.tensor(2.0))
        c = T.nn.Parameter(T.ones(2, 2))
        opt = T.optim.Adafactor([a, b, c], lr=0.1)
        assert len(opt.state) == 0

        def closure():
            opt.zero_grad()
            loss = (a * a).sum() + b * b
            loss.backward()
            return loss
        loss = opt.step(closure)
        assert float(loss.detach()) == pytest.approx(18.0)
        assert c not in opt.state and set(opt.state[b]) == {"step", "variance"}
        if T is fw:
            ours = (to_numpy(a), to_numpy(b), to_numpy(opt.state[a]["variance"]))
        else:
            for x, y in zip(ours, (to_numpy(a), to_numpy(b),
                                   to_numpy(opt.state[a]["variance"]))):
                np.testing.assert_allclose(x, y, rtol=1e-6)
    errs = []
    for T in (fw, torch):
        p = T.nn.Parameter(T.zeros(0, 3))
        p.grad = T.zeros(0, 3)
        with pytest.raises(ZeroDivisionError) as e:
            T.optim.Adafactor([p]).step()
        errs.append(str(e.value))
    assert errs[0] == errs[1]


def test_muon_details():
    """A wide zero-row matrix steps as in torch; grad-less params get no state; the
    non-2-D parameter error; errors of the Newton-Schulz arguments at step time."""
    for T in (fw, torch):
        p = T.nn.Parameter(T.zeros(0, 3))
        q = T.nn.Parameter(T.ones(2, 3))
        p.grad = T.zeros(0, 3)
        opt = T.optim.Muon([p, q])
        opt.step()
        assert tuple(opt.state[p]["momentum_buffer"].shape) == (0, 3)
        assert q not in opt.state
    msgs = []
    for T in (fw, torch):
        with pytest.raises(ValueError) as e:
            T.optim.Muon([T.nn.Parameter(T.ones(2, 3)), T.nn.Parameter(T.ones(3))])
        msgs.append(str(e.value).replace("framework.Size", "torch.Size"))
    assert msgs[0] == msgs[1]
    for kw in [dict(ns_steps=100), dict(ns_coefficients=(1.0, 2.0))]:
        msgs = []
        for T in (fw, torch):
            p = T.nn.Parameter(T.ones(2, 3))
            p.grad = T.ones(2, 3)
            opt = T.optim.Muon([p], **kw)
            with pytest.raises(ValueError) as e:
                opt.step()
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


BAD = [
    ("Adafactor", dict(lr=-0.1)), ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1e-3, 1e-3))), ("Adafactor", dict(eps=(None, -1.0))),
    ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-0.1)),
    ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-0.5)),
    ("Muon", dict(weight_decay=-0.1)), ("Muon", dict(adjust_lr_fn="rms")),
]


@pytest.mark.parametrize("name,kw", BAD, ids=[f"{n}-{k}" for n, k in BAD])
def test_invalid_arguments(name, kw):
    with pytest.raises(Exception) as ref:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2, 2))], **kw)
    with pytest.raises(Exception) as ours:
        getattr(fw.optim, name)([fw.nn.Parameter(fw.zeros(2, 2))], **kw)
    assert type(ours.value) is type(ref.value)
    assert str(ours.value) == str(ref.value)


def test_tensor_lr_must_be_one_element_and_signatures():
    for name in ["Adafactor", "Muon"]:
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            getattr(fw.optim, name)([fw.nn.Parameter(fw.zeros(2, 2))],
                                    lr=fw.tensor([0.1, 0.2]))
        ours = inspect.signature(getattr(fw.optim, name).__init__).parameters
        ref = inspect.signature(getattr(torch.optim, name).__init__).parameters
        assert list(ours) == list(ref), name
        for k in ref:
            assert ours[k].kind == ref[k].kind, (name, k)
            assert ours[k].default == ref[k].default, (name, k)
