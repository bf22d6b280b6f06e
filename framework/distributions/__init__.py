"""Probability distributions and their sampling, scoring and divergences, as
``torch.distributions``: pure Python over framework ops, so every family runs on each device.

Differences from PyTorch: Gamma, Chi2, Beta, Dirichlet and StudentT draw their gamma variates
by Marsaglia-Tsang rejection and take the implicit reparameterization gradient with a
finite-difference derivative of ``igamma`` in alpha; Poisson samples by CDF inversion/PTRS and
Binomial by summing Bernoulli trials (cost linear in ``total_count``). The random numbers
differ from PyTorch's, as the framework's generator does. Wishart.rsample redraws only the
samples that are numerically singular, and warns only then (torch 2.13 tests the wrong way
round: it warns "Singular sample detected." and redraws on every call). GeneralizedPareto's
log_prob/cdf work in float64 (torch 2.13 raises "Double did not match Float" there).
LKJCholesky samples with the onion method's Beta(i/2, .) row norms; torch 2.13's sampler
draws rows 2 and on from Beta(i - 1/2, .), so its correlations are not LKJ for dim >= 3.
"""
from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .continuous import Cauchy, Exponential, HalfNormal, Laplace, LogNormal, Normal, Uniform
from .derived import (Gumbel, HalfCauchy, InverseGamma, Kumaraswamy, LogisticNormal, Pareto,
                      Weibull)
from .categorical import Categorical, Multinomial, OneHotCategorical
from .discrete import Bernoulli, Binomial, Geometric, NegativeBinomial, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .generalized_pareto import GeneralizedPareto
from .gamma import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .one_hot_categorical import OneHotCategoricalStraightThrough
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import Independent, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform, CumulativeDistributionTransform, ExpTransform,
                         PositiveDefiniteTransform, StackTransform,
                         IndependentTransform, LowerCholeskyTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StickBreakingTransform, TanhTransform, Transform,
                         identity_transform)
from .von_mises import VonMises
from .lkj_cholesky import LKJCholesky
from .wishart import Wishart

from . import (bernoulli, beta, binomial, categorical, cauchy, chi2, constraint_registry,
               continuous_bernoulli, dirichlet, distribution, exp_family, exponential,
               fishersnedecor, gamma, generalized_pareto, geometric, gumbel, half_cauchy,
               half_normal, independent, inverse_gamma, kl, kumaraswamy, laplace, lkj_cholesky,
               log_normal, logistic_normal, lowrank_multivariate_normal, mixture_same_family,
               multinomial, multivariate_normal, negative_binomial, normal, one_hot_categorical,
               pareto, poisson, relaxed_bernoulli, relaxed_categorical, studentT,
               transformed_distribution, uniform, utils, von_mises, weibull, wishart)  # noqa: F401

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform",
           "Exponential", "FisherSnedecor", "Gamma", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy",
           "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal",
           "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical", "Pareto", "Poisson",
           "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "Weibull", "biject_to", "constraints",
           "kl_divergence", "register_kl", "transform_to", "transforms"]
__all__ += ["CatTransform", "ContinuousBernoulli", "CorrCholeskyTransform",
            "CumulativeDistributionTransform", "ExponentialFamily", "GeneralizedPareto",
            "OneHotCategoricalStraightThrough", "PositiveDefiniteTransform", "StackTransform",
            "LKJCholesky", "VonMises", "Wishart", "identity_transform"]
