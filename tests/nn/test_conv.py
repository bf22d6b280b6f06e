"""Convolutions against PyTorch: conv1d/2d/3d and conv_transpose1d/2d/3d (functional and
modules) for each option (stride, padding incl. 'same'/'valid' and even kernels, dilation,
groups incl. depthwise, output_padding, padding modes, output_size), odd sizes, batch 1,
0-size batch, unbatched inputs, 1x1 kernels (no im2col), float64, 16-bit and integer
dtypes; forward values, input, weight and bias gradients, double backward; init, repr,
state_dict; PyTorch's errors for bad input."""
import math
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# (function, input shape, weight shape, bias, kwargs). The batch is folded into one GEMM
# (framework/_ops/conv.py) for batched convolutions with im2col, 1x1 ones marked "fold" and
# transposed ones marked "fold"; the others take a GEMM per sample, the weight broadcast.
CASES = [
    ("conv1d", (2, 4, 9), (6, 4, 3), True, {}),
    ("conv1d", (1, 4, 10), (6, 2, 3), False, dict(stride=2, padding=1, dilation=2, groups=2)),
    ("conv1d", (3, 4, 7), (4, 1, 3), True, dict(groups=4, padding="same")),     # depthwise
    ("conv1d", (2, 3, 8), (5, 3, 4), True, dict(padding="same", dilation=1)),   # even kernel
    ("conv1d", (2, 3, 8), (5, 3, 2), True, dict(padding="valid", stride=3)),
    ("conv1d", (3, 7), (5, 3, 3), True, dict(padding=2)),                       # unbatched
    ("conv1d", (2, 4, 5), (6, 4, 1), True, {}),                                 # 1x1
    ("conv2d", (2, 3, 7, 6), (5, 3, 3, 3), True, {}),
    ("conv2d", (2, 4, 7, 6), (6, 2, 3, 2), True,
     dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
    ("conv2d", (1, 3, 6, 7), (4, 3, 4, 3), False, dict(padding="same", dilation=(1, 2))),
    ("conv2d", (2, 4, 5, 5), (4, 1, 3, 3), True, dict(groups=4, stride=2, padding=1)),
    ("conv2d", (2, 4, 5, 3), (6, 2, 1, 1), True, dict(groups=2)),               # 1x1 groups
    ("conv2d", (2, 4, 5, 3), (6, 4, 1, 1), True, dict(stride=2)),               # 1x1 strided
    ("conv2d", (3, 6, 5), (2, 3, 2, 3), True, dict(padding=(0, 1))),            # unbatched
    ("conv2d", (0, 3, 5, 5), (4, 3, 3, 3), True, dict(padding=1)),              # 0-size batch
    ("conv2d", (2, 3, 5, 5), (4, 3, 5, 5), True, {}),                           # 1x1 output
    ("conv2d", (3, 8, 4, 4), (6, 4, 3, 3), True, dict(stride=2, padding=1, groups=2)),
    ("conv2d", (2, 8, 2, 1), (4, 8, 1, 1), True, {}),                           # 1x1, fold
    ("conv3d", (2, 2, 4, 5, 3), (3, 2, 2, 3, 2), True, dict(padding=1)),
    ("conv3d", (2, 4, 3, 3, 3), (4, 2, 2, 2, 2), True, dict(stride=2, groups=2)),
    ("conv3d", (1, 4, 5, 4, 5), (4, 2, 3, 2, 2), False,
     dict(stride=(2, 1, 2), dilation=(1, 2, 1), groups=2, padding=(1, 0, 1))),
    ("conv3d", (2, 4, 4, 3), (2, 2, 2, 2, 2), True, dict(padding="same")),      # unbatched
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), True, {}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), True,
     dict(stride=1, padding=1, output_padding=1, dilation=2)),
    ("conv_transpose1d", (4, 6), (4, 2, 2), False, dict(stride=3, groups=2, output_padding=2)),
    ("conv_transpose2d", (2, 4, 5, 4), (4, 3, 3, 2), True,
     dict(stride=2, padding=1, output_padding=1, groups=2)),
    ("conv_transpose2d", (1, 3, 4, 5), (3, 2, 3, 3), True,
     dict(stride=(1, 2), padding=(2, 0), dilation=(2, 1), output_padding=(1, 1))),
    ("conv_transpose2d", (2, 4, 3, 3), (4, 1, 3, 3), True, dict(groups=4, stride=2)),
    ("conv_transpose2d", (4, 5, 4), (4, 3, 1, 1), True, {}),                    # 1x1, unbatched
    ("conv_transpose2d", (2, 4, 3, 2), (4, 3, 1, 1), True, dict(stride=2)),     # 1x1 strided
    ("conv_transpose2d", (0, 3, 4, 4), (3, 2, 2, 2), True, dict(stride=2)),     # 0-size batch
    ("conv_transpose1d", (3, 4, 2), (4, 5, 3), True, dict(stride=2)),          # fold
    ("conv_transpose2d", (3, 4, 2, 2), (4, 6, 3, 3), True,
     dict(stride=2, groups=2, padding=1, output_padding=1)),                     # fold
    ("conv_transpose2d", (2, 4, 1, 2), (4, 8, 1, 1), False, {}),                # 1x1, fold
    ("conv_transpose3d", (1, 2, 3, 2, 3), (2, 2, 2, 2, 2), True, dict(stride=(1, 2, 2))),
    ("conv_transpose3d", (2, 4, 2, 3, 2), (4, 1, 3, 2, 2), False,
     dict(padding=1, output_padding=(0, 1, 1), stride=2, groups=2)),
]



def _run(case, device, dtype=np.float32, tol=None):
    name, xs, ws, has_bias, kw = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    out_ch = ws[0] if "transpose" not in name else ws[1] * kw.get("groups", 1)
    b = rng.standard_normal(out_ch).astype(dtype) if has_bias else None
    tt = [torch.tensor(a, requires_grad=True) if a is not None else None for a in (x, w, b)]
    ff = [fw.tensor(a, device=device).requires_grad_() if a is not None else None
          for a in (x, w, b)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to = getattr(TF, name)(*tt, **kw)
        fo = getattr(F, name)(*ff, **kw)
    assert tuple(fo.shape) == tuple(to.shape)
    assert fo.device.type == device
    tol = tol or (dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else
                  dict(rtol=1e-10, atol=1e-10))
    assert_close(fo, to_np(to), **tol)
    g = rng.standard_normal(tuple(to.shape)).astype(dtype)
    (to * torch.tensor(g)).sum().backward()
    (fo * fw.tensor(g, device=device)).sum().backward()
    for t, f in zip(tt, ff):
        if t is not None:
            assert f.grad is not None
            assert_close(f.grad, to_np(t.grad), **tol)


@pytest.mark.parametrize("i", range(len(CASES)), ids=lambda i: f"{CASES[i][0]}-{i}")
def test_functional(device, i):
    _run(CASES[i], device)


@pytest.mark.parametrize("i", [1, 3, 8, 9, 16, 17, 21, 24, 27, 33],
                         ids=lambda i: f"{CASES[i][0]}-{i}")
def test_functional_float64(i):
    _run(CASES[i], "cpu", np.float64)


def test_top_level_names():
    """torch.conv2d and friends are the functional forms, as in PyTorch."""
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d"):
        assert getattr(fw, name) is getattr(F, name)


def test_double_backward():
    """The derivatives are recorded ops (GEMM, im2col/col2im): second derivatives match."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((3, 3, 3, 3))
    cases = [("conv2d", dict(stride=2, padding=1)),
             ("conv_transpose2d", dict(stride=2, padding=1, output_padding=1))]
    for name, kw in cases:
        res = []
        for lib, fn in ((torch, TF), (fw, F)):
            tx = lib.tensor(x, requires_grad=True)
            tw = lib.tensor(w, requires_grad=True)
            y = getattr(fn, name)(tx, tw, **kw)
            gx, gw = lib.autograd.grad((y * y).sum(), (tx, tw), create_graph=True)
            ggx, ggw = lib.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (tx, tw))
            res.append([gx, gw, ggx, ggw])
        for ta, fb in zip(*res):
            assert_close(fb, to_np(ta), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision(device, dtype):
    rng = np.random.default_rng(2)
    x = rng.integers(-3, 4, (2, 3, 5, 5)).astype(np.float32)
    w = rng.integers(-2, 3, (4, 3, 3, 3)).astype(np.float32)
    td, fd = getattr(torch, dtype), getattr(fw, dtype)
    for name, wt, kw in (("conv2d", w, dict(padding=1)),
                         ("conv_transpose2d", w.transpose(1, 0, 2, 3), dict(stride=2))):
        to = getattr(TF, name)(torch.tensor(x).to(td), torch.tensor(wt).to(td), **kw)
        fo = getattr(F, name)(fw.tensor(x, device=device).to(fd),
                              fw.tensor(wt, device=device).to(fd), **kw)
        assert fo.dtype is fd
        # small integers: every partial sum is exact
        assert_close(fo.float(), to_np(to.float()))


def test_integer_dtypes():
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, (2, 3, 5, 5))
    w = rng.integers(-2, 3, (4, 3, 3, 3))
    for dt in ("int64", "int32"):
        td = getattr(torch, dt)
        to = TF.conv2d(torch.tensor(x).to(td), torch.tensor(w).to(td), stride=2, padding=1)
        fo = F.conv2d(fw.tensor(x, dtype=getattr(fw, dt)), fw.tensor(w, dtype=getattr(fw, dt)),
                      stride=2, padding=1)
        assert fo.dtype is getattr(fw, dt)
        np.testing.assert_array_equal(to_np(fo), to_np(to))


def test_bool_refused():
    x = fw.ones((1, 2, 3, 3), dtype=fw.bool)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        F.conv2d(x, fw.ones((1, 2, 2, 2), dtype=fw.bool))
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        F.conv_transpose2d(x, fw.ones((2, 1, 2, 2), dtype=fw.bool))


def test_zero_in_channels(device):
    """PyTorch returns an empty (N, 0, *out) result when the input has no channels."""
    for name, xs, ws, kw in (("conv2d", (2, 0, 5, 5), (4, 0, 3, 3), dict(padding=2)),
                             ("conv1d", (0, 5), (4, 0, 3), {})):
        x = fw.zeros(xs, requires_grad=True, device=device)
        w = fw.zeros(ws, requires_grad=True, device=device)
        b = fw.ones(4, requires_grad=True, device=device)
        y = getattr(F, name)(x, w, b, **kw)
        ty = getattr(TF, name)(torch.zeros(xs), torch.zeros(ws), torch.ones(4), **kw)
        assert tuple(y.shape) == tuple(ty.shape)
        y.sum().backward()
        assert tuple(x.grad.shape) == xs
        assert_close(w.grad, np.zeros(ws, np.float32))


def test_same_padding_warns_once_for_even_kernels():
    import framework._ops.conv as C
    C._SAME_WARNED.clear()
    x, w = fw.zeros((1, 1, 5)), fw.zeros((1, 1, 4))
    with pytest.warns(UserWarning, match="even kernel lengths and odd dilation"):
        F.conv1d(x, w, padding="same")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.conv1d(x, w, padding="same")          # once per process, as PyTorch's warn-once
        F.conv1d(x, fw.zeros((1, 1, 3)), padding="same")


# ---- errors --------------------------------------------------------------------------------

def _same_error(name, x_shape, w_shape, bias_shape=None, x_dtype="float32", w_dtype="float32",
                b_dtype="float32", **kw):
    def call(lib, fn):
        x = lib.zeros(x_shape, dtype=getattr(lib, x_dtype))
        w = lib.zeros(w_shape, dtype=getattr(lib, w_dtype))
        b = lib.zeros(bias_shape, dtype=getattr(lib, b_dtype)) if bias_shape else None
        return getattr(fn, name)(x, w, b, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as te:
            call(torch, TF)
        with pytest.raises(type(te.value)) as fe:
            call(fw, F)
    assert str(fe.value) == str(te.value)


BAD = [
    ("conv2d", (2, 4, 5, 5), (4, 3, 3, 3), None, {}),
    ("conv2d", (4, 5, 5), (4, 3, 3, 3), None, {}),
    ("conv2d", (2, 3, 5), (4, 3, 3, 3), None, {}),
    ("conv2d", (2, 3, 5, 5, 5), (4, 3, 3, 3), None, {}),
    ("conv1d", (2, 3, 5, 5), (4, 3, 3), None, {}),
    ("conv3d", (2, 3, 5, 5), (4, 3, 3, 3, 3), None, {}),
    ("conv2d", (2, 3, 2, 2), (4, 3, 3, 3), None, {}),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(groups=2)),
    ("conv2d", (2, 6, 5, 5), (3, 3, 3, 3), None, dict(groups=2)),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), (3,), {}),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), (4, 1), {}),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(stride=0)),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(padding=-1)),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(padding=(1, -1))),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(dilation=-1)),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(padding="same", stride=2)),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(padding="foo")),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(groups=0)),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3), None, {}),
    ("conv2d", (2, 3, 5, 5), (4, 3, 1, 1), None, dict(padding="same", stride=(1, 1, 1))),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(stride=(1, 1, 1))),
    ("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), None, dict(dilation=(1, 1, 1))),
    ("conv2d", (2, 3, 5, 5), (0, 3, 3, 3), None, {}),
    ("conv2d", (1, 2, 0, 3), (2, 2, 1, 1), None, dict(padding=1)),
    ("conv1d", (1, 2, 3), (2, 2, 1, 1), None, {}),
    ("conv1d", (1, 2, 3), (2, 2), None, {}),
    ("conv_transpose2d", (2, 3, 5, 5), (3, 4, 3, 3), None, dict(output_padding=2, stride=2)),
    ("conv_transpose1d", (2, 3, 5), (3, 4, 3), None, dict(output_padding=2, stride=2)),
    ("conv_transpose3d", (1, 2, 3, 3, 3), (2, 1, 2, 2, 2), None,
     dict(output_padding=2, stride=2)),
    ("conv_transpose2d", (2, 3, 5, 5), (4, 4, 3, 3), None, {}),
    ("conv_transpose2d", (2, 3, 5, 5), (3, 4, 3, 3), None, dict(groups=2)),
    ("conv_transpose2d", (2, 3, 5, 5), (3, 4, 3, 3), (3,), {}),
    ("conv_transpose2d", (2, 3, 5), (3, 4, 3, 3), None, {}),
    ("conv_transpose1d", (1, 2, 1), (2, 1, 2), None, dict(padding=3)),
    ("conv_transpose2d", (1, 2, 1, 1), (2, 1, 2, 2), None, dict(padding=3)),
    ("conv_transpose3d", (1, 2, 1, 1, 1), (2, 1, 2, 2, 2), None, dict(padding=3)),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 1, 1), None, dict(dilation=(1, 0))),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 1, 1), None, dict(output_padding=(0, -1))),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 1, 1), None, dict(stride=0)),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 0, 2, 2), None, {}),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[4]}")
def test_errors(case):
    name, xs, ws, bs, kw = case
    _same_error(name, xs, ws, bs, **kw)


def test_dtype_errors():
    _same_error("conv2d", (1, 2, 3, 3), (2, 2, 1, 1), w_dtype="float64")
    _same_error("conv2d", (1, 2, 3, 3), (2, 2, 1, 1), x_dtype="float64")
    _same_error("conv2d", (1, 2, 3, 3), (2, 2, 1, 1), (2,), b_dtype="float64")
    _same_error("conv_transpose3d", (1, 2, 3, 3, 3), (2, 2, 1, 1, 1), (2,), b_dtype="float64")
    # the 1-d and 2-d transposed convolutions cast the bias
    for name, xs, ws in (("conv_transpose1d", (1, 2, 3), (2, 2, 2)),
                         ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 2, 1))):
        rng = np.random.default_rng(0)
        x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(2)
        to = getattr(TF, name)(torch.tensor(x).float(), torch.tensor(w).float(),
                               torch.tensor(b))
        fo = getattr(F, name)(fw.tensor(x).float(), fw.tensor(w).float(), fw.tensor(b))
        assert fo.dtype is fw.float32
        assert_close(fo, to_np(to), rtol=1e-5, atol=1e-5)


def test_type_errors():
    x, w = fw.zeros(1, 2, 3, 3), fw.zeros(2, 2, 1, 1)
    for bad in (dict(padding=1.5), dict(groups=1.5), dict(stride="a")):
        with pytest.raises(TypeError):
            F.conv2d(x, w, **bad)
    with pytest.raises(TypeError):
        F.conv2d(x, [1])
    with pytest.raises(TypeError):
        F.conv2d([1], w)
    with pytest.raises(TypeError):
        F.conv_transpose2d(x, w, padding="same")


# ---- modules -------------------------------------------------------------------------------

MODULES = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1), (2, 4, 9)),
    ("Conv1d", (4, 4, 3), dict(groups=4, padding="same", padding_mode="reflect"), (4, 7)),
    ("Conv1d", (3, 5, 4), dict(padding="same", padding_mode="circular", bias=False), (2, 3, 8)),
    ("Conv2d", (3, 4, 3), dict(padding=1, padding_mode="reflect"), (2, 3, 6, 5)),
    ("Conv2d", (4, 6, (3, 2)), dict(padding=(2, 1), padding_mode="replicate", groups=2,
                                     dilation=(1, 2)), (1, 4, 5, 6)),
    ("Conv2d", (3, 4, 3), dict(padding=(1, 2), padding_mode="circular", stride=2), (2, 3, 5, 6)),
    ("Conv2d", (3, 4, 4), dict(padding="same", padding_mode="replicate"), (3, 5, 5)),
    ("Conv2d", (3, 4, 3), dict(padding="valid", bias=False), (2, 3, 5, 5)),
    ("Conv2d", (3, 4, 3), {}, (0, 3, 5, 5)),
    ("Conv3d", (2, 3, 2), dict(padding=1, padding_mode="reflect"), (1, 2, 3, 4, 3)),
    ("Conv3d", (2, 4, (1, 2, 2)), dict(stride=(1, 2, 1), padding_mode="circular",
                                        padding=(0, 1, 1)), (2, 3, 4, 3)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2),
     (2, 4, 5)),
    ("ConvTranspose2d", (3, 4, 3), dict(stride=2, dilation=(1, 2), bias=False), (2, 3, 4, 3)),
    ("ConvTranspose2d", (3, 2, (2, 3)), dict(padding=(0, 1)), (3, 4, 4)),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=(2, 1, 2), output_padding=(1, 0, 0)),
     (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("case", MODULES, ids=lambda c: f"{c[0]}-{c[2]}")
def test_modules(device, case):
    cls, args, kw, shape = case
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args, **kw)
    m = getattr(nn, cls)(*args, **kw)
    assert repr(m) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_module(torch, m, tm, [x], device)


def test_module_float64():
    torch.manual_seed(0)
    tm = torch.nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect", groups=1).double()
    m = nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect").double()
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 4))
    compare_module(torch, m, tm, [x], "cpu", rtol=1e-10, atol=1e-10)


def test_load_torch_state_dict(device):
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ConvTranspose2d(8, 4, 2,
                                                                                stride=2))
    m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ConvTranspose2d(8, 4, 2, stride=2)).to(device)
    sd = {k: fw.tensor(v.numpy(), device=device) for k, v in tm.state_dict().items()}
    m.load_state_dict(sd, strict=True)
    x = np.random.default_rng(0).standard_normal((1, 3, 6, 6)).astype(np.float32)
    assert_close(m(fw.tensor(x, device=device)), to_np(tm(torch.tensor(x))), rtol=1e-4,
                 atol=1e-5)


def test_transposed_output_size(device):
    torch.manual_seed(0)
    tm = torch.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1)
    m = nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1)
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
    for size in ((9, 10), (10, 9), (2, 3, 10, 10)):
        out = compare_module(torch, m, tm, [x], device, kwargs=dict(output_size=size))[0]
        assert tuple(out.shape[-2:]) == tuple(size[-2:])
    xu = x[0]
    out = compare_module(torch, m, tm, [xu], device, kwargs=dict(output_size=(3, 10, 9)))[0]
    assert tuple(out.shape) == (3, 10, 9)
    for size in ((8, 8), (11, 9), (2, 10)):
        with pytest.raises(ValueError) as te:
            tm(torch.tensor(x), output_size=size)
        with pytest.raises(ValueError) as fe:
            m(fw.tensor(x, device=device), output_size=size)
        assert str(fe.value) == str(te.value).replace("torch.Size", "framework.Size")
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        m(fw.tensor(x, device=device), output_size=(1, 2, 3))


def test_init():
    """kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias;
    fan_in counts weight.shape[1] * kernel (out_channels / groups for transposed)."""
    for m, fan_in in ((nn.Conv2d(8, 32, 3, groups=2), 4 * 9), (nn.Conv1d(3, 64, 5), 15),
                      (nn.ConvTranspose2d(16, 12, 3, groups=4), 3 * 9),
                      (nn.Conv3d(2, 16, 2), 16)):
        bound = 1 / math.sqrt(fan_in)
        w, b = to_np(m.weight), to_np(m.bias)
        assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
        # a uniform distribution: std bound / sqrt(3), spread over the whole range
        assert abs(w.std() - bound / math.sqrt(3)) < 0.15 * bound
        assert np.abs(w).max() > 0.9 * bound
        assert m.weight.requires_grad and m.weight.grad_fn is None
    m = nn.Conv2d(3, 4, 3, bias=False, device="cpu", dtype=fw.float64)
    assert m.bias is None and m.weight.dtype is fw.float64


def test_repr():
    cases = [((4, 4, 3), dict(padding_mode="reflect", padding=1, bias=False, groups=2,
                               dilation=2, stride=(1, 2))),
             ((4, 4, 3), {}), ((4, 4, 3), dict(padding="same")),
             ((4, 4, 3), dict(padding="valid", padding_mode="circular"))]
    for cls in ("Conv1d", "Conv2d", "Conv3d"):
        for args, kw in cases:
            assert repr(getattr(nn, cls)(*args, **kw)) == \
                repr(getattr(torch.nn, cls)(*args, **kw))
    for cls in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        for kw in ({}, dict(output_padding=1, stride=2, dilation=2, groups=2, bias=False)):
            assert repr(getattr(nn, cls)(4, 4, 3, **kw)) == \
                repr(getattr(torch.nn, cls)(4, 4, 3, **kw))
    m = nn.Conv2d(3, 4, (3, 2), stride=2)
    assert (m.kernel_size, m.stride, m.padding, m.dilation, m.output_padding, m.transposed) == \
        ((3, 2), (2, 2), (0, 0), (1, 1), (0, 0), False)
    assert m._reversed_padding_repeated_twice == (0, 0, 0, 0)   # a tuple, as torch's
    assert nn.Conv2d(3, 4, (4, 3), padding="same", dilation=(1, 2)) \
        ._reversed_padding_repeated_twice == \
        torch.nn.Conv2d(3, 4, (4, 3), padding="same", dilation=(1, 2)) \
        ._reversed_padding_repeated_twice


@pytest.mark.parametrize("cls,args,kw", [
    ("Conv2d", (3, 4, 3), dict(groups=2)),
    ("Conv2d", (4, 3, 3), dict(groups=2)),
    ("Conv2d", (4, 4, 3), dict(groups=0)),
    ("Conv2d", (4, 4, 3), dict(padding="same", stride=2)),
    ("Conv1d", (4, 4, 3), dict(padding_mode="foo")),
    ("ConvTranspose2d", (4, 4, 3), dict(padding_mode="reflect")),
    ("ConvTranspose1d", (4, 4, 3), dict(groups=3)),
])
def test_module_errors(cls, args, kw):
    with pytest.raises(ValueError) as te:
        getattr(torch.nn, cls)(*args, **kw)
    with pytest.raises(ValueError) as fe:
        getattr(nn, cls)(*args, **kw)
    assert _sorted_sets(str(fe.value)) == _sorted_sets(str(te.value))


def _sorted_sets(text):
    """A message with each printed set's items sorted: the order of a set literal's items
    depends on the process that compiled the module's .pyc."""
    import re
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}",
                  text)


def test_module_input_errors():
    for bad in ((2, 3, 5, 5), (4, 5), (1, 2, 4, 5, 5, 5)):
        with pytest.raises(RuntimeError) as te:
            torch.nn.Conv2d(4, 4, 3)(torch.zeros(bad))
        with pytest.raises(RuntimeError) as fe:
            nn.Conv2d(4, 4, 3)(fw.zeros(bad))
        assert str(fe.value) == str(te.value)
    m = nn.Conv2d(4, 4, 3)
    m.padding_mode = "reflect"       # changed after construction: used by forward
    m._reversed_padding_repeated_twice = [1, 1, 1, 1]
    assert tuple(m(fw.zeros(1, 4, 5, 5)).shape) == (1, 4, 5, 5)
