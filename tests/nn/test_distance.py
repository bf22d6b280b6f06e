"""F.cosine_similarity, F.pairwise_distance, F.pdist and the CosineSimilarity /
PairwiseDistance modules against PyTorch: values and gradients of both inputs, broadcasting,
degenerate (zero) vectors, every p, and errors."""
import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.helpers import assert_close
from tests.nn.common import compare_module, fw_tensor, to_np

torch = pytest.importorskip("torch")


def _rand(*shape):
    return np.random.randn(*shape).astype(np.float32)


def _compare_fn(t_fn, f_fn, arrays, device, rtol=1e-4, atol=1e-5, **kw):
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    f_in = [fw_tensor(a, device, requires_grad=True) for a in arrays]
    t_out, f_out = t_fn(*t_in, **kw), f_fn(*f_in, **kw)
    assert tuple(f_out.shape) == tuple(t_out.shape)
    assert_close(f_out, to_np(t_out), rtol=rtol, atol=atol)
    g = np.asarray(np.random.randn(*t_out.shape), dtype=np.float32)
    t_out.backward(torch.tensor(g))
    f_out.backward(fw_tensor(g, device))
    for ft, tt in zip(f_in, t_in):
        assert_close(ft.grad, to_np(tt.grad), rtol=rtol, atol=atol)


@pytest.mark.parametrize("s1,s2,dim", [((5, 7), (5, 7), 1), ((3, 1, 4), (1, 5, 4), -1),
                                       ((6, 3), (6, 3), 0), ((4,), (4,), 0),
                                       ((2, 3, 4), (3, 4), 1), ((0, 3), (0, 3), 1)])
def test_cosine_similarity(device, s1, s2, dim):
    _compare_fn(torch.nn.functional.cosine_similarity, F.cosine_similarity,
                [_rand(*s1), _rand(*s2)], device, dim=dim)


def test_cosine_similarity_degenerate(device):
    a, b = _rand(4, 5), _rand(4, 5)
    a[1] = 0          # zero vector: norm clamped to eps
    b[2] = 1e-9       # norm below eps
    b[3] = a[3] * -2  # exactly opposite: -1
    _compare_fn(torch.nn.functional.cosine_similarity, F.cosine_similarity, [a, b], device)
    _compare_fn(torch.nn.functional.cosine_similarity, F.cosine_similarity, [a, b], device,
                eps=0.5)
    out = F.cosine_similarity(fw_tensor(a, device), fw_tensor(b, device))
    assert abs(float(out[3]) + 1) < 1e-6 and float(out[1]) == 0


def test_cosine_similarity_module_and_errors(device):
    t, f = torch.nn.CosineSimilarity(dim=0, eps=1e-3), nn.CosineSimilarity(dim=0, eps=1e-3)
    assert repr(f) == repr(t) == "CosineSimilarity()"
    compare_module(torch, f, t, [_rand(4, 3), _rand(4, 3)], device)
    with pytest.raises(RuntimeError, match="The size of tensor a \\(3\\) must match the size "
                                           "of tensor b \\(4\\) at non-singleton dimension 1"):
        F.cosine_similarity(fw.randn(2, 3, device=device), fw.randn(2, 4, device=device))
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.cosine_similarity(fw.randn(3, device=device), fw.randn(3, device=device))
    # integer inputs compute in the default float dtype, as torch
    out = F.cosine_similarity(fw.tensor([[1, 2]], device=device),
                              fw.tensor([[2, 4]], device=device))
    assert out.dtype == fw.float32 and abs(float(out[0]) - 1) < 1e-6


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf"), 0.5])
@pytest.mark.parametrize("s1,s2,keepdim", [((5, 7), (5, 7), False), ((1, 4), (6, 4), True),
                                           ((4,), (4,), False), ((2, 3, 4), (3, 4), False),
                                           ((0, 3), (0, 3), True)])
def test_pairwise_distance(device, p, s1, s2, keepdim):
    _compare_fn(torch.nn.functional.pairwise_distance, F.pairwise_distance,
                [_rand(*s1), _rand(*s2)], device, p=p, keepdim=keepdim)


def test_pairwise_distance_equal_inputs_and_module(device):
    a = _rand(3, 4)
    # identical inputs: the distance is the eps-vector's norm, gradients finite
    _compare_fn(torch.nn.functional.pairwise_distance, F.pairwise_distance, [a, a.copy()],
                device)
    t, f = torch.nn.PairwiseDistance(p=1.0, eps=1e-3, keepdim=True), \
        nn.PairwiseDistance(p=1.0, eps=1e-3, keepdim=True)
    assert repr(f) == repr(t) == "PairwiseDistance()"
    assert f.norm == 1.0 and f.eps == 1e-3 and f.keepdim
    compare_module(torch, f, t, [_rand(5, 3), _rand(5, 3)], device)
    with pytest.raises(RuntimeError, match="The size of tensor a \\(3\\) must match"):
        F.pairwise_distance(fw.randn(2, 3, device=device), fw.randn(2, 4, device=device))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf"), 0.0])
@pytest.mark.parametrize("shape", [(5, 3), (2, 7), (1, 4), (40, 3)])
def test_pdist(device, p, shape):
    _compare_fn(torch.nn.functional.pdist, F.pdist, [_rand(*shape)], device, p=p)


def test_pdist_empty(device):
    # (torch 2.13 crashes in pdist's backward for an empty input, so no oracle here)
    x = fw.randn(0, 3, device=device, requires_grad=True)
    out = F.pdist(x)
    assert tuple(out.shape) == (0,)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 3)


def test_pdist_duplicate_rows(device):
    a = _rand(4, 3)
    a[2] = a[0]  # a zero distance: zero gradient there, as torch
    _compare_fn(torch.nn.functional.pdist, F.pdist, [a], device)
    _compare_fn(torch.nn.functional.pdist, F.pdist, [a], device, p=1.0)


def test_pdist_errors(device):
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(fw.randn(2, 3, 4, device=device))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(fw.randn(3, 4, device=device), -1)
