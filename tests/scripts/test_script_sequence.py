"""Sequence models and NLP tutorials, run unchanged under the framework and under PyTorch.

The workloads live in sequence_tutorials.py (char-RNN, seq2seq with attention, Transformer
language model and translation) and sequence_models.py (LSTM taggers, word_language_model,
Annotated Transformer); the building blocks (MultiheadAttention, EmbeddingBag, CTC loss,
pack_sequence) are here.
"""
import pytest

import framework
from script_harness import compare, data, init_params
from sequence_models import run_annotated_transformer, run_lstm_tagger, run_word_language_model
from sequence_tutorials import (BOS_IDX, run_char_rnn, run_seq2seq_attention,
                                run_transformer_lm, run_transformer_translation)

pytest.importorskip("torch")


# --- 8. building blocks: MultiheadAttention, EmbeddingBag, CTC loss, pack_sequence --------

def run_building_blocks(torch):
    nn = torch.nn
    F = torch.nn.functional
    out = {}

    # nn.MultiheadAttention with every mask kind, and kdim/vdim different from embed_dim
    L, S, N, E = 4, 5, 2, 8
    mha = init_params(torch, nn.MultiheadAttention(E, 2), seed=30)
    q = data(torch, 31, L, N, E).requires_grad_()
    k = data(torch, 32, S, N, E)
    v = data(torch, 33, S, N, E)
    attn_out, attn_w = mha(q, k, v)
    out["mha"], out["mha_w"] = attn_out, attn_w
    o, w = mha(q, k, v, need_weights=False)
    out["mha_no_w"] = (o, w is None)
    key_padding_mask = torch.tensor([[False, False, False, True, True],
                                     [False, False, False, False, True]])
    bool_mask = torch.zeros(L, S, dtype=torch.bool)
    bool_mask[0, 1] = True
    float_mask = torch.zeros(L, S).masked_fill(bool_mask, float("-inf"))
    o1, w1 = mha(q, k, v, key_padding_mask=key_padding_mask, attn_mask=bool_mask,
                 average_attn_weights=False)
    o2, _ = mha(q, k, v, key_padding_mask=key_padding_mask, attn_mask=float_mask)
    out["mha_masked"] = (o1, w1, o2)
    (o1.sum() + o2.pow(2).sum()).backward()
    out["mha_grads"] = (q.grad, mha.in_proj_weight.grad, mha.out_proj.bias.grad)

    # a BERT-style encoder at inference: PyTorch's fast path (nested tensors) returns zeros
    # at padded positions, the slow path with grad does not
    layer = nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=True)
    encoder = init_params(torch, nn.TransformerEncoder(layer, 2), seed=37).eval()
    src = data(torch, 38, N, S, E)
    with torch.no_grad():
        fast = encoder(src, src_key_padding_mask=key_padding_mask)
    out["encoder_eval"] = (fast, encoder(src, src_key_padding_mask=key_padding_mask))

    cross = init_params(torch, nn.MultiheadAttention(E, 4, kdim=3, vdim=6, batch_first=True),
                        seed=34)
    kx = data(torch, 35, N, S, 3)
    vx = data(torch, 36, N, S, 6)
    co, cw = cross(q.detach().transpose(0, 1), kx, vx, key_padding_mask=key_padding_mask)
    co.mean().backward()
    out["cross"] = (co, cw, cross.k_proj_weight.grad, cross.v_proj_weight.grad)

    # nn.EmbeddingBag as in the text classification tutorial
    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class, mode):
            super(TextClassificationModel, self).__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode=mode)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.copy_(data(torch, 40, *self.embedding.weight.shape))
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.copy_(data(torch, 41, *self.fc.weight.shape) * initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            embedded = self.embedding(text, offsets)
            return self.fc(embedded)

    text = torch.tensor([1, 3, 2, 5, 7, 1, 0, 2, 9])
    offsets = torch.tensor([0, 3, 4, 7])
    label = torch.tensor([0, 2, 1, 0])
    for mode in ("mean", "sum", "max"):
        model = TextClassificationModel(10, 4, 3, mode)
        optimizer = torch.optim.SGD(model.parameters(), lr=5)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.1)
        losses = []
        for step in range(2):
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = nn.CrossEntropyLoss()(predicted_label, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        out[f"bag_{mode}"] = (losses, model.embedding.weight.detach().clone(),
                              (predicted_label.argmax(1) == label).sum().item())
    bag = nn.EmbeddingBag(10, 4, mode="sum")
    bag.weight.data.copy_(data(torch, 42, 10, 4))
    psw = data(torch, 43, 9).requires_grad_()
    r = bag(text, offsets, per_sample_weights=psw)
    r.sum().backward()
    out["bag_psw"] = (r, psw.grad, bag.weight.grad)
    out["bag_2d"] = bag(torch.tensor([[1, 2, 3], [4, 5, 6]]))

    # CTC loss as in speech recognition scripts: (T, N, C) log-probs
    T, C, Nb = 8, 5, 3
    logits = data(torch, 50, T, Nb, C).requires_grad_()
    log_probs = logits.log_softmax(2)
    targets = torch.tensor([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 3, 1]])
    input_lengths = torch.tensor([8, 6, 7])
    target_lengths = torch.tensor([3, 2, 4])
    ctc = nn.CTCLoss(blank=0)
    loss = ctc(log_probs, targets, input_lengths, target_lengths)
    loss.backward()
    out["ctc_mean"] = (loss, logits.grad.clone())
    logits.grad = None
    loss_sum = F.ctc_loss(logits.log_softmax(2), targets, input_lengths, target_lengths,
                          reduction="sum", zero_infinity=True)
    loss_sum.backward()
    out["ctc_sum"] = (loss_sum, logits.grad)
    flat_targets = torch.cat([targets[i, :n] for i, n in enumerate(target_lengths.tolist())])
    out["ctc_concat"] = F.ctc_loss(log_probs.detach(), flat_targets, input_lengths,
                                   target_lengths, reduction="none")

    # pack_sequence straight into an RNN
    seqs = [data(torch, 60, 4, 3), data(torch, 61, 2, 3), data(torch, 62, 3, 3)]
    packed = nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    rnn = init_params(torch, nn.GRU(3, 2), seed=63)
    p_out, h = rnn(packed)
    padded, lens = nn.utils.rnn.pad_packed_sequence(p_out)
    out["packed"] = (packed.data, packed.batch_sizes, packed.sorted_indices,
                     packed.unsorted_indices, padded, lens, h)
    return out


def test_char_rnn_name_classification(device):
    def run(mod):  # the framework side runs on `device`, PyTorch on cpu
        return run_char_rnn(mod, device if mod is framework else "cpu")
    got = compare(run)
    assert len(got["losses"]) == 3 and got["split"] == (3, 3)


def test_seq2seq_bahdanau_attention():
    got = compare(run_seq2seq_attention, rtol=2e-4, atol=2e-5)
    assert got["attn"].shape == (1, 5, 5)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_language_model(batch_first):
    got = compare(run_transformer_lm, batch_first=batch_first, rtol=5e-4, atol=5e-5)
    assert len(got["losses"]) == 6 and got["model"]["pos_encoder.pe"].shape == (5000, 1, 8)


def test_transformer_translation():
    got = compare(run_transformer_translation, rtol=5e-4, atol=5e-5)
    assert got["src_mask_is_bool"] and got["decoded"][0].item() == BOS_IDX


def test_lstm_taggers_packed_sequences():
    got = compare(run_lstm_tagger, rtol=2e-4, atol=2e-5)
    assert got["padded"].shape == (3, 5, 6) and got["h_n"].shape == (4, 3, 3)
    assert (got["padded"][2, 2:] == 0).all()


def test_attention_embeddingbag_ctc_blocks():
    got = compare(run_building_blocks, rtol=2e-4, atol=2e-5)
    assert got["mha_no_w"][1] is True
    fast, slow = got["encoder_eval"]
    assert (fast[0, 3:] == 0).all() and (slow[0, 3:] != 0).all()


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU", "RNN_RELU"])
def test_word_language_model(rnn_type):
    got = compare(run_word_language_model, rnn_type, rtol=2e-4, atol=2e-5)
    assert got["n_params"] == 10  # the tied weight counts once


def test_annotated_transformer():
    got = compare(run_annotated_transformer, rtol=5e-4, atol=5e-5)
    assert got["decode"].dtype == framework.int64 and got["decode"].shape == (1, 6)


def run_ctc_edge_cases(torch):
    F = torch.nn.functional
    x = data(torch, 70, 6, 4, 5, dtype=torch.float64).requires_grad_()
    log_probs = x.log_softmax(2)
    # a blank inside a target, an empty input with an empty target, an empty input that
    # cannot emit its target (inf, zeroed by zero_infinity), a repeated label
    targets = torch.tensor([[1, 0, 2], [0, 0, 0], [3, 3, 0], [2, 1, 4]])
    input_lengths = torch.tensor([6, 0, 5, 0])
    target_lengths = torch.tensor([3, 0, 2, 1])
    loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="none",
                      zero_infinity=True)
    loss.sum().backward()
    raw = F.ctc_loss(log_probs.detach(), targets, input_lengths, target_lengths,
                     reduction="none")
    return loss, x.grad, raw


def test_ctc_loss_edge_cases():
    got = compare(run_ctc_edge_cases, rtol=1e-6, atol=1e-9)
    assert got[2][3].item() == float("inf")


@pytest.mark.parametrize("case, message", [
    ("negative input length", "Expected input_lengths to have value at least 0, but got value -1"),
    ("negative target length", "Expected target_lengths to have value at least 0, but got"),
    ("float lengths", "input_lengths must be integral"),
    ("4-d log_probs", "Expected 3-dimensional tensor, but got 4-dimensional tensor"),
])
def test_ctc_loss_bad_input(case, message):
    torch = pytest.importorskip("torch")
    for mod in (torch, framework):
        F = mod.nn.functional
        lp = mod.zeros(4, 1, 3).log_softmax(2)
        targets, in_len, tgt_len = mod.tensor([[1, 2]]), mod.tensor([4]), mod.tensor([2])
        if case == "negative input length":
            in_len = mod.tensor([-1])
        elif case == "negative target length":
            tgt_len = mod.tensor([-1])
        elif case == "float lengths":
            in_len = mod.tensor([4.0])
        else:
            lp = lp.unsqueeze(-1)
        if mod is torch and case == "4-d log_probs":
            continue  # PyTorch names the dimension after its own unsqueeze (5)
        with pytest.raises(RuntimeError, match=message):
            F.ctc_loss(lp, targets, in_len, tgt_len)
