"""The conv_gemm family (framework/kernels/conv_gemm.py, the implicit-GEMM convolutions
that conv1d/conv2d run on cuda, and framework/_cpu/conv_gemm.py): forward, input, weight
and bias gradients of F.conv1d/F.conv2d on cpu (im2col) and cuda (implicit GEMM) against
PyTorch's CPU in float64; stride, padding ('same' included), dilation, groups
(depthwise), tile edges, 16-bit dtypes, an empty batch, strided inputs, the weight
gradient's split-K and int64 offsets, second derivatives, and the internal ops on both
devices."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from framework.kernels import conv_gemm as kernels
from tests.helpers import assert_close, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional
needs_cuda = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")

# (N, C, spatial, O, kernel, stride, padding, dilation, groups): rows, columns and depth
# cross the interpreter's 32 x 16 x 16 tiles
CASES = [
    (2, 3, (7, 9), 5, (3, 3), 1, 1, 1, 1),
    (3, 4, (8, 7), 6, (3, 3), 2, 0, 1, 2),
    (1, 4, (9, 9), 4, (3, 3), 1, "same", 2, 4),          # depthwise, dilated
    (2, 3, (9, 8), 4, (7, 7), 2, 3, 1, 1),
    (2, 8, (5, 6), 20, (1, 1), 1, 0, 1, 1),
    (2, 4, (6, 5), 3, (2, 3), 1, "same", 1, 1),          # even kernel: one more on the right
    (1, 2, (7, 8), 4, (3, 2), (1, 2), (0, 1), (2, 1), 2),
    (2, 3, (11,), 4, (3,), 2, 1, 1, 1),                  # conv1d
    (3, 4, (10,), 8, (4,), 1, "same", 2, 2),
]


def _ids(case):
    return f"{len(case[2])}d-k{'x'.join(map(str, case[4]))}-s{case[5]}-p{case[6]}-g{case[8]}"


def _data(case, seed=0):
    n, c, sp, o, k, _, _, _, groups = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c) + sp)
    w = rng.standard_normal((o, c // groups) + k)
    b = rng.standard_normal(o)
    return x, w, b


def _torch_conv(case, x, w, b, gy=None):
    """PyTorch's output and (given gy) input, weight and bias gradients, in float64."""
    _, _, sp, _, _, s, p, d, groups = case
    fn = TF.conv1d if len(sp) == 1 else TF.conv2d
    tx, tw, tb = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, w, b))
    y = fn(tx, tw, tb, s, p, d, groups)
    if gy is None:
        return y.detach().numpy()
    y.backward(torch.tensor(gy, dtype=torch.float64))
    return y.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()


def _fw_conv(case, x, w, b, gy, device, dtype):
    _, _, sp, _, _, s, p, d, groups = case
    fn = F.conv1d if len(sp) == 1 else F.conv2d
    tx, tw, tb = (fw.tensor(a, dtype=dtype, device=device, requires_grad=True)
                  for a in (x, w, b))
    y = fn(tx, tw, tb, s, p, d, groups)
    y.backward(fw.tensor(gy, dtype=dtype, device=device))
    return y, tx.grad, tw.grad, tb.grad


def _rounded(a, dtype):
    """a rounded to dtype and back to float64 (the values both libraries then see)."""
    return to_np(fw.tensor(a, dtype=dtype)).astype(np.float64)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_forward_and_gradients(device, case):
    x, w, b = _data(case)
    ref_y = _torch_conv(case, x, w, b)
    gy = np.random.default_rng(1).standard_normal(ref_y.shape)
    refs = _torch_conv(case, x, w, b, gy)
    got = _fw_conv(case, x, w, b, gy, device, fw.float32)
    if device == "cuda":    # the implicit-GEMM op, not the im2col composite
        assert got[0].grad_fn.name() == "ConvGemmBackward0"
    for g, r in zip(got, refs):
        assert_close(g, r, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision(device, dtype):
    """16-bit operands, float32 accumulation, one rounding per output element."""
    dt = getattr(fw, dtype)
    # twice the rounding error of one rounding (cuda rounds each output once; the CPU's
    # im2col path rounds its columns and GEMM products too: more room there)
    tol = {"float16": 1e-3, "bfloat16": 8e-3}[dtype] * (1 if device == "cuda" else 4)
    for case in (CASES[1], CASES[7]):
        x, w, b = (_rounded(a, dt) for a in _data(case, seed=2))
        gy = _rounded(np.random.default_rng(3).standard_normal(_torch_conv(case, x, w, b).shape),
                      dt)
        got = _fw_conv(case, x, w, b, gy, device, dt)
        for g, r in zip(got, _torch_conv(case, x, w, b, gy)):
            assert g.dtype is dt
            assert_close(g, r, rtol=tol, atol=tol)


@needs_cuda
def test_tf32_allowed():
    """With TF32 allowed float32 products may round their inputs to 10 mantissa bits."""
    case = CASES[0]
    x, w, b = _data(case)
    fw.backends.cudnn.allow_tf32 = True
    try:
        y = F.conv2d(*(fw.tensor(a, dtype=fw.float32, device="cuda") for a in (x, w, b)),
                     padding=1)
    finally:
        fw.backends.cudnn.allow_tf32 = False
    assert_close(y, _torch_conv(case, x, w, b), rtol=5e-3, atol=5e-3)


def test_tf32_follows_cudnn_switch_not_matmul_precision():
    """float32 convolutions take their precision from backends.cudnn.allow_tf32 (PyTorch's
    rule); the matmul precision is the GEMM's."""
    from framework.kernels import conv_gemm
    x = fw.zeros(2, 2)
    old = fw.get_float32_matmul_precision()
    try:
        for cudnn_tf32, matmul in ((True, "highest"), (False, "high")):
            fw.backends.cudnn.allow_tf32 = cudnn_tf32
            fw.set_float32_matmul_precision(matmul)
            precision = conv_gemm._setup([x], 4, fw.float32)[1]
            assert precision == ("tf32" if cudnn_tf32 else "ieee")
            assert conv_gemm._setup([x], 4, fw.float64)[1] == "ieee"
    finally:
        fw.backends.cudnn.allow_tf32 = False
        fw.set_float32_matmul_precision(old)


def test_float64_and_second_derivatives(device):
    """float64 runs the implicit GEMM too; second derivatives go through the three ops'
    formulas (each is the others' derivative)."""
    case = CASES[1]
    x, w, b = _data(case, seed=4)
    res = []
    for lib, fn, dev in ((torch, TF.conv2d, "cpu"), (fw, F.conv2d, device)):
        tx, tw, tb = (lib.tensor(a, dtype=lib.float64, device=dev, requires_grad=True)
                      for a in (x, w, b))
        y = fn(tx, tw, tb, 2, 0, 1, 2)
        gx, gw, gb = lib.autograd.grad((y * y).sum(), (tx, tw, tb), create_graph=True)
        second = lib.autograd.grad((gx * gx).sum() + (gw * gw).sum() + gb.sum(), (tx, tw))
        res.append([y, gx, gw, gb, *second])
    for ta, got in zip(*res):
        assert_close(got, ta.detach().numpy(), rtol=1e-10, atol=1e-10)


@needs_cuda
def test_gradcheck():
    """Numerical gradients of the cuda path in float64 (conv1d, tiny: the interpreter)."""
    rng = np.random.default_rng(5)
    x = fw.tensor(rng.standard_normal((1, 2, 5)), device="cuda", requires_grad=True)
    w = fw.tensor(rng.standard_normal((4, 1, 2)), device="cuda", requires_grad=True)
    b = fw.tensor(rng.standard_normal(4), device="cuda", requires_grad=True)
    assert fw.autograd.gradcheck(lambda *t: F.conv1d(*t, stride=2, padding=1, groups=2),
                                 (x, w, b))


def test_empty_batch(device):
    """No samples: an empty output, zero weight and bias gradients."""
    x = fw.zeros((0, 3, 5, 5), device=device, requires_grad=True)
    w = fw.ones((4, 3, 3, 3), device=device, requires_grad=True)
    b = fw.ones(4, device=device, requires_grad=True)
    y = F.conv2d(x, w, b, padding=1)
    assert tuple(y.shape) == (0, 4, 5, 5)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 3, 5, 5)
    np.testing.assert_array_equal(to_np(w.grad), 0)
    np.testing.assert_array_equal(to_np(b.grad), 0)


def test_strided_and_unbatched(device):
    """A non-contiguous input is read through its strides; an unbatched one works."""
    rng = np.random.default_rng(6)
    base = rng.standard_normal((5, 2, 9, 8))
    x = base[:, :, ::2, 1:].transpose(1, 0, 2, 3)      # (2, 5, 5, 7)
    w = rng.standard_normal((3, 5, 3, 3))
    tx = fw.tensor(base, device=device)[:, :, ::2, 1:].permute(1, 0, 2, 3)
    assert not tx.is_contiguous()
    tw = fw.tensor(w, device=device)
    ref = TF.conv2d(torch.tensor(x), torch.tensor(w), stride=(1, 2)).numpy()
    assert_close(F.conv2d(tx, tw, stride=(1, 2)), ref, rtol=1e-10, atol=1e-10)
    assert_close(F.conv2d(tx[0], tw, stride=(1, 2)), ref[0], rtol=1e-10, atol=1e-10)


@needs_cuda
def test_split_k_and_int64_offsets(monkeypatch):
    """The weight gradient's depth split in parts (summed in a fixed order) and the int64
    offset path give the same gradients."""
    monkeypatch.setattr(kernels, "_SPLIT_MIN", 32)
    monkeypatch.setattr(kernels, "_SPLIT_CHUNK", 16)
    assert kernels._splits(1, 126, 16) == (32, 4)
    case = CASES[0]
    x, w, b = _data(case, seed=7)
    gy = np.random.default_rng(8).standard_normal(_torch_conv(case, x, w, b).shape)
    refs = _torch_conv(case, x, w, b, gy)
    for g, r in zip(_fw_conv(case, x, w, b, gy, "cuda", fw.float64), refs):
        assert_close(g, r, rtol=1e-10, atol=1e-10)
    monkeypatch.setattr(kernels, "_INT32_MAX", 0)   # every launch takes int64 offsets
    case = CASES[1]
    x, w, b = _data(case)
    gy = np.random.default_rng(9).standard_normal(_torch_conv(case, x, w, b).shape)
    refs = _torch_conv(case, x, w, b, gy)
    for g, r in zip(_fw_conv(case, x, w, b, gy, "cuda", fw.float32), refs):
        assert_close(g, r, rtol=1e-5, atol=1e-5)


@needs_cuda
def test_internal_ops_match_across_devices():
    """The three internal ops give the same results on cpu (im2col + GEMM) and cuda."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 4, 6, 7))
    w = rng.standard_normal((6, 2, 3, 2))
    gy = rng.standard_normal((2, 6, 3, 4))
    geo = ((2, 2), (1, 0), (1, 2), 2)
    res = []
    for dev in ("cpu", "cuda"):
        tx, tw, tg = (fw.tensor(a, device=dev) for a in (x, w, gy))
        res.append([fw._conv_gemm(tx, tw, None, *geo[:3], geo[3], (3, 4)),
                    fw._conv_gemm_input(tg, tw, (6, 7), *geo),
                    fw._conv_gemm_weight(tg, tx, (3, 2), *geo)])
    for a, b in zip(*res):
        assert_close(b, to_np(a), rtol=1e-10, atol=1e-10)
