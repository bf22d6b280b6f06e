"""A model using most layers, built the same way with framework.nn and torch.nn: the
printed tree, the state_dict keys and shapes, a strict load of torch's state_dict, and the
outputs and gradients of a training-mode forward agree."""
import numpy as np
import pytest

import framework as fw
from tests.helpers import assert_close
from tests.nn.common import copy_state, to_np

torch = pytest.importorskip("torch")


def build(T):
    nn = T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding="same", groups=2, bias=False),
                nn.GroupNorm(2, 8), nn.GELU(approximate="tanh"), nn.Dropout2d(0.0),
                nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten())
            self.embed = nn.Embedding(11, 8, padding_idx=0)
            self.rnn = nn.LSTM(8, 6, num_layers=2, batch_first=True, bidirectional=True)
            self.attn = nn.MultiheadAttention(12, 3, batch_first=True)
            self.encoder = nn.TransformerEncoder(
                nn.TransformerEncoderLayer(12, 2, 16, dropout=0.0, batch_first=True,
                                           norm_first=True), 2)
            self.heads = nn.ModuleDict({
                "cls": nn.Sequential(nn.Linear(32 + 12, 16), nn.LayerNorm(16), nn.SiLU(),
                                     nn.Dropout(0.0), nn.Linear(16, 5)),
                "aux": nn.Sequential(nn.Linear(12, 4), nn.Softmax(dim=-1))})
            self.scale = nn.Parameter(T.ones(1))
            self.register_buffer("offset", T.zeros(5))

        def forward(self, img, tokens):
            f = self.features(img)
            h, _ = self.rnn(self.embed(tokens))
            h = self.encoder(h + self.attn(h, h, h, need_weights=False)[0])
            pooled = h.mean(1)
            logits = self.heads["cls"](T.cat([f, pooled], 1)) * self.scale + self.offset
            return logits, self.heads["aux"](pooled)
    return Net()


def test_print_state_dict_and_strict_load_match_torch():
    t_model, f_model = build(torch), build(fw)
    assert repr(f_model) == repr(t_model)
    t_sd, f_sd = t_model.state_dict(), f_model.state_dict()
    assert list(f_sd) == list(t_sd)
    assert [tuple(v.shape) for v in f_sd.values()] == [tuple(v.shape) for v in t_sd.values()]
    converted = {k: fw.tensor(v.numpy()) for k, v in t_sd.items()}
    result = f_model.load_state_dict(converted, strict=True)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for k, v in f_model.state_dict().items():
        np.testing.assert_array_equal(to_np(v), t_sd[k].numpy())


def test_forward_and_gradients_match_torch(device):
    torch.manual_seed(0)
    t_model, f_model = build(torch), build(fw)
    copy_state(f_model, t_model)
    f_model.to(device)
    rng = np.random.default_rng(0)
    img = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    tokens = rng.integers(0, 11, (2, 5))
    t_out = t_model(torch.tensor(img), torch.tensor(tokens))
    f_out = f_model(fw.tensor(img, device=device), fw.tensor(tokens, device=device))
    for fo, to in zip(f_out, t_out):
        assert_close(fo, to.detach().numpy(), rtol=1e-4, atol=1e-5)
    (t_out[0].square().sum() + t_out[1].sum() * 3).backward()
    (f_out[0].square().sum() + f_out[1].sum() * 3).backward()
    t_params = dict(t_model.named_parameters())
    for name, p in f_model.named_parameters():
        assert_close(p.grad, t_params[name].grad.numpy(), rtol=1e-3, atol=1e-4)
    # training mode updated BatchNorm's running statistics the same way
    t_sd = t_model.state_dict()
    for k, v in f_model.state_dict().items():
        if "running" in k or "num_batches" in k:
            assert_close(v, t_sd[k].numpy(), rtol=1e-4, atol=1e-6)
