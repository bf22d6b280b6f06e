"""Embedding tables: ``Embedding`` and ``EmbeddingBag``."""
import framework as fw

from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _norm_padding_idx(padding_idx, num_embeddings, message):
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num_embeddings:
        raise AssertionError(message)
    if padding_idx < 0:
        if padding_idx < -num_embeddings:
            raise AssertionError(message)
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def _initial_weight(num_embeddings, embedding_dim, _weight, device, dtype):
    if _weight is None:
        return fw.empty((num_embeddings, embedding_dim), device=device, dtype=dtype), True
    if list(_weight.shape) != [num_embeddings, embedding_dim]:
        raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
    return _weight, False


class Embedding(Module):
    r"""A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``, initialized
    from N(0, 1) (the ``padding_idx`` row zeroed).

    Args:
        num_embeddings: size of the table
        embedding_dim: size of each vector
        padding_idx: this row gets no gradient (a fixed "pad" vector). Default: ``None``
        max_norm: rows looked up are renormalized in place to this norm when above it
        norm_type: the p of the norm for ``max_norm``. Default: 2
        scale_grad_by_freq: scale gradients by the inverse index frequency in the batch
        sparse: ``weight.grad`` is a sparse COO tensor (see ``optim.SparseAdam``)
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _norm_padding_idx(padding_idx, num_embeddings,
                                             "Padding_idx must be within num_embeddings")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        weight, fresh = _initial_weight(num_embeddings, embedding_dim, _weight, device, dtype)
        self.weight = Parameter(weight, requires_grad=not _freeze)
        if fresh:
            self.reset_parameters()
        self.sparse = sparse

    def reset_parameters(self):
        with fw.no_grad():
            self.weight.normal_()
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with fw.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        r"""An Embedding whose table is ``embeddings`` (2-D; shared, not copied), frozen
        (no gradient) unless ``freeze=False``."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    r"""Sums, averages or maxes bags of embeddings (see
    :func:`~framework.nn.functional.embedding_bag`); the table is initialized from N(0, 1).

    Args:
        num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, sparse,
        padding_idx: as :class:`Embedding`
        mode: ``'sum'``, ``'mean'`` or ``'max'``. Default: ``'mean'``
        include_last_offset: ``offsets`` has one more entry, the end of the last bag
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _norm_padding_idx(padding_idx, num_embeddings,
                                             "padding_idx must be within num_embeddings")
        weight, fresh = _initial_weight(num_embeddings, embedding_dim, _weight, device, dtype)
        self.weight = Parameter(weight)
        if fresh:
            self.reset_parameters()
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        with fw.no_grad():
            self.weight.normal_()
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with fw.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        # PyTorch prints every value here with repr (mode='mean')
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        r"""An EmbeddingBag whose table is ``embeddings`` (2-D; shared, not copied), frozen
        (no gradient) unless ``freeze=False``."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag
