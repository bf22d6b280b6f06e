"""``torch.distributions.one_hot_categorical``: OneHotCategorical (from ``.categorical``) and
its straight-through reparameterized variant."""
import framework as fw

from .categorical import OneHotCategorical

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A reparameterizable OneHotCategorical: ``rsample`` returns the one-hot sample with the
    straight-through gradient of ``probs`` (Bengio et al., 2013)."""
    has_rsample = True

    def rsample(self, sample_shape=fw.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
