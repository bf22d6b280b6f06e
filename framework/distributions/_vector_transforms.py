"""Transforms acting on vectors and matrices: softmax, stick breaking, lower Cholesky, reshape."""
import framework as fw
import framework.nn.functional as F

from . import constraints
from .transforms import Transform, _clipped_sigmoid

__all__ = ["LowerCholeskyTransform", "ReshapeTransform", "SoftmaxTransform",
           "StickBreakingTransform"]


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` event dims to ``out_shape``."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = fw.Size(in_shape)
        self.out_shape = fw.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.dim() - len(self.in_shape)]) + tuple(self.out_shape))

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.dim() - len(self.out_shape)]) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape):
        return tuple(shape[:len(shape) - len(self.in_shape)]) + tuple(self.out_shape)

    def inverse_shape(self, shape):
        return tuple(shape[:len(shape) - len(self.out_shape)]) + tuple(self.in_shape)


class SoftmaxTransform(Transform):
    r"""``y = softmax(x)`` over the last dim; not bijective (it is meant for optimization)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """Maps an unconstrained vector of length K-1 onto the K-simplex by stick breaking."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        offset = x.shape[-1] + 1 - fw.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - fw.arange(1, y.shape[-1], dtype=y.dtype, device=y.device)
        sf = 1 - y_crop.cumsum(-1)
        # clamped so that sf stays positive under round-off
        sf = fw.clamp(sf, min=fw.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - fw.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
        x = x - offset.log()
        # log|J| = sum(log(y[:-1])) - sum(softplus(x)) with y = stick pieces
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Maps an unconstrained square matrix to a lower-triangular one with positive diagonal."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()
