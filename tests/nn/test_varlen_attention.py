"""nn.attention.varlen.varlen_attn: attention within packed sequences, against PyTorch's
scaled_dot_product_attention run per sequence in float64 on cpu (torch's own varlen_attn
needs CUDA)."""
import numpy as np
import pytest

import framework
from framework.nn.attention.varlen import AuxRequest, varlen_attn

torch = pytest.importorskip("torch")


def _cu(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


def _keep(Lq, Lk, window):
    """flash attention's window, bottom-right aligned."""
    d = torch.arange(Lk)[None, :] - (torch.arange(Lq)[:, None] + Lk - Lq)
    keep = torch.ones(Lq, Lk, dtype=torch.bool)
    if window[0] >= 0:
        keep &= d >= -window[0]
    if window[1] >= 0:
        keep &= d <= window[1]
    return keep


def _oracle(q, k, v, lq, lk, window, scale=None):
    """(out, lse) of torch's SDPA and logsumexp per sequence, float64, differentiable."""
    cq, ck = _cu(lq), _cu(lk)
    outs, lses = [], []
    D = q.shape[-1]
    sc = scale if scale is not None else D ** -0.5
    for i in range(len(lq)):
        qs = q[cq[i]:cq[i + 1]].transpose(0, 1)
        ks = k[ck[i]:ck[i + 1]].transpose(0, 1)
        vs = v[ck[i]:ck[i + 1]].transpose(0, 1)
        keep = _keep(lq[i], lk[i], window)
        outs.append(torch.nn.functional.scaled_dot_product_attention(
            qs, ks, vs, attn_mask=keep, scale=sc, enable_gqa=True).transpose(0, 1))
        g = qs.shape[0] // ks.shape[0]
        s = (qs @ ks.repeat_interleave(g, 0).transpose(-1, -2) * sc).masked_fill(~keep,
                                                                               float("-inf"))
        lse = torch.logsumexp(s, -1)
        # a query that sees no key: +inf, as flash attention (and framework's SDPA)
        lses.append(lse.masked_fill(lse == float("-inf"), float("inf")))
    return torch.cat(outs), torch.cat(lses, 1)


def _inputs(lq, lk, hq, hkv, d, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(sum(n), h, d, generator=g, dtype=torch.float64)
            for n, h in ((lq, hq), (lk, hkv), (lk, hkv))]


def _run(tq, tk, tv, lq, lk, device, dtype, grad=False, **kw):
    fw = [framework.tensor(t.numpy(), device=device).to(dtype).requires_grad_(grad)
          for t in (tq, tk, tv)]
    cq = framework.tensor(_cu(lq), device=device)
    ck = framework.tensor(_cu(lk), device=device)
    out, lse = varlen_attn(*fw, cq, ck, max(lq), max(lk), return_aux=AuxRequest(lse=True),
                           **kw)
    return fw, out, lse


@pytest.mark.parametrize("window", [(-1, -1), (-1, 0), (6, 0)])
def test_varlen_matches_sdpa_per_sequence(device, window):
    # lengths crossing the 16-row tiles; GQA (4 query heads on 2 key heads)
    lq = lk = [1, 17, 40, 5]
    tq, tk, tv = _inputs(lq, lk, 4, 2, 16)
    for t in (tq, tk, tv):
        t.requires_grad_(True)
    ro, rl = _oracle(tq, tk, tv, lq, lk, window)
    fw, out, lse = _run(tq.detach(), tk.detach(), tv.detach(), lq, lk, device,
                        framework.float32, grad=True, window_size=window, enable_gqa=True)
    assert tuple(out.shape) == (63, 4, 16) and tuple(lse.shape) == (4, 63)
    assert lse.dtype is framework.float32
    np.testing.assert_allclose(out.detach().cpu().numpy(), ro.detach().numpy(), atol=2e-5)
    np.testing.assert_allclose(lse.cpu().numpy(), rl.detach().numpy(), atol=2e-5)
    gout = torch.randn(ro.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    ro.backward(gout)
    out.backward(framework.tensor(gout.numpy(), device=device).float())
    for a, b in zip(fw, (tq, tk, tv)):
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), atol=5e-5)


def test_varlen_lengths_differ_bottom_right(device):
    # q and k lengths differ per sequence; causal aligns to the bottom-right corner, so the
    # first queries of a sequence with more queries than keys see nothing (out 0, lse +inf)
    lq, lk = [3, 20, 9], [18, 4, 9]
    tq, tk, tv = _inputs(lq, lk, 2, 2, 8, seed=2)
    for window in ((-1, 0), (-1, -1)):
        ro, rl = _oracle(tq, tk, tv, lq, lk, window, scale=0.3)
        _, out, lse = _run(tq, tk, tv, lq, lk, device, framework.float32, window_size=window,
                           scale=0.3)
        np.testing.assert_allclose(out.cpu().numpy(), ro.numpy(), atol=2e-5)
        np.testing.assert_allclose(lse.cpu().numpy(), rl.numpy(), atol=2e-5)
    assert np.isinf(lse.cpu().numpy()).sum() == 0
    _, out, lse = _run(tq, tk, tv, lq, lk, device, framework.float32, window_size=(-1, 0))
    assert np.isposinf(lse.cpu().numpy()[:, 3:3 + 16]).all()   # 20 queries over 4 keys


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_varlen_half_cuda(dtype):
    lq = lk = [17, 3, 12]
    tq, tk, tv = _inputs(lq, lk, 2, 1, 16, seed=3)
    for t in (tq, tk, tv):
        t.requires_grad_(True)
    rt = getattr(torch, dtype)
    ro, rl = _oracle(*[t.to(rt).double() for t in (tq, tk, tv)], lq, lk, (-1, 0))
    fw, out, lse = _run(tq.detach(), tk.detach(), tv.detach(), lq, lk, "cuda",
                        getattr(framework, dtype), grad=True, window_size=(-1, 0),
                        enable_gqa=True)
    assert out.dtype is getattr(framework, dtype)
    tol = 2e-2 if dtype == "bfloat16" else 4e-3
    np.testing.assert_allclose(out.detach().float().cpu().numpy(), ro.detach().numpy(),
                               atol=tol)
    np.testing.assert_allclose(lse.cpu().numpy(), rl.detach().numpy(), atol=tol)
    ro.sum().backward()
    out.float().sum().backward()
    for a, b in zip(fw, (tq, tk, tv)):
        np.testing.assert_allclose(a.grad.float().cpu().numpy(), b.grad.numpy(), atol=5 * tol)


def test_varlen_seqused_k(device):
    # only the first seqused_k[i] keys of each sequence's slot take part
    lq, lk, used = [5, 18], [8, 20], [3, 17]
    tq, tk, tv = _inputs(lq, lk, 2, 2, 8, seed=4)
    ck = _cu(lk)
    sel = np.concatenate([np.arange(ck[i], ck[i] + used[i]) for i in range(2)])
    ro, rl = _oracle(tq, tk[sel], tv[sel], lq, used, (-1, -1))
    fw = [framework.tensor(t.numpy(), device=device).float() for t in (tq, tk, tv)]
    out, lse = varlen_attn(*fw, framework.tensor(_cu(lq), device=device),
                           framework.tensor(ck, device=device), 18, 20,
                           return_aux=AuxRequest(lse=True),
                           seqused_k=framework.tensor(np.array(used, np.int32), device=device))
    np.testing.assert_allclose(out.cpu().numpy(), ro.numpy(), atol=2e-5)
    np.testing.assert_allclose(lse.cpu().numpy(), rl.numpy(), atol=2e-5)


def test_varlen_errors():
    q = framework.randn(6, 4, 8)
    k = framework.randn(6, 2, 8)
    cu = framework.tensor(np.array([0, 2, 6], np.int32))
    with pytest.raises(ValueError, match="Expect query and key/value to have the same number"
                                         " of heads but got Hq=4 and Hkv=2"):
        varlen_attn(q, k, k, cu, cu, 4, 4)
    with pytest.raises(ValueError, match="multiple of kv heads for GQA but got Hq=4 and "
                                         "Hkv=3"):
        varlen_attn(q, framework.randn(6, 3, 8), framework.randn(6, 3, 8), cu, cu, 4, 4,
                    enable_gqa=True)
    with pytest.raises(RuntimeError, match="cu_seq_q must have dtype int32, got long"):
        varlen_attn(q, q, q, cu.long(), cu, 4, 4)
    with pytest.raises(RuntimeError, match="cu_seq_k must be 1-D"):
        varlen_attn(q, q, q, cu, cu.view(1, 3), 4, 4)
    with pytest.raises(RuntimeError, match=r"cu_seq_q and cu_seq_k of one shape"):
        varlen_attn(q, q, q, cu, cu[:2], 4, 4)
    with pytest.raises(RuntimeError, match="expected value of shape"):
        varlen_attn(q, q, q[None], cu, cu, 4, 4)
    with pytest.raises(NotImplementedError, match="block_table"):
        varlen_attn(q, q[None], q[None], cu, cu, 4, 4, block_table=cu)
    with pytest.raises(ValueError, match="window_size must have length 2"):
        varlen_attn(q, q, q, cu, cu, 4, 4, window_size=(1, 2, 3))
    used = framework.tensor(np.array([2, 4], np.int32))
    out = varlen_attn(q.requires_grad_(), q, q, cu, cu, 4, 4, seqused_k=used)
    with pytest.raises(RuntimeError, match="seqused_k is inference-only"):
        out.sum().backward()
