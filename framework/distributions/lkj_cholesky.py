"""``LKJCholesky``: the LKJ distribution over Cholesky factors of correlation matrices, as
torch.distributions.lkj_cholesky (onion-method sampling, Lewandowski, Kurowicka and Joe 2009)."""
import math

import framework as fw

from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution of lower Cholesky factors ``L`` of ``dim x dim`` correlation
    matrices, with density proportional to ``det(L @ L.T) ** (concentration - 1)``."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.shape
        event_shape = fw.Size((dim, dim))
        # the onion method (LKJ 2009, sec. 3.2): row i >= 1 of L is [sqrt(y) u, sqrt(1 - y)]
        # with u uniform on the unit sphere of R^i and y ~ Beta(i / 2, beta - (i - 1) / 2),
        # beta = concentration + (dim - 2) / 2.  (torch 2.13 uses Beta(i - 1/2, ...), which is
        # the same only for i = 1: its samples for dim >= 3 have too wide correlations in rows
        # 2 and on, and are not exchangeable.)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = fw.arange(self.dim - 1, dtype=self.concentration.dtype,
                           device=self.concentration.device)
        offset = fw.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = 0.5 * offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = fw.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=fw.Size()):
        with fw.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = fw.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype,
                                device=y.device).tril(-1)
            norm = u_normal.norm(dim=-1, keepdim=True)
            first_row = fw.arange(self.dim, device=y.device).unsqueeze(-1) == 0
            # row 0 has no off-diagonal entries (0 / 0): it is zero
            u_hypersphere = fw.where(first_row, fw.zeros_like(u_normal),
                                     u_normal / fw.where(first_row, fw.ones_like(norm), norm))
            w = fw.sqrt(y) * u_hypersphere
            eps = fw.finfo(w.dtype).tiny
            diag_elems = fw.clamp(1 - fw.sum(w ** 2, dim=-1), min=eps).sqrt()
            return w + fw.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = fw.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = fw.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = fw.lgamma(alpha) * dm1
        numerator = fw.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
