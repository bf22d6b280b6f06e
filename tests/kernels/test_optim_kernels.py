"""The fused multi-tensor optimizer launchers (framework/_cpu/optim.py over
native/optim.cpp, framework/kernels/optim.py in Triton) against a NumPy float64 model of
the update, on lists of tensors of several sizes: empty, one element, sizes crossing the
cuda BLOCK and the CPU chunk, every float dtype, every option; GradScaler's grad_scale
(grads divided and written back) and found_inf (1: nothing touched) in every launcher."""
import numpy as np
import pytest

import framework as fw
from framework._ops.alloc import backend

SIZES = (0, 1, 7, 1025, 16385)       # 1025 > the Triton BLOCK, 16385 > the CPU chunk
DTYPES = ("float16", "bfloat16", "float32", "float64")
TOL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 2e-6, "float64": 1e-12}


def _arr(t):
    return np.array(t.detach().cpu().float().numpy() if t.dtype in (fw.float16, fw.bfloat16)
                    else t.detach().cpu().numpy(), dtype=np.float64)


def _tensors(rng, dtype, device, positive=False):
    """Tensors of SIZES in ``dtype`` and the float64 values they hold."""
    ts = []
    for n in SIZES:
        a = rng.standard_normal(n)
        if positive:
            a = np.abs(a)
        ts.append(fw.tensor(a, dtype=fw.float64).to(getattr(fw, dtype)).to(device))
    return ts, [_arr(t) for t in ts]


def _close(ts, want, dtype):
    for t, w in zip(ts, want):
        np.testing.assert_allclose(_arr(t), w, rtol=TOL[dtype], atol=TOL[dtype])


def _devices():
    return ["cpu"] + (["cuda"] if fw.cuda.is_available() else [])


@pytest.mark.parametrize("dev", _devices())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opts", [
    dict(weight_decay=0.0, decoupled=False, amsgrad=False, maximize=False),
    dict(weight_decay=0.1, decoupled=False, amsgrad=True, maximize=False),
    dict(weight_decay=0.1, decoupled=True, amsgrad=False, maximize=True),
    dict(weight_decay=0.2, decoupled=True, amsgrad=True, maximize=True),
], ids=["plain", "l2-amsgrad", "decoupled-maximize", "all"])
@pytest.mark.parametrize("given", ["sizes", "counters"])
def test_fused_adam(dev, dtype, opts, given):
    """``given``: the per-tensor step sizes as host floats, or the step counters as float32
    scalar tensors on the device (the fused step's way: the kernel computes the bias
    corrections)."""
    rng = np.random.default_rng(1)
    p, p0 = _tensors(rng, dtype, dev)
    g, g0 = _tensors(rng, dtype, dev)
    m, m0 = _tensors(rng, dtype, dev)
    v, v0 = _tensors(rng, dtype, dev, positive=True)
    x, x0 = _tensors(rng, dtype, dev, positive=True)
    lr, b1, b2, eps = 0.01, 0.9, 0.99, 1e-3
    steps = [1 + i for i in range(len(SIZES))]            # a different step per tensor
    ss = [lr / (1 - b1 ** s) for s in steps]
    bc = [(1 - b2 ** s) ** 0.5 for s in steps]
    wd = opts["weight_decay"]
    kw = {}
    if given == "counters":
        kw = {"steps": [fw.tensor(float(s), device=dev) for s in steps]}
    backend(fw.device(dev)).optim.fused_adam(p, g, m, v, x, [] if kw else ss, [] if kw else bc,
                                             lr, b1, b2, eps, wd, opts["decoupled"],
                                             opts["amsgrad"], opts["maximize"], **kw)
    want_p, want_m, want_v, want_x = [], [], [], []
    for i in range(len(SIZES)):
        pi, gi = p0[i].copy(), (-g0[i] if opts["maximize"] else g0[i])
        if wd:
            if opts["decoupled"]:
                pi = pi * (1 - lr * wd)
            else:
                gi = gi + wd * pi
        mi = b1 * m0[i] + (1 - b1) * gi
        vi = b2 * v0[i] + (1 - b2) * gi * gi
        den = np.maximum(x0[i], vi) if opts["amsgrad"] else vi
        want_x.append(den if opts["amsgrad"] else x0[i])
        want_p.append(pi - ss[i] * mi / (np.sqrt(den) / bc[i] + eps))
        want_m.append(mi)
        want_v.append(vi)
    _close(p, want_p, dtype)
    _close(m, want_m, dtype)
    _close(v, want_v, dtype)
    _close(x, want_x, dtype)      # untouched without amsgrad


@pytest.mark.parametrize("dev", _devices())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opts", [
    dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
         first=False),
    dict(momentum=0.9, dampening=0.0, weight_decay=0.1, nesterov=True, maximize=False,
         first=True),
    dict(momentum=0.9, dampening=0.0, weight_decay=0.1, nesterov=True, maximize=True,
         first=False),
    dict(momentum=0.5, dampening=0.3, weight_decay=0.0, nesterov=False, maximize=True,
         first=False),
], ids=["plain", "nesterov-first", "nesterov-maximize", "dampening"])
def test_fused_sgd(dev, dtype, opts):
    rng = np.random.default_rng(2)
    p, p0 = _tensors(rng, dtype, dev)
    g, g0 = _tensors(rng, dtype, dev)
    b, b0 = _tensors(rng, dtype, dev)
    lr, mom, damp, wd = 0.1, opts["momentum"], opts["dampening"], opts["weight_decay"]
    backend(fw.device(dev)).optim.fused_sgd(p, g, b, lr, mom, damp, wd, opts["nesterov"],
                                            opts["maximize"], opts["first"])
    want_p, want_b = [], []
    for i in range(len(SIZES)):
        gi = -g0[i] if opts["maximize"] else g0[i]
        gi = gi + wd * p0[i]
        bi = b0[i]
        if mom:
            bi = gi if opts["first"] else mom * b0[i] + (1 - damp) * gi
            gi = gi + mom * bi if opts["nesterov"] else bi
        want_b.append(bi)
        want_p.append(p0[i] - lr * gi)
    _close(p, want_p, dtype)
    _close(b, want_b, dtype)     # untouched without momentum


@pytest.mark.parametrize("dev", _devices())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opts", [
    dict(weight_decay=0.0, momentum=0.0, centered=False, maximize=False),
    dict(weight_decay=0.1, momentum=0.0, centered=True, maximize=True),
    dict(weight_decay=0.0, momentum=0.9, centered=False, maximize=True),
    dict(weight_decay=0.1, momentum=0.5, centered=True, maximize=False),
], ids=["plain", "centered-wd-maximize", "momentum-maximize", "all"])
def test_fused_rmsprop(dev, dtype, opts):
    rng = np.random.default_rng(3)
    p, p0 = _tensors(rng, dtype, dev)
    g, g0 = _tensors(rng, dtype, dev)
    v, v0 = _tensors(rng, dtype, dev, positive=True)
    a, a0 = _tensors(rng, dtype, dev)
    b, b0 = _tensors(rng, dtype, dev)
    # keep v - a^2 positive for the centered variant
    a0 = [x * 0.1 for x in a0]
    a = [fw.tensor(x, dtype=fw.float64).to(getattr(fw, dtype)).to(dev) for x in a0]
    a0 = [_arr(t) for t in a]
    v = [fw.tensor(x + 1.0, dtype=fw.float64).to(getattr(fw, dtype)).to(dev) for x in v0]
    v0 = [_arr(t) for t in v]
    lr, alpha, eps = 0.01, 0.9, 1e-3
    wd, mom = opts["weight_decay"], opts["momentum"]
    backend(fw.device(dev)).optim.fused_rmsprop(p, g, v, a, b, lr, alpha, eps, wd, mom,
                                                opts["centered"], opts["maximize"])
    want_p, want_v, want_a, want_b = [], [], [], []
    for i in range(len(SIZES)):
        gi = (-g0[i] if opts["maximize"] else g0[i]) + wd * p0[i]
        vi = alpha * v0[i] + (1 - alpha) * gi * gi
        ai = a0[i] + (1 - alpha) * (gi - a0[i]) if opts["centered"] else a0[i]
        den = np.sqrt(vi - ai * ai if opts["centered"] else vi) + eps
        bi = mom * b0[i] + gi / den if mom else b0[i]
        want_p.append(p0[i] - lr * (bi if mom else gi / den))
        want_v.append(vi)
        want_a.append(ai)
        want_b.append(bi)
    _close(p, want_p, dtype)
    _close(v, want_v, dtype)
    _close(a, want_a, dtype)    # untouched unless centered
    _close(b, want_b, dtype)    # untouched without momentum


@pytest.mark.parametrize("dev", _devices())
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opts", [
    dict(weight_decay=0.0, maximize=False),
    dict(weight_decay=0.1, maximize=True),
], ids=["plain", "wd-maximize"])
@pytest.mark.parametrize("given", ["rates", "counters"])
def test_fused_adagrad(dev, dtype, opts, given):
    rng = np.random.default_rng(4)
    p, p0 = _tensors(rng, dtype, dev)
    g, g0 = _tensors(rng, dtype, dev)
    s_, s0 = _tensors(rng, dtype, dev, positive=True)
    eps, wd = 1e-3, opts["weight_decay"]
    clrs = [0.1 / (1 + i * 0.05) for i in range(len(SIZES))]    # a step per tensor
    kw = {}
    if given == "counters":     # step i + 1, lr 0.1, lr_decay 0.05: the same rates
        kw = {"steps": [fw.tensor(float(i + 1), device=dev) for i in range(len(SIZES))],
              "lr": 0.1, "lr_decay": 0.05}
    backend(fw.device(dev)).optim.fused_adagrad(p, g, s_, [] if kw else clrs, eps, wd,
                                                opts["maximize"], **kw)
    want_p, want_s = [], []
    for i in range(len(SIZES)):
        gi = (-g0[i] if opts["maximize"] else g0[i]) + wd * p0[i]
        si = s0[i] + gi * gi
        want_s.append(si)
        want_p.append(p0[i] - clrs[i] * gi / (np.sqrt(si) + eps))
    _close(p, want_p, dtype)
    _close(s_, want_s, dtype)


def _launch(ops, name, ts, **amp):
    """One launcher over the state lists ``ts`` (params, grads, then state)."""
    p, g, a, b, c = ts
    if name == "adam":
        ops.fused_adam(p, g, a, b, c, [0.1] * len(p), [0.5] * len(p), 0.01, 0.9, 0.99,
                       1e-3, 0.1, False, True, True, **amp)
    elif name == "sgd":
        ops.fused_sgd(p, g, a, 0.1, 0.9, 0.1, 0.1, False, False, False, **amp)
    elif name == "rmsprop":
        ops.fused_rmsprop(p, g, a, b, c, 0.01, 0.9, 1e-3, 0.1, 0.5, False, True, **amp)
    else:
        ops.fused_adagrad(p, g, a, [0.1] * len(p), 1e-3, 0.1, False, **amp)


@pytest.mark.parametrize("dev", _devices())
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["adam", "sgd", "rmsprop", "adagrad"])
def test_grad_scale_and_found_inf(dev, dtype, name):
    """With grad_scale s the launch on grads g * s equals the one on g, and leaves g in
    the grads; found_inf 1 touches nothing, found_inf 0 is no flag."""
    ops = backend(fw.device(dev)).optim
    rng = np.random.default_rng(5)
    lists = [_tensors(rng, dtype, "cpu", positive=i >= 2)[1] for i in range(5)]
    scale = 3.0 if dtype == "float64" else 4.0      # a power of 2: g * s / s is exact

    def run(found, scaled):
        ts = [[fw.tensor(v * (scale if scaled and i == 1 else 1.0)).to(getattr(fw, dtype))
               .to(dev) for v in vals] for i, vals in enumerate(lists)]
        amp = {}
        if scaled:
            amp["grad_scale"] = fw.full((1,), scale, device=dev)
        if found is not None:
            amp["found_inf"] = fw.full((), found, device=dev)
        _launch(ops, name, ts, **amp)
        return ts

    want = run(None, False)
    for found in (None, 0.0):
        got = run(found, True)
        for gl, wl in zip(got, want):        # grads included: unscaled in place
            _close(gl, [_arr(t) for t in wl], dtype)
    got = run(1.0, True)
    for i, (gl, vals) in enumerate(zip(got, lists)):
        _close(gl, [v * scale for v in vals] if i == 1 else vals, dtype)


@pytest.mark.parametrize("dev", _devices())
def test_empty_lists_and_bad_dtype(dev):
    ops = backend(fw.device(dev)).optim
    ops.fused_adam([], [], [], [], [], [], [], 0.1, 0.9, 0.99, 1e-8, 0.0, False, False, False)
    ops.fused_sgd([], [], [], 0.1, 0.0, 0.0, 0.0, False, False, False)
    ops.fused_rmsprop([], [], [], [], [], 0.1, 0.9, 1e-8, 0.0, 0.0, False, False)
    ops.fused_adagrad([], [], [], [], 1e-8, 0.0, False)
    if dev == "cpu":
        t = fw.zeros(3, dtype=fw.int32)
        with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
            ops.fused_sgd([t], [t], [], 0.1, 0.0, 0.0, 0.0, False, False, False)
        with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
            ops.fused_adagrad([t], [t], [t], [0.1], 1e-8, 0.0, False)
        f = fw.zeros(3)
        with pytest.raises(RuntimeError, match="differ in length"):
            ops.fused_sgd([f, f], [f], [], 0.1, 0.0, 0.0, 0.0, False, False, False)
        with pytest.raises(RuntimeError, match="differ in length"):
            ops.fused_rmsprop([f], [f], [f], [], [], 0.1, 0.9, 1e-8, 0.0, 0.0, True, False)
        with pytest.raises(RuntimeError, match="differ in length"):
            ops.fused_adagrad([f], [f], [f], [], 1e-8, 0.0, False)
    with pytest.raises(RuntimeError, match="grad_scale"):
        f = fw.zeros(3, device=dev)
        ops.fused_sgd([f], [f], [], 0.1, 0.0, 0.0, 0.0, False, False, False,
                      grad_scale=fw.ones(2, device=dev))
