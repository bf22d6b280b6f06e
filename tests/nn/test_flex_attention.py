"""framework.nn.attention.flex_attention against PyTorch's: the forward against torch's
flex_attention (its eager path, in float64), gradients against torch autograd through the
same attention written with torch ops, BlockMask layouts against torch's create_block_mask."""
import numpy as np
import pytest

import framework as fw
from framework.nn.attention import flex_attention as ffa

torch = pytest.importorskip("torch")
tfa = pytest.importorskip("torch.nn.attention.flex_attention")

B, H, L, S, E = 2, 2, 37, 53, 8


@pytest.fixture(autouse=True)
def _torch_eager(monkeypatch):
    # torch's flex_attention compiles unless asked to run its eager (math) path
    monkeypatch.setattr(tfa, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)


def _cpu_only(device):
    # the mask and mod logic is device independent and each simulated-cuda launch is slow:
    # these variants run on cpu, their cuda code path is covered by the other cases
    if device != "cpu":
        pytest.skip("covered on cpu; the cuda path is exercised by the other cases")


def _np(t):
    return t.detach().cpu().float().numpy() if t.dtype == fw.bfloat16 else t.detach().cpu().numpy()


def _tnp(t):
    return t.detach().double().numpy()


# -- mods, written once over the library (torch or framework) they run with ------------------

def _causal(lib):
    return lambda b, h, q, k: q >= k


def _sliding(lib):
    return ffa.and_masks(_causal(lib), lambda b, h, q, k: (q - k) <= 8) if lib is fw else \
        tfa.and_masks(_causal(lib), lambda b, h, q, k: (q - k) <= 8)


def _prefix_lm(lib):
    ors = ffa.or_masks if lib is fw else tfa.or_masks
    return ors(_causal(lib), lambda b, h, q, k: k < 5)


def _document(lib, docs_np, device="cpu"):
    docs = lib.tensor(docs_np, device=device)
    return lambda b, h, q, k: (docs[b, q] == docs[b, k]) & (q >= k)


def _alibi(lib, slopes_np, device="cpu"):
    slopes = lib.tensor(slopes_np, device=device)
    return lambda score, b, h, q, k: score + slopes[h] * (k - q)


def _softcap(lib):
    return lambda score, b, h, q, k: 5.0 * lib.tanh(score / 5.0)


def _relpos(lib, rel):
    return lambda score, b, h, q, k: score + rel[h, q - k + (S - 1)]


def _docs():
    return np.stack([np.repeat([0, 1, 2], [10, 20, 23]), np.repeat([0, 1], [30, 23])])


CASES = {
    "none": (None, None),
    "causal": (None, lambda lib, dev: _causal(lib)),
    "sliding": (None, lambda lib, dev: _sliding(lib)),
    "prefix_lm": (None, lambda lib, dev: _prefix_lm(lib)),
    "document": (None, lambda lib, dev: _document(lib, _docs(), dev)),
    "alibi": (lambda lib, dev: _alibi(lib, np.array([0.5, 0.25]), dev), None),
    "softcap_causal": (lambda lib, dev: _softcap(lib), lambda lib, dev: _causal(lib)),
}


def _inputs(device, hq=H, hkv=H, dtype=fw.float32, l=L, s=S):
    q = np.random.randn(B, hq, l, E)
    k = np.random.randn(B, hkv, s, E)
    v = np.random.randn(B, hkv, s, E)
    f = [fw.tensor(x, dtype=dtype, device=device) for x in (q, k, v)]
    # torch sees the values the framework sees (rounded to dtype), in float64
    t = [torch.tensor(_np(x)).double() for x in f]
    return f, t


def _torch_flex(t, score_mod, mask_mod, block=16, **kw):
    bm = None
    if mask_mod is not None:
        bm = tfa.create_block_mask(mask_mod, B, None, t[0].shape[2], t[1].shape[2],
                                   device="cpu", BLOCK_SIZE=block)
    return tfa.flex_attention(*t, score_mod=score_mod, block_mask=bm,
                              return_aux=tfa.AuxRequest(lse=True), **kw)


def _fw_flex(f, score_mod, mask_mod, device, block=16, **kw):
    bm = None
    if mask_mod is not None:
        bm = ffa.create_block_mask(mask_mod, B, None, f[0].shape[2], f[1].shape[2],
                                   device=device, BLOCK_SIZE=block)
    return ffa.flex_attention(*f, score_mod=score_mod, block_mask=bm,
                              return_aux=ffa.AuxRequest(lse=True), **kw)


@pytest.mark.parametrize("case", list(CASES))
def test_forward_matches_torch(device, case):
    if case in ("sliding", "prefix_lm", "alibi"):
        _cpu_only(device)
    score_f, mask_f = CASES[case]
    f, t = _inputs(device)
    mk = (lambda g, lib, dev: g(lib, dev) if g is not None else None)   # noqa: E731
    t_out, t_aux = _torch_flex(t, mk(score_f, torch, "cpu"), mk(mask_f, torch, "cpu"))
    f_out, f_aux = _fw_flex(f, mk(score_f, fw, device), mk(mask_f, fw, device), device)
    assert f_out.dtype == fw.float32 and f_out.shape == (B, H, L, E)
    assert f_aux.lse.shape == (B, H, L) and f_aux.max_scores is None
    np.testing.assert_allclose(_np(f_out), _tnp(t_out), atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(_np(f_aux.lse), _tnp(t_aux.lse), atol=2e-5, rtol=1e-5)


def test_default_block_size_and_scale(device):
    _cpu_only(device)
    f, t = _inputs(device)
    t_out, t_aux = _torch_flex(t, None, _causal(torch), block=128, scale=0.3)
    f_out, f_aux = _fw_flex(f, None, _causal(fw), device, block=128, scale=0.3)
    np.testing.assert_allclose(_np(f_out), _tnp(t_out), atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(_np(f_aux.lse), _tnp(t_aux.lse), atol=2e-5, rtol=1e-5)


def test_gqa(device):
    f, t = _inputs(device, hq=4, hkv=2)
    mod = lambda lib: (lambda score, b, h, q, k: score + h * 0.5)   # noqa: E731
    t_out, t_aux = _torch_flex(t, mod(torch), _causal(torch), enable_gqa=True)
    f_out, f_aux = _fw_flex(f, mod(fw), _causal(fw), device, enable_gqa=True)
    assert f_out.shape == (B, 4, L, E)
    np.testing.assert_allclose(_np(f_out), _tnp(t_out), atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(_np(f_aux.lse), _tnp(t_aux.lse), atol=2e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="enable_gqa=True"):
        ffa.flex_attention(*f)


def test_fully_masked_rows_and_return_lse(device):
    f, t = _inputs(device)
    mask = lambda b, h, q, k: (k < q - 20)   # noqa: E731  rows q <= 20 see nothing
    t_out, t_lse = tfa.flex_attention(
        *t, block_mask=tfa.create_block_mask(mask, None, None, L, S, "cpu", BLOCK_SIZE=16),
        return_lse=True)
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        ffa._WARNINGS_SHOWN.discard("deprecated_return_lse")
        f_out, f_lse = ffa.flex_attention(
            *f, block_mask=ffa.create_block_mask(mask, None, None, L, S, device, 16),
            return_lse=True)
    out, lse = _np(f_out), _np(f_lse)
    assert np.all(out[:, :, :21] == 0) and np.all(np.isneginf(lse[:, :, :21]))
    np.testing.assert_allclose(out, _tnp(t_out), atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(lse, _tnp(t_lse), atol=2e-5, rtol=1e-5)


def test_bfloat16(device):
    f, t = _inputs(device, dtype=fw.bfloat16)
    t_out, t_aux = _torch_flex(t, _softcap(torch), _causal(torch))
    f_out, f_aux = _fw_flex(f, _softcap(fw), _causal(fw), device)
    assert f_out.dtype == fw.bfloat16 and f_aux.lse.dtype == fw.float32
    np.testing.assert_allclose(_np(f_out), _tnp(t_out), atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(_np(f_aux.lse), _tnp(t_aux.lse), atol=1e-4, rtol=1e-4)


def test_max_scores(device):
    _cpu_only(device)
    f, _ = _inputs(device)
    out, aux = ffa.flex_attention(*f, score_mod=_softcap(fw),
                                  return_aux=ffa.AuxRequest(max_scores=True))
    q, k = (_np(x).astype(np.float64) for x in f[:2])
    ref = 5 * np.tanh(q @ k.transpose(0, 1, 3, 2) / np.sqrt(E) / 5)
    assert aux.lse is None
    np.testing.assert_allclose(_np(aux.max_scores), ref.max(-1), atol=1e-5)


# -- gradients: torch autograd through the same attention written with torch ops -------------

def _torch_attention(q, k, v, score_mod, mask_mod, scale):
    idx = [torch.arange(n).view(*[n if i == j else 1 for i in range(4)])
           for j, n in enumerate((q.shape[0], q.shape[1], q.shape[2], k.shape[2]))]
    s = q @ k.transpose(-2, -1) * scale
    if score_mod is not None:
        s = score_mod(s, *idx)
    if mask_mod is not None:
        s = torch.where(mask_mod(*idx), s, -float("inf"))
    return torch._safe_softmax(s, -1) @ v


@pytest.mark.parametrize("case", ["relpos_causal", "softcap_sliding", "document_masked_rows"])
def test_gradients(device, case):
    if case != "document_masked_rows":
        _cpu_only(device)
    f, t = _inputs(device)
    rel_np = np.random.randn(H, L + S)
    rel_f = fw.tensor(rel_np, dtype=fw.float32, device=device, requires_grad=True)
    rel_t = torch.tensor(rel_np, requires_grad=True)
    if case == "relpos_causal":
        mods = lambda lib, rel: (_relpos(lib, rel), _causal(lib))   # noqa: E731
    elif case == "softcap_sliding":
        mods = lambda lib, rel: (_softcap(lib), _sliding(lib))   # noqa: E731
    else:
        def mods(lib, rel, dev="cpu"):
            doc = _document(lib, _docs(), dev)
            # rows q <= 3 see nothing: their gradients must be zero, not NaN
            return _relpos(lib, rel), lambda b, h, q, k: doc(b, h, q, k) & (k < q - 3)
    for x in f + t:
        x.requires_grad_(True)
    gout = np.random.randn(B, H, L, E)
    sm, mm = mods(torch, rel_t)
    ref = _torch_attention(*t, sm, mm, 1 / np.sqrt(E))
    ref.backward(torch.tensor(gout))
    sm, mm = mods(fw, rel_f, device) if case == "document_masked_rows" else mods(fw, rel_f)
    out = ffa.flex_attention(*f, score_mod=sm,
                             block_mask=ffa.create_block_mask(mm, B, None, L, S, device, 16))
    out.backward(fw.tensor(gout, dtype=fw.float32, device=device))
    np.testing.assert_allclose(_np(out), _tnp(ref), atol=2e-5, rtol=1e-5)
    for a, b in zip(f, t):
        assert np.all(np.isfinite(_np(a.grad)))
        np.testing.assert_allclose(_np(a.grad), _tnp(b.grad), atol=1e-4, rtol=1e-4)
    if case != "softcap_sliding":
        np.testing.assert_allclose(_np(rel_f.grad), _tnp(rel_t.grad), atol=1e-4, rtol=1e-4)


def test_lse_gradient(device):
    f, t = _inputs(device)
    for x in f + t:
        x.requires_grad_(True)
    mask = lambda b, h, q, k: k < q - 20   # noqa: E731
    _, aux = ffa.flex_attention(*f, block_mask=ffa.create_block_mask(mask, 1, 1, L, S, device),
                                return_aux=ffa.AuxRequest(lse=True))
    s = t[0] @ t[1].transpose(-2, -1) / np.sqrt(E)
    m = torch.arange(S)[None, :] < torch.arange(L)[:, None] - 20
    lse = torch.where(m, s, -float("inf")).logsumexp(-1)
    live = slice(21, None)
    lse[..., live].sum().backward()
    aux.lse[..., live].sum().backward()
    for a, b in zip(f[:2], t[:2]):
        np.testing.assert_allclose(_np(a.grad), _tnp(b.grad), atol=1e-4, rtol=1e-4)


# -- block masks ------------------------------------------------------------------------------

@pytest.mark.parametrize("mask,shape,block", [
    ("causal", (37, 53), 16), ("sliding", (37, 53), 16), ("causal", (300, 260), 128),
    ("sliding", (40, 24), (16, 8)), ("document", (37, 53), 16)])
def test_create_block_mask_matches_torch(device, mask, shape, block):
    if shape[0] > 100 or block != 16:
        _cpu_only(device)
    mk = {"causal": _causal, "sliding": _sliding,
          "document": lambda lib, dev="cpu": _document(lib, _docs(), dev)}[mask]
    tb = tfa.create_block_mask(mk(torch), B, None, *shape, device="cpu", BLOCK_SIZE=block)
    fb = ffa.create_block_mask(mk(fw, device) if mask == "document" else mk(fw), B, None,
                               *shape, device=device, BLOCK_SIZE=block)
    for name in ffa.BlockMask._TENSOR_ATTRS:
        got = getattr(fb, name)
        assert got.dtype == fw.int32 and got.device.type == device
        np.testing.assert_array_equal(_np(got), getattr(tb, name).numpy(), err_msg=name)
    np.testing.assert_array_equal(_np(fb.to_dense()), tb.to_dense().numpy())
    assert fb.shape == tb.shape and fb.BLOCK_SIZE == tb.BLOCK_SIZE
    assert fb.sparsity() == pytest.approx(tb.sparsity())
    assert str(fb) == str(tb)
    assert repr(fb) == repr(tb).replace("torch.Size", "framework.Size")
    sub_f, sub_t = fb[1], tb[1]
    np.testing.assert_array_equal(_np(sub_f.kv_indices), sub_t.kv_indices.numpy())
    np.testing.assert_array_equal(_np(sub_f.q_num_blocks), sub_t.q_num_blocks.numpy())


def test_create_mask_and_combinators(device):
    for mk in (_sliding, _prefix_lm):
        got = ffa.create_mask(mk(fw), B, H, L, S, device)
        want = tfa.create_mask(mk(torch), B, H, L, S, "cpu")
        assert got.shape == (B, H, L, S) and got.dtype == fw.bool
        np.testing.assert_array_equal(_np(got), want.numpy())
    def cut(lib):
        return lambda score, b, h, q, k: lib.where(k > q + h, -float("inf"), score)
    got = ffa.create_mask(cut(fw), 1, 2, 4, 5, device)
    want = tfa.create_mask(cut(torch), 1, 2, 4, 5, "cpu")
    np.testing.assert_array_equal(_np(got), want.numpy())
    z = fw.tensor(0, device=device)
    assert ffa.noop_mask(z, z, z, z).item() is True
    with pytest.raises(RuntimeError, match="callable"):
        ffa.and_masks(_causal(fw), 3)


def test_block_structure_is_honoured(device):
    # a BlockMask from kv blocks: absent blocks are masked even though mask_mod allows
    # them, full blocks are kept even though mask_mod forbids them (as torch's kernels do)
    nb = fw.tensor([[[1, 1, 0]]], dtype=fw.int32, device=device)
    idx = fw.tensor([[[[1, 0], [0, 1], [0, 1]]]], dtype=fw.int32, device=device)
    full_nb = fw.tensor([[[0, 1, 0]]], dtype=fw.int32, device=device)
    full_idx = fw.tensor([[[[0, 1], [1, 0], [0, 1]]]], dtype=fw.int32, device=device)
    bm = ffa.BlockMask.from_kv_blocks(nb, idx, full_nb, full_idx, BLOCK_SIZE=16,
                                      mask_mod=lambda b, h, q, k: (q + k) % 3 != 0,
                                      seq_lengths=(37, 20))
    f, _ = _inputs(device, s=20)
    out = ffa.flex_attention(*f, block_mask=bm)
    qi, ki = np.arange(37)[:, None], np.arange(20)[None, :]
    qb, kb = qi // 16, ki // 16
    allowed = (((qb == 0) & (kb == 1)) | ((qb == 1) & (kb == 0))) & ((qi + ki) % 3 != 0)
    allowed |= (qb == 1) & (kb == 1)
    q, k, v = (_np(x).astype(np.float64) for x in f)
    s = np.where(allowed, q @ k.transpose(0, 1, 3, 2) / np.sqrt(E), -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True).clip(-1e300))
    den = p.sum(-1, keepdims=True)
    ref = np.where(den > 0, p / np.where(den > 0, den, 1), 0) @ v
    np.testing.assert_allclose(_np(out), ref, atol=2e-5, rtol=1e-5)
    assert np.all(_np(out)[:, :, 32:] == 0)


def test_block_mask_adjust_and_to(device):
    fb = ffa.create_block_mask(_causal(fw), 1, 1, 64, 64, device=device, BLOCK_SIZE=16)
    tb = tfa.create_block_mask(_causal(torch), 1, 1, 64, 64, device="cpu", BLOCK_SIZE=16)
    fa, ta = fb._adjust(40, 40), tb._adjust(40, 40)
    assert fa.shape == ta.shape
    np.testing.assert_array_equal(_np(fa.kv_num_blocks), ta.kv_num_blocks.numpy())
    np.testing.assert_array_equal(_np(fa.to_dense()), ta.to_dense().numpy())
    moved = fb.to("cpu")
    assert moved.kv_indices.device == fw.device("cpu") and moved.mask_mod is fb.mask_mod


def test_errors(device):
    f, _ = _inputs(device)
    bm = ffa.create_block_mask(_causal(fw), 1, 1, L, S, device, 16)
    with pytest.raises(ValueError, match="created for a larger length"):
        ffa.flex_attention(f[0][:, :, :20], f[1], f[2], block_mask=bm)
    longer = fw.randn(B, H, S + 1, E, device=device)
    with pytest.raises(ValueError, match="created for a smaller length"):
        ffa.flex_attention(f[0], longer, longer, block_mask=bm)
    with pytest.raises(RuntimeError, match="sliced BlockMask"):
        ffa.flex_attention(*f, block_mask=bm[0])
    with pytest.raises(ValueError, match="Cannot specify both"):
        ffa.flex_attention(*f, return_lse=True, return_aux=ffa.AuxRequest(lse=True))
    with pytest.raises(ValueError, match="same embedding dimension"):
        ffa.flex_attention(f[0], f[1][..., :4], f[2])
    with pytest.raises(AssertionError, match="requires a mask_mod"):
        ffa.create_block_mask(_softcap(fw), 1, 1, L, S, device)
