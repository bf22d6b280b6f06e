"""``nn.MultiheadAttention``: parameters and options around
``F.multi_head_attention_forward``."""
import framework
from .. import functional as F
from .. import init
from ..functional.attention import _canonical_mask, _none_or_dtype
from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under another name: PyTorch gives MultiheadAttention's ``out_proj``
    this class (it only matters to quantization), and it shows in ``print(model)``."""


class MultiheadAttention(Module):
    r"""Multi-head attention: ``softmax(Q K^T / sqrt(head_dim) + mask) V`` per head, with
    input projections and an output projection.

    Args:
        embed_dim: model dimension (query's last dimension); num_heads: heads (must divide
        embed_dim); dropout: on the attention weights in training; bias: projection biases;
        add_bias_kv: learn a bias step appended to key and value; add_zero_attn: append a
        zero step to key and value; kdim, vdim: key/value feature sizes (default
        embed_dim); batch_first: inputs are ``(N, L, E)`` instead of ``(L, N, E)``.

    Parameters, as PyTorch names them: ``in_proj_weight`` (3E, E) or, when kdim/vdim
    differ from embed_dim, ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``;
    ``in_proj_bias`` (3E), ``out_proj`` (a Linear), ``bias_k``/``bias_v`` (1, 1, E).
    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(attn_output, attn_weights)``.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError("embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(framework.empty((3 * embed_dim, embed_dim),
                                                            **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(framework.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(framework.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(framework.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(framework.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        **factory)
        if add_bias_kv:
            self.bias_k = Parameter(framework.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(framework.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(
            key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
            query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                      check_other=False)
        if self.batch_first and is_batched:
            # keep the identities (query is key is value) that pick the one-GEMM projection
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Merges ``attn_mask`` (L, L) or (N * heads, L, L) and ``key_padding_mask`` (N, L)
        (float masks) into one (N, heads, L, L) mask; returns ``(mask, mask_type)`` with
        PyTorch's types (1: padding mask only, 2: attention mask, None: none)."""
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.reshape(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.reshape(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type
