"""``ExponentialFamily``: the base of families whose density is
``exp(<t(x), theta> - F(theta) + k(x))``, as torch.distributions.exp_family.  Its entropy (and
the KL divergence between two members of one family, in ``kl.py``) follow from the log
normalizer ``F`` by automatic differentiation (Bregman divergence)."""
import framework as fw

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Abstract base of exponential families: subclasses give ``_natural_params``,
    ``_log_normalizer(*natural_params)`` and ``_mean_carrier_measure``."""

    @property
    def _natural_params(self):
        """The natural parameters, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer ``F`` as a function of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """The expected carrier measure ``E[k(x)]``."""
        raise NotImplementedError

    def entropy(self):
        """The entropy from the Bregman divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with fw.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = fw.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
