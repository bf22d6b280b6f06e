"""autocast: output dtypes per op against PyTorch (its CPU autocast on the cpu; PyTorch's
documented CUDA lists on simulated cuda), the region's semantics (nesting, disabling,
the weight cache, float64 and integers left alone, threads, decorators, custom_fwd/bwd)
and gradients of a model run under autocast."""
import threading
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F

from tests.helpers import to_np


def _inputs(T, device):
    """Named float32 inputs (same values in framework and torch)."""
    rng = np.random.RandomState(0)
    vals = {"x": rng.randn(4, 8), "w": rng.randn(8, 8), "b": rng.randn(8), "v": rng.randn(8),
            "t3": rng.randn(2, 4, 8), "img": rng.randn(2, 3, 6, 6), "k": rng.randn(4, 3, 3, 3),
            "seq": rng.randn(2, 3, 10), "k1": rng.randn(5, 3, 3), "pos": rng.rand(4, 8) + 0.5,
            "p01": rng.rand(4, 8) * 0.8 + 0.1}
    out = {k: T.tensor(v, dtype=T.float32, device=device) for k, v in vals.items()}
    out["y"] = T.tensor([1, 0, 3, 7], device=device)
    out["sq"] = T.tensor(rng.randn(3, 3) + 3 * np.eye(3), dtype=T.float32, device=device)
    return out


# op name -> f(T, F, inputs, low): the op on float32 inputs, or on a lower-precision
# operand ``low`` (an autocast matmul's output) mixed with float32 ones
CASES = {
    "matmul": lambda T, F, a, lo: T.matmul(a["x"], a["w"]),
    "operator @": lambda T, F, a, lo: a["x"] @ a["w"],
    "mm": lambda T, F, a, lo: T.mm(a["x"], a["w"]),
    "bmm": lambda T, F, a, lo: T.bmm(a["t3"], a["w"].expand(2, 8, 8)),
    "baddbmm": lambda T, F, a, lo: T.baddbmm(a["t3"], a["t3"], a["w"].expand(2, 8, 8)),
    "addmm": lambda T, F, a, lo: T.addmm(a["b"], a["x"], a["w"]),
    "addbmm": lambda T, F, a, lo: T.addbmm(a["w"], a["t3"].transpose(1, 2), a["t3"]),
    "linear": lambda T, F, a, lo: F.linear(a["x"], a["w"], a["b"]),
    "conv1d": lambda T, F, a, lo: F.conv1d(a["seq"], a["k1"]),
    "conv2d": lambda T, F, a, lo: F.conv2d(a["img"], a["k"], padding=1),
    "conv_transpose2d": lambda T, F, a, lo: F.conv_transpose2d(a["img"], a["k"].transpose(0, 1)),
    "prelu": lambda T, F, a, lo: F.prelu(a["x"], a["b"][:1]),
    "sdpa": lambda T, F, a, lo: F.scaled_dot_product_attention(a["t3"], a["t3"], a["t3"]),
    "exp(low)": lambda T, F, a, lo: T.exp(lo),
    "log(pos)": lambda T, F, a, lo: T.log(a["pos"]),
    "pow(low)": lambda T, F, a, lo: lo ** 2,
    "sum(low)": lambda T, F, a, lo: lo.sum(),
    "sum(low, dtype)": lambda T, F, a, lo: lo.sum(dtype=T.float64),
    "cumsum(low)": lambda T, F, a, lo: T.cumsum(lo, 1),
    "prod(low)": lambda T, F, a, lo: T.prod(lo, 1),
    "softmax(low)": lambda T, F, a, lo: T.softmax(lo, 1),
    "F.softmax(low)": lambda T, F, a, lo: F.softmax(lo, dim=1),
    "log_softmax(low)": lambda T, F, a, lo: F.log_softmax(lo, dim=1),
    "layer_norm(low)": lambda T, F, a, lo: F.layer_norm(lo, (8,), a["v"], a["b"]),
    "group_norm(low)": lambda T, F, a, lo: F.group_norm(lo.reshape(4, 2, 4), 2),
    "mse_loss(low, f32)": lambda T, F, a, lo: F.mse_loss(lo, a["x"]),
    "l1_loss(low, f32)": lambda T, F, a, lo: F.l1_loss(lo, a["x"]),
    "cross_entropy(low)": lambda T, F, a, lo: F.cross_entropy(lo, a["y"]),
    "nll_loss(low)": lambda T, F, a, lo: F.nll_loss(lo, a["y"]),
    "bce_with_logits(low)": lambda T, F, a, lo: F.binary_cross_entropy_with_logits(lo, a["p01"]),
    "cat(low, f32)": lambda T, F, a, lo: T.cat([lo, a["x"]]),
    "stack(low, f32)": lambda T, F, a, lo: T.stack([lo, a["x"]]),
    "addcmul(f32, low, low)": lambda T, F, a, lo: T.addcmul(a["x"], lo, lo),
    "atan2(low, f32)": lambda T, F, a, lo: T.atan2(lo, a["x"]),
    "mul(low, f32)": lambda T, F, a, lo: lo * a["x"],
    "relu(low)": lambda T, F, a, lo: F.relu(lo),
    "gelu(low)": lambda T, F, a, lo: F.gelu(lo),
    "trace(f32)": lambda T, F, a, lo: T.trace(a["w"]),
    "inverse(f32)": lambda T, F, a, lo: T.inverse(a["sq"]),
    "f64 matmul": lambda T, F, a, lo: T.matmul(a["x"].double(), a["w"].double()),
    "int add": lambda T, F, a, lo: a["y"] + a["y"],
}


def _dtypes(T, F, device, dtype):
    a = _inputs(T, device)
    out = {}
    with T.autocast(device, dtype=dtype):
        low = T.matmul(a["x"], a["w"])
        for name, f in CASES.items():
            out[name] = str(f(T, F, a, low).dtype).rpartition(".")[2]
    return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_cpu_output_dtypes_match_torch(dtype):
    torch = pytest.importorskip("torch")
    ours = _dtypes(fw, F, "cpu", getattr(fw, dtype))
    theirs = _dtypes(torch, torch.nn.functional, "cpu", getattr(torch, dtype))
    assert ours == {k: v for k, v in theirs.items() if k in ours}


# PyTorch's documented CUDA policy (amp docs: "CUDA Ops that can autocast to float16",
# "... to float32", "... promote to the widest input type"; norms and losses are float32,
# reductions take dtype=float32), applied to the cases above
CUDA_EXPECTED = {
    "float16": ["matmul", "operator @", "mm", "bmm", "baddbmm", "addmm", "addbmm", "linear",
                "conv1d", "conv2d", "conv_transpose2d", "prelu", "sdpa", "relu(low)",
                "gelu(low)"],
    "float32": ["exp(low)", "log(pos)", "pow(low)", "sum(low)", "cumsum(low)", "prod(low)",
                "softmax(low)", "F.softmax(low)", "log_softmax(low)", "layer_norm(low)",
                "group_norm(low)", "mse_loss(low, f32)", "l1_loss(low, f32)",
                "cross_entropy(low)", "nll_loss(low)", "bce_with_logits(low)",
                "cat(low, f32)", "stack(low, f32)", "addcmul(f32, low, low)",
                "atan2(low, f32)", "mul(low, f32)", "trace(f32)", "inverse(f32)"],
    "float64": ["f64 matmul", "sum(low, dtype)"],
    "int64": ["int add"],
}


def test_cuda_output_dtypes_follow_pytorch_policy():
    if not fw.cuda.is_available():
        pytest.skip("no cuda device (real or simulated)")
    ours = _dtypes(fw, F, "cuda", fw.float16)
    expected = {name: dt for dt, names in CUDA_EXPECTED.items() for name in names}
    assert ours == expected


def test_cuda_binary_cross_entropy_is_banned_but_not_on_cpu(device):
    p = fw.full((4,), 0.5, device=device)
    with fw.autocast(device):
        if device == "cuda":
            with pytest.raises(RuntimeError, match="unsafe to autocast"):
                F.binary_cross_entropy(p, p)
        else:
            assert F.binary_cross_entropy(p, p).dtype is fw.float32


def test_state_nesting_and_disabling(device):
    x = fw.randn(4, 4, device=device)
    low = fw.bfloat16 if device == "cpu" else fw.float16
    assert not fw.is_autocast_enabled(device)
    with fw.autocast(device):
        assert fw.is_autocast_enabled(device) and fw.get_autocast_dtype(device) is low
        assert (x @ x).dtype is low
        with fw.autocast(device, enabled=False):
            assert not fw.is_autocast_enabled(device)
            assert (x @ x).dtype is fw.float32
            with fw.autocast(device, dtype=fw.bfloat16):
                assert (x @ x).dtype is fw.bfloat16
            assert (x @ x).dtype is fw.float32
        assert (x @ x).dtype is low
        other = "cuda" if device == "cpu" else "cpu"
        assert not fw.is_autocast_enabled(other)
    assert not fw.is_autocast_enabled(device)
    assert (x @ x).dtype is fw.float32
    # an exception inside the region restores the state
    with pytest.raises(ValueError):
        with fw.autocast(device):
            raise ValueError
    assert not fw.is_autocast_enabled(device)


def test_only_tensors_on_the_region_device_are_cast():
    x = fw.randn(4, 4)
    with fw.autocast("cuda", enabled=fw.cuda.is_available()):
        assert (x @ x).dtype is fw.float32     # a cpu tensor in a cuda region


def test_out_float64_int_and_values(device):
    x = fw.randn(4, 6, device=device)
    w = fw.randn(6, 3, device=device)
    out = fw.empty(4, 3, device=device)
    with fw.autocast(device):
        fw.mm(x, w, out=out)                # out= variants are not autocast
        r = fw.mm(x, w)
    assert out.dtype is fw.float32
    np.testing.assert_allclose(to_np(out), to_np(x) @ to_np(w), rtol=1e-5, atol=1e-5)
    # the lower-precision result: the product of the rounded operands
    low = fw.bfloat16 if device == "cpu" else fw.float16
    xr, wr = to_np(x.to(low)).astype(np.float64), to_np(w.to(low)).astype(np.float64)
    tol = 1.6e-2 if low is fw.bfloat16 else 2e-3
    np.testing.assert_allclose(to_np(r).astype(np.float64), xr @ wr, rtol=tol, atol=tol)


def test_weight_cast_cache(device):
    lin = fw.nn.Linear(8, 8).to(device)
    x = fw.randn(2, 8, device=device)
    from framework._ops import autocast as ac

    def use():   # an op that casts its operands (linear itself casts inside its GEMM)
        return fw.addmm(lin.bias, x, lin.weight)
    with fw.autocast(device):
        lin(x)
        assert not ac.state.cache               # the fused linear makes no casts to keep
        use()
        assert id(lin.weight) in ac.state.cache and id(lin.bias) in ac.state.cache
        cast_w = ac.state.cache[id(lin.weight)][1]
        use()
        assert ac.state.cache[id(lin.weight)][1] is cast_w      # reused, not recast
        with fw.autocast(device):
            pass                                                # inner exit keeps it
        assert id(lin.weight) in ac.state.cache
        fw.mm(x, fw.randn(8, 3, device=device))      # does not require grad: not cached
        assert len(ac.state.cache) == 2
    assert not ac.state.cache               # the outermost exit clears it
    with fw.autocast(device, cache_enabled=False):
        use()
        assert not ac.state.cache


def test_decorator_and_threads(device):
    @fw.autocast(device)
    def f(a):
        return a @ a

    x = fw.randn(3, 3, device=device)
    assert f(x).dtype is not fw.float32
    seen = []
    with fw.autocast(device):
        t = threading.Thread(target=lambda: seen.append((x @ x).dtype))
        t.start()
        t.join()
    assert seen == [fw.float32]             # autocast is per thread


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'xpu'"):
        fw.autocast("xpu")
    with pytest.raises(ValueError, match="device_type"):
        fw.autocast(0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        region = fw.autocast("cpu", dtype=fw.float32)
    assert any("Disabling autocast" in str(m.message) for m in w)
    with region:
        assert not fw.is_autocast_enabled("cpu")


def test_aliases():
    assert fw.amp.autocast is fw.autocast
    x = fw.randn(3, 3)
    with fw.amp.autocast("cpu"):
        assert (x @ x).dtype is fw.bfloat16
    with fw.cuda.amp.autocast(enabled=False):
        assert not fw.is_autocast_enabled("cuda")


def test_training_step_matches_torch():
    """A small MLP's loss and gradients under bfloat16 autocast on the cpu, against
    PyTorch's with the same weights (float32 parameters, float32 gradients)."""
    torch = pytest.importorskip("torch")
    rng = np.random.RandomState(0)
    x, W1, b1, W2 = rng.randn(16, 12), rng.randn(32, 12) * 0.3, rng.randn(32), rng.randn(5, 32) * 0.3
    y = rng.randint(0, 5, 16)

    def run(T, F):
        ps = [T.tensor(v, dtype=T.float32, requires_grad=True) for v in (W1, b1, W2)]
        with T.autocast("cpu", dtype=T.bfloat16):
            h = F.gelu(F.linear(T.tensor(x, dtype=T.float32), ps[0], ps[1]))
            h = F.layer_norm(h, (32,))
            logits = F.linear(h, ps[2])
            loss = F.cross_entropy(logits, T.tensor(y))
        loss.backward()
        return (str(h.dtype).rpartition(".")[2], str(logits.dtype).rpartition(".")[2],
                str(loss.dtype).rpartition(".")[2], float(loss),
                [np.array(p.grad.float().numpy(), dtype=np.float64) for p in ps],
                [str(p.grad.dtype).rpartition(".")[2] for p in ps])

    ours, theirs = run(fw, F), run(torch, torch.nn.functional)
    assert ours[:3] == theirs[:3] and ours[5] == theirs[5] == ["float32"] * 3
    assert abs(ours[3] - theirs[3]) < 2e-2
    for g, h in zip(ours[4], theirs[4]):
        np.testing.assert_allclose(g, h, rtol=5e-2, atol=5e-2 * np.abs(h).max())


def test_custom_fwd_bwd(device):
    seen = {}

    class Square(fw.autograd.Function):
        @staticmethod
        @fw.amp.custom_fwd(device_type=device, cast_inputs=fw.float32)
        def forward(ctx, a):
            seen["fwd"] = (a.dtype, fw.is_autocast_enabled(device))
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @fw.amp.custom_bwd(device_type=device)
        def backward(ctx, g):
            seen["bwd"] = fw.is_autocast_enabled(device)
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = fw.randn(4, device=device, requires_grad=True)
    with fw.autocast(device):
        h = x.to(fw.bfloat16)
        out = Square.apply(h)
    out.sum().backward()
    assert seen == {"fwd": (fw.float32, False), "bwd": False}
    assert out.dtype is fw.float32
    np.testing.assert_allclose(to_np(x.grad), 2 * to_np(h.float()), rtol=1e-6)
