"""framework.amp.GradScaler against torch.amp.GradScaler("cpu"): the same scales, growth
trackers, skipped steps and parameters over iterations with injected infs and NaNs, with and
without an explicit unscale_, with two optimizers; state_dict, pickling, errors, the
disabled scaler, scale() on nested outputs, the fused-optimizer contract and the
deprecated framework.cuda.amp.GradScaler. Every test runs with GradScaler(device) on cpu and
on cuda; torch always runs on the cpu."""
import pickle
import warnings

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

SHAPES = ((5, 3), (1100, ), (2, 2))   # 1100 crosses the cuda BLOCK
DTYPES = ("float32", "float64", "float32")


def _np(t):
    return np.array(t.detach().cpu().double().numpy(), dtype=np.float64)


def _params(T, device, seed=0):
    rng = np.random.default_rng(seed)
    return [T.nn.Parameter(T.tensor(rng.standard_normal(s), dtype=getattr(T, dt),
                                    device=device))
            for s, dt in zip(SHAPES, DTYPES)]


def _grads(k, bad):
    """Fixed gradients for iteration k; ``bad`` maps a param index to (flat index, value)."""
    rng = np.random.default_rng(100 + k)
    gs = [rng.standard_normal(s) for s in SHAPES]
    for i, (j, v) in bad.get(k, {}).items():
        gs[i].reshape(-1)[j] = v
    return gs


def _set_scaled_grads(T, scaler, params, gs, device):
    """p.grad = scaler.scale(g): what backward of a scaled loss gives."""
    scaled = scaler.scale([T.tensor(g, dtype=p.dtype, device=device)
                           for p, g in zip(params, gs)])
    for p, g in zip(params, scaled):
        p.grad = g


INF, NAN = float("inf"), float("nan")
# iteration -> {param index: (flat index, value)}; with growth_interval 3 the scale grows
# in the runs between them
BAD = {4: {1: (1024, INF)}, 5: {0: (0, NAN)}, 12: {2: (3, -INF)}, 13: {1: (1099, INF),
       2: (0, NAN)}, 21: {0: (14, INF)}}


def _run(T, device, steps=30, explicit_unscale=(), two_opts=False, bad=BAD):
    """Iterations of scale -> (unscale_) -> step -> update; returns per iteration the scale,
    the growth tracker, the step return values and the params."""
    params = _params(T, device)
    opts = [T.optim.SGD(params[:2] if two_opts else params, lr=0.1, momentum=0.9)]
    if two_opts:
        opts.append(T.optim.SGD(params[2:], lr=0.05))
    scaler = T.amp.GradScaler(device, init_scale=2.0 ** 10, growth_factor=2.0,
                              backoff_factor=0.5, growth_interval=3)
    out = []
    for k in range(steps):
        for o in opts:
            o.zero_grad()
        _set_scaled_grads(T, scaler, params, _grads(k, bad), device)
        if k in explicit_unscale:
            scaler.unscale_(opts[0])
            grads = [_np(p.grad) for p in params]
        rets = [scaler.step(o) for o in opts]
        if k in explicit_unscale:
            out.append(("unscaled", grads))
        scaler.update()
        tracker = scaler._get_growth_tracker()
        out.append((scaler.get_scale(), tracker, rets, [_np(p) for p in params]))
    return out


def _compare(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if g[0] == "unscaled":
            for a, b in zip(g[1], w[1]):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=0)
            continue
        assert g[:3] == w[:3]
        for a, b in zip(g[3], w[3]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_sequence_like_torch(device):
    got = _run(fw, device)
    want = _run(torch, "cpu")
    _compare(got, want)
    scales = [w[0] for w in want]
    assert max(scales) > 2.0 ** 10 and min(scales) < 2.0 ** 10   # grew and backed off


def test_explicit_unscale_then_step(device):
    steps = (0, 4, 5, 6, 13, 14)
    _compare(_run(fw, device, steps=16, explicit_unscale=steps),
             _run(torch, "cpu", steps=16, explicit_unscale=steps))


def test_two_optimizers(device):
    """An inf in one optimizer's grads skips only its step; the scale backs off once."""
    _compare(_run(fw, device, steps=16, two_opts=True),
             _run(torch, "cpu", steps=16, two_opts=True))


def test_nn_model_backward(device):
    """scale(loss).backward() then step on a small model, beside torch."""
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 4))
    res = []
    for T, dev in ((fw, device), (torch, "cpu")):
        model = T.nn.Linear(3, 4).to(dev)
        with T.no_grad():
            model.weight.copy_(T.tensor(w, dtype=T.float32))
            model.bias.copy_(T.tensor(b, dtype=T.float32))
        opt = T.optim.Adam(model.parameters(), lr=0.01)
        scaler = T.amp.GradScaler(dev, init_scale=256.0, growth_interval=2)
        xs = T.tensor(x, dtype=T.float32, device=dev)
        ys = T.tensor(y, dtype=T.float32, device=dev)
        trace = []
        for k in range(6):
            opt.zero_grad()
            loss = T.nn.functional.mse_loss(model(xs), ys)
            scaled = scaler.scale(loss)
            scaled.backward()
            if k == 3:
                model.bias.grad[1] = float("inf")
            scaler.step(opt)
            scaler.update()
            trace.append((scaler.get_scale(), _np(scaled), _np(model.weight), _np(model.bias)))
        res.append(trace)
    for a, b in zip(*res):
        assert a[0] == b[0]
        for u, v in zip(a[1:], b[1:]):
            np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)


def test_state_dict_round_trip(device):
    scaler = fw.amp.GradScaler(device, init_scale=2.0 ** 10, growth_interval=3)
    ref = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=3)
    assert scaler.state_dict() == ref.state_dict()          # before any scale()
    for s, T, dev in ((scaler, fw, device), (ref, torch, "cpu")):
        params = _params(T, dev)
        opt = T.optim.SGD(params, lr=0.1)
        for k in range(5):
            _set_scaled_grads(T, s, params, _grads(k, BAD), dev)
            s.step(opt)
            s.update()
    sd = scaler.state_dict()
    assert sd == ref.state_dict()
    assert set(sd) == {"scale", "growth_factor", "backoff_factor", "growth_interval",
                       "_growth_tracker"}
    assert isinstance(sd["scale"], float) and isinstance(sd["_growth_tracker"], int)
    fresh = fw.amp.GradScaler(device)                       # loads before its tensors exist
    fresh.load_state_dict(sd)
    assert fresh.state_dict() == sd
    fresh.scale(fw.ones(2, device=device))
    assert fresh.state_dict() == sd
    used = fw.amp.GradScaler(device, growth_interval=7)     # loads into existing tensors
    used.scale(fw.ones(2, device=device))
    used.load_state_dict(sd)
    assert used.state_dict() == sd and used.get_growth_interval() == 3
    assert fw.amp.GradScaler(device, enabled=False).state_dict() == {}
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        fresh.load_state_dict({})
    # pickling keeps the state as numbers and remakes the tensors lazily
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy.state_dict() == sd and copy._scale is None


def test_getters_setters(device):
    s = fw.amp.GradScaler(device, init_scale=3.0, growth_factor=4.0, backoff_factor=0.25,
                          growth_interval=5)
    assert s.is_enabled() and s.get_scale() == 3.0
    assert (s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval()) == \
        (4.0, 0.25, 5)
    s.set_growth_factor(3.0)
    s.set_backoff_factor(0.125)
    s.set_growth_interval(2)
    assert (s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval()) == \
        (3.0, 0.125, 2)
    out = s.scale(fw.ones(3, device=device))
    assert out.device.type == device and s._scale.dtype == fw.float32
    assert s._growth_tracker.dtype == fw.int32 and s._scale.shape == ()
    np.testing.assert_array_equal(_np(out), [3.0] * 3)


def test_update_new_scale(device):
    s = fw.amp.GradScaler(device)
    ref = torch.amp.GradScaler("cpu")
    s.scale(fw.ones(1, device=device))
    ref.scale(torch.ones(1))
    s.update(8.0)
    ref.update(8.0)
    assert s.get_scale() == ref.get_scale() == 8.0
    s.update(fw.tensor(16.0, device=device))
    assert s.get_scale() == 16.0
    s.update(fw.tensor([32.0], device=device))              # any 1-element shape
    assert s.get_scale() == 32.0
    other = "cpu" if device == "cuda" else None
    bad = [fw.ones(2, device=device), fw.ones((), device=device, requires_grad=True)]
    if other is not None:
        bad.append(fw.ones((), device=other))
    for b in bad:
        with pytest.raises(AssertionError, match="new_scale should be a float or a 1-element"):
            s.update(b)


def _error(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


@pytest.mark.filterwarnings("ignore:overflow encountered")  # 2**16 in float16 (interpreter)
def test_errors_like_torch(device):
    for T, dev in ((fw, device), (torch, "cpu")):
        with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
            T.amp.GradScaler(dev, growth_factor=1.0)
        with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
            T.amp.GradScaler(dev, backoff_factor=1.0)

    def script(T, dev, which):
        params = _params(T, dev)
        opt = T.optim.SGD(params, lr=0.1)
        s = T.amp.GradScaler(dev)
        if which == "step before scale":
            return s.step(opt)
        if which == "update before step":
            s.scale(T.ones(1, device=dev))
            return s.update()
        _set_scaled_grads(T, s, params, _grads(0, {}), dev)
        if which == "unscale twice":
            s.unscale_(opt)
            return s.unscale_(opt)
        if which == "unscale after step":
            s.step(opt)
            return s.unscale_(opt)
        if which == "step twice":
            s.step(opt)
            return s.step(opt)
        if which == "closure":
            return s.step(opt, closure=lambda: 0.0)
        if which == "fp16 grads":
            half = T.nn.Parameter(T.ones(3, dtype=T.float16, device=dev))
            half.grad = s.scale(T.ones(3, dtype=T.float16, device=dev))
            return s.unscale_(T.optim.SGD(params + [half], lr=0.1))
        if which == "outputs not tensors":
            return s.scale([T.ones(1, device=dev), 3])

    for which in ("step before scale", "update before step", "unscale twice",
                  "unscale after step", "step twice", "closure", "fp16 grads",
                  "outputs not tensors"):
        want = _error(lambda: script(torch, "cpu", which))
        got = _error(lambda: script(fw, device, which))
        assert got == want, which


def test_disabled_is_a_pass_through(device):
    s = fw.amp.GradScaler(device, enabled=False)
    x = fw.ones(3, device=device)
    assert not s.is_enabled() and s.scale(x) is x
    outs = [x, (x, )]
    assert s.scale(outs) is outs
    params = _params(fw, device)
    opt = fw.optim.SGD(params, lr=0.5)
    before = [_np(p) for p in params]
    for p in params:
        p.grad = fw.full(p.shape, INF, dtype=p.dtype, device=device)
    s.unscale_(opt)                                         # no-op: grads unchanged
    assert np.isinf(_np(params[0].grad)).all()
    for p in params:
        p.grad = fw.ones(p.shape, dtype=p.dtype, device=device)
    s.step(opt)                                             # always steps
    s.update()
    s.load_state_dict({})
    for p, b in zip(params, before):
        np.testing.assert_allclose(_np(p), b - 0.5)
    assert s.get_scale() == 1.0 and s.state_dict() == {} and s._get_growth_tracker() == 0


def test_scale_nested_outputs(device):
    s = fw.amp.GradScaler(device, init_scale=4.0)
    a, b, c = (fw.full((2, ), v, device=device) for v in (1.0, 2.0, 3.0))
    out = s.scale([a, (b, [c]), (x for x in (a, ))])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    assert isinstance(out[1][1], list)
    np.testing.assert_array_equal(_np(out[0]), [4.0, 4.0])
    np.testing.assert_array_equal(_np(out[1][0]), [8.0, 8.0])
    np.testing.assert_array_equal(_np(out[1][1][0]), [12.0, 12.0])
    gen = list(out[2])                                     # an iterable stays lazy (a map)
    np.testing.assert_array_equal(_np(gen[0]), [4.0, 4.0])
    if device == "cuda":
        # tensors on another device get a copy of the scale there
        mixed = s.scale((fw.ones(2, device="cuda"), fw.ones(2)))
        assert [t.device.type for t in mixed] == ["cuda", "cpu"]
        np.testing.assert_array_equal(_np(mixed[1]), [4.0, 4.0])


def test_step_returns_optimizer_step_value(device):
    class Opt(fw.optim.SGD):
        def step(self, closure=None, tag=None):
            super().step()
            return ("stepped", tag)

    params = _params(fw, device)
    opt = Opt(params, lr=0.1)
    s = fw.amp.GradScaler(device, init_scale=2.0)
    _set_scaled_grads(fw, s, params, _grads(0, {}), device)
    assert s.step(opt, tag=7) == ("stepped", 7)
    s.update()
    _set_scaled_grads(fw, s, params, _grads(4, BAD), device)
    assert s.step(opt, tag=7) is None                       # skipped: inf grad
    s.update()
    assert s.get_scale() == 2.0 * 0.5


def _fake_fused(T, params, log):
    """An optimizer with PyTorch's fused contract: it only records what it is handed."""
    class Fused(T.optim.SGD):
        _step_supports_amp_scaling = True

        def step(self, closure=None):
            gs = getattr(self, "grad_scale", None)
            log.append((None if gs is None else float(gs.item()),
                        float(self.found_inf.item()), self.found_inf.dtype,
                        [_np(p.grad) for p in params]))
    return Fused(params, lr=0.1)


def test_fused_optimizer_contract(device):
    res = []
    for T, dev in ((fw, device), (torch, "cpu")):
        log = []
        params = _params(T, dev)
        opt = _fake_fused(T, params, log)
        s = T.amp.GradScaler(dev, init_scale=8.0)
        for k, unscale in ((0, False), (4, False), (1, True), (13, True)):
            _set_scaled_grads(T, s, params, _grads(k, BAD), dev)
            if unscale:
                s.unscale_(opt)
            s.step(opt)
            assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
            s.update()
        opt.grad_scale = T.tensor(3.0, device=dev)        # a user's grad_scale multiplies
        _set_scaled_grads(T, s, params, _grads(2, {}), dev)
        s.step(opt)
        s.update()
        res.append((log, s.get_scale()))
    (got, gscale), (want, wscale) = res
    assert gscale == wscale
    for g, w in zip(got, want):
        assert g[:2] == w[:2]
        assert g[2] == fw.float32 and w[2] == torch.float32
        for a, b in zip(g[3], w[3]):
            np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)
    assert [g[:2] for g in got] == [(8.0, 0.0), (8.0, 1.0), (None, 0.0), (None, 1.0),
                                    (6.0, 0.0)]


def test_cuda_amp_alias(monkeypatch):
    from framework.cuda import amp as cuda_amp
    with pytest.warns(FutureWarning, match="framework.amp.GradScaler\\('cuda', args...\\)"):
        s = cuda_amp.GradScaler(init_scale=8.0, growth_interval=3)
    assert isinstance(s, fw.amp.GradScaler) and s._device == "cuda"
    assert s.get_scale() == 8.0 and s.get_growth_interval() == 3
    assert s.is_enabled() == fw.cuda.is_available()
    monkeypatch.setattr(fw.cuda, "is_available", lambda: False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = fw.amp.GradScaler("cuda")
    assert not s.is_enabled()
    assert any("CUDA is not available.  Disabling." in str(x.message) for x in w)
    assert fw.amp.GradScaler("cpu").is_enabled()


def test_pickle_mid_iteration_refused(device):
    params = _params(fw, device)
    opt = fw.optim.SGD(params, lr=0.1)
    s = fw.amp.GradScaler(device)
    _set_scaled_grads(fw, s, params, _grads(0, {}), device)
    s.unscale_(opt)
    with pytest.raises(AssertionError, match="may only be pickled at the beginning"):
        pickle.dumps(s)


@pytest.mark.parametrize("opt_name", ["Adam", "SGD"])
def test_fused_optimizer_like_torch(device, opt_name):
    """A real fused optimizer (it unscales and skips in its kernels) beside torch's fused
    one on the cpu and beside the unfused path: the same scales and params."""
    def run(T, dev, fused):
        params = _params(T, dev)[::2]                       # the float32 ones
        kw = dict(lr=0.01) if opt_name == "Adam" else dict(lr=0.1, momentum=0.9)
        opt = getattr(T.optim, opt_name)(params, fused=fused, **kw)
        s = T.amp.GradScaler(dev, init_scale=2.0 ** 10, growth_interval=3)
        out = []
        for k in range(10):
            gs = _grads(k, {})
            gs = [gs[0], gs[2]]
            if k in (3, 6):
                gs[1][1, 1] = INF
            _set_scaled_grads(T, s, params, gs, dev)
            if k == 5:
                s.unscale_(opt)
            s.step(opt)
            s.update()
            out.append((s.get_scale(), [_np(p) for p in params]))
        return out

    got, want, plain = run(fw, device, True), run(torch, "cpu", True), run(fw, device, False)
    for g, w, p in zip(got, want, plain):
        assert g[0] == w[0] == p[0]
        for a, b, c in zip(g[1], w[1], p[1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
