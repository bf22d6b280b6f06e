"""Random counts: ``poisson`` and ``binomial`` (PyTorch's), and the samplers the Poisson,
Binomial and NegativeBinomial distributions draw from.

Each sampler works elementwise in float64 on framework ops, so it runs on any device from
the op's generator: inversion of the CDF by sequential search where the mean is small, a
transformed rejection (Hoermann's PTRS for Poisson, BTRS for binomial) above it, whose
loop redraws only until every element is accepted.
"""
import framework as fw

from .args import same_device
from .pointwise import require_tensor, type_name

_SMALL_MEAN = 10.0
_SEARCH_CAP = 110   # far in the tail of any distribution with a mean under _SMALL_MEAN


def _search(out, u, f, ratio, active):
    """Inversion: the smallest k with u <= CDF(k), given f = P(0) and ratio(k, f) = P(k)
    from P(k - 1); elements not ``active`` keep ``out``."""
    cdf = f
    active = active & (u > cdf)
    k = 0
    while k < _SEARCH_CAP and bool(active.any()):
        k += 1
        out = fw.where(active, fw.full_like(out, float(k)), out)
        f = ratio(k, f)
        cdf = cdf + f
        active = active & (u > cdf)
    return out


def _poisson_sample(rate, generator=None):
    """Poisson samples, one per element of ``rate`` (float64, non-negative; an infinite
    rate gives inf)."""
    shape, dev = tuple(rate.shape), rate.device
    out = fw.zeros_like(rate)
    small = rate < _SMALL_MEAN
    if bool(small.any()):
        lam = fw.where(small, rate, fw.zeros_like(rate))
        u = fw.rand(shape, dtype=rate.dtype, device=dev, generator=generator)
        out = _search(out, u, fw.exp(-lam), lambda k, f: f * lam / k, small)
    big = ~small & (rate != float("inf"))
    if bool(big.any()):
        lam = fw.where(big, rate, fw.full_like(rate, _SMALL_MEAN))
        slam, loglam = lam.sqrt(), lam.log()
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        done = ~big
        while not bool(done.all()):
            U = fw.rand(shape, dtype=rate.dtype, device=dev, generator=generator) - 0.5
            V = fw.rand(shape, dtype=rate.dtype, device=dev, generator=generator)
            us = 0.5 - U.abs()
            k = ((2 * a / us + b) * U + lam + 0.43).floor()
            fast = (us >= 0.07) & (V <= vr)
            bad = (k < 0) | ((us < 0.013) & (V > us))
            kk = fw.clamp(k, min=0)
            slow = (V.log() + invalpha.log() - (a / (us * us) + b).log()
                    <= -lam + kk * loglam - fw.lgamma(kk + 1))
            accept = ~done & (fast | (~bad & slow))
            out = fw.where(accept, k, out)
            done = done | accept
    return fw.where(rate == float("inf"), rate, out)


def _binomial_sample(count, prob, generator=None):
    """Binomial samples (float64 ``count`` and ``prob`` of one shape): by symmetry with a
    success probability p <= 1/2, inversion where count * p < 10, BTRS above (its bound
    from lgamma, exact where the paper's Stirling tails approximate). An element with a
    negative or non-finite count, or a probability outside [0, 1], gives NaN."""
    shape, dev = tuple(count.shape), count.device
    valid = (count >= 0) & (count < float("inf")) & (prob >= 0) & (prob <= 1)
    n = fw.where(valid, count, fw.zeros_like(count)).floor()
    flip = prob > 0.5
    p = fw.where(valid, fw.where(flip, 1 - prob, prob), fw.zeros_like(prob))
    out = fw.zeros_like(n)
    small = valid & (n * p < _SMALL_MEAN)
    if bool(small.any()):
        u = fw.rand(shape, dtype=n.dtype, device=dev, generator=generator)
        q = 1 - p
        r = p / q
        f0 = fw.exp(n * fw.log1p(-p))
        out = _search(out, u, f0, lambda k, f: f * (n - (k - 1)).clamp(min=0) / k * r, small)
        out = fw.minimum(out, n)
    big = valid & ~small
    if bool(big.any()):
        pb = fw.where(big, p, fw.full_like(p, 0.5))
        nb = fw.where(big, n, fw.full_like(n, 4 * _SMALL_MEAN))
        spq = (nb * pb * (1 - pb)).sqrt()
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * pb
        c = nb * pb + 0.5
        vr = 0.92 - 4.2 / b
        logr = (pb / (1 - pb)).log()
        alpha = (2.83 + 5.1 / b) * spq
        m = ((nb + 1) * pb).floor()
        logfm = -fw.lgamma(m + 1) - fw.lgamma(nb - m + 1)
        done = ~big
        while not bool(done.all()):
            U = fw.rand(shape, dtype=n.dtype, device=dev, generator=generator) - 0.5
            V = fw.rand(shape, dtype=n.dtype, device=dev, generator=generator)
            us = 0.5 - U.abs()
            k = ((2 * a / us + b) * U + c).floor()
            inside = (k >= 0) & (k <= nb)
            kk = k.clamp(min=0).minimum(nb)
            fast = (us >= 0.07) & (V <= vr)
            # log f(k) / f(m), f the binomial pmf
            bound = (-fw.lgamma(kk + 1) - fw.lgamma(nb - kk + 1) - logfm + (kk - m) * logr)
            slow = (V * alpha / (a / (us * us) + b)).log() <= bound
            accept = ~done & inside & (fast | slow)
            out = fw.where(accept, k, out)
            done = done | accept
    out = fw.where(flip, n - out, out)
    return fw.where(valid, out, fw.full_like(out, float("nan")))


def poisson(input, generator=None):
    """A tensor of input's shape whose elements are Poisson samples with the rates in
    ``input`` (non-negative)."""
    require_tensor("poisson", input, "input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_{input.device.type}\" not implemented for "
                                  f"'{type_name(input.dtype)}'")
    with fw.no_grad():
        rate = input.to(fw.float64)
        if bool(((rate < 0) | rate.isnan()).any()):
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        return _poisson_sample(rate, generator).to(input.dtype)


def binomial(count, prob, generator=None):
    """Binomial samples: successes in ``count`` trials of success probability ``prob``
    (floating tensors of one dtype, broadcast together)."""
    require_tensor("binomial", count, "count")
    require_tensor("binomial", prob, "prob")
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{type_name(count.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {type_name(prob.dtype)} but expected "
                           f"{type_name(count.dtype)}")
    if prob.device != count.device:
        same_device("binomial", count, prob)
    with fw.no_grad():
        c, p = fw.broadcast_tensors(count.to(fw.float64), prob.to(fw.float64))
        return _binomial_sample(c, p, generator).to(count.dtype)
