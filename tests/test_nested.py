"""framework.nested (jagged layout) against torch.nested as the oracle.

Free functions (``F.linear(nt, w)``, ``framework.exp(nt)``, ``dense + nt``) reach
NestedTensor through the ``__torch_function__`` protocol (framework/overrides.py); the
tests marked "protocol" in their docstring depend on it."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from framework.nested import NestedTensor

torch = pytest.importorskip("torch")
TF = torch.nn.functional

LENS = (3, 1, 5)


def _np(t):
    return t.detach().cpu().numpy()


def _pair(device, lens=LENS, trailing=(4,), requires_grad=False):
    """The same jagged nested tensor in framework and torch."""
    parts = [np.random.randn(n, *trailing).astype(np.float32) for n in lens]
    nt = fw.nested.nested_tensor([fw.tensor(p) for p in parts], layout=fw.jagged,
                                 device=device, requires_grad=requires_grad)
    ref = torch.nested.nested_tensor([torch.tensor(p) for p in parts], layout=torch.jagged,
                                     requires_grad=requires_grad)
    return nt, ref


def _same(nt, ref, atol=1e-5):
    """Equal components (and a nested tensor of the same shape layout)."""
    if isinstance(ref, torch.Tensor) and ref.is_nested:
        assert isinstance(nt, NestedTensor) and nt.dim() == ref.dim()
        assert nt._ragged_idx == ref._ragged_idx
        a, b = nt.unbind(), ref.unbind()
        assert len(a) == len(b)
        for x, y in zip(a, b):
            np.testing.assert_allclose(_np(x), y.detach().numpy(), atol=atol, rtol=1e-4)
    else:
        np.testing.assert_allclose(_np(nt), ref.detach().numpy(), atol=atol, rtol=1e-4)


def test_construct_metadata_and_padding(device):
    nt, ref = _pair(device)
    assert nt.layout is fw.jagged and repr(fw.jagged) == "torch.jagged" and nt.is_nested
    assert not fw.randn(2).is_nested
    j = nt.size(1)
    assert str(nt.shape) == f"framework.Size([3, {j}, 4])" and str(j).startswith("j")
    assert nt.dim() == 3 and nt.size(0) == 3 and nt.size(-1) == 4 and nt.dtype == fw.float32
    assert nt.device.type == device and nt.offsets().device.type == device
    assert nt.offsets().tolist() == ref.offsets().tolist() and nt.lengths() is None
    assert tuple(nt.values().shape) == tuple(ref.values().shape) and nt.is_contiguous()
    _same(nt, ref)
    np.testing.assert_allclose(_np(nt[2]), ref[2].numpy())
    _same(nt.to_padded_tensor(-1.0), ref.to_padded_tensor(-1.0))
    _same(fw.nested.to_padded_tensor(nt, 0.5, (3, 6, 4)),
          torch.nested.to_padded_tensor(ref, 0.5, (3, 6, 4)))
    # ops keep the ragged size; a new nested tensor gets a new one
    assert (nt * 2).size(1) == j and nt.relu().size(1) == j
    other, _ = _pair(device)
    assert other.size(1) != j
    with pytest.raises(IndexError, match=r"range of \[-3, 2\], but got 5"):
        nt.size(5)
    with pytest.raises(RuntimeError, match="only supported for NestedTensor on dim=0"):
        nt.unbind(1)
    with pytest.raises(RuntimeError, match="empty tensor list"):
        fw.nested.nested_tensor([], layout=fw.jagged)
    with pytest.raises(RuntimeError, match="zero-dim tensors"):
        fw.nested.nested_tensor([fw.tensor(1.0)], layout=fw.jagged)
    with pytest.raises(RuntimeError, match="only allows for a single ragged dimension"):
        fw.nested.nested_tensor([fw.randn(2, 3), fw.randn(3, 2)], layout=fw.jagged)
    with pytest.raises(RuntimeError, match="floating point"):
        fw.nested.nested_tensor([fw.tensor([[1]])], layout=fw.jagged, requires_grad=True)
    with pytest.raises(NotImplementedError):
        fw.cumsum(nt, 0)    # protocol: an op without a handler refuses the nested tensor
    # .to, detach, clone, dtype
    d = nt.to(fw.float64)
    assert d.dtype == fw.float64 and d.size(1) == j
    _same(d.detach().clone(), ref.to(torch.float64))
    h = nt.to("cpu")
    assert h.device.type == "cpu" and h.offsets().device.type == "cpu"
    _same(h, ref)


def test_from_jagged_as_nested_narrow_masked_select(device):
    vals = np.random.randn(3, 7, 2).astype(np.float32)
    off = np.array([0, 2, 7])
    nt = fw.nested.nested_tensor_from_jagged(fw.tensor(vals, device=device),
                                             fw.tensor(off, device=device), jagged_dim=2)
    ref = torch.nested.nested_tensor_from_jagged(torch.tensor(vals), torch.tensor(off),
                                                 jagged_dim=2)
    assert nt._ragged_idx == 2 and str(nt.shape[2]).startswith("j")
    _same(nt, ref)
    # lengths only -> offsets
    nl = fw.nested.nested_tensor_from_jagged(fw.tensor(vals[0], device=device),
                                             lengths=fw.tensor([3, 4], device=device))
    assert nl.offsets().tolist() == [0, 3, 7] and nl._max_seqlen == 4
    with pytest.raises(RuntimeError, match="At least one of offsets or lengths"):
        fw.nested.nested_tensor_from_jagged(fw.randn(3, 2))
    # narrow: a view with holes
    x = np.random.randn(3, 6, 2).astype(np.float32)
    start, length = [0, 1, 2], [3, 2, 1]
    n = fw.nested.narrow(fw.tensor(x, device=device), 1, fw.tensor(start, device=device),
                         fw.tensor(length, device=device), layout=fw.jagged)
    r = torch.nested.narrow(torch.tensor(x), 1, torch.tensor(start), torch.tensor(length),
                            layout=torch.jagged)
    assert n.lengths().tolist() == length and not n.is_contiguous()
    _same(n, r)
    _same(n.exp(), r.exp())
    # masked_select
    m = np.random.rand(3, 5) > 0.5
    y = np.random.randn(3, 5).astype(np.float32)
    _same(fw.nested.masked_select(fw.tensor(y, device=device), fw.tensor(m, device=device)),
          torch.nested.masked_select(torch.tensor(y), torch.tensor(m)))
    # as_nested_tensor keeps history: gradients reach the components
    a = fw.randn(2, 3, device=device, requires_grad=True)
    b = fw.randn(4, 3, device=device, requires_grad=True)
    an = fw.nested.as_nested_tensor([a, b], layout=fw.jagged)
    assert an.requires_grad and not an.is_leaf
    (an * fw.arange(3.0, device=device)).values().sum().backward()
    np.testing.assert_allclose(_np(a.grad), np.tile([0.0, 1.0, 2.0], (2, 1)))
    dense = fw.tensor(x, device=device)
    _same(fw.nested.as_nested_tensor(dense, layout=fw.jagged),
          torch.nested.as_nested_tensor(torch.tensor(x), layout=torch.jagged))


def test_pointwise_and_broadcasting(device):
    nt, ref = _pair(device)
    nt2 = nt._like(fw.randn(*nt.values().shape, device=device))
    ref2 = torch.nested.nested_tensor_from_jagged(torch.tensor(_np(nt2.values())),
                                                  ref.offsets())
    for name in ("relu", "exp", "neg", "sigmoid", "tanh", "abs"):
        _same(getattr(nt, name)(), getattr(ref, name)())
    _same(F.gelu(nt, approximate="tanh"), TF.gelu(ref, approximate="tanh"))   # protocol
    _same(F.silu(nt), TF.silu(ref))                                            # protocol
    _same(fw.exp(nt), torch.exp(ref))                                          # protocol
    _same(nt * 2.5 - 1, ref * 2.5 - 1)
    _same(nt + nt.exp(), ref + ref.exp())
    ro = ref2.offsets()
    ref2 = torch.nested.nested_tensor_from_jagged(ref2.values(), ref.offsets())
    _same(nt.mul(nt._like(nt2.values())), ref * ref2)
    del ro
    w = np.random.randn(4).astype(np.float32)
    _same(nt + fw.tensor(w, device=device), ref + torch.tensor(w))
    _same(fw.tensor(w, device=device) * nt, torch.tensor(w) * ref)            # protocol
    bw = np.random.randn(3, 1, 4).astype(np.float32)
    _same(nt + fw.tensor(bw, device=device), ref + torch.tensor(bw))
    _same(nt / fw.tensor(bw[:1], device=device), ref / torch.tensor(bw[:1]))
    other, _ = _pair(device)
    with pytest.raises(RuntimeError, match=r"binary pointwise function add.Tensor"):
        nt + other
    with pytest.raises(RuntimeError, match=r"binary pointwise function mul.Tensor"):
        nt * fw.randn(9, 4, device=device)
    _same(F.dropout(nt, 0.5, training=False), ref)                              # protocol
    _same(F.dropout(nt, 0.0), ref)                                              # protocol
    _same(nt.masked_fill(nt > 0, -2.0), ref.masked_fill(ref > 0, -2.0))
    c = nt.clone()
    assert c.relu_() is c
    _same(c, ref.relu())


def test_linear_norms_softmax_reductions(device):
    nt, ref = _pair(device, trailing=(6,))
    w = np.random.randn(5, 6).astype(np.float32)
    b = np.random.randn(5).astype(np.float32)
    fwW, fwB = fw.tensor(w, device=device), fw.tensor(b, device=device)
    _same(NestedTensor.__torch_function__(F.linear, (NestedTensor,), (nt, fwW, fwB)),
          TF.linear(ref, torch.tensor(w), torch.tensor(b)))
    _same(F.linear(nt, fwW, fwB), TF.linear(ref, torch.tensor(w), torch.tensor(b)))  # protocol
    _same(nt @ fwW.T, ref @ torch.tensor(w).T)
    g = np.random.randn(6).astype(np.float32)
    _same(F.layer_norm(nt, (6,), fw.tensor(g, device=device)),                 # protocol
          TF.layer_norm(ref, (6,), torch.tensor(g)))
    _same(F.rms_norm(nt, (6,), eps=1e-6), TF.rms_norm(ref, (6,), eps=1e-6))    # protocol
    _same(nt.softmax(-1), ref.softmax(-1))
    _same(nt.softmax(1), ref.softmax(1))        # over the ragged dim
    _same(F.softmax(nt, dim=1), TF.softmax(ref, dim=1))                          # protocol
    _same(nt.sum(-1), ref.sum(-1))
    _same(nt.mean(-1, keepdim=True), ref.mean(-1, keepdim=True))
    _same(nt.sum(1), ref.sum(1))                # dense (B, D)
    _same(nt.mean(1), ref.mean(1))
    _same(nt.mean(1, keepdim=True), ref.mean(1, keepdim=True))
    _same(nt.sum((0, 1)), ref.sum((0, 1)))
    _same(nt.amax(1), ref.amax(1))
    _same(nt.amin(-1), ref.amin(-1))
    _same(fw.cat([nt, nt.exp()], -1), torch.cat([ref, ref.exp()], -1))          # protocol
    with pytest.raises(RuntimeError, match="reducing across the batch dimension"):
        nt.softmax(0)
    with pytest.raises(RuntimeError, match="along the batch dimension but not the ragged"):
        nt.sum(0)
    with pytest.raises(RuntimeError, match="log_softmax.*ragged"):
        nt.log_softmax(1)


def test_shape_ops(device):
    nt, ref = _pair(device, trailing=(6,))
    v, rv = nt.view(3, -1, 2, 3), ref.view(3, -1, 2, 3)
    _same(v, rv)
    t, rt = v.transpose(1, 2), rv.transpose(1, 2)
    assert t.size(2) == nt.size(1) and t.size(1) == 2
    _same(t, rt)
    _same(t.transpose(1, 2).reshape(3, nt.size(1), 6), rt.transpose(1, 2).reshape(3, -1, 6))
    _same(t.sum(-1), rt.sum(-1))
    _same(t.contiguous(), rt.contiguous())
    _same(nt.unsqueeze(-1), ref.unsqueeze(-1))
    _same(nt.unsqueeze(1), ref.unsqueeze(1))
    for a, b in zip(nt.chunk(2, -1), ref.chunk(2, -1)):
        _same(a, b)
    for a, b in zip(nt.split([1, 5], -1), ref.split([1, 5], -1)):
        _same(a, b)
    with pytest.raises(RuntimeError, match=r"view\(\): cannot view shape"):
        nt.view(3, 7, 6)
    with pytest.raises(ValueError, match="Transpose is not supported on the batch dimension"):
        nt.transpose(0, 1)
    with pytest.raises(RuntimeError, match="chunk.*ragged dim"):
        nt.chunk(2, 1)


def _attention_block(lib, F_, x, wqkv, wo, heads, causal):
    B, D = x.size(0), x.size(-1)
    h = F_.layer_norm(x, (D,))
    q, k, v = F_.linear(h, wqkv).chunk(3, -1)
    q, k, v = (t.reshape(B, -1, heads, D // heads).transpose(1, 2) for t in (q, k, v))
    o = F_.scaled_dot_product_attention(q, k, v, is_causal=causal)
    o = o.transpose(1, 2).reshape(B, -1, D)
    return x + F_.linear(F_.gelu(o), wo)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_block_forward_backward(device, causal):
    """Attention per sequence (no padding leak), and gradients to the values and weights
    (protocol: F.layer_norm, F.linear, F.sdpa on nested tensors)."""
    nt, ref = _pair(device, lens=(3, 5), trailing=(8,), requires_grad=True)
    wqkv = np.random.randn(24, 8).astype(np.float32) * 0.3
    wo = np.random.randn(8, 8).astype(np.float32) * 0.3
    fq, fo = (fw.tensor(a, device=device, requires_grad=True) for a in (wqkv, wo))
    tq, to = (torch.tensor(a, requires_grad=True) for a in (wqkv, wo))
    out = _attention_block(fw, F, nt, fq, fo, 2, causal)
    gw = np.random.randn(*out.values().shape).astype(np.float32)
    (out.values() * fw.tensor(gw, device=device)).sum().backward()
    assert isinstance(nt.grad, NestedTensor)
    # the oracle: each sequence alone through torch's dense block (no padding, no leak)
    row = 0
    for i, x in enumerate(ref.unbind()):
        x = x.detach()[None].requires_grad_(True)
        alone = _attention_block(torch, TF, x, tq, to, 2, causal)[0]
        np.testing.assert_allclose(_np(out.unbind()[i]), alone.detach().numpy(), atol=1e-4)
        (alone * torch.tensor(gw[row:row + len(alone)])).sum().backward()
        np.testing.assert_allclose(_np(nt.grad.unbind()[i]), x.grad[0].numpy(), atol=1e-4)
        row += len(alone)
    np.testing.assert_allclose(_np(fq.grad), tq.grad.numpy(), atol=1e-4)
    np.testing.assert_allclose(_np(fo.grad), to.grad.numpy(), atol=1e-4)
    if not causal:      # torch's nested sdpa (no is_causal for nested inputs on cpu)
        _same(out, _attention_block(torch, TF, ref, tq, to, 2, causal), atol=1e-4)
    # the padded form is differentiable too
    nt.grad = None
    nt.to_padded_tensor(0.0).pow(2).sum().backward()
    _same(nt.grad, ref.detach() * 2)


def test_sdpa_cross_attention_and_backward_from_nested(device):
    """Keys/values with other lengths than the queries; backward(gradient) of a nested
    output (protocol: F.scaled_dot_product_attention)."""
    H, D = 2, 3
    q_lens, k_lens = (2, 4), (3, 1)
    qs = [np.random.randn(H, n, D).astype(np.float32) for n in q_lens]
    ks = [np.random.randn(H, n, D).astype(np.float32) for n in k_lens]
    vs = [np.random.randn(H, n, D).astype(np.float32) for n in k_lens]

    def nested(parts, **kw):
        return fw.nested.nested_tensor([fw.tensor(p.transpose(1, 0, 2)) for p in parts],
                                       layout=fw.jagged, device=device, **kw)
    leaf = nested(qs, requires_grad=True)
    q, k = leaf.transpose(1, 2), nested(ks).transpose(1, 2)
    v = k._like(fw.cat([fw.tensor(p, device=device) for p in vs], 1))
    out = F.scaled_dot_product_attention(q, k, v)
    assert out._ragged_idx == 2 and out.size(2) == q.size(2)
    g = out._like(fw.ones_like(out.values()))
    out.backward(g)
    for i in range(2):
        tq = torch.tensor(qs[i], requires_grad=True)
        ref = TF.scaled_dot_product_attention(tq, torch.tensor(ks[i]), torch.tensor(vs[i]))
        ref.sum().backward()
        np.testing.assert_allclose(_np(out.unbind()[i]), ref.detach().numpy(), atol=1e-5)
        np.testing.assert_allclose(_np(leaf.grad.transpose(1, 2).unbind()[i]),
                                   tq.grad.numpy(), atol=1e-5)
    with pytest.raises(RuntimeError, match="attn_mask is not supported"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=fw.ones(1))
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        out.backward()
