"""Probability distributions and their sampling, scoring and divergences, as
``torch.distributions``: pure Python over framework ops, so every family runs on each device.

Differences from PyTorch: Gamma, Chi2, Beta, Dirichlet and StudentT draw their gamma variates
by Marsaglia-Tsang rejection and take the implicit reparameterization gradient with a
finite-difference derivative of ``igamma`` in alpha; Poisson samples by CDF inversion/PTRS and
Binomial by summing Bernoulli trials (cost linear in ``total_count``). The random numbers
differ from PyTorch's, as the framework's generator does.
"""
from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, HalfNormal, Laplace, LogNormal, Normal, Uniform
from .derived import (Gumbel, HalfCauchy, InverseGamma, Kumaraswamy, LogisticNormal, Pareto,
                      Weibull)
from .categorical import Categorical, Multinomial, OneHotCategorical
from .discrete import Bernoulli, Binomial, Geometric, NegativeBinomial, Poisson
from .distribution import Distribution
from .gamma import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import Independent, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StickBreakingTransform, TanhTransform, Transform)

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
