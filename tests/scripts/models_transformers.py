"""Transformers of the research-code zoo, written as their reference repositories write them
(timm's VisionTransformer, Meta's LLaMA with its KV-cache generation, a Mixtral-style
mixture of experts); each ``run(torch, ...)`` trains a tiny copy for two steps.
"""
import math
from dataclasses import dataclass
from typing import Optional

from models_convnets import grads
from script_harness import data, init_params


# 4. timm's VisionTransformer ----------------------------------------------------------

def vit(torch, fused_attn):
    nn = torch.nn
    F = torch.nn.functional

    class PatchEmbed(nn.Module):
        """2D Image to Patch Embedding"""

        def __init__(self, img_size=8, patch_size=4, in_chans=3, embed_dim=16):
            super().__init__()
            self.img_size = (img_size, img_size)
            self.num_patches = (img_size // patch_size) ** 2
            self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size,
                                  stride=patch_size)

        def forward(self, x):
            B, C, H, W = x.shape
            torch._assert(H == self.img_size[0],
                          f"Input height ({H}) doesn't match model ({self.img_size[0]}).")
            x = self.proj(x).flatten(2).transpose(1, 2)  # NCHW -> NLC
            return x

    class Attention(nn.Module):
        def __init__(self, dim, num_heads=8, qkv_bias=False, attn_drop=0., proj_drop=0.):
            super().__init__()
            assert dim % num_heads == 0, 'dim should be divisible by num_heads'
            self.num_heads = num_heads
            self.head_dim = dim // num_heads
            self.scale = self.head_dim ** -0.5
            self.fused_attn = fused_attn
            self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
            self.attn_drop = nn.Dropout(attn_drop)
            self.proj = nn.Linear(dim, dim)
            self.proj_drop = nn.Dropout(proj_drop)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads)\
                .permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)
            if self.fused_attn:
                x = F.scaled_dot_product_attention(
                    q, k, v, dropout_p=self.attn_drop.p if self.training else 0.)
            else:
                q = q * self.scale
                attn = q @ k.transpose(-2, -1)
                attn = attn.softmax(dim=-1)
                attn = self.attn_drop(attn)
                x = attn @ v
            x = x.transpose(1, 2).reshape(B, N, C)
            x = self.proj(x)
            x = self.proj_drop(x)
            return x

    class Mlp(nn.Module):
        def __init__(self, in_features, hidden_features=None, out_features=None,
                     act_layer=nn.GELU, drop=0.):
            super().__init__()
            out_features = out_features or in_features
            hidden_features = hidden_features or in_features
            self.fc1 = nn.Linear(in_features, hidden_features)
            self.act = act_layer()
            self.drop1 = nn.Dropout(drop)
            self.fc2 = nn.Linear(hidden_features, out_features)
            self.drop2 = nn.Dropout(drop)

        def forward(self, x):
            return self.drop2(self.fc2(self.drop1(self.act(self.fc1(x)))))

    class Block(nn.Module):
        def __init__(self, dim, num_heads, mlp_ratio=4., qkv_bias=False,
                     norm_layer=nn.LayerNorm):
            super().__init__()
            self.norm1 = norm_layer(dim)
            self.attn = Attention(dim, num_heads=num_heads, qkv_bias=qkv_bias)
            self.norm2 = norm_layer(dim)
            self.mlp = Mlp(in_features=dim, hidden_features=int(dim * mlp_ratio))

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            x = x + self.mlp(self.norm2(x))
            return x

    class VisionTransformer(nn.Module):
        def __init__(self, img_size=8, patch_size=4, in_chans=3, num_classes=5,
                     embed_dim=16, depth=2, num_heads=2, mlp_ratio=2., qkv_bias=True):
            super().__init__()
            self.num_classes = num_classes
            self.num_features = self.embed_dim = embed_dim
            self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
            num_patches = self.patch_embed.num_patches
            self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
            self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, embed_dim) * .02)
            self.pos_drop = nn.Dropout(p=0.)
            self.blocks = nn.Sequential(*[
                Block(embed_dim, num_heads, mlp_ratio, qkv_bias) for _ in range(depth)])
            self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
            self.head = nn.Linear(self.num_features, num_classes) if num_classes > 0 \
                else nn.Identity()
            nn.init.trunc_normal_(self.pos_embed, std=.02)
            nn.init.normal_(self.cls_token, std=1e-6)
            self.apply(self._init_weights)

        def _init_weights(self, m):
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.zeros_(m.bias)
                nn.init.ones_(m.weight)

        def no_weight_decay(self):
            return {'pos_embed', 'cls_token'}

        def forward_features(self, x):
            B = x.shape[0]
            x = self.patch_embed(x)
            cls_token = self.cls_token.expand(B, -1, -1)
            x = torch.cat((cls_token, x), dim=1)
            x = self.pos_drop(x + self.pos_embed)
            x = self.blocks(x)
            x = self.norm(x)
            return x

        def forward(self, x):
            x = self.forward_features(x)
            return self.head(x[:, 0])

    model = init_params(torch, VisionTransformer())
    # timm's weight-decay split: no decay for biases, norms and the listed tokens
    skip = model.no_weight_decay()
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.ndim <= 1 or name.endswith(".bias") or name in skip:
            no_decay.append(param)
        else:
            decay.append(param)
    # the key bias's gradient is zero up to rounding (softmax ignores a shift shared by all
    # keys), and Adam scales that noise to steps of lr * g / (|g| + eps): a small lr
    optimizer = torch.optim.AdamW([{'params': no_decay, 'weight_decay': 0.},
                                   {'params': decay, 'weight_decay': 0.05}], lr=1e-3)
    x = data(torch, 1, 3, 3, 8, 8)
    y = data(torch, 2, 3, kind="int", high=5)
    out = {"groups": [len(no_decay), len(decay)]}
    losses = []
    for step in range(2):
        output = model(x)
        loss = F.cross_entropy(output, y, label_smoothing=0.1)
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            out["output"] = output.detach()
            out["grads"] = grads(model)
        optimizer.step()
        losses.append(loss.item())
    out["losses"] = losses
    out["state"] = dict(model.state_dict())
    try:
        model(x[:, :, :4])
    except AssertionError as e:
        out["size_check"] = str(e) == "Input height (4) doesn't match model (8)."
    return out


# 5. LLaMA (meta-llama/llama, model.py and generation.py) ---------------------------------

@dataclass
class ModelArgs:
    dim: int = 16
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: Optional[int] = 2
    vocab_size: int = 11
    multiple_of: int = 8
    ffn_dim_multiplier: Optional[float] = None
    norm_eps: float = 1e-5
    max_batch_size: int = 2
    max_seq_len: int = 12


def llama(torch):
    nn = torch.nn
    F = torch.nn.functional
    args = ModelArgs()

    class RMSNorm(torch.nn.Module):
        def __init__(self, dim: int, eps: float = 1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def _norm(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

        def forward(self, x):
            output = self._norm(x.float()).type_as(x)
            return output * self.weight

    def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device)
        freqs = torch.outer(t, freqs).float()
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
        return freqs_cis

    def reshape_for_broadcast(freqs_cis, x):
        ndim = x.ndim
        assert 0 <= 1 < ndim
        assert freqs_cis.shape == (x.shape[1], x.shape[-1])
        shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
        return freqs_cis.view(*shape)

    def apply_rotary_emb(xq, xk, freqs_cis):
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    def repeat_kv(x, n_rep: int):
        """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
        bs, slen, n_kv_heads, head_dim = x.shape
        if n_rep == 1:
            return x
        return (
            x[:, :, :, None, :]
            .expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim)
        )

    class Attention(nn.Module):
        def __init__(self, args: ModelArgs):
            super().__init__()
            self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
            self.n_local_heads = args.n_heads
            self.n_local_kv_heads = self.n_kv_heads
            self.n_rep = self.n_local_heads // self.n_local_kv_heads
            self.head_dim = args.dim // args.n_heads
            self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
            self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
            self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
            self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)
            self.cache_k = torch.zeros((args.max_batch_size, args.max_seq_len,
                                        self.n_local_kv_heads, self.head_dim))
            self.cache_v = torch.zeros((args.max_batch_size, args.max_seq_len,
                                        self.n_local_kv_heads, self.head_dim))

        def forward(self, x, start_pos: int, freqs_cis, mask):
            bsz, seqlen, _ = x.shape
            xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
            xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
            xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
            xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
            xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)

            if self.training:
                # training: no cache; grouped-query heads by repeat_interleave
                keys = torch.repeat_interleave(xk, dim=2, repeats=self.n_rep)
                values = torch.repeat_interleave(xv, dim=2, repeats=self.n_rep)
                output = F.scaled_dot_product_attention(
                    xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2),
                    is_causal=True)
            else:
                self.cache_k = self.cache_k.to(xq)
                self.cache_v = self.cache_v.to(xq)
                self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk
                self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv
                keys = self.cache_k[:bsz, : start_pos + seqlen]
                values = self.cache_v[:bsz, : start_pos + seqlen]
                # repeat k/v heads if n_kv_heads < n_heads
                keys = repeat_kv(keys, self.n_rep)
                values = repeat_kv(values, self.n_rep)
                xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
                keys = keys.transpose(1, 2)
                values = values.transpose(1, 2)
                scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
                if mask is not None:
                    scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
                scores = F.softmax(scores.float(), dim=-1).type_as(xq)
                output = torch.matmul(scores, values)
                # the fused kernel with the same float mask
                fused = F.scaled_dot_product_attention(xq, keys, values, attn_mask=mask)
                assert torch.allclose(fused, output, atol=1e-5), "sdpa(attn_mask)"
            output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
            return self.wo(output)

    class FeedForward(nn.Module):
        def __init__(self, dim: int, hidden_dim: int, multiple_of: int,
                     ffn_dim_multiplier: Optional[float]):
            super().__init__()
            hidden_dim = int(2 * hidden_dim / 3)
            if ffn_dim_multiplier is not None:
                hidden_dim = int(ffn_dim_multiplier * hidden_dim)
            hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
            self.w1 = nn.Linear(dim, hidden_dim, bias=False)
            self.w2 = nn.Linear(hidden_dim, dim, bias=False)
            self.w3 = nn.Linear(dim, hidden_dim, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class TransformerBlock(nn.Module):
        def __init__(self, layer_id: int, args: ModelArgs):
            super().__init__()
            self.attention = Attention(args)
            self.feed_forward = FeedForward(dim=args.dim, hidden_dim=4 * args.dim,
                                            multiple_of=args.multiple_of,
                                            ffn_dim_multiplier=args.ffn_dim_multiplier)
            self.layer_id = layer_id
            self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
            self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

        def forward(self, x, start_pos: int, freqs_cis, mask):
            h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis, mask)
            out = h + self.feed_forward(self.ffn_norm(h))
            return out

    class Transformer(nn.Module):
        def __init__(self, params: ModelArgs):
            super().__init__()
            self.params = params
            self.vocab_size = params.vocab_size
            self.n_layers = params.n_layers
            self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
            self.layers = torch.nn.ModuleList()
            for layer_id in range(params.n_layers):
                self.layers.append(TransformerBlock(layer_id, params))
            self.norm = RMSNorm(params.dim, eps=params.norm_eps)
            self.output = nn.Linear(params.dim, params.vocab_size, bias=False)
            self.freqs_cis = precompute_freqs_cis(self.params.dim // self.params.n_heads,
                                                  self.params.max_seq_len * 2)

        def forward(self, tokens, start_pos: int):
            _bsz, seqlen = tokens.shape
            h = self.tok_embeddings(tokens)
            self.freqs_cis = self.freqs_cis.to(h.device)
            freqs_cis = self.freqs_cis[start_pos: start_pos + seqlen]
            mask = None
            if seqlen > 1:
                mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
                mask = torch.triu(mask, diagonal=1)
                # When performing key-value caching, we compute the attention scores
                # only for the new sequence: the entries for the cached tokens stay 0.
                mask = torch.hstack([torch.zeros((seqlen, start_pos), device=tokens.device),
                                     mask]).type_as(h)
            for layer in self.layers:
                h = layer(h, start_pos, freqs_cis, mask)
            h = self.norm(h)
            output = self.output(h).float()
            return output

    def sample_top_p(probs, p):
        probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
        probs_sum = torch.cumsum(probs_sort, dim=-1)
        mask = probs_sum - probs_sort > p
        probs_sort[mask] = 0.0
        probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
        # torch.multinomial(probs_sort, num_samples=1) cannot draw alike: the mode instead
        next_token = torch.argmax(probs_sort, dim=-1, keepdim=True)
        next_token = torch.gather(probs_idx, -1, next_token)
        return next_token, probs_sort

    @torch.inference_mode()
    def generate(model, prompt_tokens, max_gen_len, temperature=0.6, top_p=0.9,
                 pad_id=-1, eos_id=2):
        bsz = len(prompt_tokens)
        min_prompt_len = min(len(t) for t in prompt_tokens)
        max_prompt_len = max(len(t) for t in prompt_tokens)
        total_len = min(args.max_seq_len, max_gen_len + max_prompt_len)
        tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long)
        for k, t in enumerate(prompt_tokens):
            tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long)
        prev_pos = 0
        eos_reached = torch.tensor([False] * bsz)
        input_text_mask = tokens != pad_id
        kept = []
        for cur_pos in range(min_prompt_len, total_len):
            logits = model.forward(tokens[:, prev_pos:cur_pos], prev_pos)
            if temperature > 0:
                probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
                next_token, probs_sort = sample_top_p(probs, top_p)
                kept.append(probs_sort)
            else:
                next_token = torch.argmax(logits[:, -1], dim=-1)
            next_token = next_token.reshape(-1)
            # only replace token if prompt has already been generated
            next_token = torch.where(input_text_mask[:, cur_pos], tokens[:, cur_pos],
                                     next_token)
            tokens[:, cur_pos] = next_token
            eos_reached |= (~input_text_mask[:, cur_pos]) & (next_token == eos_id)
            prev_pos = cur_pos
            if all(eos_reached):
                break
        return tokens.tolist(), kept

    model = init_params(torch, Transformer(args))
    out = {"freqs_cis": torch.view_as_real(model.freqs_cis)}
    tokens = data(torch, 1, 2, 9, kind="int", high=args.vocab_size)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    model.train()
    losses = []
    for step in range(2):
        logits = model(inputs, 0)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if step == 0:
            out["logits"] = logits.detach()
            out["grads"] = grads(model)
        optimizer.step()
        losses.append(loss.item())
    out["losses"] = losses
    out["state"] = dict(model.state_dict())

    model.eval()
    with torch.no_grad():
        full = model(inputs, 0)  # the cache path over the whole sequence
        model.train()
        out["cache_matches_train"] = torch.allclose(full, model(inputs, 0), atol=1e-4)
        model.eval()
    out["full"] = full
    prompts = [[1, 5, 3, 7], [4, 9, 6]]
    out["greedy"], _ = generate(model, prompts, max_gen_len=6, temperature=0.0)
    out["top_p"], kept = generate(model, prompts, max_gen_len=6, temperature=0.8,
                                  top_p=0.7)
    out["kept"] = kept
    out["cache_k"] = model.layers[0].attention.cache_k
    return out


# 6. A mixture-of-experts layer (Mixtral / Switch style) --------------------------------

def moe(torch, dispatch):
    nn = torch.nn
    F = torch.nn.functional

    class Expert(nn.Module):
        def __init__(self, dim, hidden):
            super().__init__()
            self.w1 = nn.Linear(dim, hidden, bias=False)
            self.w2 = nn.Linear(hidden, dim, bias=False)
            self.w3 = nn.Linear(dim, hidden, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class SparseMoeBlock(nn.Module):
        def __init__(self, dim=8, hidden=12, num_experts=4, top_k=2):
            super().__init__()
            self.num_experts = num_experts
            self.top_k = top_k
            self.gate = nn.Linear(dim, num_experts, bias=False)
            self.experts = nn.ModuleList([Expert(dim, hidden) for _ in range(num_experts)])

        def forward(self, hidden_states):
            batch_size, sequence_length, hidden_dim = hidden_states.shape
            hidden_states = hidden_states.view(-1, hidden_dim)
            router_logits = self.gate(hidden_states)
            routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
            routing_weights, selected_experts = torch.topk(routing_weights, self.top_k,
                                                           dim=-1)
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
            routing_weights = routing_weights.to(hidden_states.dtype)
            final_hidden_states = torch.zeros((batch_size * sequence_length, hidden_dim),
                                              dtype=hidden_states.dtype,
                                              device=hidden_states.device)
            if dispatch == "one_hot":
                # Mixtral: a one-hot mask per expert, then torch.where on it
                expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts)\
                    .permute(2, 1, 0)
                for expert_idx in range(self.num_experts):
                    idx, top_x = torch.where(expert_mask[expert_idx])
                    current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
                    current_hidden_states = self.experts[expert_idx](current_state) \
                        * routing_weights[top_x, idx, None]
                    final_hidden_states.index_add_(
                        0, top_x, current_hidden_states.to(hidden_states.dtype))
            else:
                flat_expert = selected_experts.view(-1)
                flat_weight = routing_weights.view(-1)
                token_of = torch.arange(hidden_states.shape[0], device=hidden_states.device)\
                    .repeat_interleave(self.top_k)
                for e, expert in enumerate(self.experts):
                    rows = (flat_expert == e).nonzero().squeeze(-1)
                    if rows.numel() == 0:
                        continue
                    tokens = token_of[rows]
                    y = expert(hidden_states[tokens]) * flat_weight[rows].unsqueeze(-1)
                    final_hidden_states.index_add_(0, tokens, y)
            final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length,
                                                              hidden_dim)
            return final_hidden_states, router_logits

    def load_balancing_loss(router_logits, num_experts, top_k):
        routing_weights = F.softmax(router_logits, dim=-1)
        _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
        expert_mask = F.one_hot(selected_experts, num_experts)
        tokens_per_expert = expert_mask.float().mean(0)  # (top_k, E)
        router_prob_per_expert = routing_weights.mean(0)
        loss = torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0))
        counts = torch.bincount(selected_experts.flatten(), minlength=num_experts)
        first = torch.bincount(selected_experts[0], minlength=num_experts)  # one token's
        return loss * num_experts, torch.stack([counts, first])

    model = init_params(torch, SparseMoeBlock())
    x = data(torch, 1, 3, 5, 8)
    target = data(torch, 2, 3, 5, 8)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    out, losses = {}, []
    for step in range(2):
        y, router_logits = model(x)
        aux, counts = load_balancing_loss(router_logits, model.num_experts, model.top_k)
        loss = F.mse_loss(y, target) + 0.01 * aux
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            out.update(y=y.detach(), aux=aux.item(), counts=counts, grads=grads(model))
            assert counts.dtype == torch.int64
        optimizer.step()
        losses.append(loss.item())
    out["losses"] = losses
    out["state"] = dict(model.state_dict())
    return out
