"""framework.nn.utils' fusion, memory_format and init submodules against PyTorch's:
fuse_conv_bn_eval / fuse_conv_bn_weights / fuse_linear_bn_eval / fuse_linear_bn_weights
(fused weights equal torch's for the same inputs, fused modules compute conv/linear then
bn in eval, PyTorch's errors), convert_conv2d/3d_weight_memory_format (strides as
torch's), skip_init (shapes, dtypes, device, no initialization run, torch's errors).
Every `device` test runs on cpu and on cuda (Triton's interpreter under TRITON_INTERPRET=1:
tiny shapes)."""
import threading

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
from tests.helpers import assert_close
from tests.nn.common import copy_state, fw_tensor, to_np

torch = pytest.importorskip("torch")
tnn = torch.nn


def _randomize_bn(bn, seed):
    """Running stats and affine parameters that are not the defaults (the defaults make
    the fusion an identity on the scale)."""
    g = torch.Generator().manual_seed(seed)
    n = bn.num_features
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(n, generator=g))
        bn.running_var.copy_(torch.rand(n, generator=g) + 0.5)
        if bn.weight is not None:
            bn.weight.copy_(torch.randn(n, generator=g))
            bn.bias.copy_(torch.randn(n, generator=g))


def _pair(t_cls, f_cls, args, kwargs, device, dtype=torch.float32):
    t = t_cls(*args, **kwargs).to(dtype)
    f = f_cls(*args, **kwargs).to(device=device, dtype=getattr(fw, str(dtype).split(".")[-1]))
    return t, f


CONV_CASES = [
    # (torch conv class, framework conv class, conv args, conv kwargs, bn class, input, transpose)
    ("Conv1d", (3, 4, 3), {}, "BatchNorm1d", (2, 3, 6), False),
    ("Conv2d", (3, 4, 2), dict(padding=1), "BatchNorm2d", (2, 3, 4, 4), False),
    ("Conv2d", (4, 4, 3), dict(groups=2, bias=False), "BatchNorm2d", (1, 4, 4, 5), False),
    ("Conv3d", (2, 3, 2), {}, "BatchNorm3d", (1, 2, 3, 3, 3), False),
    ("ConvTranspose2d", (3, 4, 2), dict(stride=2), "BatchNorm2d", (2, 3, 3, 3), True),
    ("ConvTranspose1d", (3, 2, 3), dict(bias=False), "BatchNorm1d", (2, 3, 4), True),
]


@pytest.mark.parametrize("conv_name,args,kwargs,bn_name,shape,transpose", CONV_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONV_CASES)])
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval(device, conv_name, args, kwargs, bn_name, shape, transpose, affine):
    torch.manual_seed(0)
    out_ch = args[1]
    t_conv, f_conv = _pair(getattr(tnn, conv_name), getattr(nn, conv_name), args, kwargs,
                           device)
    t_bn, f_bn = _pair(getattr(tnn, bn_name), getattr(nn, bn_name), (out_ch,),
                       dict(affine=affine), device)
    _randomize_bn(t_bn, 1)
    copy_state(f_conv, t_conv)
    copy_state(f_bn, t_bn)
    for m in (t_conv, t_bn, f_conv, f_bn):
        m.eval()

    t_fused = tnn.utils.fuse_conv_bn_eval(t_conv, t_bn, transpose=transpose)
    f_fused = nn.utils.fuse_conv_bn_eval(f_conv, f_bn, transpose=transpose)

    # a new module of the conv's class, the conv itself untouched
    assert type(f_fused) is type(f_conv) and f_fused is not f_conv
    assert f_fused.weight is not f_conv.weight
    assert_close(f_conv.weight, to_np(t_conv.weight))
    assert isinstance(f_fused.weight, nn.Parameter) and isinstance(f_fused.bias, nn.Parameter)
    assert f_fused.weight.device == f_conv.weight.device
    assert f_fused.weight.requires_grad and f_fused.bias.requires_grad == t_fused.bias.requires_grad
    # the fused weights are torch's
    assert_close(f_fused.weight, to_np(t_fused.weight), rtol=1e-5, atol=1e-6)
    assert_close(f_fused.bias, to_np(t_fused.bias), rtol=1e-5, atol=1e-6)

    # and the fused conv computes bn(conv(x))
    x = torch.randn(*shape)
    fx = fw_tensor(x, device)
    with fw.no_grad():
        want = f_bn(f_conv(fx))
        got = f_fused(fx)
    assert_close(got, to_np(want), rtol=1e-4, atol=1e-5)
    assert_close(got, to_np(t_bn(t_conv(x))), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("num_features", [4, 1])
def test_fuse_linear_bn_eval(device, bias, num_features):
    torch.manual_seed(0)
    t_lin, f_lin = _pair(tnn.Linear, nn.Linear, (3, 4), dict(bias=bias), device)
    t_bn, f_bn = _pair(tnn.BatchNorm1d, nn.BatchNorm1d, (num_features,), {}, device)
    _randomize_bn(t_bn, 2)
    copy_state(f_lin, t_lin)
    copy_state(f_bn, t_bn)
    for m in (t_lin, t_bn, f_lin, f_bn):
        m.eval()

    t_fused = tnn.utils.fuse_linear_bn_eval(t_lin, t_bn)
    f_fused = nn.utils.fuse_linear_bn_eval(f_lin, f_bn)
    assert type(f_fused) is nn.Linear and f_fused is not f_lin
    # (without a linear bias and with one bn feature, torch's bias has that one element)
    assert tuple(f_fused.weight.shape) == tuple(t_fused.weight.shape) == (4, 3)
    assert tuple(f_fused.bias.shape) == tuple(t_fused.bias.shape)
    assert_close(f_fused.weight, to_np(t_fused.weight), rtol=1e-5, atol=1e-6)
    assert_close(f_fused.bias, to_np(t_fused.bias), rtol=1e-5, atol=1e-6)
    assert f_fused.bias.requires_grad == t_fused.bias.requires_grad

    if num_features == 4:   # BatchNorm1d over the features of a (N, C) batch
        x = torch.randn(5, 3)
        fx = fw_tensor(x, device)
        with fw.no_grad():
            assert_close(f_fused(fx), to_np(f_bn(f_lin(fx))), rtol=1e-4, atol=1e-5)
        assert_close(f_fused(fx), to_np(t_bn(t_lin(x))), rtol=1e-4, atol=1e-5)


def test_fuse_conv_bn_weights_direct(device):
    """The functional forms on plain tensors: None bias/affine, requires_grad flags,
    dtypes kept, transposed layout."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 2, 2))
    rm, rv = rng.standard_normal(4), rng.random(4) + 0.5
    bw, bb = rng.standard_normal(4), rng.standard_normal(4)
    t = {k: torch.tensor(v, dtype=torch.float32) for k, v in
         dict(w=w, rm=rm, rv=rv, bw=bw, bb=bb).items()}
    f = {k: fw.tensor(v, dtype=fw.float32, device=device) for k, v in
         dict(w=w, rm=rm, rv=rv, bw=bw, bb=bb).items()}
    for bn_w, bn_b in ((True, True), (False, False)):
        tw, tb = tnn.utils.fuse_conv_bn_weights(t["w"], None, t["rm"], t["rv"], 1e-3,
                                                t["bw"] if bn_w else None,
                                                t["bb"] if bn_b else None)
        fwt, fb = nn.utils.fuse_conv_bn_weights(f["w"], None, f["rm"], f["rv"], 1e-3,
                                                f["bw"] if bn_w else None,
                                                f["bb"] if bn_b else None)
        assert_close(fwt, to_np(tw), rtol=1e-5, atol=1e-6)
        assert_close(fb, to_np(tb), rtol=1e-5, atol=1e-6)
        # a plain weight does not require grad, nor does the zero bias made for None
        assert fwt.requires_grad is tw.requires_grad is False
        assert fb.requires_grad is tb.requires_grad is False
        assert isinstance(fwt, nn.Parameter) and fwt.dtype is fw.float32

    # transposed: the output channels are dim 1 of the weight
    wt = rng.standard_normal((3, 4, 2))
    tw, tb = tnn.utils.fuse_conv_bn_weights(
        torch.tensor(wt, requires_grad=True), torch.zeros(4, dtype=torch.float64,
                                                          requires_grad=True),
        t["rm"].double(), t["rv"].double(), 1e-5, t["bw"].double(), t["bb"].double(),
        transpose=True)
    fwt, fb = nn.utils.fuse_conv_bn_weights(
        fw.tensor(wt, device=device, requires_grad=True),
        fw.zeros(4, dtype=fw.float64, device=device, requires_grad=True),
        f["rm"].double(), f["rv"].double(), 1e-5, f["bw"].double(), f["bb"].double(),
        transpose=True)
    assert fwt.dtype is fw.float64 and fb.dtype is fw.float64
    assert fwt.requires_grad and fb.requires_grad and fwt.is_leaf
    assert_close(fwt, to_np(tw))
    assert_close(fb, to_np(tb))

    # a float16 conv with float32 batchnorm stats: the results keep the conv's dtype
    wh = fw.tensor(w, dtype=fw.float16, device=device)
    fwt, fb = nn.utils.fuse_conv_bn_weights(wh, None, f["rm"], f["rv"], 1e-5, f["bw"], f["bb"])
    assert fwt.dtype is fw.float16 and fb.dtype is fw.float16


def test_fuse_linear_bn_weights_direct(device):
    rng = np.random.default_rng(1)
    vals = dict(w=rng.standard_normal((4, 3)), b=rng.standard_normal(4),
                rm=rng.standard_normal(4), rv=rng.random(4) + 0.5,
                bw=rng.standard_normal(4), bb=rng.standard_normal(4))
    t = {k: torch.tensor(v, dtype=torch.float32) for k, v in vals.items()}
    f = {k: fw.tensor(v, dtype=fw.float32, device=device) for k, v in vals.items()}
    for with_bias in (True, False):
        tw, tb = tnn.utils.fuse_linear_bn_weights(t["w"], t["b"] if with_bias else None,
                                                  t["rm"], t["rv"], 1e-5, t["bw"], t["bb"])
        fwt, fb = nn.utils.fuse_linear_bn_weights(f["w"], f["b"] if with_bias else None,
                                                  f["rm"], f["rv"], 1e-5, f["bw"], f["bb"])
        assert_close(fwt, to_np(tw), rtol=1e-5, atol=1e-6)
        assert_close(fb, to_np(tb), rtol=1e-5, atol=1e-6)
        assert isinstance(fb, nn.Parameter) and fb.requires_grad is tb.requires_grad


def _errors(lib, name):
    """The message ``lib``'s fusion raises for the bad call ``name``."""
    n = lib.nn
    if name == "conv_training":
        args = (n.Conv2d(2, 3, 1), n.BatchNorm2d(3).eval())
        fn = n.utils.fuse_conv_bn_eval
    elif name == "bn_training":
        args = (n.Conv2d(2, 3, 1).eval(), n.BatchNorm2d(3))
        fn = n.utils.fuse_conv_bn_eval
    elif name == "linear_training":
        args = (n.Linear(2, 3), n.BatchNorm1d(3).eval())
        fn = n.utils.fuse_linear_bn_eval
    elif name == "linear_features":
        args = (n.Linear(2, 3).eval(), n.BatchNorm1d(2).eval())
        fn = n.utils.fuse_linear_bn_eval
    elif name == "conv_no_stats":
        args = (n.Conv2d(2, 3, 1).eval(), n.BatchNorm2d(3, track_running_stats=False).eval())
        fn = n.utils.fuse_conv_bn_eval
    else:
        args = (n.Linear(2, 3).eval(), n.BatchNorm1d(3, track_running_stats=False).eval())
        fn = n.utils.fuse_linear_bn_eval
    with pytest.raises(AssertionError) as e:
        fn(*args)
    return str(e.value)


@pytest.mark.parametrize("name", ["conv_training", "bn_training", "linear_training",
                                  "linear_features", "conv_no_stats", "linear_no_stats"])
def test_fusion_errors(name):
    assert _errors(fw, name) == _errors(torch, name)


# ---- memory_format -----------------------------------------------------------------------

def _strides(lib, net):
    return [tuple(p.stride()) for p in net.parameters()]


def _net(lib):
    n = lib.nn
    return n.Sequential(n.Conv2d(3, 4, 3), n.Sequential(n.ConvTranspose2d(4, 2, 2),
                                                        n.Conv3d(2, 2, 1)),
                        n.Conv2d(2, 1, 1), n.Linear(3, 2))


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_convert_conv2d_weight_memory_format(device, fmt):
    tnet, fnet = _net(torch), _net(fw).to(device)
    copy_state(fnet, tnet)
    params = list(fnet.parameters())
    f_out = nn.utils.convert_conv2d_weight_memory_format(fnet, getattr(fw, fmt))
    t_out = tnn.utils.convert_conv2d_weight_memory_format(tnet, getattr(torch, fmt))
    assert f_out is fnet and t_out is tnet
    assert _strides(fw, fnet) == _strides(torch, tnet)
    assert all(a is b for a, b in zip(params, fnet.parameters()))   # same Parameters
    for fp, tp in zip(fnet.parameters(), tnet.parameters()):
        assert_close(fp, to_np(tp))
        assert fp.device == fw.device(device) or fp.device.type == device
    if fmt == "channels_last":
        assert fnet[0].weight.is_contiguous(memory_format=fw.channels_last)
        assert not fnet[0].weight.is_contiguous()
        # and back
        nn.utils.convert_conv2d_weight_memory_format(fnet, fw.contiguous_format)
        assert fnet[0].weight.is_contiguous()
    x = torch.randn(1, 3, 4, 4)
    with fw.no_grad():
        assert_close(fnet[0](fw_tensor(x, device)), to_np(tnet[0](x)), rtol=1e-4, atol=1e-5)


def test_convert_conv3d_weight_memory_format(device):
    tnet, fnet = _net(torch), _net(fw).to(device)
    copy_state(fnet, tnet)
    nn.utils.convert_conv3d_weight_memory_format(fnet, fw.channels_last_3d)
    tnn.utils.convert_conv3d_weight_memory_format(tnet, torch.channels_last_3d)
    assert _strides(fw, fnet) == _strides(torch, tnet)
    assert fnet[1][1].weight.is_contiguous(memory_format=fw.channels_last_3d)
    assert fnet[0].weight.is_contiguous()   # the 2d convs are left alone


# ---- skip_init ---------------------------------------------------------------------------

class _Custom(nn.Module):
    """Initializes through nn.init, Tensor methods and a generator whose offset shows
    whether anything was drawn."""

    def __init__(self, n, gen=None, device=None, dtype=None):
        super().__init__()
        self.a = nn.Parameter(fw.empty(n, 2, device=device, dtype=dtype))
        self.b = nn.Parameter(fw.empty(n, device=device, dtype=dtype))
        self.register_buffer("c", fw.empty(3, device=device, dtype=dtype))
        nn.init.uniform_(self.a, generator=gen)
        nn.init.orthogonal_(self.a, generator=gen)
        with fw.no_grad():
            self.b.normal_(generator=gen)
            self.c.fill_(7.0)


class _NoDevice(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(fw.zeros(n))


def test_skip_init_builds_without_init(device):
    fill, ortho = fw.Tensor.fill_, nn.init.orthogonal_
    dev = fw.device(device)
    cuda_dev = fw.device("cuda", 0) if device == "cuda" else dev
    gen = fw.random.get_generator(cuda_dev)
    before = gen.get_offset()
    m = nn.utils.skip_init(nn.Linear, 5, 3, device=device, dtype=fw.float64)
    assert gen.get_offset() == before          # no uniform_ drew anything
    assert tuple(m.weight.shape) == (3, 5) and tuple(m.bias.shape) == (3,)
    assert m.weight.dtype is fw.float64 and m.weight.device.type == device
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    nn.Linear(5, 3, device=device)
    assert gen.get_offset() != before          # (the check above can see a draw)

    g = fw.Generator(device=cuda_dev).manual_seed(0)
    m = nn.utils.skip_init(_Custom, 4, gen=g, device=device)
    assert g.get_offset() == 0
    assert tuple(m.a.shape) == (4, 2) and tuple(m.c.shape) == (3,)
    assert m.a.device.type == device and m.c.device.type == device
    _Custom(4, gen=g, device=device)
    assert g.get_offset() > 0
    # afterwards everything initializes again, in this thread too
    m = _Custom(4, device=device)
    assert to_np(m.c).tolist() == [7.0, 7.0, 7.0]
    assert fw.Tensor.fill_ is fill and nn.init.orthogonal_ is ortho


def test_skip_init_defaults_and_modules():
    m = nn.utils.skip_init(nn.Conv2d, 3, 4, kernel_size=3, bias=False)
    assert m.weight.device.type == "cpu" and tuple(m.weight.shape) == (4, 3, 3, 3)
    assert m.bias is None
    bn = nn.utils.skip_init(nn.BatchNorm2d, 6)
    assert tuple(bn.running_mean.shape) == (6,) and tuple(bn.weight.shape) == (6,)
    emb = nn.utils.skip_init(nn.Embedding, 10, 4, padding_idx=0)
    assert tuple(emb.weight.shape) == (10, 4)
    out = emb(fw.tensor([1, 2]))
    assert tuple(out.shape) == (2, 4)


def test_skip_init_restores_after_error():
    class Bad(nn.Module):
        def __init__(self, device=None):
            super().__init__()
            raise ValueError("boom")
    orig = fw.Tensor.fill_
    with pytest.raises(ValueError, match="boom"):
        nn.utils.skip_init(Bad)
    assert fw.Tensor.fill_ is orig
    assert to_np(fw.empty(2).fill_(3.0)).tolist() == [3.0, 3.0]


def test_skip_init_other_threads_unaffected():
    """Another thread that builds a module while skip_init runs still initializes it."""
    started, done = threading.Event(), threading.Event()
    seen = {}

    class Slow(nn.Module):
        def __init__(self, device=None):
            super().__init__()
            self.w = nn.Parameter(fw.empty(3, device=device))
            started.set()
            done.wait(10)
            self.w.data.fill_(1.0)

    def other():
        started.wait(10)
        seen["value"] = to_np(fw.empty(3).fill_(5.0)).tolist()
        done.set()

    th = threading.Thread(target=other)
    th.start()
    nn.utils.skip_init(Slow)
    th.join()
    assert seen["value"] == [5.0, 5.0, 5.0]


def test_skip_init_errors():
    for lib, mod in ((torch, torch.nn), (fw, nn)):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip "
                                               "initialization"):
            mod.utils.skip_init(_NoDevice if lib is fw else type(
                "_NoDevice", (torch.nn.Module,), {"__init__": lambda self, n: None}), 3)
    with pytest.raises(RuntimeError) as want:
        torch.nn.utils.skip_init(int)
    with pytest.raises(RuntimeError) as got:
        nn.utils.skip_init(int)
    assert str(got.value) == str(want.value) == "Expected a Module; got <class 'int'>"


def test_submodules_and_names():
    import framework.nn.utils.fusion as fusion
    import framework.nn.utils.init as uinit
    import framework.nn.utils.memory_format as mf
    assert fusion.fuse_conv_bn_eval is nn.utils.fuse_conv_bn_eval
    assert uinit.skip_init is nn.utils.skip_init
    assert mf.convert_conv3d_weight_memory_format is nn.utils.convert_conv3d_weight_memory_format
    for t_mod, f_mod in ((torch.nn.utils.fusion, fusion), (torch.nn.utils.memory_format, mf)):
        assert sorted(t_mod.__all__) == sorted(f_mod.__all__)
    assert set(torch.nn.utils.__all__) <= set(nn.utils.__all__)
    for name in torch.nn.utils.__all__:
        assert hasattr(nn.utils, name), name
