"""Parity with PyTorch's gradients on random composite graphs: chains with fan-out and
fan-in, broadcasting, views, reductions and matmuls, first and second order."""
import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

UNARY = [lambda T, x: x.sin(), lambda T, x: x.tanh(), lambda T, x: x.sigmoid(),
         lambda T, x: (x * 0.3).exp(), lambda T, x: x * x, lambda T, x: T.nn.functional.gelu(x),
         lambda T, x: x.t().t(), lambda T, x: x.flip(0), lambda T, x: x.cumsum(1) * 0.2,
         lambda T, x: x - x.mean(1, keepdim=True), lambda T, x: x / (1 + x.abs()),
         lambda T, x: (x - x.logsumexp(1, keepdim=True)).exp()]
BINARY = [lambda T, a, b: a + b, lambda T, a, b: a * b, lambda T, a, b: a - 0.5 * b,
          lambda T, a, b: a @ b.t() @ b * 0.1, lambda T, a, b: T.cat([a, b], 0)[1:5],
          lambda T, a, b: a * b.sum(0, keepdim=True), lambda T, a, b: T.maximum(a, b * 1.01),
          lambda T, a, b: T.where(a > 0, a, b)]


def build(T, xs, plan):
    vals = list(xs)
    for kind, i, j, k in plan:
        if kind == 0:
            vals.append(UNARY[k](T, vals[i]))
        else:
            vals.append(BINARY[k](T, vals[i], vals[j]))
    # every intermediate can reach the output: fan-in of all values
    return sum((v * (0.1 * (n + 1))).sum() for n, v in enumerate(vals[len(xs):]))


@pytest.mark.parametrize("seed", range(12))
def test_random_graph_matches_torch(seed, device):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.5, 1.5, (4, 3)) for _ in range(3)]
    plan = []
    for step in range(10):
        n = 3 + step
        kind = int(rng.integers(0, 2))
        plan.append((kind, int(rng.integers(0, n)), int(rng.integers(0, n)),
                     int(rng.integers(0, len(UNARY) if kind == 0 else len(BINARY)))))
    xs = [fw.tensor(a, device=device).requires_grad_() for a in arrays]
    ts = [torch.tensor(a).requires_grad_() for a in arrays]
    out, tout = build(fw, xs, plan), build(torch, ts, plan)
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-10)
    g = fw.autograd.grad(out, xs, create_graph=True, allow_unused=True)
    tg = torch.autograd.grad(tout, ts, create_graph=True, allow_unused=True)
    for a, b in zip(g, tg):
        if b is None:
            assert a is None
            continue
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=1e-8,
                                   atol=1e-10)
    # second order through the whole graph
    s = sum((a * a).sum() for a in g if a is not None)
    ts_ = sum((b * b).sum() for b in tg if b is not None)
    gg = fw.autograd.grad(s, xs, allow_unused=True)
    tgg = torch.autograd.grad(ts_, ts, allow_unused=True)
    for a, b in zip(gg, tgg):
        if b is None or a is None:
            continue
        np.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-7, atol=1e-9)
