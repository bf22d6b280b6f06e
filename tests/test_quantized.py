"""Quantized tensors and post-training quantization against PyTorch (bitwise: fbgemm)."""
import io
import warnings

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def _fbgemm():
    # the x86 engine may pick oneDNN for convolutions on some CPUs: pin fbgemm's numerics
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "fbgemm"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    torch.backends.quantized.engine = old


def _values(rng, n, scale):
    """Random values, exact ties (k + 0.5) * scale, and values far outside the range."""
    x = rng.standard_normal(n).astype(np.float32) * np.float32(scale * 60)
    x[: n // 4] = ((rng.integers(-300, 300, n // 4) + 0.5) * np.float32(scale)).astype(np.float32)
    x[n // 4: n // 4 + 4] = [1e6, -1e6, 0.0, -0.0]
    return x


def _same(fq, tq):
    """The integers, parameters and dequantized values of two quantized tensors agree."""
    np.testing.assert_array_equal(fq.int_repr().numpy(), tq.int_repr().numpy())
    np.testing.assert_array_equal(fq.dequantize().numpy(), tq.dequantize().numpy())
    assert str(fq.dtype).split(".")[-1] == str(tq.dtype).split(".")[-1]
    if tq.qscheme() == torch.per_tensor_affine:
        assert fq.qscheme() is fw.per_tensor_affine
        assert (fq.q_scale(), fq.q_zero_point()) == (tq.q_scale(), tq.q_zero_point())
    else:
        assert fq.qscheme() is fw.per_channel_affine
        assert fq.q_per_channel_axis() == tq.q_per_channel_axis()
        np.testing.assert_array_equal(fq.q_per_channel_scales().numpy(),
                                      tq.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(fq.q_per_channel_zero_points().numpy(),
                                      tq.q_per_channel_zero_points().numpy())


@pytest.mark.parametrize("dtype,zero_points", [("quint8", (0, 131, 255)),
                                               ("qint8", (-128, 3, 127)),
                                               ("qint32", (-7, 0))])
def test_quantize_per_tensor_matches_torch(dtype, zero_points):
    rng = np.random.default_rng(0)
    for zp in zero_points:
        for scale in (0.0371, 0.5, 1e-3):
            x = _values(rng, 203, scale)    # not a multiple of 8: fbgemm's tail loop too
            fq = fw.quantize_per_tensor(fw.tensor(x), scale, zp, getattr(fw, dtype))
            tq = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp,
                                           getattr(torch, dtype))
            _same(fq, tq)
    assert fq.is_quantized and not fw.tensor(x).is_quantized
    assert fq.dtype is getattr(fw, dtype) and fq.shape == (203,)
    # tensor-valued scale and zero point (the scale is read as float32), and lists
    x = rng.standard_normal(10).astype(np.float32)
    fq = fw.quantize_per_tensor(fw.tensor(x), fw.tensor(0.1), fw.tensor(2), fw.quint8)
    _same(fq, torch.quantize_per_tensor(torch.from_numpy(x), torch.tensor(0.1),
                                        torch.tensor(2), torch.quint8))
    fl = fw.quantize_per_tensor([fw.tensor(x), fw.tensor(2 * x)], fw.tensor([0.1, 0.2]),
                                fw.tensor([2, 3]), fw.quint8)
    tl = torch.quantize_per_tensor([torch.from_numpy(x), torch.from_numpy(2 * x)],
                                   torch.tensor([0.1, 0.2]), torch.tensor([2, 3]),
                                   torch.quint8)
    for a, b in zip(fl, tl):
        _same(a, b)
    for a, b in zip(fw.dequantize(fl), torch.dequantize(tl)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_quantize_per_channel_matches_torch():
    rng = np.random.default_rng(1)
    for axis, dtype in ((0, "qint8"), (1, "quint8")):
        scales = rng.uniform(1e-3, 0.3, 5)
        zps = rng.integers(-20, 20, 5) if dtype == "qint8" else rng.integers(0, 255, 5)
        shape = [3, 40, 4]
        shape[axis] = 5
        sc = np.float32(scales).reshape([-1 if d == axis else 1 for d in range(3)])
        x = (rng.standard_normal(shape) * sc * 50).astype(np.float32)
        x.reshape(-1)[:12] = 0.0
        x = np.where(rng.random(shape) < 0.3, (np.round(x / sc) + 0.5) * sc, x).astype(
            np.float32)                                     # ties
        fq = fw.quantize_per_channel(fw.tensor(x), fw.tensor(scales), fw.tensor(zps), axis,
                                     getattr(fw, dtype))
        tq = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales),
                                        torch.from_numpy(zps), axis, getattr(torch, dtype))
        _same(fq, tq)
        _same(fq.clone(), tq.clone())


def test_quantize_per_tensor_dynamic_matches_torch():
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal(37).astype(np.float32) * 3,
              np.abs(rng.standard_normal(16)).astype(np.float32),       # all positive
              -np.abs(rng.standard_normal(16)).astype(np.float32),      # all negative
              np.zeros(5, np.float32), np.full(4, 1e-7, np.float32)]    # tiny range
    for x in inputs:
        for dtype in ("quint8", "qint8"):
            for reduce_range in (False, True):
                fq = fw.quantize_per_tensor_dynamic(fw.tensor(x), getattr(fw, dtype),
                                                    reduce_range)
                tq = torch.quantize_per_tensor_dynamic(torch.from_numpy(x),
                                                       getattr(torch, dtype), reduce_range)
                _same(fq, tq)


def _torch_repr(t):
    return repr(t).replace("torch.", "framework.")


def test_printing_matches_torch():
    x = np.array([[-1.0, 0.0, 1.0, 2.5], [0.3, -0.2, 7.0, 1.25]], np.float32)
    cases = [
        lambda m, a: m.quantize_per_tensor(a, 0.1, 2, m.quint8),
        lambda m, a: m.quantize_per_tensor(a, m.tensor(0.1), m.tensor(2), m.quint8),
        lambda m, a: m.quantize_per_tensor(a[0, 0], 0.1, 2, m.qint32),
        lambda m, a: m.quantize_per_tensor(a[:, :0], 0.5, 0, m.qint8),
        lambda m, a: m.quantize_per_channel(a, m.tensor([0.1, 0.2]), m.tensor([2, 3]), 0,
                                            m.qint8),
        lambda m, a: m.quantize_per_tensor(a.reshape(1, -1).expand(12, 8), 0.05, 0,
                                           m.qint8),
    ]
    for make in cases:
        assert repr(make(fw, fw.tensor(x))) == _torch_repr(make(torch, torch.from_numpy(x)))


def test_views_and_dense_tensor_errors():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    fq = fw.quantize_per_tensor(fw.tensor(x), 0.05, 3, fw.quint8)
    tq = torch.quantize_per_tensor(torch.from_numpy(x), 0.05, 3, torch.quint8)
    for op in (lambda t: t[1], lambda t: t[:, 1:3], lambda t: t.reshape(4, 3),
               lambda t: t.view(-1), lambda t: t.t(), lambda t: t.transpose(0, 1).contiguous(),
               lambda t: t.unsqueeze(0).squeeze(0), lambda t: t.permute(1, 0),
               lambda t: t.flatten(), lambda t: t.clone()):
        _same(op(fq), op(tq))
    # cat/stack: the first tensor's parameters; another's values are requantized to them
    other = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3
    fo = fw.quantize_per_tensor(fw.tensor(other), 0.11, 7, fw.quint8)
    to = torch.quantize_per_tensor(torch.from_numpy(other), 0.11, 7, torch.quint8)
    _same(fw.cat([fq, fq], 1), torch.cat([tq, tq], 1))
    _same(fw.cat([fq, fo]), torch.cat([tq, to]))
    _same(fw.stack([fo, fq], 1), torch.stack([to, tq], 1))
    np.testing.assert_array_equal(fw.cat([fw.tensor(x), fw.tensor(x)]).numpy(),
                                  np.concatenate([x, x]))
    assert fq.equal(fq.clone()) and not fq.equal(fw.quantize_per_tensor(fw.tensor(x), 0.05, 4,
                                                                         fw.quint8))
    # dense tensors: dequantize is the identity, the quantized accessors raise as in torch
    d = fw.tensor(x)
    assert d.dequantize() is d
    for name in ("int_repr", "q_scale", "q_zero_point", "qscheme"):
        with pytest.raises(NotImplementedError, match=f"'aten::{name}' with arguments from "
                                                      "the 'CPU' backend"):
            getattr(d, name)()
    # quantized tensors: ops without a quantized kernel refuse, naming the backend
    with pytest.raises(NotImplementedError, match="'QuantizedCPU' backend"):
        fq + 1
    with pytest.raises(NotImplementedError, match="'QuantizedCPU' backend"):
        fq.sum()
    # a free function reaches QTensor.__torch_function__, which lets the dense op refuse
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with "
                                                  "arguments from the 'QuantizedCPU'"):
        fw.exp(fq)
    with pytest.raises(RuntimeError, match="kPerChannelAffine"):
        fq.q_per_channel_scales()
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
        fq.requires_grad_()


def test_errors_match_torch(device):
    x = fw.tensor([1.0, -2.0], device=device)
    if device == "cuda":
        # as PyTorch's fbgemm/qnnpack backends, quantized tensors live on the CPU
        with pytest.raises(NotImplementedError, match="'aten::quantize_per_tensor' with "
                                                      "arguments from the 'CUDA' backend"):
            fw.quantize_per_tensor(x, 0.1, 0, fw.qint8)
        with pytest.raises(NotImplementedError, match="quantized::linear_dynamic.*'CUDA'"):
            fw.ao.quantization.quantize_dynamic(fw.nn.Linear(2, 2))(x.reshape(1, 2))
        return
    t = torch.tensor([1.0, -2.0])
    bad = [
        lambda m, a: m.quantize_per_tensor(a.long(), 0.1, 0, m.quint8),
        lambda m, a: m.quantize_per_tensor(a.double(), 0.1, 0, m.quint8),
        lambda m, a: m.quantize_per_tensor(a, 0.1, 0, m.float32),
        lambda m, a: m.quantize_per_tensor(a, 0.1, 256, m.quint8),
        lambda m, a: m.quantize_per_tensor(a, 0.1, -129, m.qint8),
        lambda m, a: m.quantize_per_channel(a, m.tensor([0.1]), m.tensor([0]), 1, m.qint8),
        lambda m, a: m.quantize_per_channel(a, m.tensor([0.1, 0.2]), m.tensor([0]), 0,
                                            m.qint8),
        lambda m, a: m.quantize_per_tensor_dynamic(a, m.qint32, False),
    ]
    for make in bad:
        with pytest.raises(RuntimeError) as want:
            make(torch, t)
        with pytest.raises(RuntimeError) as got:
            make(fw, x)
        assert str(got.value) == str(want.value).split("\n")[0].replace("torch.", "framework.")


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(20, 24), lib.nn.ReLU(), lib.nn.Linear(24, 5))


def _copy_params(fm, tm):
    fm.load_state_dict({k: fw.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def test_quantize_dynamic_matches_torch():
    torch.manual_seed(0)
    tm = _mlp(torch)
    fm = _mlp(fw)
    _copy_params(fm, tm)
    tq, fq = torch.ao.quantization, fw.quantization      # the legacy alias too
    assert fq.quantize_dynamic is fw.ao.quantization.quantize_dynamic
    for tspec, fspec in ((None, None),
                         ({torch.nn.Linear: tq.per_channel_dynamic_qconfig},
                          {fw.nn.Linear: fq.per_channel_dynamic_qconfig})):
        tqm = tq.quantize_dynamic(tm, tspec)
        fqm = fq.quantize_dynamic(fm, fspec)
        assert isinstance(fqm[0], fw.ao.nn.quantized.dynamic.Linear)
        assert isinstance(fm[0], fw.nn.Linear)                   # not in place
        assert repr(fqm) == _torch_repr(tqm)
        _same(fqm[0].weight(), tqm[0].weight())
        rng = np.random.default_rng(3)
        for x in (rng.standard_normal((7, 20)) * 2, np.abs(rng.standard_normal((3, 20))),
                  rng.standard_normal((2, 3, 20)) * 40):
            x = x.astype(np.float32)
            np.testing.assert_array_equal(fqm(fw.tensor(x)).numpy(),
                                          tqm(torch.from_numpy(x)).detach().numpy())


class _Stubbed:
    """QuantStub -> body -> DeQuantStub, for either library."""

    @staticmethod
    def build(lib, conv):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.quant = lib.ao.quantization.QuantStub()
                if conv:
                    self.body = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1),
                                                  lib.nn.ReLU(),
                                                  lib.nn.Conv2d(4, 3, 2, stride=2))
                else:
                    self.body = _mlp(lib)
                self.dequant = lib.ao.quantization.DeQuantStub()

            def forward(self, x):
                return self.dequant(self.body(self.quant(x)))
        return M().eval()


@pytest.mark.parametrize("conv,per_channel", [(False, False), (True, True)])
def test_static_quantization_matches_torch(conv, per_channel):
    torch.manual_seed(0)
    tm, fm = _Stubbed.build(torch, conv), _Stubbed.build(fw, conv)
    _copy_params(fm, tm)
    tq, fq = torch.ao.quantization, fw.ao.quantization
    weight = "default_per_channel_weight_observer" if per_channel else "default_weight_observer"
    tm.qconfig = tq.QConfig(activation=tq.default_observer, weight=getattr(tq, weight))
    fm.qconfig = fq.QConfig(activation=fq.default_observer, weight=getattr(fq, weight))
    tp, fp = tq.prepare(tm), fq.prepare(fm)
    rng = np.random.default_rng(4)
    shape = (3, 2, 6, 6) if conv else (10, 20)
    for _ in range(2):
        x = rng.standard_normal(shape).astype(np.float32)
        tp(torch.from_numpy(x))
        fp(fw.tensor(x))
    tc, fc = tq.convert(tp), fq.convert(fp)
    assert repr(fc).split("\n")[1] == _torch_repr(tc).split("\n")[1]   # Quantize(...)
    first = fc.body[0]
    assert first.scale == pytest.approx(tc.body[0].scale, rel=1e-6)    # calibration
    # the converted torch model's state, loaded into ours: identical integer arithmetic
    # (a float conv's rounding may move a calibrated range by an ulp, so not compared)
    buf = io.BytesIO()
    torch.save(tc.state_dict(), buf)
    buf.seek(0)
    fc.load_state_dict(fw.load(buf))
    x = (rng.standard_normal((16,) + shape[1:]) * 1.5).astype(np.float32)
    np.testing.assert_array_equal(fc(fw.tensor(x)).numpy(), tc(torch.from_numpy(x)).numpy())
    xq = fc.quant(fw.tensor(x))
    _same(fc.body(xq), tc.body(tc.quant(torch.from_numpy(x))))


def test_save_load_round_trip(tmp_path):
    x = np.linspace(-2, 3, 12, dtype=np.float32).reshape(3, 4)
    fq = fw.quantize_per_tensor(fw.tensor(x), 0.05, 3, fw.quint8)
    fc = fw.quantize_per_channel(fw.tensor(x), fw.tensor([0.1, 0.2, 0.3]),
                                 fw.tensor([0, 1, 2]), 0, fw.qint8)
    fw.save({"q": fq, "c": fc, "d": fw.qint8}, tmp_path / "f.pt")
    back = fw.load(tmp_path / "f.pt")           # weights_only: quantized tensors are data
    assert back["d"] is fw.qint8
    assert back["q"].equal(fq) and back["c"].equal(fc)
    # PyTorch reads our file and we read its
    theirs = torch.load(tmp_path / "f.pt")
    _same(fq, theirs["q"])
    _same(fc, theirs["c"])
    torch.save({"q": theirs["q"], "c": theirs["c"]}, tmp_path / "t.pt")
    ours = fw.load(tmp_path / "t.pt")
    assert ours["q"].equal(fq) and ours["c"].equal(fc)
    # a dynamically quantized model's state dict
    torch.manual_seed(1)
    tm = _mlp(torch)
    fm = _mlp(fw)
    _copy_params(fm, tm)
    fqm = fw.ao.quantization.quantize_dynamic(fm)
    fw.save(fqm.state_dict(), tmp_path / "m.pt")
    other = fw.ao.quantization.quantize_dynamic(_mlp(fw))
    other.load_state_dict(fw.load(tmp_path / "m.pt"))
    tqm = torch.ao.quantization.quantize_dynamic(_mlp(torch))
    tqm.load_state_dict(torch.load(tmp_path / "m.pt"))
    x = np.random.default_rng(5).standard_normal((4, 20)).astype(np.float32)
    np.testing.assert_array_equal(other(fw.tensor(x)).numpy(), fqm(fw.tensor(x)).numpy())
    np.testing.assert_array_equal(other(fw.tensor(x)).numpy(),
                                  tqm(torch.from_numpy(x)).detach().numpy())
