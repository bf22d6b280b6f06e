"""``ContinuousBernoulli``: the continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and
Cunningham, 2019), as torch.distributions.continuous_bernoulli."""
import math
import numbers

import framework as fw
import framework.nn.functional as F

from . import constraints
from .discrete import _expand_binary
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution, by ``probs`` in (0, 1) or by real ``logits``
    (not both); near ``probs = 0.5`` (inside ``lims``) Taylor expansions keep it stable."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = fw.Size() if is_scalar else self._param.shape
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        return _expand_binary(self, ContinuousBernoulli, new, fw.Size(batch_shape))

    def _outside_unstable_region(self):
        return fw.logical_or(fw.le(self.probs, self._lims[0]), fw.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return fw.where(self._outside_unstable_region(), self.probs,
                        self._lims[0] * fw.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normalizing constant as a function of ``probs``."""
        cut = self._cut_probs()
        below = fw.where(fw.le(cut, 0.5), cut, fw.zeros_like(cut))
        above = fw.where(fw.ge(cut, 0.5), cut, fw.ones_like(cut))
        log_norm = fw.log(fw.abs(fw.log1p(-cut) - fw.log(cut))) - fw.where(
            fw.le(cut, 0.5), fw.log1p(-2.0 * below), fw.log(2.0 * above - 1.0))
        x = fw.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return fw.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (fw.log1p(-cut) - fw.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * fw.pow(x, 2)) * x
        return fw.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return fw.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        var = (cut * (cut - 1.0) / fw.pow(1.0 - 2.0 * cut, 2)
               + 1.0 / fw.pow(fw.log1p(-cut) - fw.log(cut), 2))
        x = fw.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return fw.where(self._outside_unstable_region(), var, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.shape

    def sample(self, sample_shape=fw.Size()):
        shape = self._extended_shape(sample_shape)
        u = fw.rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        with fw.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=fw.Size()):
        shape = self._extended_shape(sample_shape)
        u = fw.rand(tuple(shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = ((fw.pow(cut, value) * fw.pow(1.0 - cut, 1.0 - value) + cut - 1.0)
                / (2.0 * cut - 1.0))
        unbounded = fw.where(self._outside_unstable_region(), cdfs, value)
        return fw.where(fw.le(value, 0.0), fw.zeros_like(value),
                        fw.where(fw.ge(value, 1.0), fw.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return fw.where(
            self._outside_unstable_region(),
            (fw.log1p(-cut + value * (2.0 * cut - 1.0)) - fw.log1p(-cut))
            / (fw.log(cut) - fw.log1p(-cut)),
            value)

    def entropy(self):
        log_probs0 = fw.log1p(-self.probs)
        log_probs1 = fw.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizing constant as a function of the natural parameter."""
        out = fw.logical_or(fw.le(x, self._lims[0] - 0.5), fw.gt(x, self._lims[1] - 0.5))
        cut = fw.where(out, x, (self._lims[0] - 0.5) * fw.ones_like(x))
        log_norm = fw.log(fw.abs(fw.expm1(cut))) - fw.log(fw.abs(cut))
        taylor = 0.5 * x + fw.pow(x, 2) / 24.0 - fw.pow(x, 4) / 2880.0
        return fw.where(out, log_norm, taylor)
