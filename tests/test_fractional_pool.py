"""Fractional max pooling (framework/_ops/fractional_pool.py) against torch on both devices:
values and indices with the same ``_random_samples``, unbatched input, output_ratio, float64
gradients, and random samples drawn when none are given."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from helpers import assert_close, to_np

torch = pytest.importorskip("torch")

CASES = [(2, (2, 3, 9, 11), (2, 3), (5, 4)), (3, (1, 2, 7, 8, 9), (2, 2, 3), (4, 5, 3)),
         (2, (3, 10, 10), 3, (4, 4))]


@pytest.mark.parametrize("nd,shape,k,out", CASES)
def test_fractional_max_pool(nd, shape, k, out, device):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape)
    N = shape[0] if len(shape) == nd + 2 else 1
    u = rng.random((N, shape[-nd - 1], nd))
    fn = getattr(F, f"fractional_max_pool{nd}d")
    tfn = getattr(torch.nn.functional, f"fractional_max_pool{nd}d")
    xf = fw.tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    r, i = fn(xf, k, output_size=out, return_indices=True,
              _random_samples=fw.tensor(u, device=device))
    tr, ti = tfn(xt, k, output_size=out, return_indices=True, _random_samples=torch.tensor(u))
    assert_close(r, tr.detach().numpy())
    np.testing.assert_array_equal(to_np(i), ti.numpy())
    w = rng.uniform(0.5, 1.5, tuple(tr.shape))
    (r * fw.tensor(w, device=device)).sum().backward()
    (tr * torch.tensor(w)).sum().backward()
    assert_close(xf.grad, xt.grad.numpy())


def test_fractional_max_pool_random_and_ratio():
    x = fw.randn(2, 3, 8, 10)
    y, idx = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7), return_indices=True)
    assert tuple(y.shape) == (2, 3, 4, 7) and idx.dtype == fw.int64
    flat = x.reshape(2, 3, -1)
    assert_close(y, to_np(fw.gather(flat, 2, idx.reshape(2, 3, -1)).reshape(2, 3, 4, 7)))
    with pytest.raises(ValueError):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError):
        F.fractional_max_pool2d(x, 3, output_size=(7, 9))
