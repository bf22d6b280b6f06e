"""Gamma-based families: Gamma, Chi2, Beta, Dirichlet, StudentT, FisherSnedecor, and the
standard gamma sampler they share.

The framework has no ``_standard_gamma`` op, so samples come from Marsaglia and Tsang's
rejection method over framework random ops, and ``rsample`` is reparameterized with the
implicit-function gradient dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha), P the
regularized lower incomplete gamma function (``igamma``). dP/dalpha is taken by a central
difference of ``igamma`` in float64, since igamma has no derivative for alpha.
"""
import math
import numbers

import framework as fw

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta", "Chi2", "Dirichlet", "FisherSnedecor", "Gamma", "StudentT"]


def _marsaglia_tsang(alpha):
    """Standard gamma samples, one per element of ``alpha`` (float64), without gradient."""
    boost = alpha < 1
    a = fw.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / fw.sqrt(9.0 * d)
    out = fw.zeros_like(alpha)
    done = fw.zeros(tuple(alpha.shape), dtype=fw.bool, device=alpha.device)
    while True:
        x = fw.randn(tuple(alpha.shape), dtype=alpha.dtype, device=alpha.device)
        u = fw.rand(tuple(alpha.shape), dtype=alpha.dtype, device=alpha.device)
        v = (1 + c * x) ** 3
        ok = v > 0
        # the log is taken where v > 0 only; elsewhere the candidate is rejected
        logv = fw.log(fw.where(ok, v, fw.ones_like(v)))
        accept = ok & (fw.log(u) < 0.5 * x * x + d - d * v + d * logv) & ~done
        out = fw.where(accept, d * v, out)
        done = done | accept
        if bool(done.all()):
            break
    # Gamma(a) = Gamma(a + 1) * U^(1/a) for a < 1
    u = fw.rand(tuple(alpha.shape), dtype=alpha.dtype, device=alpha.device)
    out = fw.where(boost, out * u.pow(1.0 / alpha), out)
    return out


def _standard_gamma_grad(alpha, x):
    """dx/dalpha of a standard gamma sample x at fixed CDF value (float64 in, float64 out)."""
    h = 1e-5 * fw.clamp(alpha, min=1.0)
    lo = fw.clamp(alpha - h, min=alpha * 0.5)
    hi = alpha + h
    p = fw.igamma(alpha, x)
    # difference the smaller tail so the round-off stays relative to the result
    use_p = p < 0.5
    dp = fw.where(use_p, fw.igamma(hi, x) - fw.igamma(lo, x), fw.igammac(lo, x) - fw.igammac(hi, x))
    dp_dalpha = dp / (hi - lo)
    log_pdf = (alpha - 1) * fw.log(x) - x - fw.lgamma(alpha)
    return -dp_dalpha * fw.exp(-log_pdf)


class _StandardGamma(fw.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        a64 = alpha.detach().to(fw.float64)
        x64 = _marsaglia_tsang(a64)
        x64 = fw.clamp(x64, min=fw.finfo(alpha.dtype).tiny)
        ctx.save_for_backward(a64, x64)
        return x64.to(alpha.dtype)

    @staticmethod
    def backward(ctx, grad):
        a64, x64 = ctx.saved_tensors
        return grad * _standard_gamma_grad(a64, x64).to(grad.dtype)


def _standard_gamma(alpha):
    """Samples Gamma(alpha, 1) with the implicit reparameterization gradient."""
    return _StandardGamma.apply(alpha.contiguous())


def _expand_params(self, cls, names, batch_shape, _instance):
    new = self._get_checked_instance(cls, _instance)
    batch_shape = fw.Size(batch_shape)
    for n in names:
        setattr(new, n, getattr(self, n).expand(tuple(batch_shape)))
    return new, batch_shape


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (inverse scale)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = _expand_params(self, Gamma, ("concentration", "rate"), batch_shape,
                                          _instance)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value

    def log_prob(self, value):
        value = fw.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (fw.xlogy(self.concentration, self.rate) + fw.xlogy(self.concentration - 1, value)
                - self.rate * value - fw.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - fw.log(self.rate) + fw.lgamma(self.concentration)
                + (1.0 - self.concentration) * fw.digamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return fw.igamma(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return fw.lgamma(x + 1) + (x + 1) * fw.log(-y.reciprocal())


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom, Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, fw.full_like(df, 0.5), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with ``concentration`` (its last dim is the event)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = fw.Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        concentration = self.concentration.expand(shape)
        g = _standard_gamma(concentration)
        x = g / g.sum(-1, keepdim=True)
        tiny = fw.finfo(x.dtype).tiny
        return x.clamp(min=tiny, max=1 - fw.finfo(x.dtype).eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (fw.xlogy(self.concentration - 1.0, value).sum(-1)
                + fw.lgamma(self.concentration.sum(-1)) - fw.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # where every concentration is below 1 the density peaks at a vertex
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = fw.nn.functional.one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1])
        vertex = vertex.to(mode.dtype)
        return fw.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (fw.lgamma(self.concentration).sum(-1) - fw.lgamma(a0) - (k - a0) * fw.digamma(a0)
                - ((self.concentration - 1.0) * fw.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - fw.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """The beta distribution with ``concentration1`` (alpha) and ``concentration0`` (beta)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        concentration1, concentration0 = broadcast_all(concentration1, concentration0)
        concentration1_concentration0 = fw.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(concentration1_concentration0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = fw.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = fw.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return fw.lgamma(x) + fw.lgamma(y) - fw.lgamma(x + y)


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location and scale."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = _expand_params(self, StudentT, ("df", "loc", "scale"), batch_shape,
                                          _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return fw.where(self.df <= 1, fw.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        big = self.scale.pow(2) * df / fw.where(df > 2, df - 2, fw.ones_like(df))
        m = fw.where(df > 2, big, fw.full_like(df, math.inf))
        return fw.where(df <= 1, fw.full_like(df, math.nan), m)

    def rsample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        X = fw.randn(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * fw.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + fw.lgamma(0.5 * self.df) - fw.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * fw.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        lbeta = fw.lgamma(0.5 * self.df) + math.lgamma(0.5) - fw.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (fw.digamma(0.5 * (self.df + 1))
                                                          - fw.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution: ``(X1 / df1) / (X2 / df2)`` for chi-squared X1,
    X2 with df1 and df2 degrees of freedom."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number):
            batch_shape = fw.Size()
        else:
            batch_shape = self.df1.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = fw.Size(batch_shape)
        new.df1 = self.df1.expand(tuple(batch_shape))
        new.df2 = self.df2.expand(tuple(batch_shape))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2
        return fw.where(df2 > 2, df2 / (df2 - 2), fw.full_like(df2, math.nan))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return fw.where(self.df1 > 2, mode, fw.full_like(mode, math.nan))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        v = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return fw.where(df2 > 4, v, fw.full_like(v, math.nan))

    def rsample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = fw.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * fw.log(value)
        t3 = (ct1 + ct2) * fw.log1p(ct3 * value)
        return t1 + t2 - t3
