"""Speech and audio research code, run unchanged under the framework and PyTorch.

Hand-made log-mel/MFCC features, SpecAugment, a conformer block trained with CTC and
greedy decoding, a wav2vec-style feature extractor with its contrastive loss and quantizer.
Time series and WaveNet are in test_script_timeseries_wavenet.py.
"""
import math

import numpy as np
import pytest

import framework
from script_harness import compare, data, init_params

pytest.importorskip("torch")


# --- 1. features: log-mel, MFCC, deltas, CMVN, pre-emphasis ---------------------------

def mel_filterbank(torch, n_mels, n_fft, sr):
    def hz_to_mel(f):
        return 2595.0 * torch.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    n_freqs = n_fft // 2 + 1
    all_freqs = torch.linspace(0, sr // 2, n_freqs)
    m_pts = torch.linspace(float(hz_to_mel(torch.tensor(0.0))),
                           float(hz_to_mel(torch.tensor(sr / 2.0))), n_mels + 2)
    f_pts = mel_to_hz(m_pts)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return torch.clamp(torch.min(up, down), min=0)  # (n_freqs, n_mels)


def run_features(torch, device="cpu"):
    F = torch.nn.functional
    sr, n_fft, hop, n_mels, n_mfcc = 8000, 64, 32, 10, 6
    wav = data(torch, 1, 2, 800).to(device).requires_grad_()
    emph = torch.cat([wav[:, :1], wav[:, 1:] - 0.97 * wav[:, :-1]], dim=1)
    window = torch.hann_window(n_fft).to(device)
    stft = torch.stft(emph, n_fft, hop_length=hop, window=window, return_complex=True)
    spec = stft.abs().pow(2)  # (B, n_freqs, T)
    fb = mel_filterbank(torch, n_mels, n_fft, sr).to(device)
    mel = torch.matmul(fb.T, spec)
    logmel = torch.log(torch.clamp(mel, min=1e-10))

    n_idx = torch.arange(n_mels, dtype=torch.float32)
    k_idx = torch.arange(n_mfcc, dtype=torch.float32).unsqueeze(1)
    dct = torch.cos(math.pi / n_mels * (n_idx + 0.5) * k_idx)
    dct[0] *= 1.0 / math.sqrt(2.0)
    dct *= math.sqrt(2.0 / n_mels)
    mfcc = torch.matmul(dct.to(device), logmel)  # (B, n_mfcc, T)

    # deltas: a regression over +-2 frames as a depthwise conv1d
    win = 2
    kernel = torch.arange(-win, win + 1, dtype=torch.float32, device=device)
    kernel = kernel / (2 * sum(i * i for i in range(1, win + 1)))
    padded = F.pad(mfcc, (win, win), mode="replicate")
    delta = F.conv1d(padded, kernel.repeat(n_mfcc, 1, 1), groups=n_mfcc)
    feats = torch.cat([mfcc, delta], dim=1)
    cmvn = (feats - feats.mean(dim=-1, keepdim=True)) / (feats.std(dim=-1, keepdim=True) + 1e-5)
    loss = cmvn.pow(2).mean() + logmel.mean()
    loss.backward()
    return {"fb": fb, "logmel": logmel, "mfcc": mfcc, "delta": delta, "cmvn": cmvn,
            "loss": loss, "grad": wav.grad, "shape": list(spec.shape)}


def test_features(device):
    # the framework side runs on `device`, PyTorch (a CPU build) on cpu
    compare(lambda mod: run_features(mod, device if mod is framework else "cpu"),
            rtol=1e-3, atol=1e-4)


# --- 2. SpecAugment, mixup, random gain ----------------------------------------------

def run_augment(torch):
    rng = np.random.default_rng(7)
    spec = data(torch, 2, 2, 12, 20)  # (B, F, T)
    B, n_freq, T = spec.shape
    aug = spec.clone()
    for b in range(B):
        f = int(rng.integers(0, 4))
        f0 = int(rng.integers(0, n_freq - f))
        freq_mask = (torch.arange(n_freq) >= f0) & (torch.arange(n_freq) < f0 + f)
        aug[b].masked_fill_(freq_mask[:, None], 0.0)
        t = int(rng.integers(1, 6))
        t0 = int(rng.integers(0, T - t))
        time_mask = (torch.arange(T)[None, :] >= t0) & (torch.arange(T)[None, :] < t0 + t)
        aug[b].masked_fill_(time_mask, aug[b].mean().item())
    wav = data(torch, 3, 4, 100)
    lam = float(rng.beta(0.4, 0.4))
    perm = torch.from_numpy(rng.permutation(4))
    mixed = lam * wav + (1 - lam) * wav[perm]
    gain_db = torch.from_numpy(rng.uniform(-6, 6, size=(4, 1))).float()
    gained = mixed * torch.pow(10.0, gain_db / 20.0)
    return {"aug": aug, "mixed": mixed, "gained": gained.clamp(-1, 1)}


def test_augment():
    compare(run_augment)


# --- 3 and 7. conformer block and a CTC ASR step ---------------------------------------

def make_conformer(torch):
    nn = torch.nn
    F = torch.nn.functional

    class FeedForward(nn.Module):
        def __init__(self, d, mult=2):
            super().__init__()
            self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d * mult), nn.SiLU(),
                                     nn.Dropout(0.0), nn.Linear(d * mult, d), nn.Dropout(0.0))

        def forward(self, x):
            return self.net(x)

    class RelPositionalEncoding(nn.Module):
        def __init__(self, d, max_len=64):
            super().__init__()
            pos = torch.arange(max_len - 1, -max_len, -1.0).unsqueeze(1)
            div = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
            pe = torch.zeros(2 * max_len - 1, d)
            pe[:, 0::2] = torch.sin(pos * div)
            pe[:, 1::2] = torch.cos(pos * div)
            self.register_buffer("pe", pe.unsqueeze(0), persistent=False)
            self.max_len = max_len

        def forward(self, T):
            c = self.max_len - 1
            return self.pe[:, c - T + 1:c + T]  # (1, 2T-1, d), positions T-1 .. -(T-1)

    class RelMultiHeadAttention(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h, self.dk = h, d // h
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.pos = nn.Linear(d, d, bias=False)
            self.pos_bias_u = nn.Parameter(torch.zeros(h, self.dk))
            self.pos_bias_v = nn.Parameter(torch.zeros(h, self.dk))
            self.out = nn.Linear(d, d)

        @staticmethod
        def rel_shift(x):
            b, h, t, n = x.size()
            x = F.pad(x, (1, 0))
            x = x.view(b, h, n + 1, t)[:, :, 1:].view(b, h, t, n)
            return x[:, :, :, : n // 2 + 1]

        def forward(self, x, pos_emb, key_padding_mask):
            B, T, _ = x.shape
            q = self.q(x).view(B, T, self.h, self.dk)
            k = self.k(x).view(B, T, self.h, self.dk).transpose(1, 2)
            v = self.v(x).view(B, T, self.h, self.dk).transpose(1, 2)
            p = self.pos(pos_emb).view(1, -1, self.h, self.dk).transpose(1, 2)
            ac = torch.matmul((q + self.pos_bias_u).transpose(1, 2), k.transpose(-2, -1))
            bd = torch.matmul((q + self.pos_bias_v).transpose(1, 2), p.transpose(-2, -1))
            bd = self.rel_shift(bd)
            scores = (ac + bd) / math.sqrt(self.dk)
            scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
            attn = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(attn, v).transpose(1, 2).contiguous().view(B, T, -1)
            return self.out(ctx)

    class ConvModule(nn.Module):
        def __init__(self, d, k=5):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.pw1 = nn.Conv1d(d, 2 * d, 1)
            self.dw = nn.Conv1d(d, d, k, padding=(k - 1) // 2, groups=d)
            self.bn = nn.BatchNorm1d(d)
            self.act = nn.SiLU()
            self.pw2 = nn.Conv1d(d, d, 1)

        def forward(self, x, pad_mask):
            x = self.ln(x).transpose(1, 2)
            x = F.glu(self.pw1(x), dim=1)
            x = x.masked_fill(pad_mask[:, None, :], 0.0)
            x = self.pw2(self.act(self.bn(self.dw(x))))
            return x.transpose(1, 2)

    class ConformerBlock(nn.Module):
        def __init__(self, d=8, h=2):
            super().__init__()
            self.ff1, self.ff2 = FeedForward(d), FeedForward(d)
            self.ln_att = nn.LayerNorm(d)
            self.att = RelMultiHeadAttention(d, h)
            self.conv = ConvModule(d)
            self.ln_out = nn.LayerNorm(d)

        def forward(self, x, pos_emb, pad_mask):
            x = x + 0.5 * self.ff1(x)
            x = x + self.att(self.ln_att(x), pos_emb, pad_mask)
            x = x + self.conv(x, pad_mask)
            x = x + 0.5 * self.ff2(x)
            return self.ln_out(x)

    class CTCModel(nn.Module):
        def __init__(self, n_in=6, d=8, vocab=5):
            super().__init__()
            self.inp = nn.Linear(n_in, d)
            self.pos = RelPositionalEncoding(d)
            self.block = ConformerBlock(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, feats, lengths):
            T = feats.size(1)
            pad_mask = torch.arange(T)[None, :] >= lengths[:, None]
            x = self.block(self.inp(feats), self.pos(T), pad_mask)
            return self.head(x)

    return CTCModel


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(b) + 1):
            cur = d[j]
            d[j] = min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] != b[j - 1]))
            prev = cur
    return d[len(b)]


def run_conformer_ctc(torch, steps=2):
    F = torch.nn.functional
    model = init_params(torch, make_conformer(torch)(), seed=11)
    # SGD, not Adam: the key bias has a zero gradient in exact arithmetic (softmax is
    # shift-invariant) and Adam would blow its rounding noise up to full steps
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    feats = data(torch, 12, 2, 10, 6)
    lengths = torch.tensor([10, 7])
    targets = data(torch, 13, 2, 3, kind="int", high=4) + 1  # blank is 0
    target_lengths = torch.tensor([3, 2])
    losses = []
    for _ in range(steps):
        logits = model(feats, lengths)
        log_probs = logits.log_softmax(-1).transpose(0, 1)
        loss = F.ctc_loss(log_probs, targets, lengths, target_lengths, blank=0,
                          zero_infinity=True)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        best = model(feats, lengths).argmax(-1)
    hyps, dists = [], []
    for b in range(best.size(0)):
        ids = torch.unique_consecutive(best[b, :lengths[b]])
        ids = ids[ids != 0].tolist()
        hyps.append(ids)
        dists.append(edit_distance(ids, targets[b, :target_lengths[b]].tolist()))
    return {"losses": losses, "hyps": hyps, "dists": dists, "eval_out": best,
            "state": dict(model.state_dict())}


def test_conformer_ctc():
    compare(run_conformer_ctc, rtol=1e-3, atol=1e-4)


def test_edit_distance():
    assert edit_distance([1, 2, 3], [1, 3]) == 1
    assert edit_distance([], [4, 4]) == 2


# --- 4. wav2vec-style feature extractor, contrastive loss, Gumbel quantizer -----------

def run_wav2vec(torch):
    nn = torch.nn
    F = torch.nn.functional

    class FeatureExtractor(nn.Module):
        def __init__(self, layers=((8, 10, 5), (8, 3, 2), (8, 2, 2))):
            super().__init__()
            blocks, c_in = [], 1
            for i, (c, k, s) in enumerate(layers):
                mods = [nn.Conv1d(c_in, c, k, stride=s, bias=False)]
                if i == 0:
                    mods.append(nn.GroupNorm(num_groups=c, num_channels=c, affine=True))
                mods.append(nn.GELU())
                blocks.append(nn.Sequential(*mods))
                c_in = c
            self.conv_layers = nn.ModuleList(blocks)

        def forward(self, wav):
            x = wav.unsqueeze(1)
            for conv in self.conv_layers:
                x = conv(x)
            return x

    class PosConv(nn.Module):
        def __init__(self, d, k=4, groups=2):
            super().__init__()
            conv = nn.Conv1d(d, d, k, padding=k // 2, groups=groups)
            self.conv = nn.utils.parametrizations.weight_norm(conv, name="weight", dim=2)
            self.k = k

        def forward(self, x):  # (B, T, C)
            y = self.conv(x.transpose(1, 2))
            if self.k % 2 == 0:
                y = y[:, :, :-1]
            return x + F.gelu(y).transpose(1, 2)

    class GumbelVQ(nn.Module):
        def __init__(self, d, groups=2, num_vars=4, vq_dim=6):
            super().__init__()
            self.groups, self.num_vars = groups, num_vars
            self.vars = nn.Parameter(torch.zeros(1, groups * num_vars, vq_dim // groups))
            self.weight_proj = nn.Linear(d, groups * num_vars)

        def forward(self, x):
            B, T, _ = x.shape
            x = self.weight_proj(x).view(B * T * self.groups, -1)
            _, k = x.max(-1)
            hard = x.new_zeros(*x.shape).scatter_(-1, k.view(-1, 1), 1.0)
            hard = hard.view(B * T, self.groups, -1)
            avg_probs = torch.softmax(x.view(B * T, self.groups, -1).float(), dim=-1).mean(0)
            perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-7),
                                              dim=-1)).sum()
            x = hard.view(B * T, -1)
            q = x.unsqueeze(-1) * self.vars
            q = q.view(B * T, self.groups, self.num_vars, -1).sum(-2).view(B, T, -1)
            return q, perplexity, k.view(B, T, self.groups)

    extractor = init_params(torch, FeatureExtractor(), seed=20)
    layer_norm = init_params(torch, nn.LayerNorm(8), seed=21)
    post_proj = init_params(torch, nn.Linear(8, 6), seed=26)
    pos_conv = init_params(torch, PosConv(6), seed=22)
    vq = init_params(torch, GumbelVQ(8), seed=23)
    wav = data(torch, 24, 2, 400)
    feats = layer_norm(extractor(wav).transpose(1, 2))  # (B, T, C)
    x = pos_conv(post_proj(feats))
    vq.eval()
    targets, perplexity, codes = vq(feats)  # the quantizer sees the normalised features

    # contrastive loss: 3 distractors per step drawn from the same utterance by NumPy
    rng = np.random.default_rng(25)
    B, T, C = x.shape
    n_neg = 3
    neg_idx = rng.integers(0, T - 1, size=(B, T * n_neg))
    neg_idx[neg_idx >= np.repeat(np.arange(T), n_neg)[None, :]] += 1  # never the positive
    neg_idx = torch.from_numpy(neg_idx + np.arange(B)[:, None] * T).view(-1)
    negs = targets.reshape(B * T, C)[neg_idx].view(B, T, n_neg, C).permute(2, 0, 1, 3)
    y = targets.unsqueeze(0)
    cands = torch.cat([y, negs], dim=0)
    logits = F.cosine_similarity(x.float().unsqueeze(0), cands.float(), dim=-1) / 0.1
    logits = logits.transpose(0, 2).reshape(-1, logits.size(0))
    target = logits.new_zeros(logits.size(0), dtype=torch.long)
    loss = F.cross_entropy(logits, target, reduction="sum")
    loss.backward()
    return {"feats": feats, "x": x, "targets": targets, "perplexity": perplexity,
            "codes": codes, "logits": logits, "loss": loss,
            "g_conv0": extractor.conv_layers[0][0].weight.grad,
            "g_g": pos_conv.conv.parametrizations.weight.original0.grad,
            "g_v": pos_conv.conv.parametrizations.weight.original1.grad,
            "pos_conv_keys": len(pos_conv.state_dict()),
            "g_vars": vq.vars.grad}


def test_wav2vec():
    compare(run_wav2vec, rtol=1e-3, atol=1e-4)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
def test_weight_norm_dim_out_of_range():
    # the old API wrapped dim modulo ndim and normalised the wrong axis silently
    torch = pytest.importorskip("torch")
    for lib in (framework, torch):
        for weight_norm in (lib.nn.utils.weight_norm, lib.nn.utils.parametrizations.weight_norm):
            with pytest.raises(IndexError, match=r"range of \[-3, 2\], but got 3"):
                weight_norm(lib.nn.Conv1d(2, 2, 3), dim=3)
    conv = framework.nn.utils.weight_norm(framework.nn.Conv1d(2, 2, 3), dim=-2)
    assert tuple(conv.weight_g.shape) == (1, 2, 1)
