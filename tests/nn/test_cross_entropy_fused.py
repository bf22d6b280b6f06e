"""The fused cross-entropy op (framework._cross_entropy_loss and its backward, reached through
nn.functional.cross_entropy with class indices) against torch on cpu and cuda: loss and
input gradient for every reduction, weight, ignore_index (some and all ignored),
label_smoothing with and without weight, K-dim and unbatched inputs, every float dtype,
extreme logits, rows that cross the kernels' block sizes, one large vocabulary,
gradcheck/gradgradcheck in float64, out-of-range targets, autocast and peak memory on
cuda. Also the fused softmax/log_softmax backward kernels, called through the backend."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from tests.nn.common import fw_tensor, to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# Triton's interpreter computes masked-off lanes too (NumPy warns about their log(0))
pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")

TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6), "float16": (4e-3, 4e-3),
       "bfloat16": (3e-2, 3e-2)}


def _case(shape, seed=0, scale=3.0, ignore=None, every=3):
    """Logits of ``shape`` (class dim 1, or 0 if 1-D) and matching class indices; every
    ``every``-th target is ``ignore`` when given."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * scale
    C = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + tuple(shape[2:]) if len(shape) > 1 else ()
    t = rng.integers(0, C, tshape)
    if ignore is not None and t.ndim:
        t.reshape(-1)[::every] = ignore
    return x, t, rng.random(C) + 0.5


def _compare(device, x, t, dtype="float32", weight=None, seed=1, backward=True, **kw):
    """Loss and input gradient (for a random cotangent) against torch's in float64 on the
    same (rounded) values."""
    tx = torch.tensor(x).to(getattr(torch, dtype))
    ref_x = tx.double().requires_grad_()
    tw = None if weight is None else torch.tensor(weight).to(getattr(torch, dtype))
    ref = TF.cross_entropy(ref_x, torch.tensor(t), weight=None if tw is None else tw.double(),
                           **kw)
    g = torch.tensor(np.random.default_rng(seed).standard_normal(tuple(ref.shape)))
    if backward:
        ref.backward(g)
    fdt = getattr(fw, dtype)
    fx = fw_tensor(tx.double(), device, dtype=fdt).requires_grad_()
    fw_w = None if tw is None else fw_tensor(tw.double(), device, dtype=fdt)
    got = F.cross_entropy(fx, fw_tensor(torch.tensor(t), device), weight=fw_w, **kw)
    assert tuple(got.shape) == tuple(ref.shape)
    assert str(got.dtype).split(".")[-1] == dtype
    rtol, atol = TOL[dtype]
    finite = ref.detach().abs()[torch.isfinite(ref.detach())]
    scale = max([1.0] + ([float(finite.max())] if finite.numel() else []))
    np.testing.assert_allclose(to_np(got).astype(np.float64), ref.detach().numpy(),
                               rtol=rtol, atol=atol * scale)
    if not backward:
        return got
    got.backward(fw.tensor(g.numpy(), dtype=got.dtype, device=device))
    np.testing.assert_allclose(to_np(fx.grad).astype(np.float64), ref_x.grad.numpy(),
                               rtol=rtol, atol=atol)
    return got


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.15])
def test_reductions_weight_ignore_smoothing(device, reduction, weighted, smoothing):
    x, t, w = _case((6, 5), ignore=2)
    _compare(device, x, t, weight=w if weighted else None, reduction=reduction,
             ignore_index=2, label_smoothing=smoothing)
    x, t, w = _case((7, 9), seed=3, ignore=-100)
    _compare(device, x, t, weight=w if weighted else None, reduction=reduction,
             label_smoothing=smoothing)


@pytest.mark.parametrize("C", [1, 5, 1025, 4097])
def test_rows_across_blocks(device, C):
    # cpu walks rows in 1024-element chunks, cuda in tiles of up to 4096
    rows = 3 if C < 4097 else 2
    x, t, w = _case((rows, C), seed=C)
    for kw in ({}, {"label_smoothing": 0.3}, {"label_smoothing": 0.1, "reduction": "sum"}):
        _compare(device, x, t, weight=w, **kw)
        _compare(device, x, t, **kw)


def test_all_ignored(device):
    x, t, w = _case((4, 6), ignore=1, every=1)
    got = _compare(device, x, t, reduction="mean", ignore_index=1)
    assert np.isnan(to_np(got))
    got = _compare(device, x, t, weight=w, reduction="mean", ignore_index=1,
                   label_smoothing=0.2)
    assert np.isnan(to_np(got))
    got = _compare(device, x, t, reduction="sum", ignore_index=1)
    assert to_np(got) == 0


@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 4, 3, 2)])
def test_k_dim(device, shape):
    x, t, w = _case(shape, ignore=0, every=4)
    for reduction in ("none", "mean"):
        _compare(device, x, t, weight=w, reduction=reduction, ignore_index=0,
                 label_smoothing=0.1)
        _compare(device, x, t, reduction=reduction, ignore_index=0)


def test_unbatched(device):
    x, t, w = _case((7,))
    for reduction in ("none", "mean", "sum"):
        _compare(device, x, t, weight=w, reduction=reduction, label_smoothing=0.2)
        # torch's backward refuses a (1,) target of a (C,) input; the forward is compared
        _compare(device, x, np.array([t]), reduction=reduction, backward=False)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_dtypes(device, dtype):
    x, t, w = _case((5, 37), ignore=4)
    _compare(device, x, t, dtype=dtype, weight=w, ignore_index=4, label_smoothing=0.1)
    _compare(device, x, t, dtype=dtype, reduction="none")


def test_extreme_logits(device):
    rng = np.random.default_rng(5)
    x = rng.choice([-1e4, 1e4, 0.0, 3.0], size=(6, 40))
    t = rng.integers(0, 40, 6)
    _compare(device, x, t, reduction="none")
    _compare(device, x, t, label_smoothing=0.1)
    _compare(device, x, t, weight=rng.random(40) + 0.5, label_smoothing=0.1,
             reduction="sum")


def test_infinite_logits(device):
    x, t, _ = _case((3, 6))
    x[0, (t[0] + 1) % 6] = -np.inf          # another class at -inf: a finite loss
    got = _compare(device, x, t, reduction="none")
    assert np.isfinite(to_np(got)).all()
    # smoothing reads every class: the -inf one makes the loss inf, as in torch
    _compare(device, x, t, reduction="none", label_smoothing=0.1)
    x[1, :] = -np.inf                        # a row of -inf: NaN, as torch
    ref = TF.cross_entropy(torch.tensor(x), torch.tensor(t), reduction="none")
    got = F.cross_entropy(fw_tensor(x, device), fw_tensor(torch.tensor(t), device),
                          reduction="none")
    np.testing.assert_allclose(to_np(got), ref.numpy(), rtol=1e-12, equal_nan=True)
    assert np.isnan(to_np(got)[1])


def test_large_vocab(device):
    C = 50257
    x, t, _ = _case((2, C), seed=7)
    _compare(device, x, t)
    _compare(device, x, t, label_smoothing=0.1, reduction="none")


def test_target_out_of_bounds(device):
    x = fw.zeros(3, 5, device=device)
    for bad in (5, -1):
        t = fw.tensor([0, bad, 1], device=device)
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            F.cross_entropy(x, t)
    # several bad rows over several programs: the first row's target is named
    t = np.zeros(70, np.int64)
    t[[9, 41, 66]] = [7, -3, 5]
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(fw.zeros(70, 5, device=device), fw.tensor(t, device=device))
    # an ignored target may be anything
    t = fw.tensor([0, -100, 1], device=device)
    assert np.isfinite(to_np(F.cross_entropy(x, t)))


def test_probability_targets_keep_composite(device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6))
    p = rng.random((4, 6))
    p /= p.sum(1, keepdims=True)
    tx = torch.tensor(x, requires_grad=True)
    ref = TF.cross_entropy(tx, torch.tensor(p), label_smoothing=0.1)
    ref.backward()
    fx = fw_tensor(x, device, requires_grad=True)
    got = F.cross_entropy(fx, fw_tensor(p, device), label_smoothing=0.1)
    got.backward()
    np.testing.assert_allclose(to_np(got), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(fx.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_weight_refuses_grad(device):
    x = fw.zeros(2, 3, device=device, requires_grad=True)
    w = fw.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
        F.cross_entropy(x, fw.tensor([0, 1], device=device), weight=w)


@pytest.mark.parametrize("kw", [{}, {"reduction": "none", "label_smoothing": 0.2},
                                {"reduction": "sum", "weight": True, "label_smoothing": 0.1,
                                 "ignore_index": 1}])
def test_gradcheck_and_gradgradcheck(device, kw):
    kw = dict(kw)
    weighted = kw.get("weight", False)
    x, t, w = _case((3, 4), seed=11)
    t[0] = 1
    weight = fw_tensor(w, device) if kw.pop("weight", False) else None
    tt = fw_tensor(torch.tensor(t), device)

    def fn(a):
        return F.cross_entropy(a, tt, weight=weight, **kw)
    a = fw_tensor(x, device, requires_grad=True)
    assert fw.autograd.gradcheck(fn, (a,))
    if device == "cpu" or weighted:   # (the interpreter is slow: one case there)
        assert fw.autograd.gradgradcheck(fn, (a,))


def test_double_backward_against_torch(device):
    x, t, w = _case((5, 6), seed=4, ignore=2)
    t[1] = 0
    _double_backward(device, x, t, w, dict(reduction="mean", ignore_index=2,
                                           label_smoothing=0.2))
    _double_backward(device, x, t, None, dict(reduction="none"))
    # every target ignored: the loss is NaN, the gradients 0
    _double_backward(device, x, np.full_like(t, 2), w, dict(ignore_index=2))


def _double_backward(device, x, t, w, kw):
    tx = torch.tensor(x, requires_grad=True)
    fx = fw_tensor(x, device, requires_grad=True)
    ref = TF.cross_entropy(tx, torch.tensor(t), weight=None if w is None else torch.tensor(w),
                           **kw).sum()
    got = F.cross_entropy(fx, fw_tensor(torch.tensor(t), device),
                          weight=None if w is None else fw_tensor(w, device), **kw).sum()
    (tg,) = torch.autograd.grad(ref, tx, create_graph=True)
    (fg,) = fw.autograd.grad(got, fx, create_graph=True)
    np.testing.assert_allclose(to_np(fg), tg.detach().numpy(), rtol=1e-9, atol=1e-12)
    v = np.random.default_rng(0).standard_normal(x.shape)
    (tx2,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tx)
    (fx2,) = fw.autograd.grad((fg * fw_tensor(v, device)).sum(), fx)
    np.testing.assert_allclose(to_np(fx2), tx2.numpy(), rtol=1e-9, atol=1e-12)


def test_peak_memory_cuda():
    """Forward + backward of (64, 50257) float32 logits on cuda: the fused op keeps the
    per-row logsumexp only; besides the logits the peak holds the gradient and a few
    row-sized vectors, so it stays under 2.1x the logits' bytes (a composite log_softmax
    path holds the logits, log-probabilities and at least one gradient-sized temporary)."""
    if not fw.cuda.is_available():
        pytest.skip("no cuda device")
    n, C = 64, 50257
    # (random numbers made on the cpu: the interpreter's generator is slow)
    x = fw.randn(n, C).to("cuda").requires_grad_()
    t = fw.randint(0, C, (n,)).to("cuda")
    logits_bytes = n * C * 4
    fw.cuda.synchronize()
    fw.cuda.reset_peak_memory_stats()
    base = fw.cuda.memory_allocated()
    F.cross_entropy(x, t).backward()
    fw.cuda.synchronize()
    peak = fw.cuda.max_memory_allocated()
    assert base >= logits_bytes
    assert peak - base < 1.1 * logits_bytes
    assert peak < 2.1 * logits_bytes + (base - logits_bytes)


def test_autocast_keeps_float32_loss(device):
    # PyTorch's log_softmax runs in float32 under autocast, so does its cross entropy; the
    # gradient comes back in the logits' dtype
    x, t, _ = _case((4, 9))
    tx = torch.tensor(x, dtype=torch.bfloat16, requires_grad=True)
    with torch.autocast("cpu"):
        ref = TF.cross_entropy(tx, torch.tensor(t))
    fx = fw_tensor(x, device, dtype=fw.bfloat16).requires_grad_()
    with fw.autocast(device):
        got = F.cross_entropy(fx, fw_tensor(torch.tensor(t), device))
    assert got.dtype is fw.float32 and ref.dtype is torch.float32
    np.testing.assert_allclose(to_np(got), ref.detach().numpy(), rtol=1e-5)
    got.backward()
    assert fx.grad.dtype is fw.bfloat16


def test_noncontiguous_logits_and_byte_targets(device):
    x, t, w = _case((6, 11), seed=9)
    tx = torch.tensor(x.T.copy().T, requires_grad=True)          # same values
    ref = TF.cross_entropy(tx, torch.tensor(t), weight=torch.tensor(w), label_smoothing=0.1)
    ref.backward()
    fx = fw_tensor(x.T, device).requires_grad_()
    got = F.cross_entropy(fx.t(), fw_tensor(t.astype(np.uint8), device),
                          weight=fw_tensor(w, device), label_smoothing=0.1)
    got.backward()
    np.testing.assert_allclose(to_np(got), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_np(fx.grad).T, tx.grad.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward_kernels(device, log):
    """The fused softmax/log_softmax backward kernels (framework/kernels/softmax.py,
    native/softmax.cpp), called through the backend: rows in one tile and longer, other
    dims (inner > 1), 16-bit and float64."""
    from framework._ops import alloc
    rng = np.random.default_rng(3)
    for shape, d in [((5, 7), 1), ((3, 5000), 1), ((2, 37, 5), 1), ((4, 6), 0)]:
        for dt in (fw.float32, fw.float64, fw.bfloat16):
            x = fw.tensor(rng.standard_normal(shape), dtype=dt, device=device)
            g = fw.tensor(rng.standard_normal(shape), dtype=dt, device=device)
            y = (fw.log_softmax if log else fw.softmax)(x, d)
            gx = fw.empty(shape, dtype=dt, device=device)
            alloc.backend(gx.device).softmax.softmax_backward(
                log, g, y, gx, int(np.prod(shape[:d])), shape[d], int(np.prod(shape[d + 1:])))
            Y, G = to_np(y).astype(np.float64), to_np(g).astype(np.float64)
            ref = (G - np.exp(Y) * G.sum(d, keepdims=True) if log else
                   Y * (G - (G * Y).sum(d, keepdims=True)))
            tol = 2e-2 if dt is fw.bfloat16 else 1e-5 if dt is fw.float32 else 1e-12
            np.testing.assert_allclose(to_np(gx).astype(np.float64), ref, rtol=tol, atol=tol)


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda (or its simulator)")
@pytest.mark.parametrize("reduction,want", [
    ("mean", ["_binary_kernel", "_ce_backward_kernel"]),   # grad_output / the saved total
    ("sum", ["_ce_backward_kernel"]),
])
def test_reduced_backward_launches(monkeypatch, reduction, want):
    """A reduced loss's backward hands the kernel one upstream value for every row (and,
    for 'mean', divides it by the total weight the forward kept): no per-row gradient is
    built, no target weights summed again."""
    from tests.helpers import launched_kernels
    x, t, _ = _case((6, 10), ignore=2)
    fx = fw_tensor(x, "cuda", dtype=fw.float32).requires_grad_()
    loss = F.cross_entropy(fx, fw_tensor(t, "cuda"), reduction=reduction, ignore_index=2)
    g = fw.ones((), device="cuda")   # (made before: the engine's ones_like would launch)
    names = launched_kernels(monkeypatch)
    loss.backward(g)
    assert names == want
    tx = torch.tensor(x, requires_grad=True)
    TF.cross_entropy(tx, torch.tensor(t), reduction=reduction, ignore_index=2).backward()
    np.testing.assert_allclose(to_np(fx.grad), tx.grad.numpy(), rtol=2e-5, atol=2e-6)


def test_backward_refuses_other_stats(device):
    x, t, _ = _case((3, 4))
    fx, ft = fw_tensor(x, device, dtype=fw.float32), fw_tensor(t, device)
    with pytest.raises(RuntimeError,
                       match="cross_entropy_backward: expected the forward.s stats, 7 contiguous"):
        fw._cross_entropy_loss_backward(fw.ones((), device=device), fx, ft, None, "mean",
                                        -100, 0.0, fw.zeros(2, 3, device=device))
