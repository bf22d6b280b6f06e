"""nn.Embedding, nn.EmbeddingBag, F.embedding, F.embedding_bag and F.one_hot against
PyTorch: outputs, weight gradients (padding row zero, frequency scaling), per-sample-weight
gradients, max_norm renormalization in place, from_pretrained, init, repr and errors."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, copy_state, fw_tensor, to_np

torch = pytest.importorskip("torch")

IDX = np.array([[1, 3, 3, 0], [9, 3, 0, 7], [2, 2, 2, 5]])


@pytest.mark.parametrize("padding_idx", [None, 0, 3, -1])
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("idx", [IDX, IDX[0], IDX[:0], np.zeros((2, 0), np.int64),
                                 np.array(4)])
def test_embedding_module(device, padding_idx, scale, idx):
    t = torch.nn.Embedding(10, 5, padding_idx=padding_idx, scale_grad_by_freq=scale)
    f = nn.Embedding(10, 5, padding_idx=padding_idx, scale_grad_by_freq=scale)
    assert repr(f) == repr(t)
    assert f.padding_idx == t.padding_idx
    compare_module(torch, f, t, [idx], device)


def test_embedding_padding_row_grad_is_zero(device):
    f = nn.Embedding(6, 3, padding_idx=2).to(device)
    out = f(fw.tensor([[2, 1], [2, 2]], device=device))
    # the padding row is still looked up (zeros from init), but gets no gradient
    assert_close(out[0, 0], np.zeros(3))
    (out * 3).sum().backward()
    g = to_np(f.weight.grad)
    np.testing.assert_array_equal(g[2], 0)
    np.testing.assert_allclose(g[1], 3)
    np.testing.assert_array_equal(g[[0, 3, 4, 5]], 0)


def test_embedding_int32_and_float64(device):
    t = torch.nn.Embedding(10, 4).double()
    f = nn.Embedding(10, 4, dtype=fw.float64)
    compare_module(torch, f, t, [IDX.astype(np.int32)], device, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_max_norm(device, norm_type):
    t = torch.nn.Embedding(10, 4, max_norm=1.5, norm_type=norm_type)
    f = nn.Embedding(10, 4, max_norm=1.5, norm_type=norm_type)
    with torch.no_grad():
        t.weight.mul_(2)
    copy_state(f, t)
    before = t.weight.detach().clone().numpy()
    compare_module(torch, f, t, [IDX[:2]], device, copy=False)
    # looked-up rows over the limit renormalized in place, the others untouched
    after = to_np(f.weight)
    assert_close(f.weight, t.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    used = np.unique(IDX[:2])
    unused = np.setdiff1d(np.arange(10), used)
    np.testing.assert_array_equal(after[unused], before[unused])
    norms = np.linalg.norm(after[used], ord=norm_type, axis=1)
    assert (norms <= 1.5 + 1e-4).all()
    assert not np.allclose(after[used], before[used])


def test_embedding_functional_sparse_flag(device):
    w = np.random.randn(7, 3).astype(np.float32)
    tw = torch.tensor(w, requires_grad=True)
    fw_ = fw_tensor(w, device, requires_grad=True)
    idx = np.array([1, 1, 4, 6])
    t_out = torch.nn.functional.embedding(torch.tensor(idx), tw, sparse=True)
    f_out = F.embedding(fw_tensor(idx, device), fw_, sparse=True)
    assert_close(f_out, to_np(t_out))
    g = np.random.randn(4, 3).astype(np.float32)
    t_out.backward(torch.tensor(g))
    f_out.backward(fw_tensor(g, device))
    # a sparse gradient, as torch's (tests/optim/test_sparse_grads.py checks it further)
    assert fw_.grad.layout is fw.sparse_coo
    assert_close(fw_.grad.to_dense(), tw.grad.to_dense().numpy(), rtol=1e-6, atol=1e-6)
    assert repr(nn.Embedding(3, 2, sparse=True)) == "Embedding(3, 2, sparse=True)"


def test_embedding_init_and_state():
    fw.manual_seed(0)
    m = nn.Embedding(200, 10, padding_idx=5)
    w = to_np(m.weight)
    np.testing.assert_array_equal(w[5], 0)
    rest = np.delete(w, 5, axis=0)
    assert abs(rest.mean()) < 0.05 and abs(rest.std() - 1) < 0.05
    assert list(m.state_dict()) == ["weight"]
    assert m.weight.requires_grad
    t = torch.nn.Embedding(10, 3, padding_idx=-1, max_norm=2.0, norm_type=1.0,
                           scale_grad_by_freq=True)
    f = nn.Embedding(10, 3, padding_idx=-1, max_norm=2.0, norm_type=1.0,
                     scale_grad_by_freq=True)
    assert repr(f) == repr(t)
    assert f.padding_idx == 9


def test_embedding_from_pretrained(device):
    w = fw.randn(5, 3, device=device)
    m = nn.Embedding.from_pretrained(w)
    assert not m.weight.requires_grad
    assert m.weight.data_ptr() == w.data_ptr()
    out = m(fw.tensor([4, 0], device=device))
    assert_close(out, to_np(w)[[4, 0]])
    m2 = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1)
    assert m2.weight.requires_grad and m2.padding_idx == 1
    # the table is taken as is: the padding row is not zeroed
    assert_close(m2.weight[1], to_np(w)[1])
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be "
                                             "2-dimensional"):
        nn.Embedding.from_pretrained(fw.randn(5, device=device))
    with pytest.raises(AssertionError, match="Shape of weight does not match num_embeddings "
                                             "and embedding_dim"):
        nn.Embedding(4, 3, _weight=fw.randn(5, 3))
    m3 = nn.Embedding(5, 3, _weight=w, _freeze=True)
    assert not m3.weight.requires_grad


def test_embedding_errors(device):
    w = fw.randn(10, 3, device=device)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(fw.tensor([1, 12], device=device), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(fw.tensor([1, -1], device=device), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        nn.Embedding(4, 2).to(device)(fw.tensor([4], device=device))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(fw.tensor([1], device=device), w, padding_idx=10)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=-5)
    with pytest.raises(RuntimeError) as e:
        F.embedding(fw.tensor([1.0, 2.0], device=device), w)
    assert str(e.value).startswith("Expected tensor for argument #1 'indices' to have one of "
                                   "the following scalar types: Long, Int; but got ")
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(fw.tensor([1], device=device), fw.randn(10, device=device))


# ---------------------------------------------------------------------------- EmbeddingBag
INPUT = np.array([1, 3, 3, 0, 9, 3, 0, 7, 2, 2])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets", [[0, 3, 3, 7], [0], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
                                     [0, 4, 10]])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_bag_offsets(device, mode, offsets, padding_idx):
    t = torch.nn.EmbeddingBag(10, 4, mode=mode, padding_idx=padding_idx)
    f = nn.EmbeddingBag(10, 4, mode=mode, padding_idx=padding_idx)
    assert repr(f) == repr(t)
    compare_module(torch, f, t, [INPUT, np.array(offsets)], device)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
# offsets[-1] == len(input), as documented (CSR); PyTorch is wrong for shorter ones
@pytest.mark.parametrize("offsets", [[0, 3, 3, 10], [0, 2, 10], [0, 10], [0, 10, 10], [0, 0, 10]])
def test_embedding_bag_include_last_offset(device, mode, offsets):
    t = torch.nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=True)
    f = nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=True)
    compare_module(torch, f, t, [INPUT, np.array(offsets)], device)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("shape", [(3, 4), (1, 5), (4, 1), (0, 3)])
def test_embedding_bag_2d(device, mode, shape):
    t = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=0)
    f = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=0)
    idx = np.random.randint(0, 10, shape)
    compare_module(torch, f, t, [idx], device)


@pytest.mark.parametrize("twod", [False, True])
def test_embedding_bag_per_sample_weights(device, twod):
    t = torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)
    f = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)
    psw = np.random.randn(10).astype(np.float32)
    if twod:
        # 2-D input: no offsets, per_sample_weights by keyword
        inputs = [INPUT.reshape(2, 5), None, psw.reshape(2, 5)]
        tx = torch.tensor(inputs[2], requires_grad=True)
        fx = fw_tensor(inputs[2], device, requires_grad=True)
        copy_state(f, t)
        f.to(device)
        t_out = t(torch.tensor(inputs[0]), per_sample_weights=tx)
        f_out = f(fw_tensor(inputs[0], device), per_sample_weights=fx)
        assert_close(f_out, to_np(t_out), rtol=1e-5, atol=1e-5)
        t_out.sum().backward()
        f_out.sum().backward()
        assert_close(fx.grad, to_np(tx.grad), rtol=1e-5, atol=1e-5)
        assert_close(f.weight.grad, to_np(t.weight.grad), rtol=1e-5, atol=1e-5)
    else:
        compare_module(torch, f, t, [INPUT, np.array([0, 3, 3, 7]), psw], device)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_max_norm(device, mode):
    t = torch.nn.EmbeddingBag(10, 4, max_norm=1.0, mode=mode)
    f = nn.EmbeddingBag(10, 4, max_norm=1.0, mode=mode)
    assert repr(f) == repr(t)
    copy_state(f, t)
    compare_module(torch, f, t, [INPUT, np.array([0, 5])], device, copy=False)
    assert_close(f.weight, t.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq(device, mode):
    # PyTorch 2.13's CPU kernel divides by the wrong count (pytorch/pytorch#190063), so the
    # reference is its unscaled gradient divided by each row's frequency in the batch
    t = torch.nn.EmbeddingBag(10, 4, mode=mode)
    f = nn.EmbeddingBag(10, 4, mode=mode, scale_grad_by_freq=True)
    assert repr(f) == ("EmbeddingBag(10, 4, scale_grad_by_freq=True, "
                       f"mode='{mode}')")
    copy_state(f, t)
    f.to(device)
    g = np.random.randn(2, 4).astype(np.float32)
    t(torch.tensor(INPUT), torch.tensor([0, 5])).backward(torch.tensor(g))
    f(fw_tensor(INPUT, device), fw_tensor(np.array([0, 5]), device)).backward(
        fw_tensor(g, device))
    counts = np.maximum(np.bincount(INPUT, minlength=10), 1)[:, None]
    assert_close(f.weight.grad, t.weight.grad.numpy() / counts, rtol=1e-5, atol=1e-6)


def test_embedding_bag_functional_and_from_pretrained(device):
    w = np.random.randn(10, 3).astype(np.float32)
    for mode in ("sum", "mean", "max"):
        ref = torch.nn.functional.embedding_bag(torch.tensor(INPUT), torch.tensor(w),
                                                torch.tensor([0, 2, 6]), mode=mode)
        out = F.embedding_bag(fw_tensor(INPUT, device), fw_tensor(w, device),
                              fw_tensor(np.array([0, 2, 6]), device), mode=mode)
        assert_close(out, ref.numpy(), rtol=1e-6, atol=1e-6)
    m = nn.EmbeddingBag.from_pretrained(fw_tensor(w, device), mode="max")
    assert not m.weight.requires_grad and m.mode == "max"
    out = m(fw_tensor(INPUT.reshape(2, 5), device))
    assert_close(out, np.stack([w[INPUT[:5]].max(0), w[INPUT[5:]].max(0)]))
    m = nn.EmbeddingBag.from_pretrained(fw_tensor(w, device), freeze=False)
    assert m.weight.requires_grad
    t = torch.nn.EmbeddingBag(10, 3, max_norm=1.0, padding_idx=2, mode="max",
                              include_last_offset=True, norm_type=3.0,
                              scale_grad_by_freq=True, sparse=True)
    f = nn.EmbeddingBag(10, 3, max_norm=1.0, padding_idx=2, mode="max",
                        include_last_offset=True, norm_type=3.0, scale_grad_by_freq=True,
                        sparse=True)
    assert repr(f) == repr(t)
    assert list(f.state_dict()) == ["weight"]


def test_embedding_bag_errors(device):
    w = fw.randn(10, 2, device=device)
    x = fw.arange(6, device=device)
    off = fw.tensor([0, 2], device=device)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(x, w, off, mode="min")
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(x.reshape(2, 3), w, off)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(x, w)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(x, w, off.reshape(1, 2))
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor, but got Tensor of "
                                         "dimension 3"):
        F.embedding_bag(x.reshape(1, 2, 3), w)
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor, but got Tensor of "
                                         "dimension 1"):
        F.embedding_bag(x, fw.randn(10, device=device), off)
    with pytest.raises(RuntimeError, match=r"Index 3 of input takes value 10 which is not in "
                                           r"the valid range \[0, 10\)"):
        F.embedding_bag(x + 7, w, off, mode="sum")
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for "
                                                  "mode='sum' \\(got mode='mean'\\)"):
        F.embedding_bag(x, w, off, per_sample_weights=fw.ones(6, device=device))
    with pytest.raises(ValueError, match="then it must have the same shape as the input"):
        F.embedding_bag(x, w, off, mode="sum", per_sample_weights=fw.ones(5, device=device))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0, i.e., the first "
                                           "sequence in the mini-batch has to start from "
                                           "position 0. However, got 1"):
        F.embedding_bag(x, w, fw.tensor([1, 2], device=device))
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater than input's "
                                           "length 6 but got offsets\\[-1\\] of 7"):
        F.embedding_bag(x, w, fw.tensor([0, 2, 7], device=device))
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of "
                                           "embeddings, -10 through 9, but got 10"):
        F.embedding_bag(x, w, off, padding_idx=10)
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(4, 2, padding_idx=4)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding_bag(x.float(), w, off)


# ---------------------------------------------------------------------------- one_hot
def test_one_hot(device):
    x = np.array([[0, 3], [2, 1], [3, 3]])
    for n in (-1, 4, 6):
        ref = torch.nn.functional.one_hot(torch.tensor(x), n).numpy()
        out = F.one_hot(fw_tensor(x, device), n)
        assert out.dtype == fw.int64
        np.testing.assert_array_equal(to_np(out), ref)
    out = F.one_hot(fw.tensor([], dtype=fw.int64, device=device), 3)
    assert tuple(out.shape) == (0, 3)
    np.testing.assert_array_equal(to_np(F.one_hot(fw.tensor(2, device=device), 3)), [0, 0, 1])


def test_one_hot_errors(device):
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(fw.tensor([1, 5], device=device), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(fw.tensor([1, -1], device=device), 3)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of "
                                           "type LongTensor."):
        F.one_hot(fw.tensor([1.0, 2.0], device=device))
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(fw.tensor([1, 2], dtype=fw.int32, device=device), 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty "
                                           "tensor."):
        F.one_hot(fw.tensor([], dtype=fw.int64, device=device))
