"""from_pretrained-style weight loading, gradient checkpointing and a Trainer-like loop,
written the way Hugging Face transformers writes them, on the tiny BERT of hf_gpt2_bert."""
import math

import framework
from hf_gpt2_bert import BertConfig, bert_classes
from script_harness import data, init_params


def write_checkpoint(torch, directory):
    """A BertForMaskedLM checkpoint as an old release wrote it (LayerNorm.gamma/beta), saved
    by PyTorch with torch.save and with the safetensors package."""
    import safetensors.torch
    MLM, _ = bert_classes(torch)
    model = init_params(torch, MLM(BertConfig()), seed=21)
    state_dict = {}
    for k, v in model.state_dict().items():
        if "LayerNorm" in k or "norm" in k:
            k = k.replace("weight", "gamma").replace("bias", "beta")
        state_dict[k] = v
    state_dict.pop("decoder.weight")  # tied to the word embeddings: saved once
    bin_path = str(directory / "pytorch_model.bin")
    torch.save(state_dict, bin_path)
    st_path = str(directory / "model.safetensors")
    safetensors.torch.save_file(state_dict, st_path)
    return bin_path, st_path


def _load_file(torch, path):
    """safetensors.torch.load_file, or the framework's own reader of the same format."""
    if torch is framework:
        return torch.utils.safetensors.load_file(path)
    import safetensors.torch
    return safetensors.torch.load_file(path)


def from_pretrained(torch, bin_path, st_path, device="cpu"):
    """Load an MLM checkpoint into a sequence classifier: renamed keys, the head's weights
    missing, the MLM head's unexpected; then eval inference in float32, float16, bfloat16."""
    _, SeqCls = bert_classes(torch)
    config = BertConfig(num_labels=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    out = {}
    for fmt, path in (("bin", bin_path), ("safetensors", st_path)):
        model = init_params(torch, SeqCls(config), seed=22)  # the heads' fresh init
        if fmt == "bin":
            state_dict = torch.load(path, map_location="cpu", weights_only=True)
        else:
            state_dict = _load_file(torch, path)
        renamed = {}
        for key, value in state_dict.items():
            key = key.replace("gamma", "weight").replace("beta", "bias")
            renamed[key] = value
        result = model.load_state_dict(renamed, strict=False)
        out[fmt + "_missing"] = sorted(result.missing_keys) == [
            "bert.pooler.dense.bias", "bert.pooler.dense.weight", "classifier.bias",
            "classifier.weight"]
        out[fmt + "_unexpected"] = sorted(result.unexpected_keys) == [
            "decoder_bias", "transform.bias", "transform.weight", "transform_norm.bias",
            "transform_norm.weight"]
        out[fmt + "_is_named_tuple"] = type(result).__name__ == "_IncompatibleKeys" and \
            result[0] is result.missing_keys
        emb = model.bert.embeddings.word_embeddings.weight
        out[fmt + "_emb"] = emb.detach().clone()
    try:
        model.load_state_dict(renamed)
        out["strict_error"] = None
    except RuntimeError as e:
        out["strict_error"] = str(e).split(":")[0]
    out["strict_error"] = out["strict_error"] == "Error(s) in loading state_dict for " \
        "BertForSequenceClassification"

    model.to(device).eval()
    input_ids = data(torch, 23, 2, 8, kind="int", high=50).to(device)
    mask = torch.ones(2, 8, device=device)
    mask[1, 5:] = 0
    with torch.no_grad():
        _, out["fp32"] = model(input_ids, mask)
        _, half = model.half()(input_ids, mask)
        _, bf16 = model.to(dtype=torch.bfloat16)(input_ids, mask)
    out["half_dtype"] = half.dtype == torch.float16
    out["bf16_dtype"] = bf16.dtype == torch.bfloat16
    out["param_dtype"] = next(model.parameters()).dtype == torch.bfloat16
    return out, dict(half=half.float(), bf16=bf16.float())


def gradient_checkpointing(torch):
    """Each layer's call wrapped in torch.utils.checkpoint.checkpoint(use_reentrant=False)
    gives the same loss and gradients as the plain forward."""
    _, SeqCls = bert_classes(torch)
    config = BertConfig(num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    input_ids = data(torch, 24, 2, 8, kind="int", high=50)
    labels = torch.tensor([1, 2])
    out = {}
    for name in ("plain", "checkpointed"):
        model = init_params(torch, SeqCls(config), seed=25)
        model.train()
        if name == "checkpointed":
            model.gradient_checkpointing_enable()
        loss, _ = model(input_ids, labels=labels)
        loss.backward()
        out[name] = dict(loss=loss, grads={n: p.grad for n, p in model.named_parameters()})
    return out


def get_linear_schedule_with_warmup(torch, optimizer, num_warmup_steps, num_training_steps,
                                    last_epoch=-1):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step)
                   / float(max(1, num_training_steps - num_warmup_steps)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda, last_epoch)


def trainer(torch, amp=False):
    """Trainer.train's inner loop: AdamW with no-decay groups by name, linear warmup, two
    micro-batches per step, clipping to 1.0, zero_grad, logged loss.item()."""
    _, SeqCls = bert_classes(torch)
    config = BertConfig(num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = init_params(torch, SeqCls(config), seed=26)
    model.train()
    no_decay = ["bias", "LayerNorm.weight"]
    optimizer_grouped_parameters = [
        {"params": [p for n, p in model.named_parameters()
                    if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters()
                    if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=5e-3, eps=1e-8)
    gradient_accumulation_steps, max_steps = 2, 4
    scheduler = get_linear_schedule_with_warmup(torch, optimizer, num_warmup_steps=1,
                                                num_training_steps=max_steps)
    input_ids = data(torch, 27, 16, 8, kind="int", high=50)
    labels = data(torch, 28, 16, kind="int", high=3)
    mask = torch.ones(16, 8)
    mask[::3, 6:] = 0
    logs, norms, lrs, dtypes = [], [], [], set()
    tr_loss = 0.0
    model.zero_grad()
    for step in range(max_steps * gradient_accumulation_steps):
        sl = slice(2 * step, 2 * step + 2)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=amp):
            loss, logits = model(input_ids[sl], mask[sl], labels=labels[sl])
        dtypes.add(logits.dtype == torch.bfloat16)
        loss = loss / gradient_accumulation_steps
        loss.backward()
        tr_loss += loss.item()
        if (step + 1) % gradient_accumulation_steps == 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            norms.append(norm)
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr()[0])
            model.zero_grad()
            logs.append(round(tr_loss, 6))
            tr_loss = 0.0
    grads_cleared = all(p.grad is None for p in model.parameters())
    n_groups = [len(g["params"]) for g in optimizer.param_groups]
    # the key bias cannot change the softmax, so its gradient is rounding noise, which
    # AdamW's normalisation turns into lr-sized steps of either sign: leave it out
    state = {k: v for k, v in model.state_dict().items() if not k.endswith("key.bias")}
    return dict(logs=logs, norms=norms, lrs=lrs, grads_cleared=grads_cleared,
                n_groups=n_groups, state=state,
                finite=math.isfinite(sum(logs)), logits_bf16=sorted(dtypes))


def meta_init(torch):
    """low_cpu_mem_usage-style loading: build the model under ``with torch.device("meta")``
    (no memory, no random draws), materialise it with to_empty, then load_state_dict with
    assign=True; the non-persistent buffers are recomputed, as from_pretrained does."""
    _, SeqCls = bert_classes(torch)
    config = BertConfig(num_labels=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    reference = init_params(torch, SeqCls(config), seed=29).eval()
    state_dict = {k: v.clone() for k, v in reference.state_dict().items()}
    torch.manual_seed(0)
    first_draw = torch.rand(3)
    torch.manual_seed(0)
    nn = torch.nn

    def _init_weights(module):  # as ViT's, which upcasts before trunc_normal_
        if isinstance(module, nn.Linear):
            module.weight.data = nn.init.trunc_normal_(
                module.weight.data.to(torch.float32), mean=0.0, std=0.02).to(module.weight.dtype)
            module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=0.02)

    with torch.device("meta"):
        model = SeqCls(config)
        model.apply(_init_weights)
    # building on meta draws nothing from the CPU generator
    rng_untouched = torch.equal(torch.rand(3), first_draw)
    all_meta = all(p.is_meta for p in model.parameters())
    model = model.to_empty(device="cpu")
    emb = model.bert.embeddings
    emb.position_ids = torch.arange(config.max_position_embeddings).expand((1, -1))
    emb.token_type_ids = torch.zeros(emb.position_ids.size(), dtype=torch.long)
    result = model.load_state_dict(state_dict, assign=True)
    assigned = model.classifier.weight.data_ptr() == state_dict["classifier.weight"].data_ptr()
    model.eval()
    input_ids = data(torch, 30, 2, 8, kind="int", high=50)
    with torch.no_grad():
        _, logits = model(input_ids)
        _, want = reference(input_ids)
    return dict(all_meta=all_meta, n_missing=len(result.missing_keys), assigned=assigned,
                is_param=type(model.classifier.weight).__name__ == "Parameter",
                logits=logits, same=torch.equal(logits, want), rng_untouched=rng_untouched)
