"""The fused flash-attention op behind F.scaled_dot_product_attention (_fused_sdpa and its
backward): outputs and dQ/dK/dV against float64 NumPy and against torch, every mask kind,
causal with Lq != Lk, grouped-query heads, head dims 32/64/40 (padded), sequences crossing
the blocks (the interpreter's are 16), dtypes, fully masked rows, dropout (statistics and
the same mask in forward and backward), gradcheck, and the peak memory of simulated cuda."""
import math

import numpy as np
import pytest

import framework as fw
from framework._ops import attention as attn_ops
from framework.nn import functional as F
from tests.helpers import to_np


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def _ref(q, k, v, mask=None, causal=False, scale=None, keep=None, p=0.0, dout=None):
    """float64 NumPy attention and (given dout) its gradients; keys/values repeat over the
    query heads they serve; rows with every key masked give 0."""
    group = q.shape[-3] // k.shape[-3]
    kr, vr = np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(kr, -1, -2) * scale
    L, S = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0, m))
    den = e.sum(-1, keepdims=True)
    pr = np.where(dead, 0, e / np.where(dead, 1, den))
    f = 1.0 if keep is None else keep / (1 - p)
    out = (pr * f) @ vr
    if dout is None:
        return out
    dv = np.swapaxes(pr * f, -1, -2) @ dout
    dp = dout @ np.swapaxes(vr, -1, -2) * f
    ds = pr * (dp - (dout * out).sum(-1, keepdims=True))
    dq = ds @ kr * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale

    def fold(g):   # sum over the query heads sharing a key head
        return g.reshape(g.shape[:-3] + (k.shape[-3], group) + g.shape[-2:]).sum(-3)
    return out, dq, fold(dk), fold(dv)


def _run(device, qkv, dtype=fw.float32, dout=None, **kw):
    ts = [fw.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in qkv]
    if "attn_mask" in kw and isinstance(kw["attn_mask"], np.ndarray):
        m = kw["attn_mask"]
        kw["attn_mask"] = fw.tensor(m, dtype=fw.bool if m.dtype == bool else dtype,
                                    device=device)
    out = F.scaled_dot_product_attention(*ts, **kw)
    if dout is None:
        return to_np(out)
    out.backward(fw.tensor(dout, dtype=dtype, device=device))
    return [to_np(out)] + [to_np(t.grad) for t in ts]


def _close(got, want, tol):
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=tol, atol=tol)


# (Hq, Hkv, Lq, Lk, D, Dv, mask, causal)
CASES = [
    (2, 2, 17, 17, 32, 32, None, False),
    (2, 2, 1, 1, 32, 32, None, False),          # sequence 1
    (2, 1, 17, 33, 40, 24, None, False),        # GQA, odd head dims padded to 64 / 32
    (4, 2, 33, 17, 64, 64, None, True),         # causal, Lq > Lk (top-left aligned)
    (2, 2, 9, 40, 32, 32, None, True),          # causal, Lq < Lk
    (2, 2, 17, 33, 32, 32, "bool", False),      # bool mask with fully masked rows
    (2, 1, 17, 33, 32, 16, "float", False),     # additive mask with -inf rows
    (2, 2, 17, 20, 32, 32, "bcast", False),     # a (Lk,) float mask broadcast to every row
]


def _mask(kind, B, H, L, S, seed=3):
    rng = np.random.default_rng(seed)
    if kind == "bool":
        m = rng.random((B, 1, L, S)) < 0.6
        m[:, :, 2] = False
        return m
    if kind == "float":
        m = rng.standard_normal((1, H, L, S))
        m[:, :, 4] = -np.inf
        m[:, :, 5, ::2] = -np.inf
        return m
    if kind == "bcast":
        return rng.standard_normal((S,))
    return None


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_against_float64_numpy(device, case):
    Hq, Hkv, L, S, D, Dv, mk, causal = case
    B = 2
    qkv = [_rand((B, Hq, L, D), 0), _rand((B, Hkv, S, D), 1), _rand((B, Hkv, S, Dv), 2)]
    mask = _mask(mk, B, Hq, L, S)
    dout = _rand((B, Hq, L, Dv), 4)
    kw = dict(is_causal=causal, enable_gqa=Hq != Hkv)
    if mask is not None:
        kw["attn_mask"] = mask.astype(np.float32) if mask.dtype != bool else mask
    got = _run(device, qkv, dout=dout, **kw)
    want = _ref(*qkv, mask=kw.get("attn_mask"), causal=causal, dout=dout)
    _close(got, want, 2e-5)


@pytest.mark.parametrize("dtype,tol", [(fw.float64, 1e-10), (fw.float32, 2e-5),
                                       (fw.float16, 2e-2), (fw.bfloat16, 8e-2)])
def test_dtypes_and_scale(device, dtype, tol):
    qkv = [_rand((1, 2, 19, 64), 0), _rand((1, 2, 21, 64), 1), _rand((1, 2, 21, 64), 2)]
    dout = _rand((1, 2, 19, 64), 4)
    got = _run(device, qkv, dtype, dout=dout, scale=0.3)
    # the reference sees the inputs as rounded to the dtype
    rq = [to_np(fw.tensor(a, dtype=dtype)).astype(np.float64) for a in qkv + [dout]]
    want = _ref(*rq[:3], scale=0.3, dout=rq[3])
    _close(got, want, tol)
    out = fw.nn.functional.scaled_dot_product_attention(
        *[fw.tensor(a, dtype=dtype, device=device) for a in qkv])
    assert out.dtype is dtype


def test_against_torch(device):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    shapes = [((2, 3, 17, 32), (2, 3, 33, 32), (2, 3, 33, 32), dict(is_causal=True)),
              ((3, 17, 32), (3, 17, 32), (3, 17, 16), {}),                       # 3-D
              ((17, 32), (20, 32), (20, 8), dict(scale=0.5)),                   # 2-D
              ((2, 4, 9, 32), (2, 2, 18, 32), (2, 2, 18, 32), dict(enable_gqa=True)),
              ((2, 2, 9, 32), (1, 2, 18, 32), (1, 2, 18, 32), {})]              # batch bcast
    for i, (sq, sk, sv, kw) in enumerate(shapes):
        arrs = [_rand(s, 10 * i + j).astype(np.float32) for j, s in enumerate((sq, sk, sv))]
        for mk in (None, "bool", "float"):
            if mk is not None and kw.get("is_causal"):
                continue
            L, S = sq[-2], sk[-2]
            m = None
            if mk == "bool":
                m = np.random.default_rng(i).random((L, S)) < 0.5
                m[1] = False
            elif mk == "float":
                m = np.random.default_rng(i).standard_normal((L, S)).astype(np.float32)
            ts = [torch.tensor(a, requires_grad=True) for a in arrs]
            want = TF.scaled_dot_product_attention(*ts, attn_mask=None if m is None
                                                   else torch.tensor(m), **kw)
            g = _rand(tuple(want.shape), 7).astype(np.float32)
            want.backward(torch.tensor(g))
            kw2 = dict(kw)
            if m is not None:
                kw2["attn_mask"] = m
            got = _run(device, arrs, dout=g, **kw2)
            _close(got, [want.detach().numpy()] + [t.grad.numpy() for t in ts], 2e-5)


def test_fully_masked_rows_match_torch(device):
    torch = pytest.importorskip("torch")
    arrs = [_rand((1, 2, 5, 16), j).astype(np.float32) for j in range(3)]
    m = np.ones((5, 5), bool)
    m[2] = False
    fm = np.where(m, 0, -np.inf).astype(np.float32)
    for mask in (m, fm):
        ts = [torch.tensor(a, requires_grad=True) for a in arrs]
        want = torch.nn.functional.scaled_dot_product_attention(*ts,
                                                                attn_mask=torch.tensor(mask))
        want.sum().backward()
        got = _run(device, arrs, dout=np.ones((1, 2, 5, 16), np.float32), attn_mask=mask)
        _close(got, [want.detach().numpy()] + [t.grad.numpy() for t in ts], 1e-5)
        assert np.all(got[0][:, :, 2] == 0) and np.all(np.isfinite(got[1]))


def test_gradcheck(device):
    qkv = [fw.tensor(_rand(s, j), dtype=fw.float64, device=device, requires_grad=True)
           for j, s in enumerate(((1, 2, 2, 4), (1, 1, 3, 4), (1, 1, 3, 2)))]
    mask = fw.tensor(_rand((2, 3), 5), dtype=fw.float64, device=device, requires_grad=True)
    assert fw.autograd.gradcheck(
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                                          enable_gqa=True),
        qkv + [mask])
    if device != "cpu":
        return   # the interpreter is slow; the causal path is the same kernel code
    assert fw.autograd.gradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7),
        [fw.tensor(_rand((1, 1, 3, 4), j), dtype=fw.float64, device=device,
                   requires_grad=True) for j in range(3)])


def test_dropout_mask_statistics_and_stream(device):
    fw.manual_seed(0)
    keep = to_np(attn_ops.dropout_mask((2, 3, 40, 50), 0.3, 123, 7, device))
    assert keep.dtype == bool and abs(keep.mean() - 0.7) < 0.02
    # element i is counter offset + i: shifting the offset shifts the stream
    shifted = to_np(attn_ops.dropout_mask((1, 1, 1, 100), 0.3, 123, 8, device))
    np.testing.assert_array_equal(shifted[0, 0, 0, :99], keep.reshape(-1)[1:100])
    # the two backends draw the same masks
    other = "cpu" if device != "cpu" else device
    np.testing.assert_array_equal(to_np(attn_ops.dropout_mask((2, 3, 40, 50), 0.3, 123, 7,
                                                              other)), keep)


@pytest.mark.parametrize("causal", [False, True])
def test_dropout_forward_backward_use_one_mask(device, causal):
    B, H, L, S, D, p = 1, 2, 17, 33, 32, 0.4
    qkv = [_rand((B, H, L, D), 0), _rand((B, H, S, D), 1), _rand((B, H, S, D), 2)]
    dout = _rand((B, H, L, D), 3)
    gen = fw.random.get_generator(fw.empty(0, device=device)._storage.device)
    fw.manual_seed(5)
    seed, offset = gen._seed, gen._offset
    got = _run(device, qkv, fw.float64, dout=dout, dropout_p=p, is_causal=causal)
    assert gen._offset == offset + B * H * L * S          # the generator moved on
    keep = to_np(attn_ops.dropout_mask((B, H, L, S), p, seed, offset, device))
    want = _ref(*qkv, causal=causal, keep=keep, p=p, dout=dout)
    _close(got, want, 1e-10)
    again = _run(device, qkv, fw.float64, dropout_p=p, is_causal=causal)
    assert not np.allclose(again, got[0])                 # a fresh mask next call
    # the output's mean matches the undropped one in expectation
    big = [_rand((4, 4, 32, 32), j) for j in range(3)]
    v_ones = np.ones((4, 4, 32, 8))
    mean = _run(device, [big[0], big[1], v_ones], fw.float32, dropout_p=0.5).mean()
    assert abs(mean - 1.0) < 0.05


def test_peak_memory_below_score_matrix():
    if not fw.cuda.is_available():
        pytest.skip("needs cuda (or the interpreter)")
    B, H, L, D = 1, 1, 256, 16
    qkv = [fw.tensor(_rand((B, H, L, D), j), dtype=fw.float32, device="cuda",
                     requires_grad=True) for j in range(3)]
    fw.cuda.synchronize()
    fw.cuda.reset_peak_memory_stats()
    base = fw.cuda.memory_allocated()
    out = F.scaled_dot_product_attention(*qkv, is_causal=True)
    out.sum().backward()
    peak = fw.cuda.max_memory_allocated() - base
    assert peak < B * H * L * L * 4, peak
    assert qkv[0].grad is not None


def test_mha_uses_fused_op(device, monkeypatch):
    calls = []
    real = fw._fused_sdpa

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(fw, "_fused_sdpa", spy)
    mha = fw.nn.MultiheadAttention(16, 2, batch_first=True).to(device)
    x = fw.randn(2, 5, 16, device=device)
    mha(x, x, x, need_weights=False)
    assert calls


def test_errors(device):
    q = fw.randn(1, 4, 3, 8, device=device)
    k = fw.randn(1, 3, 3, 8, device=device)
    with pytest.raises(RuntimeError, match="Number of heads"):
        F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=fw.ones(3, 3, dtype=fw.bool,
                                                                  device=device),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)


def test_double_backward_not_implemented_like_torch(device):
    # PyTorch's fused attention backward kernels have no derivative either
    q = fw.randn(1, 1, 3, 4, device=device, requires_grad=True)
    g, = fw.autograd.grad(F.scaled_dot_product_attention(q, q, q).sum(), q, create_graph=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        g.sum().backward()


# -- strided inputs: read in place through their strides, copied only when the last dimension
# is not contiguous (or rows overlap) --------------------------------------------------------

def alloc_backend(device):
    from framework._ops import alloc
    return alloc.backend(fw.empty(0, device=device)._storage.device)


def _spy_backend(monkeypatch, device):
    """Records, per launcher call, whether each tensor input was contiguous."""
    be = alloc_backend(device).attention
    seen = []
    for name, idx in (("sdpa_forward", (0, 1, 2)), ("sdpa_backward", (0, 1, 2, 4, 6))):
        real = getattr(be, name)

        def spy(*a, _real=real, _name=name, _idx=idx, **k):
            seen.append((_name, [a[i].is_contiguous() for i in _idx]))
            return _real(*a, **k)
        monkeypatch.setattr(be, name, spy)
    return seen


@pytest.mark.parametrize("Hq,Hkv,causal", [(4, 4, True), (4, 2, True), (4, 1, False)])
def test_split_heads_in_place_match_torch(device, monkeypatch, Hq, Hkv, causal):
    """q, k, v as a GPT makes them (split of a fused projection, view, transpose: strided,
    last dimension contiguous) and the gradient as it arrives (a transposed view): no copy
    anywhere, float64 output and gradients as torch's."""
    torch = pytest.importorskip("torch")
    B, T, D = 2, 19, 8
    Cq, Ck = Hq * D, Hkv * D
    x0 = _rand((B, T, Cq + 2 * Ck), 0)
    g0 = _rand((B, T, Hq, D), 1)

    def heads(lib_x):
        q, k, v = lib_x.split([Cq, Ck, Ck], dim=2)
        return (q.reshape(B, T, Hq, D).transpose(1, 2), k.reshape(B, T, Hkv, D).transpose(1, 2),
                v.reshape(B, T, Hkv, D).transpose(1, 2))

    xt = torch.tensor(x0, requires_grad=True)
    want = torch.nn.functional.scaled_dot_product_attention(*heads(xt), is_causal=causal,
                                                            enable_gqa=Hq != Hkv)
    want.backward(torch.tensor(g0).transpose(1, 2))
    seen = _spy_backend(monkeypatch, device)
    be = alloc_backend(device).attention
    grads_seen, real_bwd = [], be.sdpa_backward
    monkeypatch.setattr(be, "sdpa_backward", lambda *a, **k: grads_seen.append(a[7:10]) or
                        real_bwd(*a, **k))
    copies = []
    real_convert = attn_ops.convert
    monkeypatch.setattr(attn_ops, "convert", lambda *a, **k: copies.append(1) or
                        real_convert(*a, **k))
    cats = []
    real_cat = fw.cat
    monkeypatch.setattr(fw, "cat", lambda *a, **k: cats.append(1) or real_cat(*a, **k))
    x = fw.tensor(x0, dtype=fw.float64, device=device, requires_grad=True)
    q, k, v = heads(x)
    assert not q.is_contiguous() and q.stride(-1) == 1
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=Hq != Hkv)
    out.backward(fw.tensor(g0, dtype=fw.float64, device=device).transpose(1, 2))
    assert [s[0] for s in seen] == ["sdpa_forward", "sdpa_backward"]
    assert seen[0][1] == [False, False, False]            # q, k, v went in as views
    assert seen[1][1] == [False, False, False, False, False]  # ... and out, dout
    # out, dq, dk, dv in q's dim order (as PyTorch's flash attention): back in the (B, T, H, D)
    # layout, the model's transpose(1, 2).contiguous() and the gradients' reshapes are free
    y = out.transpose(1, 2).contiguous()
    assert y.data_ptr() == out.data_ptr() and y.stride() == (T * Hq * D, Hq * D, D, 1)
    dq, dk, dv = grads_seen[0]
    if Hq == Hkv:
        # q, k and v tile x: their gradients tile one buffer in x's layout, and the split's
        # backward (a cat) is a view of it
        assert dq._storage is dk._storage is dv._storage
        W = Cq + 2 * Ck
        assert all(t.transpose(1, 2).stride() == (T * W, W, D, 1) for t in (dq, dk, dv))
        assert [t.storage_offset() - dq.storage_offset() for t in (dq, dk, dv)] == [0, Cq,
                                                                                    2 * Cq]
        assert not cats
    else:
        assert all(t.transpose(1, 2).is_contiguous() for t in (dq, dk, dv))
    assert not copies
    _close([to_np(out), to_np(x.grad)], [want.detach().numpy(), xt.grad.numpy()], 1e-12)


@pytest.mark.parametrize("dtype,tol", [(fw.float64, 1e-12), (fw.float32, 2e-5),
                                       (fw.float16, 2e-2)])
@pytest.mark.parametrize("layout", ["transposed", "sliced_last", "overlapping_rows"])
def test_fused_op_strided_layouts(device, monkeypatch, dtype, tol, layout):
    """The op itself (_fused_sdpa and its backward) on strided q, k, v and dout: transposed
    views go in place; a last dimension of stride 2 and rows of stride 0 (an expanded key)
    are copied first. Against float64 NumPy, GQA (4 query heads over 2 key heads)."""
    Z, Hq, Hkv, L, S, D = 2, 4, 2, 21, 18, 8
    arrs = [_rand((Z, Hq, L, D), 0), _rand((Z, Hkv, S, D), 1), _rand((Z, Hkv, S, D), 2)]
    dout = _rand((Z, Hq, L, D), 3)
    if layout == "overlapping_rows":
        arrs[1] = np.broadcast_to(arrs[1][:, :, :1], arrs[1].shape).copy()
    rq = [to_np(fw.tensor(a, dtype=dtype)).astype(np.float64) for a in arrs + [dout]]
    want = _ref(*rq[:3], causal=True, scale=0.4, dout=rq[3])

    def strided(a, leaf=True):
        if layout == "sliced_last":       # every other element of a doubled last dimension
            base = fw.tensor(np.repeat(a, 2, axis=-1), dtype=dtype, device=device,
                             requires_grad=leaf)
            return base, base[..., ::2]
        base = fw.tensor(np.ascontiguousarray(np.swapaxes(a, 1, 2)), dtype=dtype,
                         device=device, requires_grad=leaf)
        return base, base.transpose(1, 2)

    leaves, views = zip(*(strided(a) for a in arrs))
    views = list(views)
    if layout == "overlapping_rows":      # key rows all one row: stride 0 over Lk
        kb = fw.tensor(np.ascontiguousarray(np.swapaxes(arrs[1][:, :, :1], 1, 2)), dtype=dtype,
                       device=device, requires_grad=True)
        views[1] = kb.transpose(1, 2).expand(Z, Hkv, S, D)
        leaves = (leaves[0], kb, leaves[2])
        assert views[1].stride(2) == 0
    assert all(not t.is_contiguous() for t in views)
    copies = []
    real_convert = attn_ops.convert
    monkeypatch.setattr(attn_ops, "convert", lambda *a, **k: copies.append(1) or
                        real_convert(*a, **k))
    out, lse = fw._fused_sdpa(views, None, 0.0, True, 0.4, 0, 0)
    # out in q's dim order (dense), lse contiguous
    order = sorted(range(4), key=lambda d: -views[0].stride(d))
    assert out.permute(order).is_contiguous() and lse.is_contiguous()
    out.backward(strided(dout, leaf=False)[1])
    assert bool(copies) == (layout != "transposed")

    def grad(i):
        g = to_np(leaves[i].grad).astype(np.float64)
        if layout == "sliced_last":
            return g[..., ::2]
        return np.swapaxes(g, 1, 2)   # for the expanded key: summed over the keys

    got = [to_np(out)] + [grad(i) for i in range(3)]
    want = list(want)
    if layout == "overlapping_rows":
        want[2] = want[2].sum(2, keepdims=True)
    _close(got, want, tol)


def test_strided_gradcheck(device):
    """gradcheck through split/view/transpose heads (GQA), float64."""
    B, T, Hq, Hkv, D = 1, 3, 2, 1, 2
    x = fw.tensor(_rand((B, T, (Hq + 2 * Hkv) * D), 0), dtype=fw.float64, device=device,
                  requires_grad=True)

    def f(x):
        q, k, v = x.split([Hq * D, Hkv * D, Hkv * D], dim=2)
        q = q.view(B, T, Hq, D).transpose(1, 2)
        k = k.view(B, T, Hkv, D).transpose(1, 2)
        v = v.view(B, T, Hkv, D).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert fw.autograd.gradcheck(f, [x])


def test_native_strides_checked():
    """The CPU kernel refuses a last dimension that is not contiguous or overlapping rows
    (the launchers copy those) instead of reading out of bounds."""
    from framework import _C
    q = fw.randn(1, 1, 4, 8)
    lse = fw.empty(1, 1, 4)
    dims = [1, 1, 1, 4, 4, 8, 8]
    ok = [32, 32, 8, 1]
    for bad in ([32, 32, 8, 2], [32, 32, 0, 1], [32, 32, 8]):
        with pytest.raises(RuntimeError, match="sdpa"):
            _C.sdpa_forward(8, q.data_ptr(), bad, q.data_ptr(), ok, q.data_ptr(), ok, 0, 0, [],
                            q.data_ptr(), lse.data_ptr(), dims, 1.0, False, 0.0, 0, 0)
