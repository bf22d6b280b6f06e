"""View semantics beyond values: memory sharing, strides, PyTorch's errors, and a
hypothesis check of view/reshape against NumPy over random strided inputs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import framework as fw


def test_views_share_storage():
    a = fw.arange(24).reshape(2, 3, 4)
    for v in (a.view(6, 4), a.transpose(0, 2), a[1], a[:, ::2], a.unsqueeze(0), a.expand(2, 2, 3, 4),
              a.narrow(2, 1, 2), a.diagonal(0, 1, 2), a.unfold(2, 2, 1), a.permute(2, 0, 1)):
        assert v._storage is a._storage
    a.view(6, 4)[0, 0] = 100
    assert a[0, 0, 0].item() == 100


def test_reshape_copies_only_when_needed():
    a = fw.arange(12).reshape(3, 4)
    assert a.reshape(4, 3)._storage is a._storage
    b = a.t().reshape(12)
    assert b._storage is not a._storage and b.tolist() == np.arange(12).reshape(3, 4).T.ravel().tolist()


@pytest.mark.parametrize("fn,match", [
    (lambda a: a.t().view(12), "view size is not compatible"),
    (lambda a: a.view(5, -1), "is invalid for input of size 12"),
    (lambda a: a.view(-1, -1), "only one dimension can be inferred"),
    (lambda a: a.expand(3, 5), "must match the existing size"),
    (lambda a: a.expand(4), "must be greater or equal to the number of dimensions"),
    (lambda a: a.permute(0, 0), "duplicate dims"),
    (lambda a: a.narrow(1, 2, 5), "exceeds dimension size"),
    (lambda a: a.flatten(1, 0), "start_dim cannot come after end_dim"),
    (lambda a: a.diagonal(0, 1, 1), "diagonal dimensions cannot be identical"),
    (lambda a: a.unfold(1, 9, 1), "maximum size for tensor at dimension 1 is 4"),
    (lambda a: fw.zeros(2, 3, 4).T, "not supported"),
    (lambda a: a.split([1, 1], 0), "split_with_sizes expects split_sizes to sum exactly to 3"),
    (lambda a: a.chunk(0), "chunk expects `chunks` to be greater than 0"),
])
def test_view_errors(fn, match):
    with pytest.raises(RuntimeError, match=match):
        fn(fw.arange(12).reshape(3, 4))


@pytest.mark.parametrize("fn", [lambda a: a.select(2, 0), lambda a: a.transpose(0, 2),
                                lambda a: a.squeeze(5), lambda a: a[3], lambda a: a[0, 0, 0]])
def test_index_errors(fn):
    with pytest.raises(IndexError):
        fn(fw.arange(12).reshape(3, 4))


def test_basic_indexing_matches_numpy():
    a_np = np.arange(120).reshape(2, 3, 4, 5)
    a = fw.tensor(a_np)
    for idx in [(0,), (slice(None), 1), (Ellipsis, 2), (None, 1, Ellipsis, None),
                (slice(1, None, 2), slice(None, None, 3)), (-1, slice(-3, -1), None, 0),
                (slice(5, 10),), ()]:
        np.testing.assert_array_equal(a[idx].numpy(), a_np[idx])


def test_setitem_basic():
    a = fw.zeros(3, 4)
    a[1] = 5
    a[:, ::2] = fw.tensor([1.0, 2.0])
    ref = np.zeros((3, 4))
    ref[1] = 5
    ref[:, ::2] = [1.0, 2.0]
    np.testing.assert_array_equal(a.numpy(), ref)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_view_reshape_against_numpy(shape, data):
    """Random permute + slice, then reshape to a random factorisation: same values as NumPy
    and a view exactly when NumPy can make one without copying."""
    a_np = np.arange(int(np.prod(shape)) * 2).reshape(shape[:-1] + [shape[-1] * 2])[..., ::2]
    perm = data.draw(st.permutations(range(len(shape))))
    a_np = a_np.transpose(perm)
    a = fw.tensor(np.arange(int(np.prod(shape)) * 2)).reshape(shape[:-1] + [shape[-1] * 2])[..., ::2]
    a = a.permute(perm)
    n = a_np.size
    new = [n] if n == 1 else data.draw(st.sampled_from([[n], [1, n], [n, 1], _split(n)]))
    r = a.reshape(new)
    np.testing.assert_array_equal(r.numpy(), a_np.reshape(new))
    try:
        v = a_np.view()
        v.shape = new
        assert r._storage is a._storage
    except AttributeError:
        pass


def _split(n):
    for f in range(2, n):
        if n % f == 0:
            return [f, n // f]
    return [n]
