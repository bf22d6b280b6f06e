"""The fused (block-sparse flash attention) path of flex_attention: calls with a BlockMask
and no score_mod. Outputs, lse and gradients against the eager path (the reference, forced
by turning the fused path off) and against PyTorch: the forward against torch's
flex_attention (eager, float64), gradients against torch autograd through the same
attention written with torch ops (torch's flex_attention has no CPU backward). The
block-skipping test shows the kernels never load an unlisted block."""
import numpy as np
import pytest

import framework as fw
from framework.nn.attention import _flex_fused
from framework.nn.attention import flex_attention as ffa

torch = pytest.importorskip("torch")
tfa = pytest.importorskip("torch.nn.attention.flex_attention")

E = 8


@pytest.fixture(autouse=True)
def _torch_eager(monkeypatch):
    # torch's flex_attention compiles unless asked to run its eager (math) path
    monkeypatch.setattr(tfa, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


@pytest.fixture
def fused_calls(monkeypatch):
    """Counts the calls that took the fused path."""
    calls = []
    real = _flex_fused.fused_flex_attention

    def spy(*args):
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(_flex_fused, "fused_flex_attention", spy)
    return calls


def _eager(fn):
    """fn() run on the eager path."""
    real = _flex_fused.fusable
    _flex_fused.fusable = lambda *a: False
    try:
        return fn()
    finally:
        _flex_fused.fusable = real


def _np(t):
    t = t.detach().cpu()
    return (t.float() if t.dtype == fw.bfloat16 else t).numpy().astype(np.float64)


def _causal(lib):
    return lambda b, h, q, k: q >= k


def _sliding(lib):
    ands = ffa.and_masks if lib is fw else tfa.and_masks
    return ands(_causal(lib), lambda b, h, q, k: (q - k) <= 20)


def _prefix_lm(lib):
    ors = ffa.or_masks if lib is fw else tfa.or_masks
    return ors(_causal(lib), lambda b, h, q, k: k < 5)


def _document(lib, L, S, device="cpu"):
    # per-batch documents: the mask reads b, so it is materialised per batch
    dq = np.stack([np.arange(L) * 3 // L, np.arange(L) * 2 // L])
    dk = np.stack([np.arange(S) * 3 // S, np.arange(S) * 2 // S])
    dq, dk = lib.tensor(dq, device=device), lib.tensor(dk, device=device)
    return lambda b, h, q, k: dq[b, q] == dk[b, k]


MASKS = {"causal": _causal, "sliding": _sliding, "prefix_lm": _prefix_lm,
         "document": _document}


def _mod(name, lib, L, S, device="cpu"):
    f = MASKS[name]
    return f(lib, L, S, device) if name == "document" else f(lib)


def _inputs(device, B, hq, hkv, L, S, dtype=fw.float32, grad=True):
    xs = [np.random.randn(B, hq, L, E), np.random.randn(B, hkv, S, E),
          np.random.randn(B, hkv, S, E)]
    f = [fw.tensor(x, dtype=dtype, device=device, requires_grad=grad) for x in xs]
    t = [torch.tensor(_np(x), requires_grad=True) for x in f]
    return f, t


def _torch_attention(q, k, v, mask_mod):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    idx = [torch.arange(n).view(*[n if i == j else 1 for i in range(4)])
           for j, n in enumerate((q.shape[0], q.shape[1], q.shape[2], k.shape[2]))]
    s = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    s = torch.where(mask_mod(*idx), s, -float("inf"))
    return torch._safe_softmax(s, -1) @ v


def _block_masks(case, B, L, S, block, device):
    """The BlockMask on cpu (for the eager reference) and on ``device`` (built on cpu and
    moved: create_block_mask's own ops are slow under the interpreter)."""
    cpu = ffa.create_block_mask(_mod(case, fw, L, S), B, None, L, S, "cpu", block)
    dev = cpu.to(device)
    dev.mask_mod = _mod(case, fw, L, S, device)
    return cpu, dev


def _cpu_eager(f, bm, gout, **kw):
    """The eager path's output and input gradients on cpu copies of ``f`` (it is device
    independent; test_flex_attention.py runs it on cuda)."""
    xs = [x.detach().cpu().requires_grad_(True) for x in f]
    out = _eager(lambda: ffa.flex_attention(*xs, block_mask=bm, **kw))
    out.backward(gout.cpu())
    return _np(out), [_np(x.grad) for x in xs]


def _check_grads(f, out, gout, ref_grads, atol):
    for x in f:
        x.grad = None
    out.backward(gout)
    for x, g in zip(f, ref_grads):
        assert np.all(np.isfinite(_np(x.grad)))
        np.testing.assert_allclose(_np(x.grad), g, atol=atol, rtol=atol)


@pytest.mark.parametrize("case,L,S,block", [
    ("causal", 37, 53, 16), ("sliding", 37, 53, 16), ("prefix_lm", 37, 53, 16),
    ("document", 37, 53, 16), ("causal", 80, 80, 32), ("document", 80, 80, 32)])
def test_matches_eager_and_torch(device, case, L, S, block, fused_calls):
    B, H = 2, 2
    f, t = _inputs(device, B, H, H, L, S)
    bm_cpu, bm = _block_masks(case, B, L, S, block, device)
    out = ffa.flex_attention(*f, block_mask=bm)
    assert len(fused_calls) == 1 and out.shape == (B, H, L, E) and out.dtype == fw.float32
    gout = fw.tensor(np.random.randn(B, H, L, E), dtype=fw.float32, device=device)
    eager, eager_grads = _cpu_eager(f, bm_cpu, gout)
    np.testing.assert_allclose(_np(out), eager, atol=1e-5, rtol=1e-5)

    tbm = tfa.create_block_mask(_mod(case, torch, L, S), B, None, L, S, "cpu", BLOCK_SIZE=block)
    with torch.no_grad():
        t_out = tfa.flex_attention(*[x.detach().double() for x in t], block_mask=tbm)
    np.testing.assert_allclose(_np(out), t_out.numpy(), atol=2e-5, rtol=1e-5)

    ref = _torch_attention(*[x.double() for x in t], _mod(case, torch, L, S))
    ref.backward(torch.tensor(_np(gout)))
    torch_grads = [x.grad.double().numpy() for x in t]
    for a, b in zip(eager_grads, torch_grads):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)
    _check_grads(f, out, gout, eager_grads, 1e-5)


@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
def test_dtypes_and_gqa(device, dtype, fused_calls):
    dtype = getattr(fw, dtype)
    B, L, S = 1, 37, 53
    f, t = _inputs(device, B, 4, 2, L, S, dtype=dtype)
    bm_cpu, bm = _block_masks("prefix_lm", None, L, S, 16, device)
    out = ffa.flex_attention(*f, block_mask=bm, enable_gqa=True)
    assert len(fused_calls) == 1 and out.dtype == dtype and out.shape == (B, 4, L, E)
    gout = fw.tensor(np.random.randn(B, 4, L, E), dtype=dtype, device=device)
    eager, eager_grads = _cpu_eager(f, bm_cpu, gout, enable_gqa=True)
    tol = 1e-12 if dtype == fw.float64 else 2e-2
    np.testing.assert_allclose(_np(out), eager, atol=tol, rtol=tol)
    tbm = tfa.create_block_mask(_prefix_lm(torch), None, None, L, S, "cpu", BLOCK_SIZE=16)
    with torch.no_grad():
        t_out = tfa.flex_attention(*[x.detach().double() for x in t], block_mask=tbm,
                                   enable_gqa=True)
    np.testing.assert_allclose(_np(out), t_out.numpy(), atol=tol, rtol=tol)

    ref = _torch_attention(*[x.double() for x in t], _prefix_lm(torch))
    ref.backward(torch.tensor(_np(gout)))
    for a, x in zip(eager_grads, t):
        np.testing.assert_allclose(a, x.grad.numpy(), atol=10 * tol, rtol=10 * tol)
    _check_grads(f, out, gout, eager_grads, 1e-10 if dtype == fw.float64 else 5e-2)


def test_fully_masked_rows_and_lse(device, fused_calls):
    B, H, L, S = 1, 2, 37, 53
    f, t = _inputs(device, B, H, H, L, S)
    mask = lambda b, h, q, k: (k < q - 20)   # noqa: E731  rows q <= 20 see nothing
    bm = ffa.create_block_mask(mask, None, None, L, S, device, 16)
    with fw.no_grad():
        out, aux = ffa.flex_attention(*f, block_mask=bm, return_aux=ffa.AuxRequest(lse=True))
    assert len(fused_calls) == 1 and aux.max_scores is None
    o, lse = _np(out), _np(aux.lse)
    assert np.all(o[:, :, :21] == 0) and np.all(np.isneginf(lse[:, :, :21]))
    with torch.no_grad():
        t_out, t_lse = tfa.flex_attention(
            *[x.detach().double() for x in t], return_lse=True,
            block_mask=tfa.create_block_mask(mask, None, None, L, S, "cpu", BLOCK_SIZE=16))
    np.testing.assert_allclose(o, t_out.numpy(), atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(lse, t_lse.numpy(), atol=2e-5, rtol=1e-5)

    # deprecated return_lse takes the same path; gradients of the empty rows are zero
    ffa._WARNINGS_SHOWN.add("deprecated_return_lse")
    with fw.no_grad():
        out2, lse2 = ffa.flex_attention(*f, block_mask=bm, return_lse=True)
    assert len(fused_calls) == 2
    np.testing.assert_array_equal(_np(lse2), lse)
    out = ffa.flex_attention(*f, block_mask=bm)
    out.sum().backward()
    assert np.all(_np(f[0].grad)[:, :, :21] == 0)
    ref = _torch_attention(*[x.double() for x in t], mask)
    ref.sum().backward()
    for x, y in zip(f, t):
        np.testing.assert_allclose(_np(x.grad), y.grad.numpy(), atol=1e-4, rtol=1e-4)


def test_falls_back_to_eager(device, fused_calls):
    # a block size the kernels cannot tile, a score_mod, an lse that needs a gradient
    f, _ = _inputs(device, 1, 2, 2, 20, 20)
    bm = ffa.create_block_mask(_causal(fw), None, None, 20, 20, device, 24)
    ffa.flex_attention(*f, block_mask=bm)
    bm = ffa.create_block_mask(_causal(fw), None, None, 20, 20, device, 16)
    ffa.flex_attention(*f, block_mask=bm, score_mod=lambda s, b, h, q, k: s * 2)
    _, aux = ffa.flex_attention(*f, block_mask=bm, return_aux=ffa.AuxRequest(lse=True))
    assert aux.lse.requires_grad and not fused_calls


def test_unlisted_blocks_are_never_loaded(device, fused_calls):
    """NaN in the key/value (or query) rows of blocks the BlockMask does not list for a
    block: a kernel that loaded them, even to mask them out, would give NaN (0 * NaN)."""
    if device == "cpu":
        pytest.skip("the CPU kernels take the materialised mask; skipping is the kernels'")
    L = S = 48
    diag = lambda b, h, q, k: q // 16 == k // 16   # noqa: E731  block diagonal
    bm = ffa.create_block_mask(diag, None, None, L, S, device, 16)
    f, _ = _inputs("cpu", 1, 2, 2, L, S, grad=False)
    q, k, v = (_np(x) for x in f)
    v[:, :, 16:32] = np.nan                # forward and dq: kv block 1
    xs = [fw.tensor(x, dtype=fw.float32, device=device, requires_grad=True) for x in (q, k, v)]
    out = ffa.flex_attention(*xs, block_mask=bm)
    out.sum().backward()
    o, dq = _np(out), _np(xs[0].grad)
    rows = np.r_[0:16, 32:48]
    assert np.all(np.isfinite(o[:, :, rows])) and np.all(np.isfinite(dq[:, :, rows]))
    assert np.all(np.isnan(o[:, :, 16:32]))
    q2, v2 = q.copy(), _np(f[2])
    q2[:, :, 16:32] = np.nan               # dk and dv: query block 1
    xs = [fw.tensor(x, dtype=fw.float32, device=device, requires_grad=True) for x in (q2, k, v2)]
    ffa.flex_attention(*xs, block_mask=bm).sum().backward()
    dk, dv = _np(xs[1].grad), _np(xs[2].grad)
    assert np.all(np.isfinite(dk[:, :, rows])) and np.all(np.isfinite(dv[:, :, rows]))
    assert len(fused_calls) == 2
