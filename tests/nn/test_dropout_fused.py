"""Fused dropout (_fused_dropout, _fused_dropout_add; framework/_ops/dropout.py): the mask
against a NumPy Philox reference across block edges, the keep fraction, kept values
x * scale and dropped zeros, gradients with the regenerated mask, the residual variant
against residual + dropout, gradcheck and gradgradcheck, the generator's stream, 0-d,
empty, non-contiguous and 16-bit inputs, and the transformer layers' fused residual adds."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from framework.nn.functional.dropout import _dropout_add
from tests.nn.common import fw_tensor, to_np

M32 = np.uint64(0xFFFFFFFF)


def _philox(seed, ctr):
    """Philox 4x32-10 words (n, 4) of uint64 counters ``ctr`` (key = seed), in NumPy."""
    c0, c1 = ctr & M32, ctr >> np.uint64(32)
    c2 = c3 = np.zeros_like(ctr)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    for _ in range(10):
        pa, pb = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c2 = ((pb >> np.uint64(32)) ^ c1 ^ k0) & M32, ((pa >> np.uint64(32)) ^ c3 ^ k1) & M32
        c1, c3 = pb & M32, pa & M32
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M32, (k1 + np.uint64(0xBB67AE85)) & M32
    return np.stack([c0, c1, c2, c3], 1)


def _keep_ref(n, p, seed, offset):
    """The documented mask: element i kept when word i % 4 of counter offset + i // 4 is
    >= round(p * 2**32)."""
    words = _philox(seed, np.uint64(offset) + np.arange((n + 3) // 4, dtype=np.uint64))
    return words.reshape(-1)[:n] >= np.uint64(round(p * 2**32))


def _x(shape, device, dtype=fw.float32, requires_grad=False, seed=0):
    """Values bounded away from zero, so a zero output means a dropped element."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    return fw_tensor(a, device, requires_grad=requires_grad, dtype=dtype)


def _scale32(p):
    return np.float32(1.0 / (1.0 - p))


@pytest.mark.parametrize("n", [1, 3, 1023, 4097])
def test_mask_matches_philox_reference(device, n):
    p, seed, offset = 0.35, 2**40 + 17, 2**33 + 5   # 64-bit seed and counter
    x = _x((n,), device)
    out = to_np(fw._fused_dropout(x, p, seed, offset))
    keep = _keep_ref(n, p, seed, offset)
    a = to_np(x)
    np.testing.assert_array_equal(out != 0, keep)
    np.testing.assert_array_equal(out[keep], a[keep] * _scale32(p))   # bit-exact
    assert np.all(out[~keep] == 0)


def test_keep_fraction_and_values(device):
    # n = 65536 keeps: mean 1 - p, sd sqrt(p (1 - p) / n) ~ 0.0018; 6 sd cannot flake
    p, n = 0.3, 65536
    x = _x((256, 256), device)
    fw.manual_seed(1234)
    out = to_np(F.dropout(x, p))
    kept = out != 0
    sd = (p * (1 - p) / n) ** 0.5
    assert abs(kept.mean() - (1 - p)) < 6 * sd
    # manual_seed restarts the counter: this call used (1234, 0), split across threads
    np.testing.assert_array_equal(kept.reshape(-1), _keep_ref(n, p, 1234, 0))
    a = to_np(x)
    np.testing.assert_array_equal(out[kept], a[kept] * _scale32(p))
    np.testing.assert_allclose(out[kept], a[kept] / (1 - p), rtol=1.2e-7)


def test_cpu_and_cuda_masks_agree():
    if not fw.cuda.is_available():
        pytest.skip("no cuda device (real or simulated)")
    x = _x((5, 409), "cpu")
    a = to_np(fw._fused_dropout(x, 0.5, 99, 7))
    b = to_np(fw._fused_dropout(x.to("cuda"), 0.5, 99, 7))
    np.testing.assert_array_equal(a, b)
    r = _x((5, 409), "cpu", seed=2)
    a = to_np(fw._fused_dropout_add(x, r, 0.3, 99, 7))
    b = to_np(fw._fused_dropout_add(x.to("cuda"), r.to("cuda"), 0.3, 99, 7))
    np.testing.assert_array_equal(a, b)


def test_grad_is_regenerated_mask(device):
    p = 0.4
    x = _x((7, 151), device, requires_grad=True)
    fw.manual_seed(5)
    out = F.dropout(x, p)
    g = np.random.default_rng(1).standard_normal((7, 151)).astype(np.float32)
    out.backward(fw_tensor(g, device))
    fw.manual_seed(5)
    mask = to_np(F.dropout(fw.ones(7, 151, device=device), p))  # keep * scale
    assert set(np.unique(mask)) <= {0.0, _scale32(p)}
    np.testing.assert_array_equal(to_np(x.grad), g * mask)
    np.testing.assert_array_equal(to_np(out) != 0, mask != 0)


def test_dropout_add_matches_composite(device):
    p = 0.25
    x = _x((9, 113), device, requires_grad=True)
    r = _x((9, 113), device, requires_grad=True, seed=1)
    fw.manual_seed(21)
    fused = _dropout_add(x, r, p)
    fw.manual_seed(21)
    ref = r.detach() + F.dropout(x.detach(), p)
    # the kernel rounds once (an fma), the composite twice: they differ by at most half an
    # ulp of x / (1 - p) (|x| < 2.7 here) and an ulp of the sum
    np.testing.assert_allclose(to_np(fused), to_np(ref), rtol=2.4e-7, atol=1.6e-7)
    g = np.random.default_rng(2).standard_normal((9, 113)).astype(np.float32)
    fused.backward(fw_tensor(g, device))
    fw.manual_seed(21)
    mask = to_np(F.dropout(fw.ones(9, 113, device=device), p))
    np.testing.assert_array_equal(to_np(r.grad), g)
    np.testing.assert_array_equal(to_np(x.grad), g * mask)


def test_dropout_add_fallbacks(device):
    x = _x((4, 6), device)
    # residual broadcast to the input: the composite, same values as residual + dropout
    r = _x((6,), device, seed=3)
    fw.manual_seed(8)
    out = _dropout_add(x, r, 0.5)
    fw.manual_seed(8)
    np.testing.assert_array_equal(to_np(out), to_np(r + F.dropout(x, 0.5)))
    # eval, p = 0, p = 1
    np.testing.assert_array_equal(to_np(_dropout_add(x, r, 0.5, training=False)),
                                  to_np(r + x))
    np.testing.assert_array_equal(to_np(_dropout_add(x, r, 0.0)), to_np(r + x))
    np.testing.assert_array_equal(to_np(_dropout_add(x, r, 1.0)),
                                  np.broadcast_to(to_np(r), (4, 6)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        _dropout_add(x, r, 1.5)


def test_gradcheck_and_gradgradcheck(device):
    # the mask is fixed by (seed, offset) inside the checked function: finite differences
    # see the same mask on every evaluation
    x = _x((2, 5), device, dtype=fw.float64, requires_grad=True)
    r = _x((2, 5), device, dtype=fw.float64, requires_grad=True, seed=4)
    f = lambda t: fw._fused_dropout(t, 0.4, 77, 3)  # noqa: E731
    fa = lambda t, s: fw._fused_dropout_add(t, s, 0.6, 78, 0)  # noqa: E731
    assert fw.autograd.gradcheck(f, (x,))
    assert fw.autograd.gradgradcheck(f, (x,))
    assert fw.autograd.gradcheck(fa, (x, r))
    assert fw.autograd.gradgradcheck(fa, (x, r))


def test_double_backward_is_the_mask(device):
    x = _x((40,), device, dtype=fw.float64, requires_grad=True)
    g = _x((40,), device, dtype=fw.float64, requires_grad=True, seed=5)
    y = fw._fused_dropout(x, 0.5, 3, 11)
    (gx,) = fw.autograd.grad(y, x, g, create_graph=True)
    (gg,) = fw.autograd.grad(gx.sum(), g)
    mask = to_np(fw._fused_dropout(fw.ones(40, dtype=fw.float64, device=device), 0.5, 3, 11))
    np.testing.assert_array_equal(to_np(gg), mask)
    np.testing.assert_array_equal(to_np(gx), to_np(g) * mask)


def test_stream_reproducible_and_advancing(device):
    x = fw.ones(1001, device=device)
    fw.manual_seed(7)
    gen = fw.random.get_generator(x._storage.device)
    start = gen.get_offset()
    a = to_np(F.dropout(x, 0.5))
    assert gen.get_offset() == start + 251       # one counter per four elements
    b = to_np(F.dropout(x, 0.5))
    fw.manual_seed(7)
    np.testing.assert_array_equal(to_np(F.dropout(x, 0.5)), a)
    assert not np.array_equal(a, b)


def test_unchanged_cases(device):
    x = _x((3, 5), device, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    out = F.dropout(x, 1.0)
    np.testing.assert_array_equal(to_np(out), np.zeros((3, 5)))
    e = fw.empty(0, 3, device=device)
    assert F.dropout(e, 0.5) is e
    assert fw._fused_dropout(e, 0.5, 1, 0).shape == (0, 3)
    y = _x((50,), device)
    fw.manual_seed(3)
    assert F.dropout(y, 0.3, inplace=True) is y   # inplace keeps the composite


def test_zero_dim_and_non_contiguous(device):
    s = fw.tensor(1.5, device=device)
    out = fw._fused_dropout(s, 0.5, 1, 0)
    assert out.shape == ()
    keep = _keep_ref(1, 0.5, 1, 0)[0]
    assert float(out) == (3.0 if keep else 0.0)
    base = _x((24, 10), device)
    t = base.t()[:, ::2]                      # (10, 12), not contiguous
    assert not t.is_contiguous()
    got = fw._fused_dropout(t, 0.5, 9, 2)
    np.testing.assert_array_equal(to_np(got), to_np(fw._fused_dropout(t.contiguous(), 0.5,
                                                                      9, 2)))
    got = fw._fused_dropout_add(t, t, 0.5, 9, 2)
    np.testing.assert_array_equal(to_np(got), to_np(t) + to_np(fw._fused_dropout(t, 0.5,
                                                                                 9, 2)))


@pytest.mark.parametrize("dtype", [fw.float16, fw.bfloat16, fw.float64])
def test_dtypes(device, dtype):
    p, n = 0.5, 515
    x = _x((n,), device, dtype=dtype, requires_grad=True)
    out = fw._fused_dropout(x, p, 4, 1)
    assert out.dtype is dtype
    keep = _keep_ref(n, p, 4, 1)
    o, a = to_np(out).astype(np.float64), to_np(x).astype(np.float64)
    np.testing.assert_array_equal(o != 0, keep)
    np.testing.assert_array_equal(o[keep], a[keep] * 2)   # * 2 is exact in every dtype
    out.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad).astype(np.float64), keep * 2.0)
    # 16-bit residual add: one rounding of the float32 sum
    r = _x((n,), device, dtype=dtype, seed=6)
    got = to_np(fw._fused_dropout_add(x, r, p, 4, 1)).astype(np.float64)
    ref = to_np(r).astype(np.float64) + np.where(keep, a * 2, 0.0)
    tol = {fw.float16: 1e-3, fw.bfloat16: 8e-3, fw.float64: 1e-15}[dtype]
    np.testing.assert_allclose(got, ref, rtol=tol, atol=0)


def test_errors(device):
    with pytest.raises(RuntimeError, match="_fused_dropout: expected a floating point"):
        fw._fused_dropout(fw.ones(3, dtype=fw.int64, device=device), 0.5, 0, 0)
    with pytest.raises(RuntimeError, match=r"_fused_dropout_add: .*\[2, 3\].*\[3\]"):
        fw._fused_dropout_add(fw.ones(2, 3, device=device), fw.ones(3, device=device), 0.5,
                              0, 0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        fw._fused_dropout(fw.ones(3, device=device), -0.1, 0, 0)


def test_transformer_layer_training(device, monkeypatch):
    """The layers' residual adds go through _fused_dropout_add in training: reproducible
    under manual_seed, differentiable, and hooks on the dropout modules still run."""
    fused = fw._fused_dropout_add
    calls = []
    monkeypatch.setattr(fw, "_fused_dropout_add", lambda *a: calls.append("fused") or fused(*a))
    fw.manual_seed(0)
    layer = fw.nn.TransformerEncoderLayer(8, 2, 12, dropout=0.3).to(device)
    src = _x((3, 2, 8), device, requires_grad=True)
    fw.manual_seed(1)
    a = layer(src)
    assert calls == ["fused", "fused"]    # the attention and feed-forward residual adds
    fw.manual_seed(1)
    b = layer(src)
    np.testing.assert_array_equal(to_np(a), to_np(b))
    a.sum().backward()
    assert np.isfinite(to_np(src.grad)).all()
    calls.clear()
    layer.dropout1.register_forward_hook(lambda m, i, o: calls.append("hook"))
    layer(src)
    assert calls == ["hook", "fused"]    # dropout1 called as a module; the other add fused
    layer.eval()
    e = layer(src)
    np.testing.assert_array_equal(to_np(e), to_np(layer(src)))
