"""LLaMA and the generation utilities, written the way Hugging Face transformers writes
them, at tiny sizes."""
from dataclasses import dataclass

from script_harness import data, init_params


@dataclass
class LlamaConfig:
    vocab_size: int = 50
    hidden_size: int = 32
    intermediate_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 32
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6


def llama_classes(torch):
    nn = torch.nn
    F = torch.nn.functional

    class LlamaRMSNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(torch.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)

    class LlamaRotaryEmbedding(nn.Module):
        def __init__(self, config, device=None):
            super().__init__()
            dim = config.hidden_size // config.num_attention_heads
            inv_freq = 1.0 / (config.rope_theta ** (
                torch.arange(0, dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float)
                / dim))
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.attention_scaling = 1.0

        @torch.no_grad()
        def forward(self, x, position_ids):
            inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
                position_ids.shape[0], -1, 1).to(x.device)
            position_ids_expanded = position_ids[:, None, :].float()
            device_type = x.device.type if isinstance(x.device.type, str) and \
                x.device.type != "mps" else "cpu"
            with torch.autocast(device_type=device_type, enabled=False):
                freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
                emb = torch.cat((freqs, freqs), dim=-1)
                cos = emb.cos() * self.attention_scaling
                sin = emb.sin() * self.attention_scaling
            return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
        cos = cos.unsqueeze(unsqueeze_dim)
        sin = sin.unsqueeze(unsqueeze_dim)
        return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)

    def repeat_kv(hidden_states, n_rep):
        batch, num_key_value_heads, slen, head_dim = hidden_states.shape
        if n_rep == 1:
            return hidden_states
        hidden_states = hidden_states[:, :, None, :, :].expand(
            batch, num_key_value_heads, n_rep, slen, head_dim)
        return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)

    class DynamicCache:
        """The keys and values seen so far, one tensor per layer."""

        def __init__(self):
            self.key_cache = []
            self.value_cache = []

        def update(self, key_states, value_states, layer_idx):
            if len(self.key_cache) <= layer_idx:
                self.key_cache.append(key_states)
                self.value_cache.append(value_states)
            else:
                self.key_cache[layer_idx] = torch.cat([self.key_cache[layer_idx], key_states],
                                                      dim=-2)
                self.value_cache[layer_idx] = torch.cat(
                    [self.value_cache[layer_idx], value_states], dim=-2)
            return self.key_cache[layer_idx], self.value_cache[layer_idx]

        def get_seq_length(self, layer_idx=0):
            return 0 if len(self.key_cache) <= layer_idx else self.key_cache[layer_idx].shape[-2]

    class LlamaAttention(nn.Module):
        def __init__(self, config, layer_idx):
            super().__init__()
            self.layer_idx = layer_idx
            self.head_dim = config.hidden_size // config.num_attention_heads
            self.num_heads = config.num_attention_heads
            self.num_key_value_heads = config.num_key_value_heads
            self.num_key_value_groups = self.num_heads // self.num_key_value_heads
            self.q_proj = nn.Linear(config.hidden_size, self.num_heads * self.head_dim,
                                    bias=False)
            self.k_proj = nn.Linear(config.hidden_size, self.num_key_value_heads * self.head_dim,
                                    bias=False)
            self.v_proj = nn.Linear(config.hidden_size, self.num_key_value_heads * self.head_dim,
                                    bias=False)
            self.o_proj = nn.Linear(self.num_heads * self.head_dim, config.hidden_size,
                                    bias=False)

        def forward(self, hidden_states, position_embeddings, attention_mask, past_key_value):
            input_shape = hidden_states.shape[:-1]
            hidden_shape = (*input_shape, -1, self.head_dim)
            query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
            key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
            value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
            cos, sin = position_embeddings
            query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
            if past_key_value is not None:
                key_states, value_states = past_key_value.update(key_states, value_states,
                                                                 self.layer_idx)
            key_states = repeat_kv(key_states, self.num_key_value_groups)
            value_states = repeat_kv(value_states, self.num_key_value_groups)
            causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
            attn_output = F.scaled_dot_product_attention(
                query_states.contiguous(), key_states.contiguous(), value_states.contiguous(),
                attn_mask=causal_mask, dropout_p=0.0, is_causal=False)
            attn_output = attn_output.transpose(1, 2).contiguous()
            return self.o_proj(attn_output.reshape(*input_shape, -1))

    class LlamaMLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
            self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
            self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
            self.act_fn = nn.SiLU()

        def forward(self, x):
            return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))

    class LlamaDecoderLayer(nn.Module):
        def __init__(self, config, layer_idx):
            super().__init__()
            self.self_attn = LlamaAttention(config, layer_idx)
            self.mlp = LlamaMLP(config)
            self.input_layernorm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
            self.post_attention_layernorm = LlamaRMSNorm(config.hidden_size,
                                                         eps=config.rms_norm_eps)

        def forward(self, hidden_states, position_embeddings, attention_mask, past_key_value):
            residual = hidden_states
            hidden_states = self.self_attn(self.input_layernorm(hidden_states),
                                           position_embeddings, attention_mask, past_key_value)
            hidden_states = residual + hidden_states
            residual = hidden_states
            return residual + self.mlp(self.post_attention_layernorm(hidden_states))

    class LlamaForCausalLM(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
            self.layers = nn.ModuleList([LlamaDecoderLayer(config, i)
                                         for i in range(config.num_hidden_layers)])
            self.norm = LlamaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
            self.rotary_emb = LlamaRotaryEmbedding(config)
            self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

        def _update_causal_mask(self, attention_mask, input_tensor, past_seen_tokens):
            dtype, device = input_tensor.dtype, input_tensor.device
            min_dtype = torch.finfo(dtype).min
            sequence_length = input_tensor.shape[1]
            target_length = past_seen_tokens + sequence_length
            causal_mask = torch.full((sequence_length, target_length), fill_value=min_dtype,
                                     dtype=dtype, device=device)
            causal_mask = torch.triu(causal_mask, diagonal=past_seen_tokens + 1)
            causal_mask = causal_mask[None, None, :, :].expand(input_tensor.shape[0], 1, -1, -1)
            if attention_mask is not None:
                causal_mask = causal_mask.clone()
                mask_length = attention_mask.shape[-1]
                padding_mask = causal_mask[:, :, :, :mask_length] + \
                    attention_mask[:, None, None, :].to(causal_mask.device)
                padding_mask = padding_mask == 0
                causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length] \
                    .masked_fill(padding_mask, min_dtype)
            return causal_mask

        def forward(self, input_ids, attention_mask=None, past_key_values=None,
                    use_cache=False):
            inputs_embeds = self.embed_tokens(input_ids)
            if use_cache and past_key_values is None:
                past_key_values = DynamicCache()
            past_seen_tokens = past_key_values.get_seq_length() \
                if past_key_values is not None else 0
            cache_position = torch.arange(past_seen_tokens,
                                          past_seen_tokens + inputs_embeds.shape[1],
                                          device=inputs_embeds.device)
            position_ids = cache_position.unsqueeze(0)
            causal_mask = self._update_causal_mask(attention_mask, inputs_embeds,
                                                   past_seen_tokens)
            hidden_states = inputs_embeds
            position_embeddings = self.rotary_emb(hidden_states, position_ids)
            for decoder_layer in self.layers:
                hidden_states = decoder_layer(hidden_states, position_embeddings, causal_mask,
                                              past_key_values)
            hidden_states = self.norm(hidden_states)
            return self.lm_head(hidden_states), past_key_values

    return LlamaForCausalLM


def llama(torch, device="cpu"):
    """Forward with left padding and GQA, the loss's gradients, a cached decode against the
    full forward, and the same model cast to bfloat16."""
    config = LlamaConfig()
    model = init_params(torch, llama_classes(torch)(config), seed=11).to(device)
    keys = list(model.state_dict().keys())
    inv_freq_saved = any("inv_freq" in k for k in keys)
    input_ids = data(torch, 12, 2, 8, kind="int", high=config.vocab_size).to(device)
    attention_mask = torch.ones(2, 8, dtype=torch.long, device=device)
    attention_mask[1, :3] = 0
    logits, _ = model(input_ids, attention_mask)
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, config.vocab_size),
                                             input_ids[:, 1:].reshape(-1))
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    with torch.no_grad():
        full, _ = model(input_ids)
        first, cache = model(input_ids[:, :6], use_cache=True)
        steps = [first[:, -1]]
        for t in range(6, 8):
            step, cache = model(input_ids[:, t:t + 1], past_key_values=cache, use_cache=True)
            steps.append(step[:, -1])
        cached = torch.stack(steps, dim=1)
        model.to(torch.bfloat16)
        bf16, _ = model(input_ids, attention_mask)
    exact = dict(logits=logits, loss=loss, grads=grads, full=full[:, 5:], cached=cached,
                 inv_freq_saved=inv_freq_saved, cache_len=cache.get_seq_length(),
                 inv_freq_bf16=model.rotary_emb.inv_freq.dtype == torch.bfloat16,
                 out_bf16=bf16.dtype == torch.bfloat16)
    return exact, dict(bf16=bf16.float())


def logits_processors(torch):
    """The logits processors of generation/logits_process.py."""

    class TemperatureLogitsWarper:
        def __init__(self, temperature):
            self.temperature = temperature

        def __call__(self, input_ids, scores):
            return scores / self.temperature

    class TopKLogitsWarper:
        def __init__(self, top_k, filter_value=-float("Inf"), min_tokens_to_keep=1):
            self.top_k = max(top_k, min_tokens_to_keep)
            self.filter_value = filter_value

        def __call__(self, input_ids, scores):
            top_k = min(self.top_k, scores.size(-1))
            indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
            return scores.masked_fill(indices_to_remove, self.filter_value)

    class TopPLogitsWarper:
        def __init__(self, top_p, filter_value=-float("Inf"), min_tokens_to_keep=1):
            self.top_p = float(top_p)
            self.filter_value = filter_value
            self.min_tokens_to_keep = min_tokens_to_keep

        def __call__(self, input_ids, scores):
            sorted_logits, sorted_indices = torch.sort(scores, descending=False)
            cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
            sorted_indices_to_remove = cumulative_probs <= (1 - self.top_p)
            sorted_indices_to_remove[..., -self.min_tokens_to_keep:] = 0
            indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                                 sorted_indices_to_remove)
            return scores.masked_fill(indices_to_remove, self.filter_value)

    class RepetitionPenaltyLogitsProcessor:
        def __init__(self, penalty):
            self.penalty = penalty

        def __call__(self, input_ids, scores):
            score = torch.gather(scores, 1, input_ids)
            score = torch.where(score < 0, score * self.penalty, score / self.penalty)
            return scores.scatter_(1, input_ids, score)

    class MinLengthLogitsProcessor:
        def __init__(self, min_length, eos_token_id):
            self.min_length = min_length
            self.eos_token_id = eos_token_id

        def __call__(self, input_ids, scores):
            if input_ids.shape[-1] < self.min_length:
                scores[:, self.eos_token_id] = -float("inf")
            return scores

    class LogitsProcessorList(list):
        def __call__(self, input_ids, scores):
            for processor in self:
                scores = processor(input_ids, scores)
            return scores

    return dict(temperature=TemperatureLogitsWarper, top_k=TopKLogitsWarper,
                top_p=TopPLogitsWarper, repetition=RepetitionPenaltyLogitsProcessor,
                min_length=MinLengthLogitsProcessor, list=LogitsProcessorList)


def greedy_search(torch, model, input_ids, logits_processor, max_length, eos_token_id,
                  pad_token_id):
    eos_token_tensor = torch.tensor(eos_token_id, device=input_ids.device)
    unfinished_sequences = torch.ones(input_ids.shape[0], dtype=torch.long,
                                      device=input_ids.device)
    all_scores = []
    while input_ids.shape[-1] < max_length:
        logits, _ = model(input_ids)
        next_token_logits = logits[:, -1, :].clone().float()
        next_token_scores = logits_processor(input_ids, next_token_logits)
        all_scores.append(next_token_scores)
        next_tokens = torch.argmax(next_token_scores, dim=-1)
        next_tokens = next_tokens * unfinished_sequences + pad_token_id * (
            1 - unfinished_sequences)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        unfinished_sequences = unfinished_sequences & ~torch.isin(input_ids[:, -1],
                                                                  eos_token_tensor)
        if unfinished_sequences.max() == 0:
            break
    return input_ids, torch.stack(all_scores, dim=1)


def generation(torch, device="cpu"):
    """Greedy decoding with repetition penalty and min-length on the LLaMA model; every
    processor on fixed scores; beam-search bookkeeping on one step."""
    config = LlamaConfig()
    model = init_params(torch, llama_classes(torch)(config), seed=13).to(device)
    model.eval()
    P = logits_processors(torch)
    prompt = data(torch, 14, 2, 3, kind="int", high=config.vocab_size).to(device)
    # an eos that greedy decoding actually emits, so the finished-row padding is exercised
    eos = [14, 21]
    processors = P["list"]([P["repetition"](1.3), P["min_length"](5, eos)])
    with torch.no_grad():
        sequences, scores = greedy_search(torch, model, prompt, processors, max_length=9,
                                          eos_token_id=eos, pad_token_id=0)

    scores0 = data(torch, 15, 3, 12).to(device) * 2
    ids = data(torch, 16, 3, 4, kind="int", high=12).to(device)
    warped = dict(
        temperature=P["temperature"](0.7)(ids, scores0.clone()),
        top_k=P["top_k"](3)(ids, scores0.clone()),
        top_p=P["top_p"](0.8)(ids, scores0.clone()),
        repetition=P["repetition"](1.5)(ids, scores0.clone()),
        min_length=P["min_length"](6, 4)(ids, scores0.clone()),
    )
    # inf positions are compared as a mask, finite values as numbers
    for k in ("top_k", "top_p", "min_length"):
        warped[k + "_kept"] = torch.isfinite(warped[k])
        warped[k] = torch.where(torch.isfinite(warped[k]), warped[k],
                                torch.zeros_like(warped[k]))

    # beam-search bookkeeping for one step
    batch_size, num_beams, vocab_size = 2, 3, 12
    beam_scores = torch.zeros((batch_size, num_beams), dtype=torch.float, device=device)
    beam_scores[:, 1:] = -1e9
    beam_scores = beam_scores.view((batch_size * num_beams,))
    logits = data(torch, 17, batch_size * num_beams, vocab_size).to(device)
    next_token_scores = torch.nn.functional.log_softmax(logits, dim=-1)
    next_token_scores = next_token_scores + beam_scores[:, None].expand_as(next_token_scores)
    next_token_scores = next_token_scores.view(batch_size, num_beams * vocab_size)
    next_token_scores, next_tokens = torch.topk(next_token_scores, 2 * num_beams, dim=1,
                                                largest=True, sorted=True)
    next_indices = torch.div(next_tokens, vocab_size, rounding_mode="floor")
    next_tokens = next_tokens % vocab_size
    return dict(sequences=sequences, scores=torch.where(torch.isfinite(scores), scores,
                                                         torch.zeros_like(scores)),
                finite=torch.isfinite(scores), warped=warped, beam_scores=next_token_scores,
                beam_tokens=next_tokens, beam_indices=next_indices)


def sampling(torch, device="cpu"):
    """torch.multinomial after top-k/top-p: every draw is an allowed token, and a
    distribution with one allowed token always gives that token."""
    P = logits_processors(torch)
    scores = data(torch, 18, 4, 20).to(device)
    warp = P["list"]([P["temperature"](0.8), P["top_k"](5), P["top_p"](0.9)])
    warped = warp(None, scores.clone())
    probs = torch.nn.functional.softmax(warped, dim=-1)
    torch.manual_seed(0)
    draws = torch.cat([torch.multinomial(probs, num_samples=1) for _ in range(30)], dim=1)
    allowed = torch.gather(torch.isfinite(warped), 1, draws).all()
    one_hot_scores = torch.full((2, 20), -float("inf"), device=device)
    one_hot_scores[0, 3] = 1.0
    one_hot_scores[1, 17] = 1.0
    single = torch.multinomial(torch.softmax(one_hot_scores, dim=-1), num_samples=4,
                               replacement=True)
    return dict(allowed=allowed, n_allowed=torch.isfinite(warped).sum(dim=-1),
                shape=list(draws.shape), single=single)
