"""Causal biases for ``scaled_dot_product_attention`` (PyTorch's
``torch.nn.attention.bias``): ``causal_upper_left``, ``causal_lower_right``.

In PyTorch ``CausalBias`` is a Tensor subclass that takes over the call through
``__torch_function__``. The framework has no ``__torch_function__``, so here it is a plain
object that ``F.scaled_dot_product_attention`` recognises as its ``attn_mask`` and hands
the call to (``CausalBias._dispatch``).
"""
from enum import IntEnum, auto
from warnings import warn

import framework

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    r"""Enum for causal variants used in attention mechanisms.

    ``UPPER_LEFT``: the lower triangle aligned to the upper left corner,
    ``torch.tril(torch.ones(size, dtype=torch.bool))``.

    ``LOWER_RIGHT``: the lower triangle aligned to the lower right corner,
    ``torch.tril(torch.ones(size, dtype=torch.bool), diagonal=size[1] - size[0])``.

    The two are the same when the query and key/value lengths are equal.
    """
    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias:
    """A bias representing causal attention patterns (see :class:`CausalVariant`), for
    ``attn_mask`` of ``scaled_dot_product_attention``. Built by :func:`causal_upper_left`
    and :func:`causal_lower_right`."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(
                f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warn("Lower right causal bias will produce NaNs in the output when "
                 "seq_len_q > seq_len_kv!", stacklevel=2)

    def _upper_left(self, device):
        """Upper left causal bias"""
        return framework.ones(self.seq_len_q, self.seq_len_kv, dtype=framework.bool,
                              device=device).tril()

    def _lower_right(self, device):
        """Lower right causal bias"""
        return framework.ones(self.seq_len_q, self.seq_len_kv, dtype=framework.bool,
                              device=device).tril(self.seq_len_kv - self.seq_len_q)

    def _materialize(self, device=None):
        """The bool ``(seq_len_q, seq_len_kv)`` mask of this bias on ``device`` (cpu by
        default)."""
        if device is None:
            device = framework.device("cpu")
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None,
                  enable_gqa=False):
        """scaled_dot_product_attention with ``attn_mask`` a CausalBias: ``is_causal=True``
        for the upper left variant (or equal lengths), the materialised mask otherwise."""
        sdpa = framework.nn.functional.scaled_dot_product_attention
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if (attn_mask.seq_len_q == attn_mask.seq_len_kv
                or attn_mask.variant == CausalVariant.UPPER_LEFT):
            return sdpa(query, key, value, attn_mask=None, dropout_p=dropout_p,
                        is_causal=True, scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return sdpa(query, key, value, attn_mask=attn_mask._materialize(query.device),
                        dropout_p=dropout_p, is_causal=False, scale=scale,
                        enable_gqa=enable_gqa)
        raise ValueError("CausalBias.variant must be a CausalVariant type, but found: "
                         f"{attn_mask.variant}")

    def __repr__(self):
        return repr(self._materialize())


def causal_upper_left(*size):
    """Creates an upper-left triangular causal bias of ``size`` ``(seq_len_q,
    seq_len_kv)``: the same as ``is_causal=True`` in scaled_dot_product_attention."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size):
    """Creates a lower-right triangular causal bias of ``size`` ``(seq_len_q,
    seq_len_kv)``: the triangle's diagonal ends at the lower right corner."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
