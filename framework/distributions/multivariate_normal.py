"""``MultivariateNormal``, parameterized by a covariance, a precision or a lower-triangular
scale matrix."""
import math

import framework as fw

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    return fw.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """Squared Mahalanobis distance x^T (L L^T)^-1 x, for L broadcastable against x."""
    shape = fw.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    n = bx.shape[-1]
    L = bL.expand(tuple(shape) + (n, n))
    x = bx.expand(tuple(shape) + (n,)).unsqueeze(-1)
    return fw.linalg.solve_triangular(L, x, upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # the Cholesky factor of the flipped precision gives the covariance's factor directly
    Lf = fw.linalg.cholesky(fw.flip(P, (-2, -1)))
    L_inv = fw.transpose(fw.flip(Lf, (-2, -1)), -2, -1)
    Id = fw.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return fw.linalg.solve_triangular(L_inv, Id.expand(tuple(L_inv.shape)), upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution with mean ``loc`` and one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             "may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            label = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{label} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = tuple(fw.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(batch_shape + tuple(matrix.shape[-2:])))
        self.loc = loc.expand(batch_shape + (loc.shape[-1],))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = fw.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = fw.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return fw.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        Id = fw.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(tuple(L.shape))
        return fw.cholesky_solve(Id, L).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        eps = fw.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
