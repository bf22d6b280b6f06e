"""framework.nested with the strided layout (the default) against torch.nested.

Components may differ in any dim; ops run component by component and are differentiable
(``nt.backward(grad_nt)`` fills the components' ``.grad``)."""
import warnings

import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from framework.nested import StridedNestedTensor

torch = pytest.importorskip("torch")
TF = torch.nn.functional
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")

SHAPES = ((2, 5), (3, 4), (1, 6))


def _np(t):
    return t.detach().cpu().numpy()


def _pair(device, shapes=SHAPES, dtype=np.float32, requires_grad=False):
    """The same strided nested tensor in framework and torch."""
    parts = [np.random.randn(*s).astype(dtype) for s in shapes]
    nt = fw.nested.nested_tensor([fw.tensor(p) for p in parts], device=device,
                                 requires_grad=requires_grad)
    ref = torch.nested.nested_tensor([torch.tensor(p) for p in parts],
                                     requires_grad=requires_grad)
    return nt, ref


def _same(nt, ref, atol=1e-5):
    if isinstance(ref, torch.Tensor) and ref.is_nested:
        assert isinstance(nt, StridedNestedTensor) and nt.dim() == ref.dim()
        a, b = nt.unbind(), ref.unbind()
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert tuple(x.shape) == tuple(y.shape)
            np.testing.assert_allclose(_np(x), y.detach().numpy(), atol=atol, rtol=1e-4)
    else:
        assert tuple(nt.shape) == tuple(ref.shape)
        np.testing.assert_allclose(_np(nt), ref.detach().numpy(), atol=atol, rtol=1e-4)


def _raises(fn_fw, fn_torch, match=None):
    """Both raise the same exception type (and ``match`` in framework's message)."""
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(type(want.value), match=match):
        fn_fw()


def test_construct_metadata_and_padding(device):
    nt, ref = _pair(device)
    assert nt.layout is fw.strided and ref.layout is torch.strided and nt.is_nested
    assert nt.dim() == 3 and nt.size(0) == 3 and nt.size(-3) == 3 and nt.numel() == 28
    assert nt.device.type == device and nt.dtype is fw.float32 and nt.is_contiguous()
    _same(nt, ref)
    np.testing.assert_allclose(_np(nt[1]), ref[1].numpy())
    np.testing.assert_allclose(_np(nt[1, 2]), ref[1, 2].numpy())
    _same(nt.to_padded_tensor(-1.0), ref.to_padded_tensor(-1.0))
    _same(fw.nested.to_padded_tensor(nt, 0.5, (4, 4, 7)),
          torch.nested.to_padded_tensor(ref, 0.5, (4, 4, 7)))
    for dim in (1, -1):
        _raises(lambda: nt.size(dim), lambda: ref.size(dim), "irregular")
    _raises(lambda: nt.size(3), lambda: ref.size(3), "out of range")
    _raises(lambda: nt.shape, lambda: ref.shape)
    _raises(lambda: fw.nested.to_padded_tensor(nt, 0.0, (3, 2, 2)),
            lambda: torch.nested.to_padded_tensor(ref, 0.0, (3, 2, 2)), "Truncation")
    _raises(lambda: fw.nested.to_padded_tensor(nt, 0.0, (3, 6)),
            lambda: torch.nested.to_padded_tensor(ref, 0.0, (3, 6)), "Length of output_size")
    # a dim where the components agree has a size
    n2, r2 = _pair(device, ((2, 4), (3, 4)))
    assert n2.size(2) == r2.size(2) == 4
    # components of one dtype and device: the first tensor's, or the given ones
    mixed = fw.nested.nested_tensor([fw.arange(3), fw.ones(2, dtype=fw.float64)],
                                    dtype=fw.float64, device=device)
    assert mixed.dtype is fw.float64 and mixed[0].dtype is fw.float64
    py = fw.nested.nested_tensor([[1, 2], [3]])
    assert py.dtype is fw.int64 and _np(py[0]).tolist() == [1, 2] and py.size(0) == 2
    scalars = fw.nested.nested_tensor([fw.tensor(1.0), fw.tensor(2.0)])
    assert scalars.dim() == 1 and _np(scalars.to_padded_tensor(0.0)).tolist() == [1.0, 2.0]
    _raises(lambda: fw.nested.nested_tensor([fw.ones(2), fw.ones(2, 2)]),
            lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(2, 2)]),
            "same dimension")
    assert repr(fw.nested.nested_tensor([fw.arange(3.0), fw.arange(2.0)])) == \
        repr(torch.nested.nested_tensor([torch.arange(3.0), torch.arange(2.0)]))
    _raises(lambda: len(nt), lambda: len(ref), "doesn't support sizes")
    _raises(lambda: nt.unbind(1), lambda: ref.unbind(1), "unbound along dimension 0")
    _raises(lambda: fw.nested.as_nested_tensor(nt), lambda: torch.nested.as_nested_tensor(ref),
            "Converting between nested tensor layouts")
    assert fw.nested.as_nested_tensor(nt, layout=fw.strided) is nt
    # the strided layout when asked for explicitly, the jagged one when asked for
    assert isinstance(fw.nested.nested_tensor([fw.ones(2)], layout=fw.strided),
                      StridedNestedTensor)
    assert fw.nested.nested_tensor([fw.ones(2, 3)], layout=fw.jagged).layout is fw.jagged


def test_pointwise_matmul_softmax(device):
    nt, ref = _pair(device)
    _same(nt * nt + 1, ref * ref + 1)
    _same(nt.relu(), ref.relu())
    _same(F.relu(nt), TF.relu(ref))
    _same(nt.add(nt, alpha=2), ref.add(ref, alpha=2))
    _same(nt - nt / 2, ref - ref / 2)
    for dim in (-1, 1):
        _same(nt.softmax(dim), ref.softmax(dim))
        _same(F.softmax(nt, dim=dim), TF.softmax(ref, dim=dim))
    other, oref = _pair(device, ((5, 2), (4, 3), (6, 1)))
    _same(fw.matmul(nt, other), torch.matmul(ref, oref))
    _same(fw.bmm(nt, other), torch.bmm(ref, oref))
    _same(nt @ nt.transpose(1, 2), ref @ ref.transpose(1, 2))
    # linear when the components share their last dim
    same_last, sref = _pair(device, ((2, 3), (4, 3)))
    w, b = np.random.randn(5, 3).astype(np.float32), np.random.randn(5).astype(np.float32)
    _same(F.linear(same_last, fw.tensor(w, device=device), fw.tensor(b, device=device)),
          TF.linear(sref, torch.tensor(w), torch.tensor(b)))
    _same(same_last.view(2, -1, 3, 1), sref.view(2, -1, 3, 1))
    _same(same_last.reshape(2, -1, 1, 3), sref.reshape(2, -1, 1, 3))
    _raises(lambda: same_last.view(2, -1, 1), lambda: sref.view(2, -1, 1), "is invalid for")
    _same(fw.zeros_like(nt) + 2, torch.zeros_like(ref) + 2)
    lw, lb = np.random.randn(3).astype(np.float32), np.random.randn(3).astype(np.float32)
    _same(F.layer_norm(same_last, (3,), fw.tensor(lw, device=device),
                       fw.tensor(lb, device=device)),
          TF.layer_norm(sref, (3,), torch.tensor(lw), torch.tensor(lb)))
    _raises(lambda: F.layer_norm(same_last, (3,)), lambda: TF.layer_norm(sref, (3,)),
            "requires weight and bias")
    _raises(lambda: nt.view(-1), lambda: ref.view(-1), "implicit batch dimension")
    # in place: the same nested tensor, its components changed
    m, mref = nt.clone(), ref.clone()
    assert m.mul_(2) is m
    mref.mul_(2)
    _same(m, mref)
    # errors as PyTorch's
    _raises(lambda: nt + fw.ones(5, device=device), lambda: ref + torch.ones(5),
            "Expected both self and other to be nested")
    _raises(lambda: nt + other, lambda: ref + oref, "does not support broadcasting")
    _raises(lambda: fw.softmax(nt, 0), lambda: torch.softmax(ref, 0), "nested dimension 0")
    _raises(lambda: fw.bmm(nt, nt), lambda: torch.bmm(ref, ref),
            r"0-th nested matrices in batch cannot be multiplied \(2x5 and 2x5\)")
    _raises(lambda: fw.matmul(nt, fw.ones(5, 2, device=device)),
            lambda: torch.matmul(ref, torch.ones(5, 2)), "Expected both to be nested")
    _raises(lambda: F.linear(nt, fw.ones(2, 5, device=device)),
            lambda: TF.linear(ref, torch.ones(2, 5)), "same trailing dimension")
    _raises(lambda: fw.exp(nt).numpy(), lambda: ref.numpy())


def test_backward(device):
    # as_nested_tensor keeps history: backward(grad_nt) reaches the list's tensors
    a = fw.arange(3, dtype=fw.float32, device=device, requires_grad=True)
    b = fw.arange(5, dtype=fw.float32, device=device, requires_grad=True)
    nt = fw.nested.as_nested_tensor([a, b])
    assert not nt.is_leaf and nt.requires_grad and nt.layout is fw.strided
    nt.backward(fw.nested.nested_tensor([fw.ones_like(a), fw.zeros_like(b) + 2]))
    assert _np(a.grad).tolist() == [1.0, 1.0, 1.0] and _np(b.grad).tolist() == [2.0] * 5
    with pytest.raises(RuntimeError, match="same sizes"):
        nt.backward(fw.nested.nested_tensor([fw.ones_like(a), fw.ones(4, device=device)]))
    # a leaf nested tensor through bmm, softmax and padding: nt.grad per component
    x, xr = _pair(device, ((2, 3), (4, 2)), dtype=np.float64, requires_grad=True)
    y, yr = _pair(device, ((3, 2), (2, 3)), dtype=np.float64, requires_grad=True)
    assert x.is_leaf and x.requires_grad and x.dtype is fw.float64
    out = fw.nested.to_padded_tensor(fw.bmm(x, y).softmax(-1) * 3, 0.0)
    ref = torch.nested.to_padded_tensor(torch.bmm(xr, yr).softmax(-1) * 3, 0.0)
    _same(out, ref)
    g = np.random.randn(*out.shape)
    out.backward(fw.tensor(g, device=device))
    ref.backward(torch.tensor(g))
    _same(x.grad, xr.grad)
    _same(y.grad, yr.grad)
    # a dense (B, S, D) tensor seen as B components: views, gradients reach it
    c = fw.randn(3, 2, 4, device=device, requires_grad=True)
    cr = torch.tensor(_np(c), requires_grad=True)
    n2, r2 = fw.nested.as_nested_tensor(c), torch.nested.as_nested_tensor(cr)
    _same(n2, r2)
    gn = np.random.randn(3, 2, 4).astype(np.float32)
    (n2 * n2).backward(fw.nested.nested_tensor([fw.tensor(p, device=device) for p in gn]))
    (r2 * r2).backward(torch.nested.nested_tensor([torch.tensor(p) for p in gn]))
    np.testing.assert_allclose(_np(c.grad), cr.grad.numpy(), rtol=1e-5)


def test_narrow_strided():
    x = np.random.randn(4, 3, 2).astype(np.float32)
    nt = fw.nested.narrow(fw.tensor(x), 0, 1, 2)
    ref = torch.nested.narrow(torch.tensor(x), 0, 1, 2)
    _same(nt, ref)
    _raises(lambda: fw.nested.narrow(fw.tensor(x), 1, 0, 1),
            lambda: torch.nested.narrow(torch.tensor(x), 1, 0, 1), "only dim=0")
    _raises(lambda: fw.nested.narrow(fw.tensor(x), 0, fw.tensor([0]), 1),
            lambda: torch.nested.narrow(torch.tensor(x), 0, torch.tensor([0]), 1), "integers")
