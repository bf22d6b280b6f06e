"""framework.nn.attention.bias: CausalBias as attn_mask of scaled_dot_product_attention,
against PyTorch's."""
import numpy as np
import pytest

import framework as fw
import framework.nn.functional as F
from framework.nn.attention import bias as fbias

torch = pytest.importorskip("torch")
tbias = pytest.importorskip("torch.nn.attention.bias")


@pytest.mark.parametrize("make", ["causal_upper_left", "causal_lower_right"])
def test_materialize(make):
    for size in ((3, 4), (4, 4), (5, 5)):
        got = getattr(fbias, make)(*size)._materialize()
        want = getattr(tbias, make)(*size)._materialize()
        assert got.dtype == fw.bool and got.device.type == "cpu"
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert getattr(fbias, make)(3, 4).variant == getattr(tbias, make)(3, 4).variant


@pytest.mark.parametrize("make,L,S", [("causal_upper_left", 5, 9), ("causal_lower_right", 5, 9),
                                      ("causal_lower_right", 6, 6)])
def test_sdpa_with_causal_bias(device, make, L, S):
    q, k, v = (np.random.randn(2, 3, n, 8) for n in (L, S, S))
    fq, fk, fv = (fw.tensor(x, dtype=fw.float32, device=device, requires_grad=True)
                  for x in (q, k, v))
    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
    out = F.scaled_dot_product_attention(fq, fk, fv, getattr(fbias, make)(L, S))
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv,
                                                           getattr(tbias, make)(L, S))
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), atol=1e-5)
    g = np.random.randn(*ref.shape)
    out.backward(fw.tensor(g, dtype=fw.float32, device=device))
    ref.backward(torch.tensor(g))
    for a, b in zip((fq, fk, fv), (tq, tk, tv)):
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), atol=1e-4)


def test_errors_and_warnings():
    q = fw.randn(1, 1, 3, 4)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        F.scaled_dot_product_attention(q, q, q, fbias.causal_upper_left(3, 3), is_causal=True)
    with pytest.warns(UserWarning, match="will produce NaNs"):
        fbias.causal_lower_right(4, 3)
    with pytest.raises(AssertionError, match="only supports 2D"):
        fbias.causal_upper_left(3)
    with pytest.raises(AssertionError, match="must be a CausalVariant"):
        fbias.CausalBias(1, 3, 3)
    assert repr(fbias.causal_upper_left(2, 2)) == repr(fw.ones(2, 2, dtype=fw.bool).tril())
