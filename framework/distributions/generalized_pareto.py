"""``GeneralizedPareto``: the generalized Pareto distribution, as
torch.distributions.generalized_pareto."""
import math
import numbers

import framework as fw

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with ``loc``, ``scale`` and ``concentration``
    (Exponential at concentration 0, Uniform at -1, Pareto-like above 0)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, numbers.Number) for v in (loc, scale, concentration)):
            batch_shape = fw.Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = fw.Size(batch_shape)
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=fw.Size()):
        shape = self._extended_shape(sample_shape)
        u = fw.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self):
        conc = self.concentration
        eq_zero = fw.isclose(conc, fw.zeros_like(conc))
        return eq_zero, fw.where(eq_zero, fw.ones_like(conc), conc)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + fw.ones_like(z)
        where_nonzero = fw.where(y == 0, y, y * fw.log1p(safe_conc * z))
        return -self.scale.log() - fw.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -fw.log1p(safe_conc * z) / safe_conc
        return fw.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return fw.log1p(-fw.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return fw.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = fw.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * fw.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return fw.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        conc = self.concentration
        valid = conc < 1
        safe_conc = fw.where(valid, conc, fw.full_like(conc, 0.5))
        result = self.loc + self.scale / (1 - safe_conc)
        return fw.where(valid, result, fw.full_like(result, math.nan))

    @property
    def variance(self):
        conc = self.concentration
        valid = conc < 0.5
        safe_conc = fw.where(valid, conc, fw.full_like(conc, 0.25))
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return fw.where(valid, result, fw.full_like(result, math.nan))

    def entropy(self):
        ans = fw.log(self.scale) + self.concentration + 1
        return fw.broadcast_to(ans, tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = fw.where(self.concentration < 0, lower - self.scale / self.concentration,
                         fw.full_like(lower, math.inf))
        return constraints.interval(lower, upper)
