"""``LowRankMultivariateNormal``: a multivariate normal whose covariance is
``cov_factor @ cov_factor.mT + diag(cov_diag)``, evaluated through the Woodbury identity and
the matrix determinant lemma (an m x m "capacitance" Cholesky factor, m the rank)."""
import math

import framework as fw

from . import constraints
from .distribution import Distribution
from .kl import register_kl
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(k):
    n = k.shape[-1]
    return k + fw.eye(n, dtype=k.dtype, device=k.device)


def _capacitance_tril(W, D):
    """The Cholesky factor of I + W^T D^-1 W."""
    wt_dinv = W.mT / D.unsqueeze(-2)
    return fw.linalg.cholesky(_plus_identity(fw.matmul(wt_dinv, W)))


def _lowrank_logdet(D, capacitance_tril):
    """log det(W W^T + D) by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by the Woodbury identity."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with covariance ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape "
                             f"{fw.Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = fw.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, fw.Size(event_shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = fw.Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, t, matrix):
        tail = tuple(self._event_shape) * (2 if matrix else 1)
        return t.expand(tuple(self._batch_shape) + tail)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return self._full(self._unbroadcasted_cov_factor.pow(2).sum(-1)
                          + self._unbroadcasted_cov_diag, False)

    @lazy_property
    def scale_tril(self):
        # D^1/2 chol(I + D^-1/2 W W^T D^-1/2): a Cholesky factor of the covariance
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        w = self._unbroadcasted_cov_factor / d_sqrt
        k = _plus_identity(fw.matmul(w, w.mT))
        return self._full(d_sqrt * fw.linalg.cholesky(k), True)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self._full(fw.matmul(W, W.mT) + fw.diag_embed(D), True)

    @lazy_property
    def precision_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        a = fw.linalg.solve_triangular(self._capacitance_tril, W.mT / D.unsqueeze(-2),
                                       upper=False)
        return self._full(fw.diag_embed(D.reciprocal()) - fw.matmul(a.mT, a), True)

    def rsample(self, sample_shape=fw.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = fw.randn(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = fw.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                 diff, self._capacitance_tril)
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if len(self._batch_shape) == 0:
            return h
        return h.expand(tuple(self._batch_shape))


# ---- KL divergences with a low-rank side -------------------------------------------------
# KL(p || q) = 0.5 * (tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n + log det Sq - log det Sp),
# with Sq^-1 through the Woodbury identity when q is low rank:
# Sq^-1 = Dq^-1 - Dq^-1 Wq C^-T C^-1 Wq^T Dq^-1, C C^T = I + Wq^T Dq^-1 Wq.

def _event_error(both_lowrank):
    # PyTorch's text, with the run of spaces its line continuation leaves in it
    kind = "Low Rank" if both_lowrank else "(Low Rank)"
    return ValueError(f"KL-divergence between two {kind} Multivariate Normals with"
                      f"{' ' * 26}different event shapes cannot be computed")


def _sq_frobenius(m):
    return m.pow(2).sum((-2, -1))


def _woodbury_part(q, m):
    """C^-1 Wq^T Dq^-1 m: the part of Sq^-1 that the low-rank factor removes."""
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    a = fw.matmul(W.mT / D.unsqueeze(-2), m)
    cap = q._capacitance_tril
    shape = tuple(fw.broadcast_shapes(tuple(cap.shape[:-2]), tuple(a.shape[:-2])))
    return fw.linalg.solve_triangular(cap.expand(shape + tuple(cap.shape[-2:])),
                                      a.expand(shape + tuple(a.shape[-2:])), upper=False)


def _trace_lowrank_q(q, p_factor, p_diag):
    """tr(Sq^-1 Sp) for Sp = F F^T + diag(d) (F or d may be None) and a low-rank q."""
    D = q._unbroadcasted_cov_diag
    tr = 0
    if p_diag is not None:
        tr = tr + (p_diag / D).sum(-1) - _sq_frobenius(
            _woodbury_part(q, fw.diag_embed(p_diag.sqrt())))
    if p_factor is not None:
        tr = tr + (p_factor.pow(2) / D.unsqueeze(-1)).sum((-2, -1)) - _sq_frobenius(
            _woodbury_part(q, p_factor))
    return tr


def _kl(logdet_q, logdet_p, trace, mahalanobis, n):
    return 0.5 * (logdet_q - logdet_p + trace + mahalanobis - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise _event_error(True)
    return _kl(_lowrank_logdet(q._unbroadcasted_cov_diag, q._capacitance_tril),
               _lowrank_logdet(p._unbroadcasted_cov_diag, p._capacitance_tril),
               _trace_lowrank_q(q, p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag),
               _lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                    q.loc - p.loc, q._capacitance_tril),
               p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise _event_error(False)
    L = p._unbroadcasted_scale_tril
    return _kl(_lowrank_logdet(q._unbroadcasted_cov_diag, q._capacitance_tril),
               2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1),
               _trace_lowrank_q(q, L, None),
               _lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                    q.loc - p.loc, q._capacitance_tril),
               p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise _event_error(False)
    Lq = q._unbroadcasted_scale_tril
    W, D = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    n = p.event_shape[0]
    # tr(Sq^-1 Sp) = |Lq^-1 Wp|^2 + |Lq^-1 Dp^1/2|^2
    trace = 0
    for m in (W, fw.diag_embed(D.sqrt())):
        shape = tuple(fw.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(m.shape[:-2])))
        trace = trace + _sq_frobenius(fw.linalg.solve_triangular(
            Lq.expand(shape + (n, n)), m.expand(shape + tuple(m.shape[-2:])), upper=False))
    return _kl(2 * Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1),
               _lowrank_logdet(D, p._capacitance_tril), trace,
               _batch_mahalanobis(Lq, q.loc - p.loc), n)
