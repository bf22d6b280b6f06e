"""GPT-2 and BERT written the way Hugging Face transformers writes them, at tiny sizes.

Each ``run(torch, ...)`` reaches every name through the module it is given, so the same
body runs under the framework and under PyTorch (see script_harness.compare).
"""
import math
from dataclasses import dataclass

from script_harness import data, init_params


@dataclass
class GPT2Config:
    vocab_size: int = 50
    n_positions: int = 16
    n_embd: int = 32
    n_layer: int = 2
    n_head: int = 4
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02


def gpt2_classes(torch):
    nn = torch.nn

    class Conv1D(nn.Module):
        """A linear layer with its weight transposed, as in the original GPT-2."""

        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.empty(nx, nf))
            self.bias = nn.Parameter(torch.zeros(nf))
            nn.init.normal_(self.weight, std=0.02)

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return x.view(size_out)

    class NewGELUActivation(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                               * (x + 0.044715 * torch.pow(x, 3.0))))

    class GPT2Attention(nn.Module):
        def __init__(self, config):
            super().__init__()
            n = config.n_positions
            self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool))
                                 .view(1, 1, n, n), persistent=False)
            self.embed_dim = config.n_embd
            self.num_heads = config.n_head
            self.head_dim = self.embed_dim // self.num_heads
            self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
            self.c_proj = Conv1D(self.embed_dim, self.embed_dim)

        def _attn(self, query, key, value, attention_mask=None):
            attn_weights = torch.matmul(query, key.transpose(-1, -2))
            attn_weights = attn_weights / torch.full(
                [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
            query_length, key_length = query.size(-2), key.size(-2)
            causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
            mask_value = torch.finfo(attn_weights.dtype).min
            mask_value = torch.full([], mask_value, dtype=attn_weights.dtype,
                                    device=attn_weights.device)
            attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype),
                                       mask_value)
            if attention_mask is not None:
                attn_weights = attn_weights + attention_mask
            attn_weights = nn.functional.softmax(attn_weights, dim=-1)
            attn_weights = attn_weights.type(value.dtype)
            return torch.matmul(attn_weights, value), attn_weights

        def _split_heads(self, tensor, num_heads, attn_head_size):
            new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
            tensor = tensor.view(new_shape)
            return tensor.permute(0, 2, 1, 3)

        def _merge_heads(self, tensor, num_heads, attn_head_size):
            tensor = tensor.permute(0, 2, 1, 3).contiguous()
            new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
            return tensor.view(new_shape)

        def forward(self, hidden_states, layer_past=None, attention_mask=None, use_cache=False):
            query, key, value = self.c_attn(hidden_states).split(self.embed_dim, dim=2)
            query = self._split_heads(query, self.num_heads, self.head_dim)
            key = self._split_heads(key, self.num_heads, self.head_dim)
            value = self._split_heads(value, self.num_heads, self.head_dim)
            if layer_past is not None:
                past_key, past_value = layer_past
                key = torch.cat((past_key, key), dim=-2)
                value = torch.cat((past_value, value), dim=-2)
            present = (key, value) if use_cache is True else None
            attn_output, _ = self._attn(query, key, value, attention_mask)
            attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
            return self.c_proj(attn_output), present

    class GPT2MLP(nn.Module):
        def __init__(self, intermediate_size, config):
            super().__init__()
            self.c_fc = Conv1D(intermediate_size, config.n_embd)
            self.c_proj = Conv1D(config.n_embd, intermediate_size)
            self.act = NewGELUActivation()

        def forward(self, hidden_states):
            return self.c_proj(self.act(self.c_fc(hidden_states)))

    class GPT2Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
            self.attn = GPT2Attention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
            self.mlp = GPT2MLP(4 * config.n_embd, config)

        def forward(self, hidden_states, layer_past=None, attention_mask=None, use_cache=False):
            residual = hidden_states
            attn_output, present = self.attn(self.ln_1(hidden_states), layer_past=layer_past,
                                             attention_mask=attention_mask, use_cache=use_cache)
            hidden_states = attn_output + residual
            residual = hidden_states
            hidden_states = residual + self.mlp(self.ln_2(hidden_states))
            return hidden_states, present

    class GPT2PreTrainedModel(nn.Module):
        def _init_weights(self, module):
            if isinstance(module, (nn.Linear, Conv1D)):
                module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
                if module.bias is not None:
                    module.bias.data.zero_()
            elif isinstance(module, nn.Embedding):
                module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            elif isinstance(module, nn.LayerNorm):
                module.bias.data.zero_()
                module.weight.data.fill_(1.0)
            for name, p in module.named_parameters():
                if name == "c_proj.weight":
                    p.data.normal_(mean=0.0, std=(self.config.initializer_range
                                                  / math.sqrt(2 * self.config.n_layer)))

    class GPT2Model(GPT2PreTrainedModel):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.wte = nn.Embedding(config.vocab_size, config.n_embd)
            self.wpe = nn.Embedding(config.n_positions, config.n_embd)
            self.h = nn.ModuleList([GPT2Block(config) for _ in range(config.n_layer)])
            self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)

        def forward(self, input_ids, past_key_values=None, attention_mask=None, use_cache=False):
            input_shape = input_ids.size()
            input_ids = input_ids.view(-1, input_shape[-1])
            device = input_ids.device
            if past_key_values is None:
                past_length = 0
                past_key_values = tuple([None] * len(self.h))
            else:
                past_length = past_key_values[0][0].size(-2)
            position_ids = torch.arange(past_length, input_shape[-1] + past_length,
                                        dtype=torch.long, device=device).unsqueeze(0)
            if attention_mask is not None:
                attention_mask = attention_mask.view(input_shape[0], -1)
                attention_mask = attention_mask[:, None, None, :]
                attention_mask = attention_mask.to(dtype=self.wte.weight.dtype)
                attention_mask = (1.0 - attention_mask) * torch.finfo(self.wte.weight.dtype).min
            hidden_states = self.wte(input_ids) + self.wpe(position_ids)
            presents = () if use_cache else None
            for block, layer_past in zip(self.h, past_key_values):
                hidden_states, present = block(hidden_states, layer_past=layer_past,
                                               attention_mask=attention_mask,
                                               use_cache=use_cache)
                if use_cache is True:
                    presents = presents + (present,)
            hidden_states = self.ln_f(hidden_states)
            return hidden_states, presents

    class GPT2LMHeadModel(GPT2PreTrainedModel):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = GPT2Model(config)
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.apply(self._init_weights)
            self.lm_head.weight = self.transformer.wte.weight

        def forward(self, input_ids, past_key_values=None, attention_mask=None, labels=None,
                    use_cache=False):
            hidden_states, presents = self.transformer(
                input_ids, past_key_values=past_key_values, attention_mask=attention_mask,
                use_cache=use_cache)
            lm_logits = self.lm_head(hidden_states)
            loss = None
            if labels is not None:
                labels = labels.to(lm_logits.device)
                shift_logits = lm_logits[..., :-1, :].contiguous()
                shift_labels = labels[..., 1:].contiguous()
                loss_fct = nn.CrossEntropyLoss()
                loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)),
                                shift_labels.view(-1))
            return loss, lm_logits, presents

    return GPT2LMHeadModel


def gpt2(torch, device="cpu"):
    """Forward with a padding mask and -100 labels, backward, the tied head, then an
    incremental decode with past_key_values that must match the full forward."""
    config = GPT2Config()
    model = gpt2_classes(torch)(config)
    init_params(torch, model, seed=1)
    model.to(device)
    tied = model.lm_head.weight is model.transformer.wte.weight
    n_params = len(list(model.parameters()))
    # the causal mask buffer is not persistent, and the tied head is saved under both names
    keys = list(model.state_dict().keys())
    no_bias_buffer = not any(k.endswith(".attn.bias") for k in keys)
    both_tied = "lm_head.weight" in keys and "transformer.wte.weight" in keys
    input_ids = data(torch, 2, 2, 8, kind="int", high=config.vocab_size).to(device)
    attention_mask = torch.ones(2, 8, dtype=torch.long, device=device)
    attention_mask[1, :2] = 0
    labels = input_ids.clone()
    labels[attention_mask == 0] = -100
    loss, logits, _ = model(input_ids, attention_mask=attention_mask, labels=labels)
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}

    model.eval()
    with torch.no_grad():
        _, full_logits, _ = model(input_ids)
        _, first, past = model(input_ids[:, :5], use_cache=True)
        steps = [first[:, -1]]
        for t in range(5, 8):
            _, step_logits, past = model(input_ids[:, t:t + 1], past_key_values=past,
                                         use_cache=True)
            steps.append(step_logits[:, -1])
    cached = torch.stack(steps, dim=1)
    return dict(loss=loss, logits=logits, grads=grads, tied=tied, n_params=n_params,
                n_keys=len(keys), no_bias_buffer=no_bias_buffer, both_tied=both_tied,
                full=full_logits[:, 4:], cached=cached, past_shape=list(past[0][0].shape))


@dataclass
class BertConfig:
    vocab_size: int = 50
    hidden_size: int = 32
    num_hidden_layers: int = 2
    num_attention_heads: int = 2
    intermediate_size: int = 64
    max_position_embeddings: int = 16
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    num_labels: int = 3
    problem_type: str = None


def bert_classes(torch):
    nn = torch.nn

    class BertEmbeddings(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size,
                                                padding_idx=0)
            self.position_embeddings = nn.Embedding(config.max_position_embeddings,
                                                    config.hidden_size)
            self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
            self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
            self.dropout = nn.Dropout(config.hidden_dropout_prob)
            self.register_buffer("position_ids", torch.arange(
                config.max_position_embeddings).expand((1, -1)), persistent=False)
            self.register_buffer("token_type_ids", torch.zeros(
                self.position_ids.size(), dtype=torch.long), persistent=False)

        def forward(self, input_ids, token_type_ids=None):
            seq_length = input_ids.size(1)
            position_ids = self.position_ids[:, :seq_length]
            if token_type_ids is None:
                buffered = self.token_type_ids[:, :seq_length]
                token_type_ids = buffered.expand(input_ids.size(0), seq_length)
            embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(
                token_type_ids)
            embeddings += self.position_embeddings(position_ids)
            return self.dropout(self.LayerNorm(embeddings))

    class BertSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.num_attention_heads = config.num_attention_heads
            self.attention_head_size = config.hidden_size // config.num_attention_heads
            self.all_head_size = self.num_attention_heads * self.attention_head_size
            self.query = nn.Linear(config.hidden_size, self.all_head_size)
            self.key = nn.Linear(config.hidden_size, self.all_head_size)
            self.value = nn.Linear(config.hidden_size, self.all_head_size)
            self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

        def transpose_for_scores(self, x):
            new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
            return x.view(new_x_shape).permute(0, 2, 1, 3)

        def forward(self, hidden_states, attention_mask=None):
            query_layer = self.transpose_for_scores(self.query(hidden_states))
            key_layer = self.transpose_for_scores(self.key(hidden_states))
            value_layer = self.transpose_for_scores(self.value(hidden_states))
            attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
            attention_scores = attention_scores / math.sqrt(self.attention_head_size)
            if attention_mask is not None:
                attention_scores = attention_scores + attention_mask
            attention_probs = nn.functional.softmax(attention_scores, dim=-1)
            attention_probs = self.dropout(attention_probs)
            context_layer = torch.matmul(attention_probs, value_layer)
            context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
            new_shape = context_layer.size()[:-2] + (self.all_head_size,)
            return context_layer.view(new_shape)

    class BertLayer(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.attention = BertSelfAttention(config)
            self.attn_out = nn.Linear(config.hidden_size, config.hidden_size)
            self.attn_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
            self.intermediate = nn.Linear(config.hidden_size, config.intermediate_size)
            self.output = nn.Linear(config.intermediate_size, config.hidden_size)
            self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

        def forward(self, hidden_states, attention_mask=None):
            attn = self.attn_out(self.attention(hidden_states, attention_mask))
            attn = self.attn_norm(attn + hidden_states)
            inter = nn.functional.gelu(self.intermediate(attn))
            return self.LayerNorm(self.output(inter) + attn)

    class BertPooler(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.dense = nn.Linear(config.hidden_size, config.hidden_size)
            self.activation = nn.Tanh()

        def forward(self, hidden_states):
            return self.activation(self.dense(hidden_states[:, 0]))

    class BertModel(nn.Module):
        def __init__(self, config, add_pooling_layer=True):
            super().__init__()
            self.config = config
            self.embeddings = BertEmbeddings(config)
            self.layer = nn.ModuleList([BertLayer(config)
                                        for _ in range(config.num_hidden_layers)])
            self.pooler = BertPooler(config) if add_pooling_layer else None
            self.gradient_checkpointing = False

        def get_input_embeddings(self):
            return self.embeddings.word_embeddings

        def set_input_embeddings(self, value):
            self.embeddings.word_embeddings = value

        def get_extended_attention_mask(self, attention_mask, dtype):
            extended = attention_mask[:, None, None, :].to(dtype=dtype)
            return (1.0 - extended) * torch.finfo(dtype).min

        def forward(self, input_ids, attention_mask=None, token_type_ids=None):
            if attention_mask is None:
                attention_mask = torch.ones(input_ids.shape, device=input_ids.device)
            hidden = self.embeddings(input_ids, token_type_ids)
            extended = self.get_extended_attention_mask(attention_mask, hidden.dtype)
            for layer in self.layer:
                if self.gradient_checkpointing and self.training:
                    hidden = torch.utils.checkpoint.checkpoint(layer.__call__, hidden, extended,
                                                               use_reentrant=False)
                else:
                    hidden = layer(hidden, extended)
            pooled = self.pooler(hidden) if self.pooler is not None else None
            return hidden, pooled

    class BertPreTrainedModel(nn.Module):
        def get_input_embeddings(self):
            return self.bert.get_input_embeddings()

        def gradient_checkpointing_enable(self):
            self.bert.gradient_checkpointing = True

        def num_parameters(self, only_trainable=False):
            return sum(p.numel() for p in self.parameters()
                       if p.requires_grad or not only_trainable)

        def resize_token_embeddings(self, new_num_tokens):
            old = self.get_input_embeddings()
            old_num_tokens, dim = old.weight.size()
            new = nn.Embedding(new_num_tokens, dim, device=old.weight.device,
                               dtype=old.weight.dtype)
            new.weight.data.normal_(mean=0.0, std=0.02)
            n = min(old_num_tokens, new_num_tokens)
            new.weight.data[:n, :] = old.weight.data[:n, :]
            self.bert.set_input_embeddings(new)
            self.tie_weights()
            self.config.vocab_size = new_num_tokens
            return new

        def tie_weights(self):
            pass

    class BertForMaskedLM(BertPreTrainedModel):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.bert = BertModel(config, add_pooling_layer=False)
            self.transform = nn.Linear(config.hidden_size, config.hidden_size)
            self.transform_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
            self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
            self.decoder_bias = nn.Parameter(torch.zeros(config.vocab_size))
            self.tie_weights()

        def tie_weights(self):
            self.decoder.weight = self.get_input_embeddings().weight
            if self.decoder_bias.shape[0] != self.decoder.weight.shape[0]:
                old = self.decoder_bias.data
                bias = torch.zeros(self.decoder.weight.shape[0], device=old.device)
                bias[:old.shape[0]] = old
                self.decoder_bias = nn.Parameter(bias)
            self.decoder.out_features = self.decoder.weight.shape[0]

        def forward(self, input_ids, attention_mask=None, labels=None):
            hidden, _ = self.bert(input_ids, attention_mask)
            h = self.transform_norm(nn.functional.gelu(self.transform(hidden)))
            logits = self.decoder(h) + self.decoder_bias
            loss = None
            if labels is not None:
                loss = nn.CrossEntropyLoss()(logits.view(-1, self.config.vocab_size),
                                             labels.view(-1))
            return loss, logits

    class BertForSequenceClassification(BertPreTrainedModel):
        def __init__(self, config):
            super().__init__()
            self.num_labels = config.num_labels
            self.config = config
            self.bert = BertModel(config)
            self.dropout = nn.Dropout(config.hidden_dropout_prob)
            self.classifier = nn.Linear(config.hidden_size, config.num_labels)

        def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None):
            _, pooled = self.bert(input_ids, attention_mask, token_type_ids)
            logits = self.classifier(self.dropout(pooled))
            loss = None
            if labels is not None:
                if self.config.problem_type is None:
                    if self.num_labels == 1:
                        self.config.problem_type = "regression"
                    elif self.num_labels > 1 and labels.dtype in (torch.long, torch.int):
                        self.config.problem_type = "single_label_classification"
                    else:
                        self.config.problem_type = "multi_label_classification"
                if self.config.problem_type == "regression":
                    loss_fct = nn.MSELoss()
                    if self.num_labels == 1:
                        loss = loss_fct(logits.squeeze(), labels.squeeze())
                    else:
                        loss = loss_fct(logits, labels)
                elif self.config.problem_type == "single_label_classification":
                    loss_fct = nn.CrossEntropyLoss()
                    loss = loss_fct(logits.view(-1, self.num_labels), labels.view(-1))
                else:
                    loss_fct = nn.BCEWithLogitsLoss()
                    loss = loss_fct(logits, labels)
            return loss, logits

    return BertForMaskedLM, BertForSequenceClassification


def bert_mlm(torch):
    """Masked LM with a tied decoder and a padding mask; then resize_token_embeddings by
    hand, which keeps the old rows and the tie."""
    MLM, _ = bert_classes(torch)
    config = BertConfig()
    model = init_params(torch, MLM(config), seed=3)
    model.eval()  # dropout off for the compared run
    input_ids = data(torch, 4, 2, 8, kind="int", high=config.vocab_size)
    token_type = torch.zeros_like(input_ids)
    token_type[:, 4:] = 1
    attention_mask = torch.ones_like(input_ids)
    attention_mask[0, 6:] = 0
    labels = torch.full_like(input_ids, -100)
    labels[:, 2] = input_ids[:, 2]
    labels[:, 5] = input_ids[:, 5]
    masked = input_ids.clone()
    masked[:, [2, 5]] = 1  # the [MASK] id
    loss, logits = model(masked, attention_mask, labels)
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    n_trainable = model.num_parameters(only_trainable=True)
    model.bert.embeddings.LayerNorm.weight.requires_grad_(False)
    n_frozen = model.num_parameters(only_trainable=True)
    old_rows = model.get_input_embeddings().weight.detach().clone()
    new_emb = model.resize_token_embeddings(56)
    kept = torch.equal(new_emb.weight[:50], old_rows)
    tied = model.decoder.weight is new_emb.weight
    with torch.no_grad():
        _, logits2 = model(masked, attention_mask)
    return dict(loss=loss, logits=logits, grads=grads, n_trainable=n_trainable,
                n_frozen=n_frozen, kept=kept, tied=tied, logits2=logits2[..., :50],
                new_shape=list(logits2.shape))


def bert_classification(torch, device="cpu"):
    """The three problem_type branches of the sequence-classification head."""
    _, SeqCls = bert_classes(torch)
    out = {}
    input_ids = data(torch, 5, 3, 8, kind="int", high=50).to(device)
    token_type_ids = torch.zeros_like(input_ids)
    token_type_ids[:, 5:] = 1
    mask = torch.ones(3, 8, device=device)
    mask[2, 6:] = 0
    for name, num_labels, labels in [
            ("regression", 1, data(torch, 6, 3).to(device)),
            ("single", 3, torch.tensor([0, 2, 1], device=device)),
            ("multi", 3, (data(torch, 7, 3, 3, kind="uniform") > 0.5).float().to(device))]:
        config = BertConfig(num_labels=num_labels)
        model = init_params(torch, SeqCls(config), seed=8).to(device)
        model.eval()
        loss, logits = model(input_ids, mask, token_type_ids, labels=labels)
        loss.backward()
        out[name] = dict(loss=loss, logits=logits, problem_type=
                         ["regression", "single_label_classification",
                          "multi_label_classification"].index(config.problem_type),
                         pooler_grad=model.bert.pooler.dense.weight.grad,
                         emb_grad=model.bert.embeddings.token_type_embeddings.weight.grad)
    return out
