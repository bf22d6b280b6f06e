"""framework.optim.swa_utils against torch.optim.swa_utils: AveragedModel (SWA, EMA,
custom averages, use_buffers), SWALR lr sequences and state_dict, update_bn."""
import copy
import math

import numpy as np
import pytest
import torch

import framework as fw
import framework.nn as fnn
from framework.optim import swa_utils as fswa
from framework.optim import lr_scheduler as flrs

tswa = torch.optim.swa_utils


def _models(device):
    """The same Linear-BatchNorm-Linear model (float64) in torch (cpu) and framework."""
    t = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3),
                            torch.nn.Linear(3, 2)).double()
    f = fnn.Sequential(fnn.Linear(4, 3), fnn.BatchNorm1d(3), fnn.Linear(3, 2)).double()
    f = f.to(device)
    _set_state(t, f, np.random.RandomState(0))
    return t, f


def _set_state(t, f, rng):
    """Give both models the same random parameters and buffers."""
    for (_, tp), (_, fp) in zip(list(t.named_parameters()) + list(t.named_buffers()),
                                list(f.named_parameters()) + list(f.named_buffers())):
        if tp.dtype == torch.int64:
            v = rng.randint(0, 50, size=tuple(tp.shape))
        else:
            v = rng.standard_normal(tuple(tp.shape))
            if tp.ndim == 1 and tp.shape[0] == 3:
                v = np.abs(v) + 0.1  # keeps running_var positive
        with torch.no_grad():
            tp.copy_(torch.from_numpy(np.array(v)))
        with fw.no_grad():
            fp.copy_(fw.tensor(np.array(v), dtype=fp.dtype, device=fp.device))


def _np(x):
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x.detach().to("cpu").numpy()


def _assert_models_equal(t, f, rtol=1e-10):
    tl = list(t.named_parameters()) + list(t.named_buffers())
    fl = list(f.named_parameters()) + list(f.named_buffers())
    assert [n for n, _ in tl] == [n for n, _ in fl]
    for (n, a), (_, b) in zip(tl, fl):
        np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=1e-13, err_msg=n)


def _torch_cuda_swa(avg, cur, n):
    """What torch's default SWA average does on a cuda device (float32 lerp weight);
    integer buffers (which torch's cuda path rejects) get the truncated mean."""
    with torch.no_grad():
        if avg[0].is_floating_point():
            torch._foreach_lerp_(avg, cur, float(1 / (n + 1)))
        else:
            for a, p in zip(avg, cur):
                a.copy_(a + (p - a) / (n + 1))


AVERAGES = {
    "swa": lambda S: dict(),
    "swa_buffers": lambda S: dict(use_buffers=True),
    "ema_avg_fn": lambda S: dict(avg_fn=S.get_ema_avg_fn(0.9)),
    "ema_multi": lambda S: dict(multi_avg_fn=S.get_ema_multi_avg_fn(0.8)),
    "ema_multi_buffers": lambda S: dict(multi_avg_fn=S.get_ema_multi_avg_fn(0.7),
                                        use_buffers=True),
    "swa_multi": lambda S: dict(multi_avg_fn=S.get_swa_multi_avg_fn()),
    "swa_avg_fn": lambda S: dict(avg_fn=S.get_swa_avg_fn()),
    "custom": lambda S: dict(avg_fn=lambda a, p, n: 0.5 * a + 0.5 * p),
}


@pytest.mark.parametrize("kind", sorted(AVERAGES))
def test_averaged_model_matches_torch(kind, device):
    t, f = _models(device)
    tkw = AVERAGES[kind](tswa)
    if device == "cuda" and kind in ("swa", "swa_buffers"):
        # on a cuda device torch's default average is its multi-tensor lerp path
        tkw["multi_avg_fn"] = _torch_cuda_swa
    ta = tswa.AveragedModel(t, **tkw)
    fa = fswa.AveragedModel(f, **AVERAGES[kind](fswa))
    rng = np.random.RandomState(1)
    for _ in range(5):
        _set_state(t, f, rng)
        ta.update_parameters(t)
        fa.update_parameters(f)
        _assert_models_equal(ta.module, fa.module)
        assert int(fa.n_averaged) == int(ta.n_averaged)
    assert int(fa.n_averaged) == 5
    # the average differs from the last model (the test is not vacuous)
    assert not np.allclose(_np(fa.module[0].weight), _np(f[0].weight))
    # forward goes through the averaged copy, which is not the original module
    assert fa.module is not f and fa.module[0].weight is not f[0].weight
    x = np.random.RandomState(2).standard_normal((5, 4))
    ta.eval(), fa.eval()
    np.testing.assert_allclose(_np(fa(fw.tensor(x, device=device))),
                               _np(ta(torch.from_numpy(x))), rtol=1e-10)
    assert "n_averaged" in dict(fa.named_buffers())


def test_averaged_model_errors():
    for S, M in ((tswa, torch.nn.Linear(2, 2)), (fswa, fnn.Linear(2, 2))):
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            S.AveragedModel(M, avg_fn=S.get_swa_avg_fn(), multi_avg_fn=S.get_swa_multi_avg_fn())
    for bad in (-0.1, 1.5):
        for fn in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
            with pytest.raises(ValueError) as ours:
                getattr(fswa, fn)(bad)
            with pytest.raises(ValueError) as ref:
                getattr(tswa, fn)(bad)
            assert str(ours.value) == str(ref.value)


# ---------------------------------------------------------------- SWALR
def _opt(lib, lr=(0.1, 0.05)):
    optim = torch.optim if lib is torch else fw.optim
    mk = (lambda n: torch.zeros(n, requires_grad=True)) if lib is torch else \
        (lambda n: fw.zeros(n, requires_grad=True))
    return optim.SGD([{"params": [mk(3)], "lr": lr[0]}, {"params": [mk(2)], "lr": lr[1]}],
                     lr=0.1, momentum=0.9)


SWALRS = {
    "cos10": lambda S, o: S.SWALR(o, swa_lr=0.01, anneal_epochs=10),
    "linear5": lambda S, o: S.SWALR(o, swa_lr=[0.02, 0.2], anneal_epochs=5,
                                    anneal_strategy="linear"),
    "zero": lambda S, o: S.SWALR(o, swa_lr=0.03, anneal_epochs=0),
    "cos60": lambda S, o: S.SWALR(o, swa_lr=0.001, anneal_epochs=60),
}


def _swalr_run(lib, name, steps=100):
    S = tswa if lib is torch else fswa
    o = _opt(lib)
    s = SWALRS[name](S, o)
    out = [[float(g["lr"]) for g in o.param_groups]]
    for _ in range(steps):
        o.step()
        s.step()
        out.append([float(x) for x in s.get_last_lr()])
    return out, o, s


@pytest.mark.parametrize("name", sorted(SWALRS))
def test_swalr_matches_torch(name):
    ours, _, _ = _swalr_run(fw, name)
    ref, _, _ = _swalr_run(torch, name)
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-12)
    if name != "zero":  # anneal_epochs=0 jumps to swa_lr at once
        assert len({r[0] for r in ref}) >= 2
    if name == "linear5":  # annealing ends at each group's swa_lr
        assert ours[-1] == pytest.approx([0.02, 0.2], rel=1e-12)


@pytest.mark.parametrize("name", sorted(SWALRS))
def test_swalr_state_dict_round_trip(name):
    ref, _, _ = _swalr_run(torch, name)
    first, o, s = _swalr_run(fw, name, steps=37)
    osd, ssd = copy.deepcopy(o.state_dict()), copy.deepcopy(s.state_dict())
    assert "anneal_func" not in ssd and "optimizer" not in ssd
    o2 = _opt(fw, lr=(0.5, 0.5))
    s2 = SWALRS[name](fswa, o2)
    o2.load_state_dict(osd)
    s2.load_state_dict(ssd)
    out = first
    for _ in range(63):
        o2.step()
        s2.step()
        out.append([float(x) for x in s2.get_last_lr()])
    np.testing.assert_allclose(np.array(out), np.array(ref), rtol=1e-12)


def test_swalr_after_cosine_schedule():
    """The usual recipe: a cosine schedule, then SWALR from epoch 30."""
    def run(lib):
        S, L = (tswa, torch.optim.lr_scheduler) if lib is torch else (fswa, flrs)
        o = _opt(lib)
        cos = L.CosineAnnealingLR(o, T_max=50)
        swa = S.SWALR(o, swa_lr=0.02, anneal_epochs=7)
        out = []
        for epoch in range(60):
            o.step()
            (swa if epoch >= 30 else cos).step()
            out.append(float(o.param_groups[0]["lr"]))
        return out
    np.testing.assert_allclose(run(fw), run(torch), rtol=1e-12)


def test_swalr_errors():
    for kw in (dict(anneal_strategy="exp"), dict(anneal_epochs=-1), dict(anneal_epochs=2.5)):
        with pytest.raises(ValueError) as ours:
            fswa.SWALR(_opt(fw), 0.1, **kw)
        with pytest.raises(ValueError) as ref:
            tswa.SWALR(_opt(torch), 0.1, **kw)
        assert str(ours.value) == str(ref.value)


# ---------------------------------------------------------------- update_bn
@pytest.mark.parametrize("tuples", [False, True])
def test_update_bn_matches_torch(tuples, device):
    t, f = _models(device)
    t[1].momentum, f[1].momentum = 0.3, 0.3
    t.eval(), f.eval()
    rng = np.random.RandomState(4)
    xs = [rng.standard_normal((6, 4)) * 2 + 1 for _ in range(4)]
    tl = [torch.from_numpy(x) for x in xs]
    fl = [fw.tensor(x, device=device) for x in xs]
    if tuples:
        tl = [(x, 0) for x in tl]
        fl = [(x, 0) for x in fl]
    tswa.update_bn(tl, t)
    fswa.update_bn(fl, f)
    _assert_models_equal(t, f)
    assert int(f[1].num_batches_tracked) == 4
    assert not f.training and f[1].momentum == 0.3
    # the running mean is the plain mean over batches of the Linear outputs
    h = np.concatenate([x @ _np(f[0].weight).T + _np(f[0].bias) for x in xs])
    np.testing.assert_allclose(_np(f[1].running_mean), h.reshape(4, 6, 3).mean(1).mean(0),
                               rtol=1e-10)


def test_update_bn_without_bn_and_device_arg():
    m = fnn.Sequential(fnn.Linear(2, 2))
    w = _np(m[0].weight).copy()
    fswa.update_bn([fw.ones(3, 2)], m)  # no BatchNorm: nothing to do
    np.testing.assert_array_equal(_np(m[0].weight), w)
    t, f = _models("cpu")
    xs = [np.random.RandomState(5).standard_normal((5, 4))]
    tswa.update_bn([torch.from_numpy(xs[0])], t, device="cpu")
    fswa.update_bn([fw.tensor(xs[0])], f, device="cpu")
    _assert_models_equal(t, f)
    assert f.training


def test_lr_scale_sanity():
    assert math.isclose(fswa.SWALR._cosine_anneal(0.5), 0.5)
