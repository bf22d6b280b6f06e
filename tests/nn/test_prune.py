"""framework.nn.utils.prune against torch.nn.utils.prune on the same (distinct) weights."""
import numpy as np
import pytest

import framework as fw
import framework.nn.utils.prune as fprune

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402


def _distinct(shape, seed=0):
    """Distinct values of both signs, so that every |w| and every norm is distinct."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return ((rng.permutation(n) + 1) * rng.choice([-1.0, 1.0], n) / n).reshape(shape) \
        .astype(np.float32)


def _pair(kind, device):
    """The same layer in framework (on ``device``) and in torch, with distinct weights."""
    if kind == "linear":
        fm, tm = fw.nn.Linear(6, 4), torch.nn.Linear(6, 4)
    else:
        fm, tm = fw.nn.Conv2d(3, 4, 2), torch.nn.Conv2d(3, 4, 2)
    for i, (name, p) in enumerate(tm.named_parameters()):
        v = _distinct(tuple(p.shape), seed=i + 1)
        with torch.no_grad():
            p.copy_(torch.from_numpy(v))
        with fw.no_grad():
            getattr(fm, name).copy_(fw.tensor(v))
    return fm.to(device), tm


def _np(t):
    t = t.detach()
    return t.cpu().numpy() if hasattr(t, "cpu") else t.numpy()


def _same(f, t):
    np.testing.assert_array_equal(_np(f), t.detach().numpy())


def _outcome(fn):
    try:
        fn()
        return None
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("kind,call", [
    ("linear", lambda p, m: p.l1_unstructured(m, "weight", amount=0.3)),
    ("linear", lambda p, m: p.l1_unstructured(m, "weight", amount=7)),
    ("linear", lambda p, m: p.l1_unstructured(m, "bias", amount=0)),
    ("linear", lambda p, m: p.identity(m, "weight")),
    ("conv", lambda p, m: p.l1_unstructured(m, "weight", amount=0.5)),
    ("conv", lambda p, m: p.ln_structured(m, "weight", amount=2, n=2, dim=0)),
    ("conv", lambda p, m: p.ln_structured(m, "weight", amount=0.5, n=1, dim=1)),
    ("conv", lambda p, m: p.ln_structured(m, "weight", amount=1, n=float("inf"), dim=-1)),
    ("linear", lambda p, m: p.ln_structured(m, "weight", amount=0.25, n=2, dim=-1)),
])
def test_masks_state_dict_forward_match_torch(device, kind, call):
    fm, tm = _pair(kind, device)
    assert call(fprune, fm) is fm
    call(tprune, tm)
    fsd, tsd = fm.state_dict(), tm.state_dict()
    assert list(fsd) == list(tsd)
    for k in tsd:
        _same(fsd[k], tsd[k])
        assert fsd[k].dtype == getattr(fw, str(tsd[k].dtype).split(".")[-1])
    name = "bias" if "bias_mask" in tsd else "weight"
    assert isinstance(getattr(fm, name + "_orig"), fw.nn.Parameter)
    assert name + "_mask" in dict(fm.named_buffers())
    assert name not in dict(fm.named_parameters())
    _same(getattr(fm, name), getattr(tm, name))
    x = _distinct((2, 6) if kind == "linear" else (1, 3, 3, 3), seed=9)
    _same(fm(fw.tensor(x, device=device)), tm(torch.from_numpy(x)))
    assert fprune.is_pruned(fm) and tprune.is_pruned(tm)


def test_gradients_reach_only_unpruned_weights(device):
    fm, tm = _pair("linear", device)
    fprune.l1_unstructured(fm, "weight", amount=0.5)
    tprune.l1_unstructured(tm, "weight", amount=0.5)
    x = _distinct((3, 6), seed=5)
    fo, to = fm(fw.tensor(x, device=device)), tm(torch.from_numpy(x))
    (fo * fo).sum().backward()
    (to * to).sum().backward()
    g = _np(fm.weight_orig.grad)
    np.testing.assert_allclose(g, tm.weight_orig.grad.numpy(), rtol=1e-5, atol=1e-6)
    mask = _np(fm.weight_mask)
    assert (g[mask == 0] == 0).all() and (g[mask == 1] != 0).all()
    assert fm.weight_mask.grad is None and not fm.weight_mask.requires_grad


def test_hook_recomputes_weight_each_forward(device):
    fm, tm = _pair("linear", device)
    fprune.l1_unstructured(fm, "weight", amount=10)
    tprune.l1_unstructured(tm, "weight", amount=10)
    with fw.no_grad():
        fm.weight_orig.mul_(3.0)
    with torch.no_grad():
        tm.weight_orig.mul_(3.0)
    x = _distinct((2, 6), seed=4)
    _same(fm(fw.tensor(x, device=device)), tm(torch.from_numpy(x)))
    _same(fm.weight, tm.weight)


def test_iterative_pruning_combines_masks(device):
    fm, tm = _pair("conv", device)
    for p, m in ((fprune, fm), (tprune, tm)):
        p.l1_unstructured(m, "weight", amount=0.3)
        p.ln_structured(m, "weight", amount=1, n=1, dim=0)
        p.l1_unstructured(m, "weight", amount=5)
        p.ln_structured(m, "weight", amount=0.5, n=2, dim=1)
        # along dim 0 again: the next channel among the 3 still alive
        p.ln_structured(m, "weight", amount=1, n=2, dim=0)
    hooks = [h for h in fm._forward_pre_hooks.values()]
    assert len(hooks) == 1 and isinstance(hooks[0], fprune.PruningContainer)
    assert [type(h).__name__ for h in hooks[0]] == [
        "L1Unstructured", "LnStructured", "L1Unstructured", "LnStructured", "LnStructured"]
    assert len(hooks[0]) == 5 and hooks[0][1].dim == 0
    dead = [c for c in range(4) if (_np(fm.weight_mask)[c] == 0).all()]
    assert len(dead) == 2
    _same(fm.weight_mask, tm.weight_mask)
    assert list(fm.state_dict()) == list(tm.state_dict())
    x = _distinct((1, 3, 3, 3), seed=3)
    _same(fm(fw.tensor(x, device=device)), tm(torch.from_numpy(x)))


def test_random_pruning_acts_on_remaining_units(device):
    fm, _ = _pair("conv", device)
    fprune.l1_unstructured(fm, "weight", amount=10)
    before = _np(fm.weight_mask).copy()
    fprune.random_unstructured(fm, "weight", amount=0.5)
    after = _np(fm.weight_mask)
    # half of the 38 remaining entries, rounded: 19 more zeros, earlier zeros kept
    assert (after[before == 0] == 0).all()
    assert (after == 0).sum() == 10 + 19
    fprune.random_structured(fm, "weight", amount=1, dim=0)
    final = _np(fm.weight_mask)
    assert (final[after == 0] == 0).all()
    dead = [c for c in range(4) if (final[c] == 0).all()]
    assert len(dead) >= 1
    # exactly one channel was chosen among the 4 still alive, so the rest are unchanged
    alive = [c for c in range(4) if c not in dead]
    np.testing.assert_array_equal(final[alive], after[alive])
    np.testing.assert_array_equal(_np(fm.weight), _np(fm.weight_orig) * final)


def test_global_unstructured_matches_torch(device):
    f1, t1 = _pair("linear", device)
    f2, t2 = _pair("conv", device)
    # one tensor already pruned: the global pass counts only its remaining entries
    fprune.l1_unstructured(f2, "weight", amount=6)
    tprune.l1_unstructured(t2, "weight", amount=6)
    # scores around the global threshold, so that they decide which biases go
    scores_np = _distinct((4,), seed=11) * 0.8
    fprune.global_unstructured(
        [(f1, "weight"), (f1, "bias"), (f2, "weight")], pruning_method=fprune.L1Unstructured,
        importance_scores={(f1, "bias"): fw.tensor(scores_np, device=device)}, amount=0.4)
    tprune.global_unstructured(
        [(t1, "weight"), (t1, "bias"), (t2, "weight")], pruning_method=tprune.L1Unstructured,
        importance_scores={(t1, "bias"): torch.from_numpy(scores_np)}, amount=0.4)
    for fm, tm in ((f1, t1), (f2, t2)):
        fsd, tsd = fm.state_dict(), tm.state_dict()
        assert list(fsd) == list(tsd)
        for k in tsd:
            _same(fsd[k], tsd[k])
        assert not fm.weight_mask.requires_grad
    assert isinstance(next(iter(f2._forward_pre_hooks.values())), fprune.PruningContainer)


def test_custom_from_mask_and_importance_scores(device):
    fm, tm = _pair("linear", device)
    mask = (_distinct((4, 6), seed=7) > 0).astype(np.float32)
    fprune.custom_from_mask(fm, "weight", mask=fw.tensor(mask, device=device))
    tprune.custom_from_mask(tm, "weight", mask=torch.from_numpy(mask))
    scores = _distinct((4,), seed=8)
    fprune.l1_unstructured(fm, "bias", amount=2, importance_scores=fw.tensor(scores, device=device))
    tprune.l1_unstructured(tm, "bias", amount=2, importance_scores=torch.from_numpy(scores))
    for k, v in tm.state_dict().items():
        _same(fm.state_dict()[k], v)


def test_remove_makes_pruning_permanent(device):
    fm, tm = _pair("conv", device)
    for p, m in ((fprune, fm), (tprune, tm)):
        p.l1_unstructured(m, "weight", amount=0.3)
        p.ln_structured(m, "weight", amount=1, n=2, dim=0)
        assert p.remove(m, "weight") is m
    assert list(fm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    assert isinstance(fm.weight, fw.nn.Parameter) and fm.weight.requires_grad
    _same(fm.weight, tm.weight)
    assert not fprune.is_pruned(fm) and not fm._forward_pre_hooks
    assert not fprune.is_pruned(fw.nn.Sequential(fw.nn.Linear(2, 2)))
    seq = fw.nn.Sequential(fw.nn.Linear(2, 2), fw.nn.ReLU())
    fprune.identity(seq[0], "bias")
    assert fprune.is_pruned(seq)


def test_errors_match_torch():
    fm, tm = _pair("linear", "cpu")
    fc, tc = _pair("conv", "cpu")
    cases = [
        lambda p, m, c: p.remove(m, "weight"),
        lambda p, m, c: p.l1_unstructured(m, "weight", amount=-1),
        lambda p, m, c: p.l1_unstructured(m, "weight", amount=1.5),
        lambda p, m, c: p.l1_unstructured(m, "weight", amount="a"),
        lambda p, m, c: p.l1_unstructured(m, "weight", amount=25),
        lambda p, m, c: p.random_unstructured(m, "bias", amount=5),
        lambda p, m, c: p.ln_structured(m, "bias", amount=1, n=2, dim=0),
        lambda p, m, c: p.ln_structured(c, "weight", amount=1, n=2, dim=4),
        lambda p, m, c: p.ln_structured(c, "weight", amount=5, n=2, dim=0),
        lambda p, m, c: p.random_structured(c, "weight", amount=4, dim=1),
        lambda p, m, c: p.global_unstructured(5, p.L1Unstructured, amount=1),
        lambda p, m, c: p.global_unstructured([(m, "weight")], p.L1Unstructured,
                                              importance_scores=[1], amount=1),
        lambda p, m, c: p.global_unstructured([(m, "weight")], p.LnStructured, amount=1, n=2),
        lambda p, m, c: p.PruningContainer(p.L1Unstructured(1)),
    ]
    for case in cases:
        got = _outcome(lambda: case(fprune, fm, fc))
        want = _outcome(lambda: case(tprune, tm, tc))
        assert want is not None and got is not None
        # module reprs and Size names appear in the texts: compare with torch's swapped in
        assert got[0] == want[0], (got, want)
        text = got[1].replace(repr(fm), repr(tm)).replace(repr(fc), repr(tc))
        text = text.replace("framework.Size", "torch.Size").replace("framework.nn", "torch.nn")
        assert text == want[1]
    # a failed first pruning leaves the parameter in place
    assert list(fm.state_dict()) == list(tm.state_dict()) == ["weight", "bias"]
    assert isinstance(fm.weight, fw.nn.Parameter)


def test_prune_method_on_tensor(device):
    v = _distinct((3, 4), seed=6)
    ft, tt = fw.tensor(v, device=device), torch.from_numpy(v)
    _same(fprune.L1Unstructured(amount=5).prune(ft), tprune.L1Unstructured(amount=5).prune(tt))
    _same(fprune.LnStructured(amount=2, n=1, dim=1).prune(ft),
          tprune.LnStructured(amount=2, n=1, dim=1).prune(tt))
    scores = _distinct((3, 4), seed=12)
    _same(fprune.L1Unstructured(4).prune(ft, importance_scores=fw.tensor(scores, device=device)),
          tprune.L1Unstructured(4).prune(tt, importance_scores=torch.from_numpy(scores)))
