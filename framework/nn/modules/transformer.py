"""Transformer layers: ``TransformerEncoderLayer``, ``TransformerDecoderLayer``, the
``TransformerEncoder``/``TransformerDecoder`` stacks and ``Transformer``, with PyTorch's
submodule names (``self_attn``, ``linear1``, ``norm1``, ``layers.0``...) so that
state_dict keys match."""
import copy
import warnings

import framework
from framework._ops import fused_linear as _fused_linear_ops
from .. import functional as F
from .. import init
from ..functional.attention import _canonical_mask, _none_or_dtype
from ..functional.dropout import _dropout_add
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from . import _hooks
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    return framework.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; otherwise whether ``mask`` equals the square subsequent
    mask of ``size`` (or of its own size)."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if tuple(mask.size()) == tuple(causal.size()):
            make_causal = bool((mask == causal).all())
    return make_causal


def _hookless(m):
    """Whether calling ``m`` runs its forward and nothing else (no hook anywhere)."""
    return not (m._backward_hooks or m._backward_pre_hooks or m._forward_hooks
                or m._forward_pre_hooks or _hooks._global_backward_pre_hooks
                or _hooks._global_backward_hooks or _hooks._global_forward_hooks
                or _hooks._global_forward_pre_hooks)


def _drop(drop, y, residual):
    """``drop(y)``, or ``residual + drop(y)`` when a residual is given: then one fused
    dropout-add kernel when ``drop`` is a plain Dropout that no hook watches (same
    distribution, one pass instead of a mask, a product and a sum)."""
    if residual is None:
        return drop(y)
    if type(drop) is Dropout and not drop.inplace and _hookless(drop):
        return _dropout_add(y, residual, drop.p, drop.training)
    return residual + drop(y)


def _residual(residual, block, *args):
    """``residual + block(*args)``; this file's own blocks add the residual themselves,
    fused with their final dropout (a subclass's override of a block is called as is)."""
    if getattr(block, "__func__", None) in _OWN_BLOCKS:
        return block(*args, residual=residual)
    return residual + block(*args)


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _is(fn, op):
    """``fn is op``, looking through __torch_function__'s dispatching wrappers: a layer made
    while dispatch was on holds the wrapper of F.relu, and one made before it holds F.relu
    itself."""
    return getattr(fn, "_tf_original", fn) is getattr(op, "_tf_original", op)


def _relu_or_gelu(activation):
    """PyTorch's ``activation_relu_or_gelu`` flag: 1 relu, 2 gelu, 0 other."""
    from .activation import GELU, ReLU
    if _is(activation, F.relu) or isinstance(activation, ReLU):
        return 1
    if _is(activation, F.gelu) or isinstance(activation, GELU):
        return 2
    return 0


def _fused_activation(activation):
    """The fused kernels' name of ``activation`` ("relu", "gelu", "gelu_tanh") when it is
    F.relu, F.gelu or a ReLU/GELU module that no hook watches, else None."""
    from .activation import GELU, ReLU
    if _is(activation, F.relu):
        return "relu"
    if _is(activation, F.gelu):
        return "gelu"
    if type(activation) is ReLU and _hookless(activation):
        return "relu"
    if type(activation) is GELU and _hookless(activation) and \
            activation.approximate in ("none", "tanh"):
        return "gelu" if activation.approximate == "none" else "gelu_tanh"
    return None


def _linear_act(linear, activation, x):
    """``activation(linear(x))``: one GEMM with the bias and the activation in its epilogue
    when ``linear`` is a plain Linear that no hook watches and the activation is relu or
    gelu (the result is the same), else the two calls."""
    act = _fused_activation(activation)
    if act is None or type(linear) is not Linear or not _hookless(linear):
        return activation(linear(x))
    return _fused_linear_ops.linear_act(x, linear.weight, linear.bias, act)


class TransformerEncoderLayer(Module):
    r"""Self-attention then a feed-forward network, each with a residual connection and a
    LayerNorm (after the residual add, or before each block with ``norm_first``).

    ``TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation=F.relu, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
    bias=True)``; ``activation`` is "relu", "gelu" or a unary callable.
    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``.
    """
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(src_mask),
            "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype,
                                   check_other=False)
        x = src
        if self.norm_first:
            x = _residual(x, self._sa_block, self.norm1(x), src_mask, src_key_padding_mask,
                          is_causal)
            x = _residual(x, self._ff_block, self.norm2(x))
        else:
            x = self.norm1(_residual(x, self._sa_block, x, src_mask, src_key_padding_mask,
                                     is_causal))
            x = self.norm2(_residual(x, self._ff_block, x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False, residual=None):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return _drop(self.dropout1, x, residual)

    def _ff_block(self, x, residual=None):
        x = self.linear2(self.dropout(_linear_act(self.linear1, self.activation, x)))
        return _drop(self.dropout2, x, residual)


class TransformerDecoderLayer(Module):
    r"""Self-attention, attention over the encoder's ``memory``, then a feed-forward
    network, each with a residual connection and a LayerNorm (``norm_first`` puts the norms
    before the blocks). Arguments as :class:`TransformerEncoderLayer`;
    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``.
    """
    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def __setstate__(self, state):
        state.setdefault("activation", F.relu)
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = _residual(x, self._sa_block, self.norm1(x), tgt_mask, tgt_key_padding_mask,
                          tgt_is_causal)
            x = _residual(x, self._mha_block, self.norm2(x), memory, memory_mask,
                          memory_key_padding_mask, memory_is_causal)
            x = _residual(x, self._ff_block, self.norm3(x))
        else:
            x = self.norm1(_residual(x, self._sa_block, x, tgt_mask, tgt_key_padding_mask,
                                     tgt_is_causal))
            x = self.norm2(_residual(x, self._mha_block, x, memory, memory_mask,
                                     memory_key_padding_mask, memory_is_causal))
            x = self.norm3(_residual(x, self._ff_block, x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False, residual=None):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return _drop(self.dropout1, x, residual)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False, residual=None):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return _drop(self.dropout2, x, residual)

    def _ff_block(self, x, residual=None):
        x = self.linear2(self.dropout(_linear_act(self.linear1, self.activation, x)))
        return _drop(self.dropout3, x, residual)


# the blocks that take ``residual=`` (see _residual)
_OWN_BLOCKS = frozenset((TransformerEncoderLayer._sa_block, TransformerEncoderLayer._ff_block,
                         TransformerDecoderLayer._sa_block, TransformerDecoderLayer._mha_block,
                         TransformerDecoderLayer._ff_block))


def _why_no_nested_tensor(layer):
    """PyTorch's reason (or "") why an encoder of ``layer`` cannot use nested tensors."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True(use batch_first for better "
                "inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``encoder_layer`` (``layers``), then the
    optional ``norm``.

    ``TransformerEncoder(encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
    mask_check=True)``; ``forward(src, mask=None, src_key_padding_mask=None,
    is_causal=None)``. There are no nested tensors here; where PyTorch would convert the
    input to one (inference with a left-aligned ``src_key_padding_mask``), the padded
    positions of the output are set to zero before ``norm``, as PyTorch's result has them.
    """
    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    def _zeroes_padding(self, src, mask, valid):
        """Whether PyTorch would run this call on nested tensors (see the class doc)."""
        first = self.layers[0]
        if (not self.use_nested_tensor or first.training or src.dim() != 3
                or valid is None or mask is not None):
            return False
        if self.mask_check and bool((valid[:, 1:] & valid[:, :-1].logical_not()).any()):
            return False    # not left aligned
        attn = first.self_attn
        args = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                attn.out_proj.bias, first.norm1.weight, first.norm1.bias, first.norm2.weight,
                first.norm2.bias, first.linear1.weight, first.linear1.bias,
                first.linear2.weight, first.linear2.bias)
        return not (framework.is_grad_enabled() and any(t.requires_grad for t in args))

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask), "mask",
            src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        valid = None if src_key_padding_mask is None else src_key_padding_mask.logical_not()
        zero_padding = self._zeroes_padding(src, mask, valid)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if zero_padding:
            output = output.masked_fill(valid.logical_not().unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``decoder_layer`` (``layers``), then the
    optional ``norm``. ``forward(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None,
    memory_is_causal=False)``."""
    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    r"""The encoder-decoder transformer of "Attention Is All You Need".

    ``Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
    dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
    custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
    bias=True)``. Every parameter with more than one dimension is initialised with
    ``xavier_uniform_``. ``forward(src, tgt, src_mask, tgt_mask, memory_mask,
    src_key_padding_mask, tgt_key_padding_mask, memory_key_padding_mask, src_is_causal,
    tgt_is_causal, memory_is_causal)``.
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(*layer_args, **factory)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(*layer_args, **factory)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        r"""A float (sz, sz) mask: -inf above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
