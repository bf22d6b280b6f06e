"""Histories of views after in-place changes to their storage: a view made before an
in-place op on its base, or on another view of the base, takes its history anew from the
base (as PyTorch does), so gradients see the values the view now holds."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((3, 4))
Y = RNG.standard_normal(4)


def other_view_after_inplace_on_view(T, x, w, y):
    a = x * 1
    whole = a.view(-1)
    row = a[1]
    row.mul_(y)                  # changes `whole` too
    return (whole * w.reshape(-1)).sum()


def view_after_inplace_on_base(T, x, w, y):
    a = x * 1
    first = a[0]
    a.mul_(3)
    return (first * y).sum() + a.sum()


def overlapping_view(T, x, w, y):
    a = x[0] * 1
    e = a.expand(3, 4)           # every row is `a`
    a.add_(y)
    return (e * w).sum()


def view_of_view(T, x, w, y):
    a = x * 1
    mid = a[:, 1:3]
    corner = mid[0]
    a[0].mul_(y)                 # through a third view
    return (corner * corner).sum() + (mid * 2).sum()


def transposed_view(T, x, w, y):
    a = x * 1
    t = a.t()
    a[2].zero_()
    return (t * w.t()).sum()


def inplace_on_regenerated_view(T, x, w, y):
    a = x * 1
    row = a[1]
    a.add_(w * 0.5)
    row.mul_(y)                  # an in-place op on a view whose history was regenerated
    return (a * w).sum() + row.sum()


CASES = [other_view_after_inplace_on_view, view_after_inplace_on_base, overlapping_view,
         view_of_view, transposed_view, inplace_on_regenerated_view]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_view_history_matches_torch(case, device):
    ins = [fw.tensor(v, dtype=fw.float64, device=device, requires_grad=True)
           for v in (X, W, Y)]
    tins = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (X, W, Y)]
    case(fw, *ins).backward()
    case(torch, *tins).backward()
    for a, t in zip(ins, tins):
        expected = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
        got = a.grad.cpu().numpy() if a.grad is not None else np.zeros(t.shape)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_regenerated_history_is_named_and_second_order(device):
    x = fw.tensor(X, dtype=fw.float64, device=device, requires_grad=True)
    a = x * 1
    first = a[0]
    assert first.grad_fn.name() != "AsStridedBackward0"
    a.mul_(x)
    assert first.grad_fn.name() == "AsStridedBackward0"
    assert first.grad_fn.next_functions[0][0] is a.grad_fn
    # d/dx of sum(first^3) with first = x[0]^2: 6 x[0]^5; second order through the view
    g, = fw.autograd.grad((first ** 3).sum(), x, create_graph=True)
    expected = np.zeros_like(X)
    expected[0] = 6 * X[0] ** 5
    np.testing.assert_allclose(g.detach().cpu().numpy(), expected, rtol=1e-12)
    gg, = fw.autograd.grad(g.sum(), x)
    expected[0] = 30 * X[0] ** 4
    np.testing.assert_allclose(gg.cpu().numpy(), expected, rtol=1e-12)


def test_inplace_on_one_of_several_views_raises(device):
    x = fw.tensor(X, dtype=fw.float64, device=device, requires_grad=True)
    top, bottom = (x * 1).split([1, 2])
    with pytest.raises(RuntimeError, match="Output 0 of SplitBackward0 is a view and is being "
                                           "modified inplace"):
        top.mul_(2)
    with fw.no_grad():
        top.mul_(2)              # not recorded: allowed
    # and its history cannot be taken anew once the base changed
    with pytest.raises(RuntimeError, match="Output 1 of SplitBackward0 is a view and its base "
                                           "or another view of its base has been modified"):
        (bottom * 2).sum().backward()
