"""Hugging Face transformers-style modeling code, run unchanged under the framework and
under PyTorch: GPT-2, BERT and LLaMA written as transformers writes them, the generation
utilities, from_pretrained-style loading and a Trainer-like loop (tiny sizes; workloads in
tests/scripts/hf_*.py)."""
import pytest

import framework
import hf_gpt2_bert as gpt2_bert
import hf_llama_generate as llama_gen
import hf_loading_trainer as loading
from basics_support import oracle_on_one_thread  # noqa: F401 (a fixture)
from script_harness import assert_same, oracle

pytestmark = pytest.mark.usefixtures("oracle_on_one_thread")


def _compare(run, *args, device="cpu", rtol=1e-4, atol=1e-5, loose_tol=None, **kwargs):
    """Like script_harness.compare, with the framework side on ``device`` (PyTorch, a CPU
    build, stays on cpu). A run that returns ``(exact, low_precision)`` has its second part
    compared at ``loose_tol`` (rtol, atol)."""
    torch = oracle()
    want = run(torch, *args, **kwargs)
    got = run(framework, *args, **(dict(kwargs, device=device) if device != "cpu" else kwargs))
    if loose_tol is not None:
        assert_same(got[1], want[1], *loose_tol, path="low_precision")
        got, want = got[0], want[0]
    assert_same(got, want, rtol, atol)
    return got


def test_gpt2():
    """Conv1D/addmm, the bool causal buffer and torch.where with finfo.min, the tied head,
    -100 labels, and past_key_values decoding equal to the full forward."""
    got = _compare(gpt2_bert.gpt2)
    assert got["tied"] and got["no_bias_buffer"] and got["both_tied"]


def test_bert_masked_lm():
    """Extended attention mask, token types, tied decoder, num_parameters(only_trainable),
    resize_token_embeddings by hand."""
    got = _compare(gpt2_bert.bert_mlm)
    assert got["kept"] and got["tied"] and got["new_shape"] == [2, 8, 56]
    assert got["n_trainable"] - got["n_frozen"] == 32


def test_bert_sequence_classification():
    """problem_type: regression (MSELoss on squeeze), single-label CE, multi-label BCE."""
    got = _compare(gpt2_bert.bert_classification)
    assert [got[k]["problem_type"] for k in ("regression", "single", "multi")] == [0, 1, 2]


def test_llama():
    """Rotary embedding under autocast(enabled=False), GQA repeat_kv, the triu/masked_fill
    4-D mask with left padding through SDPA, RMSNorm in float32, a DynamicCache decode, and
    the model cast to bfloat16."""
    got = _compare(llama_gen.llama, loose_tol=(1e-2, 2e-3))
    assert not got["inv_freq_saved"] and got["inv_freq_bf16"] and got["out_bf16"]
    assert got["cache_len"] == 8


def test_generation():
    """Greedy search with repetition penalty, min-length and eos padding; the top-k, top-p,
    temperature processors; one step of beam-search bookkeeping."""
    got = _compare(llama_gen.generation)
    # the first row hits eos and is padded; then both rows finish, which stops the loop
    assert got["sequences"].shape == (2, 8)
    assert got["sequences"][0, -1].item() == 0


def test_sampling(device):
    """Draws after top-k/top-p only pick allowed tokens; a one-token distribution is exact."""
    got = _compare(llama_gen.sampling, device=device)
    assert got["allowed"].item()
    assert got["single"].tolist() == [[3] * 4, [17] * 4]


def test_from_pretrained(tmp_path, device):
    """A checkpoint written by PyTorch (torch.save and the safetensors package) with old
    gamma/beta names, loaded with strict=False, then fp32/fp16/bf16 inference."""
    pytest.importorskip("safetensors")
    paths = loading.write_checkpoint(oracle(), tmp_path)
    got = _compare(loading.from_pretrained, *paths, device=device, loose_tol=(1e-2, 2e-3))
    for fmt in ("bin", "safetensors"):
        assert got[fmt + "_missing"] and got[fmt + "_unexpected"]
        assert got[fmt + "_is_named_tuple"]
    assert got["strict_error"] and got["half_dtype"] and got["bf16_dtype"]


def test_gradient_checkpointing():
    got = _compare(loading.gradient_checkpointing)
    assert_same(got["checkpointed"], got["plain"], rtol=1e-5, atol=1e-6)


def test_trainer_loop():
    """AdamW no-decay groups, linear warmup LambdaLR, accumulation, clip_grad_norm_."""
    got = _compare(loading.trainer, rtol=1e-4, atol=1e-5)
    assert got["n_groups"] == [19, 22] and got["grads_cleared"]
    assert got["lrs"] == pytest.approx([0.005, 0.005 * 2 / 3, 0.005 / 3, 0.0])


def test_trainer_loop_bfloat16_autocast():
    got = _compare(loading.trainer, amp=True, rtol=2e-3, atol=2e-3)
    assert got["logits_bf16"] == [True]


def test_meta_device_init():
    """``with torch.device("meta")`` builds a model without memory or random draws (the
    framework used to raise in nn.init's random fills and trunc_normal_); to_empty and
    load_state_dict(assign=True)."""
    got = _compare(loading.meta_init)
    assert got["all_meta"] and got["assigned"] and got["is_param"] and got["same"]
    assert got["rng_untouched"]
    assert got["n_missing"] == 0
