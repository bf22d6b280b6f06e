"""framework.poisson and framework.binomial: their distributions (frequencies against the
exact probabilities), their errors against PyTorch's, and their generator."""
import math

import numpy as np
import pytest

import framework as fw

try:
    import torch
except ImportError:
    torch = None

# samples per case: fewer in the simulated cuda device, whose kernels run in the interpreter
SAMPLES = {"cpu": 4000, "cuda": 600}


def _check_pmf(samples, logpmf, support):
    """Every value's frequency within 5 standard errors (plus a little) of its probability,
    and no value outside ``support``."""
    values, counts = np.unique(samples, return_counts=True)
    assert set(values.tolist()) <= set(support)
    freq = dict(zip(values.tolist(), (counts / len(samples)).tolist()))
    for k in support:
        p = math.exp(logpmf(k))
        assert abs(freq.get(k, 0.0) - p) <= 5 * math.sqrt(p * (1 - p) / len(samples)) + 2e-3, k


@pytest.mark.parametrize("rate", [0.0, 0.7, 4.0, 9.9, 10.0, 37.0])
def test_poisson_frequencies(device, rate):
    N = SAMPLES[device]
    x = fw.poisson(fw.full((N,), rate, device=device))
    assert x.dtype is fw.float32 and x.device.type == device
    s = x.cpu().numpy()

    def logpmf(k):
        return -rate + k * math.log(rate) - math.lgamma(k + 1) if rate else (0.0 if k == 0
                                                                            else -math.inf)
    _check_pmf(s, logpmf, range(int(s.max()) + 1))


def test_poisson_large_rates_and_edges(device):
    N = SAMPLES[device]
    rates = fw.tensor([0.0, 1e4, float("inf")], dtype=fw.float64, device=device)
    s = fw.poisson(rates.expand(N, 3).contiguous()).cpu().numpy()
    assert (s[:, 0] == 0).all() and np.isinf(s[:, 2]).all()
    assert abs(s[:, 1].mean() - 1e4) < 5 * math.sqrt(1e4 / N)
    assert abs(s[:, 1].var() / 1e4 - 1) < 6 * math.sqrt(2 / N)
    assert fw.poisson(fw.zeros(0, 3, device=device)).shape == (0, 3)
    h = fw.poisson(fw.tensor([2.0, 20.0], dtype=fw.float16, device=device))
    assert h.dtype is fw.float16


@pytest.mark.parametrize("n,p", [(10, 0.5), (5, 1.0), (0, 0.3), (20, 0.05), (200, 0.02),
                                 (60, 0.4), (50, 0.7), (30, 0.0)])
def test_binomial_frequencies(device, n, p):
    N = SAMPLES[device]
    x = fw.binomial(fw.full((N,), float(n), device=device), fw.full((N,), p, device=device))
    s = x.cpu().numpy()

    def logpmf(k):
        if p in (0.0, 1.0):
            return 0.0 if k == n * p else -math.inf
        return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                + k * math.log(p) + (n - k) * math.log1p(-p))
    _check_pmf(s, logpmf, range(n + 1))


def test_binomial_large_counts_broadcast_and_invalid(device):
    N = SAMPLES[device]
    count = fw.tensor([[1e6], [1e3]], dtype=fw.float64, device=device)
    prob = fw.tensor([0.9, 0.3], dtype=fw.float64, device=device)
    s = fw.binomial(count.expand(2, N).contiguous().T.contiguous(), prob.expand(N, 2)).cpu()
    s = s.numpy()
    for j, (n, p) in enumerate([(1e6, 0.9), (1e3, 0.3)]):
        assert abs(s[:, j].mean() - n * p) < 5 * math.sqrt(n * p * (1 - p) / N)
        assert abs(s[:, j].var() / (n * p * (1 - p)) - 1) < 6 * math.sqrt(2 / N)
        assert (s[:, j] == np.floor(s[:, j])).all() and (s[:, j] <= n).all()
    b = fw.binomial(fw.tensor([3.0], device=device), fw.tensor([0.5, 0.5], device=device))
    assert b.shape == (2,)
    # torch returns arbitrary numbers for these; NaN here
    bad = fw.binomial(fw.tensor([-1.0, 4.0, 4.0], device=device),
                      fw.tensor([0.5, 1.5, float("nan")], device=device))
    assert np.isnan(bad.cpu().numpy()).all()


def test_generator_reproduces(device):
    g = fw.Generator(device).manual_seed(3)
    a = fw.poisson(fw.full((50,), 12.0, device=device), g)
    b = fw.binomial(fw.full((50,), 40.0, device=device), fw.full((50,), 0.6, device=device),
                    generator=g)
    g.manual_seed(3)
    np.testing.assert_array_equal(fw.poisson(fw.full((50,), 12.0, device=device),
                                             generator=g).cpu().numpy(), a.cpu().numpy())
    np.testing.assert_array_equal(
        fw.binomial(fw.full((50,), 40.0, device=device), fw.full((50,), 0.6, device=device),
                    g).cpu().numpy(), b.cpu().numpy())


def test_gradients():
    r = fw.tensor([1.0, 20.0], requires_grad=True)
    fw.poisson(r).sum().backward()
    np.testing.assert_array_equal(r.grad.numpy(), [0.0, 0.0])      # torch's: zeros
    c = fw.tensor([3.0, 4.0], requires_grad=True)
    out = fw.binomial(c, fw.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="the derivative for 'binomial' is not implemented"):
        out.sum().backward()


@pytest.mark.skipif(torch is None, reason="torch is the oracle")
def test_errors_are_torchs():
    cases = [
        lambda m: m.poisson(m.tensor([1.0, -1.0])),
        lambda m: m.poisson(m.tensor([1.0, float("nan")])),
        lambda m: m.poisson(m.tensor([1, 2])),
        lambda m: m.binomial(m.tensor([10, 5]), m.tensor([0.5, 1.0])),
        lambda m: m.binomial(m.tensor([10.0, 5.0], dtype=m.float64), m.tensor([0.5, 1.0])),
    ]
    for case in cases:
        got = []
        for m in (fw, torch):
            with pytest.raises(Exception) as info:
                case(m)
            got.append((info.type.__name__, str(info.value)))
        assert got[0] == got[1]
