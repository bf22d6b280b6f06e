"""Training code of the research-code zoo, written as its reference repositories write it
(CLIP's contrastive loss, nanoGPT's model, optimizer setup, autocast loop and generation,
a pure-PyTorch Mamba selective scan); each ``run(torch, ...)`` trains a tiny copy for two
steps.
"""
import contextlib
import inspect
import math
from dataclasses import dataclass

import numpy as np

from models_convnets import grads
from script_harness import data, init_params


# 7. CLIP's contrastive loss; nanoGPT's configure_optimizers and autocast loop ------------

def clip(torch, device="cpu"):
    nn = torch.nn
    F = torch.nn.functional
    device = device(torch) if callable(device) else device

    class CLIP(nn.Module):
        def __init__(self, image_dim=12, vocab=10, embed_dim=6, width=8):
            super().__init__()
            self.visual = nn.Sequential(nn.Linear(image_dim, width), nn.GELU(),
                                        nn.Linear(width, embed_dim))
            self.token_embedding = nn.Embedding(vocab, width)
            self.ln_final = nn.LayerNorm(width)
            self.text_projection = nn.Parameter(torch.empty(width, embed_dim))
            self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))

        def encode_image(self, image):
            return self.visual(image)

        def encode_text(self, text):
            x = self.ln_final(self.token_embedding(text))
            # the features at the end-of-text token (the highest id in each sequence)
            return x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.text_projection

        def forward(self, image, text):
            image_features = F.normalize(self.encode_image(image), dim=-1)
            text_features = F.normalize(self.encode_text(text), dim=-1)
            return image_features, text_features, self.logit_scale.exp()

    def clip_loss(image_features, text_features, logit_scale):
        logits_per_image = logit_scale * image_features @ text_features.T
        logits_per_text = logits_per_image.T
        labels = torch.arange(logits_per_image.shape[0], device=image_features.device,
                              dtype=torch.long)
        total_loss = (F.cross_entropy(logits_per_image, labels)
                      + F.cross_entropy(logits_per_text, labels)) / 2
        return total_loss, logits_per_image

    model = CLIP()
    out = {"logit_scale": model.logit_scale.item()}
    for seed, part in enumerate([model.visual, model.token_embedding, model.ln_final]):
        init_params(torch, part, seed=seed)
    with torch.no_grad():  # CLIP draws it from normal(std=width ** -0.5)
        model.text_projection.copy_(data(torch, 3, 8, 6) * 8 ** -0.5)
    model = model.to(device)
    images = data(torch, 1, 5, 12).to(device)
    texts = data(torch, 2, 5, 4, kind="int", high=10).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.2)
    losses = []
    for step in range(2):
        loss, logits = clip_loss(*model(images, texts))
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            out["logits"] = logits.detach()
            out["grads"] = grads(model)
        optimizer.step()
        with torch.no_grad():  # OpenCLIP clamps the temperature after each step
            model.logit_scale.clamp_(0, math.log(100))
        losses.append(loss.item())
    out["losses"] = losses
    out["state"] = dict(model.state_dict())
    return out


def nanogpt(torch, autocast, flash=True):
    nn = torch.nn
    F = torch.nn.functional

    @dataclass
    class GPTConfig:
        block_size: int = 8
        vocab_size: int = 13
        n_layer: int = 2
        n_head: int = 2
        n_embd: int = 16
        dropout: float = 0.0
        bias: bool = True

    class LayerNorm(nn.Module):
        """ LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False """

        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            self.dropout = config.dropout
            self.attn_dropout = nn.Dropout(config.dropout)
            # flash attention, or the explicit path with its causal mask buffer
            self.flash = flash and hasattr(torch.nn.functional, 'scaled_dot_product_attention')
            if not self.flash:
                self.register_buffer("bias", torch.tril(torch.ones(config.block_size,
                                                                   config.block_size))
                                     .view(1, 1, config.block_size, config.block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if self.flash:
                y = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                    is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
                att = F.softmax(att, dim=-1)
                att = self.attn_dropout(att)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            x = x + self.mlp(self.ln_2(x))
            return x

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=LayerNorm(config.n_embd, bias=config.bias),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith('c_proj.weight'):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def get_num_params(self, non_embedding=True):
            n_params = sum(p.numel() for p in self.parameters())
            if non_embedding:
                n_params -= self.transformer.wpe.weight.numel()
            return n_params

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.config.block_size
            pos = torch.arange(0, t, dtype=torch.long, device=device)  # shape (t)
            tok_emb = self.transformer.wte(idx)
            pos_emb = self.transformer.wpe(pos)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                       ignore_index=-1)
            else:
                logits = self.lm_head(x[:, [-1], :])
                loss = None
            return logits, loss

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.config.block_size \
                    else idx[:, -self.config.block_size:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float('Inf')
                probs = F.softmax(logits, dim=-1)
                # torch.multinomial(probs, num_samples=1) cannot draw alike: the mode
                idx_next = torch.argmax(probs, dim=-1, keepdim=True)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx, probs

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            param_dict = {pn: p for pn, p in self.named_parameters()}
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [
                {'params': decay_params, 'weight_decay': weight_decay},
                {'params': nodecay_params, 'weight_decay': 0.0}
            ]
            num_decay_params = sum(p.numel() for p in decay_params)
            num_nodecay_params = sum(p.numel() for p in nodecay_params)
            fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
            use_fused = fused_available and device_type == 'cuda'
            optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas,
                                          fused=use_fused)
            return optimizer, [num_decay_params, num_nodecay_params, fused_available]

    def get_lr(it, warmup_iters=1, lr_decay_iters=4, learning_rate=6e-3, min_lr=6e-4):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)

    model = GPT(GPTConfig())
    out = {"num_params": model.get_num_params(),
           "tied": model.transformer.wte.weight is model.lm_head.weight}
    init_params(torch, model)
    optimizer, out["groups"] = model.configure_optimizers(0.1, 6e-3, (0.9, 0.95), 'cpu')
    device_type = 'cpu'
    ctx = contextlib.nullcontext() if not autocast \
        else torch.autocast(device_type=device_type, dtype=torch.bfloat16)
    grad_clip = 0.2  # nanoGPT's 1.0 would never clip this tiny model
    tokens = data(torch, 1, 27, kind="int", high=13)
    ix = [0, 7, 18]  # nanoGPT's get_batch, with fixed offsets
    X = torch.stack([tokens[i:i + 8] for i in ix])
    Y = torch.stack([tokens[i + 1:i + 1 + 8] for i in ix])
    losses, norms = [], []
    for it in range(2):
        lr = get_lr(it)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
        with ctx:
            logits, loss = model(X, Y)
        if it == 0:
            out["bf16_logits"] = logits.dtype == torch.bfloat16
            out["logits"] = logits.detach().float()
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip).item())
        if it == 0:
            out["grads"] = grads(model)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    out.update(losses=losses, norms=norms)
    if not autocast:  # (Adam turns bfloat16's noise in the smallest gradients into steps of lr)
        out["state"] = dict(model.state_dict())
    model.eval()
    with torch.no_grad(), ctx:
        logits, _ = model(X[:, :4])
    out["next"] = logits.float()
    if not autocast:
        out["generated"], out["probs"] = model.generate(X[:2, :3], 7, temperature=0.8,
                                                        top_k=4)
    return out


# 8. A Mamba selective scan in pure PyTorch (johnma2006/mamba-minimal) --------------------

def mamba(torch, causal_pad, amp=False):
    nn = torch.nn
    F = torch.nn.functional

    @dataclass
    class MambaArgs:
        d_model: int = 8
        n_layer: int = 2
        vocab_size: int = 11
        d_state: int = 4
        expand: int = 2
        d_conv: int = 3

        def __post_init__(self):
            self.d_inner = int(self.expand * self.d_model)
            self.dt_rank = math.ceil(self.d_model / 16)

    class RMSNorm(nn.Module):
        def __init__(self, d_model: int, eps: float = 1e-5):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(d_model))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    class MambaBlock(nn.Module):
        def __init__(self, args: MambaArgs):
            super().__init__()
            self.args = args
            self.in_proj = nn.Linear(args.d_model, args.d_inner * 2, bias=False)
            self.conv1d = nn.Conv1d(in_channels=args.d_inner, out_channels=args.d_inner,
                                    bias=True, kernel_size=args.d_conv, groups=args.d_inner,
                                    padding=0 if causal_pad else args.d_conv - 1)
            self.x_proj = nn.Linear(args.d_inner, args.dt_rank + args.d_state * 2,
                                    bias=False)
            self.dt_proj = nn.Linear(args.dt_rank, args.d_inner, bias=True)
            A = torch.arange(1, args.d_state + 1).float().repeat(args.d_inner, 1)  # (d_in, n)
            self.A_log = nn.Parameter(torch.log(A))
            self.D = nn.Parameter(torch.ones(args.d_inner))
            self.out_proj = nn.Linear(args.d_inner, args.d_model, bias=False)

        def forward(self, x):
            (b, l, d) = x.shape
            x_and_res = self.in_proj(x)  # shape (b, l, 2 * d_in)
            (x, res) = x_and_res.split(split_size=[self.args.d_inner, self.args.d_inner],
                                       dim=-1)
            x = x.transpose(1, 2)  # b l d_in -> b d_in l
            if causal_pad:
                x = self.conv1d(F.pad(x, (self.args.d_conv - 1, 0)))
            else:
                x = self.conv1d(x)[..., :l]
            x = x.transpose(1, 2)
            x = F.silu(x)
            y = self.ssm(x)
            y = y * F.silu(res)
            return self.out_proj(y)

        def ssm(self, x):
            (d_in, n) = self.A_log.shape
            A = -torch.exp(self.A_log.float())  # shape (d_in, n)
            D = self.D.float()
            x_dbl = self.x_proj(x)  # (b, l, dt_rank + 2*n)
            (delta, B, C) = x_dbl.split(split_size=[self.args.dt_rank, n, n], dim=-1)
            delta = F.softplus(self.dt_proj(delta))  # (b, l, d_in)
            return self.selective_scan(x, delta, A, B, C, D)

        def selective_scan(self, u, delta, A, B, C, D):
            (b, l, d_in) = u.shape
            n = A.shape[1]
            deltaA = torch.exp(torch.einsum('bld,dn->bldn', delta, A))
            deltaB_u = torch.einsum('bld,bln,bld->bldn', delta, B, u)
            x = torch.zeros((b, d_in, n), device=deltaA.device)
            ys = []
            for i in range(l):
                x = deltaA[:, i] * x + deltaB_u[:, i]
                y = torch.einsum('bdn,bn->bd', x, C[:, i, :])
                ys.append(y)
            y = torch.stack(ys, dim=1)  # shape (b, l, d_in)
            y = y + u * D
            return y

    class ResidualBlock(nn.Module):
        def __init__(self, args: MambaArgs):
            super().__init__()
            self.mixer = MambaBlock(args)
            self.norm = RMSNorm(args.d_model)

        def forward(self, x):
            return self.mixer(self.norm(x)) + x

    class Mamba(nn.Module):
        def __init__(self, args: MambaArgs):
            super().__init__()
            self.embedding = nn.Embedding(args.vocab_size, args.d_model)
            self.layers = nn.ModuleList([ResidualBlock(args) for _ in range(args.n_layer)])
            self.norm_f = RMSNorm(args.d_model)
            self.lm_head = nn.Linear(args.d_model, args.vocab_size, bias=False)
            self.lm_head.weight = self.embedding.weight  # tie weights

        def forward(self, input_ids):
            x = self.embedding(input_ids)
            for layer in self.layers:
                x = layer(x)
            x = self.norm_f(x)
            return self.lm_head(x)

    model = Mamba(MambaArgs())
    out = {"A_log": model.layers[0].mixer.A_log.detach().clone()}
    init_params(torch, model)
    tokens = data(torch, 1, 2, 7, kind="int", high=11)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(2):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=amp):
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            out["dtype"] = logits.dtype == (torch.bfloat16 if amp else torch.float32)
            out["logits"] = logits.detach().float()
            out["grads"] = grads(model)
        optimizer.step()
        losses.append(loss.item())
    out["losses"] = losses
    out["state"] = dict(model.state_dict())
    return out
