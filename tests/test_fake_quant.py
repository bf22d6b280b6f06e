"""Fake quantization ops, observers and FakeQuantize modules against PyTorch."""
import numpy as np
import pytest

import framework as fw
import framework.ao.quantization as fq

torch = pytest.importorskip("torch")
tq = torch.ao.quantization


def _np(t):
    return t.detach().cpu().numpy()


def _pair(a, device, requires_grad=False):
    a = np.ascontiguousarray(a, dtype=np.float32)
    x = fw.tensor(a, device=device, requires_grad=requires_grad)
    return x, torch.tensor(a, requires_grad=requires_grad)


def _inputs(n=300, scale=0.1):
    # random values, values far outside the range, and exact ties (x * (1 / scale) = k + .5)
    rnd = np.random.randn(n).astype(np.float32) * 8
    ties = (np.arange(-20, 20, dtype=np.float32) + 0.5) * np.float32(0.25)
    return rnd, ties


def _same(a, b):
    np.testing.assert_array_equal(_np(a), b.detach().numpy())


@pytest.mark.parametrize("scale,zp,qmin,qmax", [(0.25, 3, 0, 255), (0.0371, 0, -128, 127),
                                                  (0.1, 10, 0, 15)])
def test_per_tensor_values_and_grad(device, scale, zp, qmin, qmax):
    rnd, ties = _inputs()
    for a in (rnd, ties, ties * np.float32(scale / 0.25)):
        x, tx = _pair(a, device, requires_grad=True)
        y = fw.fake_quantize_per_tensor_affine(x, scale, zp, qmin, qmax)
        ty = torch.fake_quantize_per_tensor_affine(tx, scale, zp, qmin, qmax)
        _same(y, ty)
        g = np.random.randn(*a.shape).astype(np.float32)
        y.backward(fw.tensor(g, device=device))
        ty.backward(torch.tensor(g))
        _same(x.grad, tx.grad)
        assert 0 < (_np(x.grad) == 0).sum() < a.size or a is not rnd


def test_per_tensor_tensor_qparams(device):
    rnd, ties = _inputs()
    a = np.concatenate([rnd, ties])
    x, tx = _pair(a, device, requires_grad=True)
    s, z = fw.tensor([0.25], device=device), fw.tensor([7], dtype=fw.int32, device=device)
    y = fw.fake_quantize_per_tensor_affine(x, s, z, 0, 63)
    ty = torch.fake_quantize_per_tensor_affine(tx, torch.tensor([0.25]),
                                               torch.tensor([7], dtype=torch.int32), 0, 63)
    _same(y, ty)
    y.sum().backward()
    ty.sum().backward()
    _same(x.grad, tx.grad)


@pytest.mark.parametrize("axis", [0, 1])
def test_per_channel_values_and_grad(device, axis):
    a = (np.random.randn(5, 6, 3) * 4).astype(np.float32)
    a[:, :, 0] = (np.arange(5 * 6).reshape(5, 6) - 15 + 0.5) * 0.25   # ties
    n = a.shape[axis]
    scale = np.random.uniform(0.02, 0.3, n).astype(np.float32)
    scale[0] = 0.25
    zp = np.random.randint(-3, 4, n).astype(np.int32)
    x, tx = _pair(a, device, requires_grad=True)
    y = fw.fake_quantize_per_channel_affine(x, fw.tensor(scale, device=device),
                                            fw.tensor(zp, device=device), axis, -8, 7)
    ty = torch.fake_quantize_per_channel_affine(tx, torch.tensor(scale), torch.tensor(zp),
                                                axis, -8, 7)
    _same(y, ty)
    g = np.random.randn(*a.shape).astype(np.float32)
    y.backward(fw.tensor(g, device=device))
    ty.backward(torch.tensor(g))
    _same(x.grad, tx.grad)


def test_per_channel_float_zero_point(device):
    a = np.array([[0.049999, 0.05, 0.15, 0.25, 0.26, -3.0, 30.0]], np.float32).T
    x, tx = _pair(a, device)
    s = np.full(7, 0.1, np.float32)
    zp = np.array([0.5, 0.4, 0.5, 0.5, 1.6, 0.2, 0.7], np.float32)
    y = fw.fake_quantize_per_channel_affine(x, fw.tensor(s, device=device),
                                            fw.tensor(zp, device=device), 0, 0, 255)
    ty = torch.fake_quantize_per_channel_affine(tx, torch.tensor(s), torch.tensor(zp), 0, 0, 255)
    _same(y, ty)


def test_learnable_per_tensor(device):
    rnd, ties = _inputs(200, 0.25)
    a = np.concatenate([rnd, ties])
    x, tx = _pair(a, device, requires_grad=True)
    s, ts = _pair([0.0371], device, requires_grad=True)
    z, tz = _pair([2.4], device, requires_grad=True)
    y = fw._fake_quantize_learnable_per_tensor_affine(x, s, z, -16, 15, 0.5)
    ty = torch._fake_quantize_learnable_per_tensor_affine(tx, ts, tz, -16, 15, 0.5)
    _same(y, ty)
    g = np.random.randn(a.size).astype(np.float32)
    y.backward(fw.tensor(g, device=device))
    ty.backward(torch.tensor(g))
    _same(x.grad, tx.grad)
    np.testing.assert_allclose(_np(s.grad), ts.grad.numpy(), rtol=1e-4)
    np.testing.assert_allclose(_np(z.grad), tz.grad.numpy(), rtol=1e-4)


def test_op_errors():
    x, tx = _pair(np.zeros((4, 3)), "cpu")
    with pytest.raises(RuntimeError, match="`zero_point` must be between"):
        fw.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255)
    with pytest.raises(RuntimeError, match="`quant_min` should be less than"):
        fw.fake_quantize_per_tensor_affine(x, 0.1, 0, 5, 3)
    s = fw.tensor([0.1] * 4)
    with pytest.raises(RuntimeError, match="Zero-point must be Int32, Float or Half, found Long"):
        fw.fake_quantize_per_channel_affine(x, s, fw.tensor([0] * 4), 0, 0, 255)
    with pytest.raises(RuntimeError, match="not consistent with input tensor"):
        fw.fake_quantize_per_channel_affine(x, s, fw.tensor([0] * 4, dtype=fw.int32), 1, 0, 255)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fw.fake_quantize_per_channel_affine(x, s, fw.tensor([0] * 4, dtype=fw.int32), 2, 0, 255)


def _kw(kwargs, lib):
    # the same observer arguments for both libraries (dtype and qscheme by name)
    return {k: (getattr(lib, v) if k in ("dtype", "qscheme") else v) for k, v in kwargs.items()}


_OBSERVERS = [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", dict(dtype="qint8", qscheme="per_tensor_symmetric")),
    ("MinMaxObserver", dict(reduce_range=True)),
    ("MinMaxObserver", dict(quant_min=0, quant_max=15, qscheme="per_tensor_symmetric")),
    ("MovingAverageMinMaxObserver", dict(averaging_constant=0.3)),
    ("MovingAverageMinMaxObserver", dict(dtype="qint8", qscheme="per_tensor_symmetric",
                                         reduce_range=True)),
    ("PerChannelMinMaxObserver", dict(ch_axis=1)),
    ("PerChannelMinMaxObserver", dict(ch_axis=0, dtype="qint8",
                                      qscheme="per_channel_symmetric")),
    ("MovingAveragePerChannelMinMaxObserver", dict(averaging_constant=0.5, ch_axis=1)),
    ("MovingAveragePerChannelMinMaxObserver", dict(ch_axis=0, qscheme="per_channel_symmetric")),
]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name,kwargs", _OBSERVERS)
def test_observers(device, name, kwargs):
    obs = getattr(fq, name)(**_kw(kwargs, fw)).to(device)
    tobs = getattr(tq, name)(**_kw(kwargs, torch))
    for i in range(4):
        # all-positive batches too: the range must still include zero
        a = (np.random.randn(4, 3, 2) * (i + 1) + (3 if i == 1 else 0)).astype(np.float32)
        x, tx = _pair(a, device)
        assert obs(x) is x
        tobs(tx)
    np.testing.assert_allclose(_np(obs.min_val), tobs.min_val.numpy(), rtol=1e-6)
    np.testing.assert_allclose(_np(obs.max_val), tobs.max_val.numpy(), rtol=1e-6)
    assert (obs.quant_min, obs.quant_max) == (tobs.quant_min, tobs.quant_max)
    s, z = obs.calculate_qparams()
    ts, tz = tobs.calculate_qparams()
    assert s.dtype == fw.float32 and tuple(s.shape) == tuple(ts.shape)
    np.testing.assert_allclose(_np(s), ts.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(_np(z), tz.numpy())


def test_observer_defaults_before_run():
    with pytest.warns(UserWarning, match="must run observer"):
        s, z = fq.MinMaxObserver().calculate_qparams()
    assert _np(s).tolist() == [1.0] and _np(z).tolist() == [0]
    # a constant zero input: the scale is clamped at eps
    for name in ("MinMaxObserver", "PerChannelMinMaxObserver"):
        obs, tobs = getattr(fq, name)(), getattr(tq, name)()
        obs(fw.zeros(2, 3)), tobs(torch.zeros(2, 3))
        np.testing.assert_array_equal(_np(obs.calculate_qparams()[0]),
                                      tobs.calculate_qparams()[0].numpy())
    with pytest.raises(NotImplementedError, match="Cannot reduce range for symmetric"):
        fq.MinMaxObserver(qscheme=fw.per_tensor_symmetric, reduce_range=True)


def _qat_models(device, kind):
    rng = np.random.RandomState(1)
    w = (rng.randn(3, 5) * 0.5).astype(np.float32)
    b = (rng.randn(3) * 0.1).astype(np.float32)
    lin, tlin = fw.nn.Linear(5, 3), torch.nn.Linear(5, 3)
    with fw.no_grad():
        lin.weight.copy_(fw.tensor(w)), lin.bias.copy_(fw.tensor(b))
    with torch.no_grad():
        tlin.weight.copy_(torch.tensor(w)), tlin.bias.copy_(torch.tensor(b))
    if kind.startswith("fused"):
        backend = kind.split("_")[1]
        q, tqc = fq.get_default_qat_qconfig(backend), tq.get_default_qat_qconfig(backend)
        mods = (q.weight(), q.activation())
        tmods = (tqc.weight(), tqc.activation())
    else:
        name = ("default_per_channel_weight_fake_quant" if kind == "per_channel" else
                "default_weight_fake_quant")
        mods = (getattr(fq, name)(), fq.default_fake_quant())
        tmods = (getattr(tq, name)(), tq.default_fake_quant())
    return (lin.to(device),) + tuple(m.to(device) for m in mods), (tlin,) + tmods


@pytest.mark.parametrize("kind", ["per_tensor", "per_channel", "fused_x86", "fused_qnnpack"])
def test_qat_loop(device, kind):
    (lin, wq, aq), (tlin, twq, taq) = _qat_models(device, kind)
    opt = fw.optim.SGD(lin.parameters(), lr=0.5)
    topt = torch.optim.SGD(tlin.parameters(), lr=0.5)
    rng = np.random.RandomState(2)
    for step in range(3):
        a = rng.randn(8, 5).astype(np.float32)
        t = rng.randn(8, 3).astype(np.float32)
        x, tx = _pair(a, device)
        y = aq(fw.nn.functional.linear(x, wq(lin.weight), lin.bias))
        ty = taq(torch.nn.functional.linear(tx, twq(tlin.weight), tlin.bias))
        loss = ((y - fw.tensor(t, device=device)) ** 2).mean()
        tloss = ((ty - torch.tensor(t)) ** 2).mean()
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-5)
        opt.zero_grad(), topt.zero_grad()
        loss.backward(), tloss.backward()
        np.testing.assert_allclose(_np(lin.weight.grad), tlin.weight.grad.numpy(),
                                   rtol=1e-4, atol=1e-6)
        opt.step(), topt.step()
    for m, tm in ((wq, twq), (aq, taq)):
        sd, tsd = m.state_dict(), tm.state_dict()
        assert list(sd) == list(tsd)
        for k in sd:
            assert str(sd[k].dtype).split(".")[-1] == str(tsd[k].dtype).split(".")[-1], k
            np.testing.assert_allclose(_np(sd[k]), tsd[k].numpy(), rtol=1e-5, err_msg=k)


def test_fake_quantize_switches_and_state_dict(device):
    m = fq.FakeQuantize(quant_min=0, quant_max=15).to(device)
    x, _ = _pair(np.linspace(-1, 2, 11), device)
    m.disable_fake_quant()
    assert m(x) is x and m.activation_post_process.min_val.item() == -1
    m.enable_fake_quant()
    m.disable_observer()
    y = m(fw.tensor([5.0, -5.0], device=device))
    assert m.activation_post_process.max_val.item() == 2
    s, z = m.scale.item(), m.zero_point.item()
    assert _np(y).tolist() == pytest.approx([(15 - z) * s, (0 - z) * s])
    pc = fq.default_per_channel_weight_fake_quant().to(device)
    pc(fw.randn(4, 3, device=device))
    fresh = fq.default_per_channel_weight_fake_quant().to(device)
    fresh.load_state_dict(pc.state_dict())
    assert tuple(fresh.scale.shape) == (4,)
    np.testing.assert_array_equal(_np(fresh.scale), _np(pc.scale))
    np.testing.assert_array_equal(_np(fresh.activation_post_process.min_val),
                                  _np(pc.activation_post_process.min_val))
    model = fw.nn.Sequential(fq.FakeQuantize(), fw.nn.ReLU())
    model.apply(fq.disable_observer)
    assert model[0].observer_enabled.tolist() == [0]


def test_qconfig_and_stubs():
    for backend in ("x86", "fbgemm", "qnnpack", "onednn"):
        for version in (0, 1):
            q, tqc = fq.get_default_qat_qconfig(backend, version), \
                tq.get_default_qat_qconfig(backend, version)
            for f, tf in ((q.activation, tqc.activation), (q.weight, tqc.weight)):
                m, tm = f(), tf()
                assert type(m).__name__ == type(tm).__name__
                assert (m.quant_min, m.quant_max, m.ch_axis) == \
                    (tm.quant_min, tm.quant_max, tm.ch_axis)
                assert repr(m.qscheme).split(".")[-1] == repr(tm.qscheme).split(".")[-1]
                assert type(m.activation_post_process).__name__ == \
                    type(tm.activation_post_process).__name__
    m = fq.default_fused_per_channel_wt_fake_quant()
    tm = tq.default_fused_per_channel_wt_fake_quant()
    m(fw.tensor([[1.0, -2.0], [0.5, 3.0]])), tm(torch.tensor([[1.0, -2.0], [0.5, 3.0]]))
    sd, tsd = m.state_dict(), tm.state_dict()
    assert list(sd) == list(tsd)
    for k in sd:
        assert str(sd[k].dtype).split(".")[-1] == str(tsd[k].dtype).split(".")[-1], k
        np.testing.assert_allclose(_np(sd[k]), tsd[k].numpy(), rtol=1e-6, err_msg=k)
    with pytest.raises(AssertionError, match="not supported"):
        fq.get_default_qat_qconfig("cuda")
    with pytest.raises(ValueError, match="observer instance"):
        fq.QConfig(activation=fq.FakeQuantize(), weight=fq.default_weight_fake_quant)
    x = fw.randn(3)
    assert fq.QuantStub()(x) is x and fq.DeQuantStub()(x) is x
    with pytest.raises(NotImplementedError, match="no quantized"):
        fq.prepare_qat(fw.nn.Linear(2, 2))
