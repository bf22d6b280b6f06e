"""Discrete families over counts: Bernoulli, Geometric, Binomial, Poisson and
NegativeBinomial."""
import math
import numbers

import framework as fw
import framework.nn.functional as F

from framework._ops.random_counts import _binomial_sample, _poisson_sample

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Binomial", "Geometric", "NegativeBinomial", "Poisson"]


def _probs_or_logits(self, probs, logits, is_binary):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        is_scalar = isinstance(probs, numbers.Number)
        (self.probs,) = broadcast_all(probs)
        self._param = self.probs
    else:
        is_scalar = isinstance(logits, numbers.Number)
        (self.logits,) = broadcast_all(logits)
        self._param = self.logits
    return fw.Size() if is_scalar else self._param.shape


def _expand_binary(self, cls, new, batch_shape):
    if "probs" in self.__dict__:
        new.probs = self.probs.expand(tuple(batch_shape))
        new._param = new.probs
    if "logits" in self.__dict__:
        new.logits = self.logits.expand(tuple(batch_shape))
        new._param = new.logits
    Distribution.__init__(new, batch_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def _count_and_param(self, total_count, probs, logits):
    """Sets total_count (in the parameter's dtype) and probs or logits, broadcast together;
    returns the batch shape."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        self.total_count, self.probs = broadcast_all(total_count, probs)
        self._param = self.probs
    else:
        self.total_count, self.logits = broadcast_all(total_count, logits)
        self._param = self.logits
    self.total_count = self.total_count.to(self._param.dtype)
    return self._param.shape


class _OneProbability(Distribution):
    """A family with one success probability, given as ``probs`` or ``logits`` (kept in
    ``_param``); each is derived from the other on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape


class Bernoulli(_OneProbability, ExponentialFamily):
    """The Bernoulli distribution, by ``probs`` or by ``logits`` (not both)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = _probs_or_logits(self, probs, logits, True)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        return _expand_binary(self, Bernoulli, new, fw.Size(batch_shape))

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return fw.where(self.probs == 0.5, fw.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with fw.no_grad():
            return fw.bernoulli(self.probs.expand(shape).contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value.to(logits.dtype), reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = fw.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (fw.logit(self.probs),)

    def _log_normalizer(self, x):
        return fw.log1p(fw.exp(x))


class Geometric(_OneProbability):
    """The number of Bernoulli failures before the first success, with success ``probs``."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = _probs_or_logits(self, probs, logits, True)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        return _expand_binary(self, Geometric, new, fw.Size(batch_shape))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return fw.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = fw.finfo(self.probs.dtype).tiny
        with fw.no_grad():
            u = fw.empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 * log(0) is 0 for the sure success at value 0
        probs = fw.where((probs == 1) & (value == 0), fw.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs


class Poisson(ExponentialFamily):
    """The Poisson distribution with ``rate``."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = fw.Size() if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = fw.Size(batch_shape)
        new.rate = self.rate.expand(tuple(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with fw.no_grad():
            rate = self.rate.expand(shape).to(fw.float64)
            return _poisson_sample(rate).to(self.rate.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return fw.xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (fw.log(self.rate),)

    def _log_normalizer(self, x):
        return fw.exp(x)


def _clamp_by_zero(x):
    # x.clamp(min=0) with gradient 1/2 at 0, as torch
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_OneProbability):
    """The binomial distribution: successes in ``total_count`` trials of success ``probs``."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch_shape = _count_and_param(self, total_count, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = fw.Size(batch_shape)
        new.total_count = self.total_count.expand(tuple(batch_shape))
        return _expand_binary(self, Binomial, new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with fw.no_grad():
            count, probs = self.total_count.expand(shape), self.probs.expand(shape)
            return _binomial_sample(count.double(), probs.double()).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = fw.lgamma(self.total_count + 1)
        log_factorial_k = fw.lgamma(value + 1)
        log_factorial_nmk = fw.lgamma(self.total_count - value + 1)
        # log(1 + exp(logits)) * n written so that it stays finite for large |logits|
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * fw.log1p(fw.exp(-fw.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not total_count == float(self.total_count.min()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(fw.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not total_count == float(self.total_count.min()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = fw.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class NegativeBinomial(_OneProbability):
    """The negative binomial distribution: successes before ``total_count`` failures, each
    trial succeeding with ``probs`` (a Gamma-Poisson mixture)."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        batch_shape = _count_and_param(self, total_count, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = fw.Size(batch_shape)
        new.total_count = self.total_count.expand(tuple(batch_shape))
        return _expand_binary(self, NegativeBinomial, new, batch_shape)

    @property
    def mean(self):
        return self.total_count * fw.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / fw.sigmoid(-self.logits)

    def sample(self, sample_shape=fw.Size()):
        from .gamma import Gamma
        with fw.no_grad():
            rate = Gamma(self.total_count, fw.exp(-self.logits),
                         validate_args=False).sample(sample_shape)
            return _poisson_sample(rate.double()).to(rate.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = (self.total_count * F.logsigmoid(-self.logits)
                            + value * F.logsigmoid(self.logits))
        log_normalization = (-fw.lgamma(self.total_count + value) + fw.lgamma(1.0 + value)
                             + fw.lgamma(self.total_count))
        # total_count + value == 0: the distribution is a point mass at 0 there
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
