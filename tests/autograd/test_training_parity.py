"""End to end: a small attention + MLP block trained a few steps with a hand-written Adam
(masked_fill, logsumexp, gather, layer norm by hand, in-place optimizer updates under
no_grad) gives the losses and parameters torch gives."""
import math

import numpy as np
import pytest

import framework as fw

torch = pytest.importorskip("torch")

V, D, L, B = 11, 8, 5, 2
RNG = np.random.default_rng(2)
P0 = {"emb": RNG.standard_normal((V, D)) * 0.5, "wq": RNG.standard_normal((D, D)) * 0.3,
      "wk": RNG.standard_normal((D, D)) * 0.3, "wv": RNG.standard_normal((D, D)) * 0.3,
      "w1": RNG.standard_normal((D, 16)) * 0.3, "b1": np.zeros(16),
      "w2": RNG.standard_normal((16, D)) * 0.3, "g": np.ones(D), "beta": np.zeros(D),
      "out": RNG.standard_normal((D, V)) * 0.3}
TOK = RNG.integers(0, V, (B, L))
TGT = RNG.integers(0, V, (B, L))
KEEP = RNG.random((B, L, 16)) > 0.1          # a fixed dropout mask


def train(T, device, steps=3):
    kw = {"device": device} if T is fw else {}
    P = {k: T.tensor(v, requires_grad=True, **kw) for k, v in P0.items()}
    m = {k: T.zeros_like(v) for k, v in P.items()}
    s = {k: T.zeros_like(v) for k, v in P.items()}
    tok, tgt, keep = T.tensor(TOK, **kw), T.tensor(TGT, **kw), T.tensor(KEEP, **kw)
    causal = T.ones(L, L, dtype=T.bool, **kw).triu(1)
    losses = []
    for step in range(1, steps + 1):
        x = P["emb"][tok]
        q, k, v = x @ P["wq"], x @ P["wk"], x @ P["wv"]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D)
        att = att.masked_fill(causal, float("-inf"))
        att = (att - att.amax(-1, keepdim=True)).exp()
        x = x + (att / att.sum(-1, keepdim=True)) @ v
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        x = (x - mu) / (var + 1e-5).sqrt() * P["g"] + P["beta"]
        h = x @ P["w1"] + P["b1"]
        h = 0.5 * h * (1 + T.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
        x = x + (h * keep / 0.9) @ P["w2"]
        logits = x @ P["out"]
        logp = logits - logits.logsumexp(-1, keepdim=True)
        loss = -logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1).mean()
        for p in P.values():
            p.grad = None
        loss.backward()
        with T.no_grad():
            for n, p in P.items():
                m[n].mul_(0.9).add_(p.grad, alpha=0.1)
                s[n].mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                mh, sh = m[n] / (1 - 0.9 ** step), s[n] / (1 - 0.999 ** step)
                p.addcdiv_(mh, sh.sqrt().add_(1e-8), value=-0.01)
        losses.append(loss.item())
    return losses, {k: v.detach().cpu().numpy() for k, v in P.items()}


def test_training_matches_torch(device):
    ours, params = train(fw, device)
    ref, ref_params = train(torch, None)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)
    for k in P0:
        np.testing.assert_allclose(params[k], ref_params[k], rtol=1e-10, atol=1e-12)
