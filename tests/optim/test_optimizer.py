"""optim.Optimizer base class: param groups, state_dict layout and loading, zero_grad,
hooks, repr and bad input, checked against torch.optim."""
import warnings

import numpy as np
import pytest
import torch

import framework as fw
from tests.optim.common import (assert_trajectories_close, initial_values, make_params,
                                run_trajectory, state_dict_from_numpy, state_dict_to_numpy,
                                to_numpy)

OPTIMS = {
    "SGD": dict(lr=0.1, momentum=0.9),
    "Adam": dict(lr=0.01, amsgrad=True),
    "AdamW": dict(lr=0.01),
    "RMSprop": dict(lr=0.01, centered=True, momentum=0.1),
    "Adagrad": dict(lr=0.1),
}


def _pair(name, kw=None, device="cpu", dtype="float64"):
    """(framework optimizer, torch optimizer, fw params, torch params), same values."""
    kw = OPTIMS[name] if kw is None else kw
    vals = initial_values()
    fp = make_params(fw, vals, dtype, device)
    tp = make_params(torch, vals, dtype, "cpu")
    return getattr(fw.optim, name)(fp, **kw), getattr(torch.optim, name)(tp, **kw), fp, tp


def _raises_like(fw_call, torch_call):
    """Both calls raise the same exception class with the same message."""
    with pytest.raises(Exception) as te:
        torch_call()
    with pytest.raises(type(te.value)) as fe:
        fw_call()
    assert str(fe.value) == str(te.value).replace("torch.", "framework.")


def _feed(params, T, step, device="cpu"):
    rng = np.random.RandomState(step)
    for p in params:
        p.grad = T.tensor(rng.randn(*p.shape), dtype=p.dtype, device=device)


# ---------------------------------------------------------------------------- construction
@pytest.mark.parametrize("name", list(OPTIMS))
def test_defaults_groups_and_repr_match_torch(name):
    fo, to, _, _ = _pair(name)
    assert fo.defaults == to.defaults
    assert len(fo.param_groups) == 1
    fg = {k: v for k, v in fo.param_groups[0].items() if k != "params"}
    tg = {k: v for k, v in to.param_groups[0].items() if k != "params"}
    assert fg == tg
    assert repr(fo) == repr(to)
    assert repr(fo).startswith(name + " (\nParameter Group 0\n")


def test_params_forms():
    a, b = make_params(fw, [np.ones(2), np.zeros(3)], "float64", "cpu")
    opt = fw.optim.SGD(iter([a, b]), lr=0.1)
    assert opt.param_groups[0]["params"][0] is a and opt.param_groups[0]["params"][1] is b
    opt = fw.optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.param_groups[0]["params"] == [a, b] or opt.param_groups[0]["params"][1] is b
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    opt = fw.optim.SGD([{"params": a}, {"params": [b], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert [g["momentum"] for g in opt.param_groups] == [0, 0.9]
    assert opt.param_groups[0]["params"][0] is a


def test_add_param_group_and_state_keyed_by_param():
    a, b = make_params(fw, [np.ones(2), np.zeros(3)], "float64", "cpu")
    opt = fw.optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.2})
    assert opt.param_groups[1]["lr"] == 0.2 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    a.grad = fw.ones(2, dtype=fw.float64)
    opt.step()
    assert a in opt.state and b not in opt.state
    assert set(opt.state[a]) == {"step", "exp_avg", "exp_avg_sq"}
    assert opt.state[a]["step"].dtype == fw.float32 and opt.state[a]["step"].shape == ()
    assert isinstance(opt.state[b], dict)  # defaultdict


def test_bad_params():
    def both(fn):
        _raises_like(lambda: fn(fw), lambda: fn(torch))

    both(lambda T: T.optim.SGD(T.zeros(3, requires_grad=True), lr=0.1))
    both(lambda T: T.optim.SGD([], lr=0.1))
    both(lambda T: T.optim.SGD([{"params": {T.zeros(3, requires_grad=True)}}], lr=0.1))
    both(lambda T: T.optim.SGD([T.zeros(3, requires_grad=True), 1], lr=0.1))
    both(lambda T: T.optim.SGD([T.zeros(3, requires_grad=True) * 2], lr=0.1))
    both(lambda T: T.optim.SGD([("a", T.zeros(3, requires_grad=True)),
                                T.zeros(3, requires_grad=True)], lr=0.1))

    def dup(T):
        p = T.zeros(3, requires_grad=True)
        return T.optim.SGD([{"params": [p]}, {"params": [p], "lr": 0.2}], lr=0.1)
    both(dup)

    def not_dict(T):
        T.optim.SGD([T.zeros(3, requires_grad=True)], lr=0.1).add_param_group([1])
    both(not_dict)

    def mixed_names(T):
        o = T.optim.SGD([("a", T.zeros(3, requires_grad=True))], lr=0.1)
        o.add_param_group({"params": [T.zeros(2, requires_grad=True)]})
    both(mixed_names)


def test_duplicate_param_warns():
    p = fw.zeros(3, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        fw.optim.SGD([p, p], lr=0.1)


def test_required_parameter():
    from framework.optim.optimizer import Optimizer, required
    p = fw.zeros(3, requires_grad=True)
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Optimizer([p], {"lr": required})
    assert Optimizer([{"params": [p], "lr": 0.3}], {"lr": required}).param_groups[0]["lr"] == 0.3


# ---------------------------------------------------------------------------- zero_grad
def test_zero_grad():
    a, = make_params(fw, [np.ones(3)], "float64", "cpu")
    opt = fw.optim.SGD([a], lr=0.1)
    a.grad = fw.ones(3, dtype=fw.float64)
    g = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is g and np.all(to_numpy(a.grad) == 0)
    opt.zero_grad()
    assert a.grad is None
    opt.zero_grad()  # no grad: nothing to do


# ---------------------------------------------------------------------------- state_dict
@pytest.mark.parametrize("name", list(OPTIMS))
def test_state_dict_layout_matches_torch(name):
    fo, to, fp, tp = _pair(name)
    fo.add_param_group({"params": make_params(fw, [np.ones(4)], "float64", "cpu"), "lr": 0.2})
    to.add_param_group({"params": make_params(torch, [np.ones(4)], "float64", "cpu"),
                        "lr": 0.2})
    for k in (1, 2, 3):
        _feed(fp, fw, k)
        _feed(tp, torch, k)
        fo.step()
        to.step()
    fs, ts = fo.state_dict(), to.state_dict()
    assert set(fs) == {"state", "param_groups"}
    assert fs["param_groups"] == ts["param_groups"]
    assert sorted(fs["state"]) == sorted(ts["state"])
    for i, st in ts["state"].items():
        assert set(fs["state"][i]) == set(st)
        for key, v in st.items():
            f = fs["state"][i][key]
            assert tuple(f.shape) == tuple(v.shape)
            assert str(f.dtype).split(".")[-1] == str(v.dtype).split(".")[-1]
            np.testing.assert_allclose(to_numpy(f), to_numpy(v), rtol=1e-12)


@pytest.mark.parametrize("name", list(OPTIMS))
def test_load_torch_state_dict(name, device):
    """A torch optimizer's state dict, through NumPy, resumes the torch run exactly."""
    steps = 8 if device == "cpu" else 3
    kw = OPTIMS[name]
    full = run_trajectory(torch, lambda ps: getattr(torch.optim, name)(ps, **kw), steps)
    tp = make_params(torch, initial_values(), "float64", "cpu")
    to = getattr(torch.optim, name)(tp, **kw)
    from tests.optim.common import gradients
    for k in range(1, 4):
        for p, g in zip(tp, gradients(k)):
            p.grad = torch.tensor(g)
        to.step()
    sd = state_dict_from_numpy(fw, state_dict_to_numpy(to.state_dict()))
    fp = make_params(fw, [to_numpy(p) for p in tp], "float64", device)
    fo = getattr(fw.optim, name)(fp, **kw)
    fo.load_state_dict(sd)
    for st in fo.state.values():
        for key, v in st.items():
            if key == "step":
                assert v.dtype == fw.float32 and str(v.device) == "cpu"
            else:
                assert v.dtype == fw.float64 and str(v.device).startswith(device)
    for k in range(4, steps + 1):
        for p, g in zip(fp, gradients(k)):
            p.grad = fw.tensor(g, device=device)
        fo.step()
    for p, want in zip(fp, full[-1]):
        np.testing.assert_allclose(to_numpy(p), want, rtol=1e-6, atol=1e-9)


def test_load_state_dict_casts_to_param_dtype_and_copies():
    fo, _, fp, _ = _pair("Adam", dtype="float32")
    _feed(fp, fw, 1)
    fo.step()
    sd = state_dict_to_numpy(fo.state_dict())
    for st in sd["state"].values():
        st["exp_avg"] = st["exp_avg"].astype(np.float64)
    sd = state_dict_from_numpy(fw, sd)
    fo2, _, _, _ = _pair("Adam", dtype="float32")
    fo2.load_state_dict(sd)
    st = fo2.state[fo2.param_groups[0]["params"][0]]
    assert st["exp_avg"].dtype == fw.float32 and st["step"].dtype == fw.float32
    assert st["exp_avg"] is not sd["state"][0]["exp_avg"]
    assert fo2.param_groups[0]["params"] is not sd["param_groups"][0]["params"]


def test_load_state_dict_errors():
    def both(fn):
        _raises_like(lambda: fn(fw), lambda: fn(torch))

    def size_mismatch(T):
        a, b = T.zeros(2, requires_grad=True), T.zeros(3, requires_grad=True)
        sd = T.optim.SGD([a, b], lr=0.1).state_dict()
        T.optim.SGD([a], lr=0.1).load_state_dict(sd)
    both(size_mismatch)

    def group_mismatch(T):
        a, b = T.zeros(2, requires_grad=True), T.zeros(3, requires_grad=True)
        sd = T.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).state_dict()
        T.optim.SGD([a, b], lr=0.1).load_state_dict(sd)
    both(group_mismatch)


def test_load_state_dict_restores_group_options():
    a = fw.zeros(2, requires_grad=True)
    sd = fw.optim.SGD([a], lr=0.5, momentum=0.3).state_dict()
    opt = fw.optim.SGD([a], lr=0.1)
    opt.load_state_dict(sd)
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["momentum"] == 0.3
    assert opt.param_groups[0]["params"][0] is a


# ---------------------------------------------------------------------------- step, hooks
def test_step_closure_runs_with_grad_and_returns_loss():
    a, = make_params(fw, [np.array([1.0, -2.0])], "float64", "cpu")
    opt = fw.optim.SGD([a], lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        calls.append(fw.is_grad_enabled())
        loss = (a * a).sum()
        loss.backward()
        return loss
    with fw.no_grad():
        loss = opt.step(closure)
    assert calls == [True]
    assert loss.item() == 5.0
    np.testing.assert_allclose(to_numpy(a), [0.8, -1.6])
    assert opt.step() is None


def test_step_hooks():
    a = fw.zeros(2, requires_grad=True)
    opt = fw.optim.SGD([a], lr=1.0)
    log = []
    h1 = opt.register_step_pre_hook(lambda o, args, kw: log.append(("pre", o is opt)))
    h2 = opt.register_step_post_hook(lambda o, args, kw: log.append(("post", o is opt)))
    a.grad = fw.ones(2)
    opt.step()
    assert log == [("pre", True), ("post", True)]
    h1.remove()
    h2.remove()
    opt.step()
    assert len(log) == 2
    np.testing.assert_allclose(to_numpy(a), [-2.0, -2.0])


def test_step_pre_hook_replaces_args_and_bad_return():
    a = fw.zeros(2, requires_grad=True)
    opt = fw.optim.SGD([a], lr=1.0)
    seen = []

    def closure():
        seen.append(1)
        return fw.tensor(3.0)
    h = opt.register_step_pre_hook(lambda o, args, kw: (args, {"closure": closure}))
    a.grad = fw.ones(2)
    assert opt.step().item() == 3.0 and seen == [1]
    h.remove()
    opt.register_step_pre_hook(lambda o, args, kw: 5)
    with pytest.raises(RuntimeError, match="must return None or a tuple of"):
        opt.step()


def test_global_step_hooks():
    from framework.optim.optimizer import (register_optimizer_step_post_hook,
                                           register_optimizer_step_pre_hook)
    log = []
    h1 = register_optimizer_step_pre_hook(lambda o, a, k: log.append("pre"))
    h2 = register_optimizer_step_post_hook(lambda o, a, k: log.append("post"))
    try:
        p = fw.zeros(2, requires_grad=True)
        p.grad = fw.ones(2)
        fw.optim.Adam([p]).step()
    finally:
        h1.remove()
        h2.remove()
    assert log == ["pre", "post"]
    fw.optim.Adam([p]).step()
    assert log == ["pre", "post"]


def test_state_dict_hooks():
    a = fw.zeros(2, requires_grad=True)
    opt = fw.optim.SGD([a], lr=0.1)
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre"))
    opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre0"), prepend=True)

    def post(o, sd):
        sd["extra"] = 1
        return sd
    opt.register_state_dict_post_hook(post)
    sd = opt.state_dict()
    assert log == ["sd_pre0", "sd_pre"] and sd["extra"] == 1

    def lpre(o, sd):
        log.append("load_pre")
        sd = dict(sd)
        sd["param_groups"] = [dict(sd["param_groups"][0], lr=0.7)]
        return sd
    opt.register_load_state_dict_pre_hook(lpre)
    h = opt.register_load_state_dict_post_hook(lambda o: log.append("load_post"))
    opt.load_state_dict(sd)
    assert log[-2:] == ["load_pre", "load_post"] and opt.param_groups[0]["lr"] == 0.7
    h.remove()
    opt.load_state_dict(sd)
    assert log[-1] == "load_pre"


# ---------------------------------------------------------------------------- lr handling
@pytest.mark.parametrize("name", list(OPTIMS))
def test_lr_edited_in_place_and_per_group(name):
    kw = dict(OPTIMS[name])

    def factory(T):
        def make(ps):
            return getattr(T.optim, name)([{"params": ps[:2]},
                                           {"params": ps[2:], "lr": kw["lr"] * 3}], **kw)
        return make

    def on_step(opt, k):
        if k % 10 == 0:
            for g in opt.param_groups:
                g["lr"] *= 0.5

    a = run_trajectory(fw, factory(fw), 30, on_step=on_step)
    b = run_trajectory(torch, factory(torch), 30, on_step=on_step)
    assert_trajectories_close(a, b, "float64")
    c = run_trajectory(fw, factory(fw), 30)
    assert not np.allclose(a[-1][0], c[-1][0])


@pytest.mark.parametrize("name", list(OPTIMS))
def test_lr_as_tensor(name):
    kw = dict(OPTIMS[name])
    lr = kw.pop("lr")
    a = run_trajectory(fw, lambda ps: getattr(fw.optim, name)(ps, lr=fw.tensor(lr), **kw), 20)
    b = run_trajectory(torch, lambda ps: getattr(torch.optim, name)(ps, lr=torch.tensor(lr),
                                                                    **kw), 20)
    assert_trajectories_close(a, b, "float64")


def test_lr_tensor_errors():
    def both(fn):
        _raises_like(lambda: fn(fw), lambda: fn(torch))
    both(lambda T: T.optim.Adam([T.zeros(2, requires_grad=True)], lr=T.tensor([0.1, 0.2])))
    both(lambda T: T.optim.Adam([T.zeros(2, requires_grad=True)], lr=T.tensor(0.1),
                                foreach=True))
    both(lambda T: T.optim.SGD([T.zeros(2, requires_grad=True)], lr=T.tensor([0.1, 0.2])))


def test_warnings_free_normal_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_trajectory(fw, lambda ps: fw.optim.AdamW(ps, lr=0.01), 3)


def test_fused_requires_float_params():
    p = fw.zeros(2, dtype=fw.int64)
    with pytest.raises(RuntimeError, match="`fused=True` requires all the params to be "
                                           "floating point Tensors"):
        fw.optim.Adagrad([p], fused=True)
    p.grad = fw.zeros(2, dtype=fw.int64)
    for name in ("SGD", "Adam", "AdamW"):
        with pytest.raises(RuntimeError, match="`fused=True` requires"):
            getattr(fw.optim, name)([p], fused=True).step()


def test_deepcopy_optimizer_copies_state():
    import copy
    fo, _, fp, _ = _pair("Adam")
    _feed(fp, fw, 1)
    fo.step()
    fo.register_step_pre_hook(lambda *a: None)
    fc = copy.deepcopy(fo)
    assert fc.state_dict()["param_groups"] == fo.state_dict()["param_groups"]
    st = fc.state[fc.param_groups[0]["params"][0]]
    np.testing.assert_array_equal(to_numpy(st["exp_avg"]),
                                  to_numpy(fo.state[fp[0]]["exp_avg"]))
    assert len(fc._optimizer_step_pre_hooks) == 0


def test_custom_subclass_step_gets_hooks():
    from framework.optim import Optimizer

    class Sign(Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            with fw.no_grad():
                for g in self.param_groups:
                    for p in g["params"]:
                        p.add_(p.grad.sign(), alpha=-g["lr"])

    p = fw.zeros(2, requires_grad=True)
    opt = Sign([p])
    log = []
    opt.register_step_post_hook(lambda o, a, k: log.append(1))
    p.grad = fw.tensor([1.0, -2.0])
    opt.step()
    assert log == [1]
    np.testing.assert_allclose(to_numpy(p), [-0.1, 0.1], rtol=1e-6)
