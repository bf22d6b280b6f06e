"""Gradients of split/chunk that already tile one buffer: attention's backward lays dq, dk
and dv out as q, k and v (``memory_format.empty_like_pieces``) and the split's backward
joins them as a view (``formulas._joined``) instead of a cat. Checked against NumPy's
concatenate, with the layouts that must not be joined (gaps, overlap, mixed strides)."""
import numpy as np
import pytest

import framework as fw
from framework._ops import memory_format
from framework.autograd import formulas
from helpers import to_np


@pytest.mark.parametrize("shape,pieces,dim", [((2, 5, 12), 3, 2), ((6, 4), 3, 0),
                                              ((3, 8, 5), 2, 1), ((2, 3, 4, 6), 3, 3)])
def test_split_pieces_tile_one_new_buffer(device, shape, pieces, dim):
    x = fw.randn(shape, device=device)
    ts = x.chunk(pieces, dim)
    unit = memory_format.piece_unit(ts[0].shape, ts[0].stride(), pieces)
    assert unit == ts[1].storage_offset() - ts[0].storage_offset()
    news = memory_format.empty_like_pieces(ts, fw.float64, x._storage.device)
    assert all(n._storage is news[0]._storage for n in news)
    assert news[0]._storage.nbytes == x.numel() * 8
    for n, t in zip(news, ts):
        assert n.stride() == t.stride() and n.storage_offset() == t.storage_offset()
        assert n.dtype is fw.float64 and n.shape == t.shape
    # written through, the pieces make up the whole: a cat of them is a view of the buffer
    for i, n in enumerate(news):
        n.copy_(ts[i])
    joined = formulas._joined(list(news), dim)
    assert joined is not None and joined._storage is news[0]._storage
    np.testing.assert_array_equal(to_np(joined), to_np(x).astype(np.float64))


def test_layouts_that_do_not_tile(device):
    x = fw.randn(4, 6, device=device)
    same = [x, x, x]                                     # one tensor three times
    gapped = [x[:, 0:2], x[:, 3:5]]                      # a column between them
    strided = [x[:, 0:2], x[:, 2:4].t().contiguous().t()]
    for ts in (same, gapped, strided):
        news = memory_format.empty_like_pieces(ts, x.dtype, x._storage.device)
        assert len({id(n._storage) for n in news}) == len(ts)
    assert memory_format.piece_unit((2, 4), (24, 1), 3) is None
    assert formulas._joined(gapped, 1) is None
    assert formulas._joined([x[:, 2:4], x[:, 0:2]], 1) is None   # out of order
    assert formulas._joined([x[0:2], x[0:2]], 0) is None         # overlapping
    assert formulas._joined([x[:, 0:2], x[:, 2:4].double()], 1) is None


def test_joined_is_not_used_while_the_backward_records(device):
    x = fw.randn(4, 6, device=device)
    a, b = x[:, :3].clone().requires_grad_(), x[:, 3:].clone().requires_grad_()
    pieces = [a * 1, b * 1]   # not adjacent: a cat, recorded
    with fw.enable_grad():
        assert formulas._joined(pieces, 1) is None
    buf = fw.randn(4, 6, device=device, requires_grad=True)
    views = [buf[:, :3], buf[:, 3:]]
    with fw.enable_grad():
        assert formulas._joined(views, 1) is None   # they require grad: stay on the graph
    with fw.no_grad():
        v = formulas._joined(views, 1)
    np.testing.assert_array_equal(to_np(v), to_np(buf.detach()))


def test_split_backward_values_with_and_without_join(device):
    """A GPT's split heads through attention (joined) and the same through a clone of each
    head (cat): one set of gradients, each against the other and NumPy's reference sum."""
    B, T, H, D = 2, 5, 2, 4
    C = H * D
    x0 = np.random.default_rng(0).standard_normal((B, T, 3 * C))
    grads = []
    for clone in (False, True):
        x = fw.tensor(x0, dtype=fw.float64, device=device, requires_grad=True)
        q, k, v = (t.reshape(B, T, H, D).transpose(1, 2) for t in x.split(C, dim=2))
        if clone:
            q, k, v = q.clone(), k.clone(), v.clone()
        out = fw.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        (out * out).sum().backward()
        grads.append(to_np(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
    assert np.abs(grads[0]).sum() > 0
