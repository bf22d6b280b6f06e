"""Time-series and raw-audio generative research code, run unchanged under the framework
and PyTorch: TCN with weight norm, an LSTM forecaster with teacher forcing, N-BEATS, RevIN,
PatchTST patching and the pinball loss; WaveNet with mu-law companding and incremental
generation. Features, SpecAugment, conformer/CTC and wav2vec are in
test_script_audio_timeseries.py.
"""
import math

import numpy as np
import pytest

from script_harness import compare, data, init_params

pytest.importorskip("torch")


# --- 5. time series: TCN, LSTM forecaster, N-BEATS, RevIN, PatchTST, pinball loss ------

def run_time_series(torch, steps=2):
    nn = torch.nn
    F = torch.nn.functional
    weight_norm = nn.utils.weight_norm

    class Chomp1d(nn.Module):
        def __init__(self, chomp_size):
            super().__init__()
            self.chomp_size = chomp_size

        def forward(self, x):
            return x[:, :, :-self.chomp_size].contiguous()

    class TemporalBlock(nn.Module):
        def __init__(self, n_in, n_out, k, dilation):
            super().__init__()
            pad = (k - 1) * dilation
            self.net = nn.Sequential(
                weight_norm(nn.Conv1d(n_in, n_out, k, padding=pad, dilation=dilation)),
                Chomp1d(pad), nn.ReLU(), nn.Dropout(0.0),
                weight_norm(nn.Conv1d(n_out, n_out, k, padding=pad, dilation=dilation)),
                Chomp1d(pad), nn.ReLU(), nn.Dropout(0.0))
            self.downsample = nn.Conv1d(n_in, n_out, 1) if n_in != n_out else None

        def forward(self, x):
            res = x if self.downsample is None else self.downsample(x)
            return torch.relu(self.net(x) + res)

    class RevIN(nn.Module):
        def __init__(self, n, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.affine_weight = nn.Parameter(torch.ones(n))
            self.affine_bias = nn.Parameter(torch.zeros(n))

        def forward(self, x, mode):  # x: (B, L, C)
            if mode == "norm":
                self.mean = torch.mean(x, dim=1, keepdim=True).detach()
                self.stdev = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False)
                                        + self.eps).detach()
                return (x - self.mean) / self.stdev * self.affine_weight + self.affine_bias
            x = (x - self.affine_bias) / (self.affine_weight + self.eps * self.eps)
            return x * self.stdev + self.mean

    class NBeatsBlock(nn.Module):
        def __init__(self, backcast, forecast, hidden=16, degree=2, harmonics=2):
            super().__init__()
            self.fc = nn.Sequential(nn.Linear(backcast, hidden), nn.ReLU(),
                                    nn.Linear(hidden, hidden), nn.ReLU())
            tb = torch.linspace(0, 1, backcast)
            tf = torch.linspace(0, 1, forecast)
            self.register_buffer("trend_b", torch.stack([tb ** i for i in range(degree + 1)]))
            self.register_buffer("trend_f", torch.stack([tf ** i for i in range(degree + 1)]))
            freqs = torch.arange(1, harmonics + 1).float()[:, None] * 2 * math.pi
            self.register_buffer("season_b", torch.cat([torch.cos(freqs * tb),
                                                        torch.sin(freqs * tb)]))
            self.register_buffer("season_f", torch.cat([torch.cos(freqs * tf),
                                                        torch.sin(freqs * tf)]))
            self.theta_t = nn.Linear(hidden, degree + 1, bias=False)
            self.theta_s = nn.Linear(hidden, 2 * harmonics, bias=False)

        def forward(self, x):
            h = self.fc(x)
            tt, ts = self.theta_t(h), self.theta_s(h)
            backcast = tt @ self.trend_b + ts @ self.season_b
            forecast = tt @ self.trend_f + ts @ self.season_f
            return x - backcast, forecast

    class LSTMForecaster(nn.Module):
        def __init__(self, hidden=8):
            super().__init__()
            self.encoder = nn.LSTM(1, hidden, batch_first=True)
            self.cell = nn.LSTMCell(1, hidden)
            self.proj = nn.Linear(hidden, 1)

        def forward(self, past, future=None, horizon=4):
            _, (h, c) = self.encoder(past.unsqueeze(-1))
            h, c = h[0], c[0]
            inp = past[:, -1:]
            outs = []
            for t in range(horizon):
                h, c = self.cell(inp, (h, c))
                y = self.proj(h)
                outs.append(y)
                inp = future[:, t:t + 1] if future is not None else y  # teacher forcing
            return torch.stack(outs, dim=1).squeeze(-1)

    def pinball(pred, target, quantiles):
        e = target.unsqueeze(-1) - pred
        q = torch.tensor(quantiles)
        return torch.max((q - 1) * e, q * e).mean()

    t = np.arange(64, dtype=np.float64)
    raw = np.sin(t / 4.0)[None, :] * np.array([[1.0], [2.0]]) + 0.1 * t[None, :] \
        + 0.1 * np.random.default_rng(30).standard_normal((2, 64))
    series = torch.tensor(raw, dtype=torch.float32)  # (B, T)
    windows = series.unfold(dimension=1, size=20, step=4)  # (B, n_windows, 20)
    past = windows[..., :16].reshape(-1, 16)
    future = windows[..., 16:].reshape(-1, 4)

    tcn = init_params(torch, nn.Sequential(TemporalBlock(1, 4, 3, 1), TemporalBlock(4, 4, 3, 2)),
                      seed=31)
    tcn_head = init_params(torch, nn.Linear(4, 4 * 3), seed=32)
    revin = RevIN(1)
    lstm = init_params(torch, LSTMForecaster(), seed=33)
    nbeats = init_params(torch, NBeatsBlock(16, 4), seed=34)
    patch_embed = init_params(torch, nn.Linear(4, 8), seed=35)
    patch_head = init_params(torch, nn.Linear(8 * 4, 4), seed=36)
    params = (list(tcn.parameters()) + list(tcn_head.parameters()) + list(revin.parameters())
              + list(lstm.parameters()) + list(nbeats.parameters())
              + list(patch_embed.parameters()) + list(patch_head.parameters()))
    opt = torch.optim.Adam(params, lr=1e-2)
    quantiles = [0.1, 0.5, 0.9]
    losses = []
    for _ in range(steps):
        x = revin(past.unsqueeze(-1), "norm")  # (N, 16, 1)
        feats = tcn(x.transpose(1, 2))[:, :, -1]
        q_pred = tcn_head(feats).view(-1, 4, 3)
        q_pred = revin(q_pred.permute(0, 2, 1).reshape(-1, 4, 1).view(-1, 3, 4)
                       .reshape(-1, 3 * 4, 1), "denorm").view(-1, 3, 4).permute(0, 2, 1)
        l_tcn = pinball(q_pred, future, quantiles)
        l_lstm = F.mse_loss(lstm(past, future), future)
        resid, fc = nbeats(past)
        l_nbeats = F.l1_loss(fc, future) + 0.1 * resid.abs().mean()
        patches = past.unfold(dimension=-1, size=4, step=4)  # (N, n_patch, 4)
        z = patch_embed(patches).permute(0, 2, 1)  # (N, d, n_patch)
        l_patch = F.mse_loss(patch_head(z.flatten(start_dim=1)), future)
        loss = l_tcn + l_lstm + l_nbeats + l_patch
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([l.item() for l in (l_tcn, l_lstm, l_nbeats, l_patch)])
    with torch.no_grad():
        gen = lstm(past[:2])  # autoregressive, no teacher forcing
    return {"losses": losses, "gen": gen, "windows": windows,
            "tcn": dict(tcn.state_dict()), "revin": dict(revin.state_dict())}


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
def test_time_series():
    compare(run_time_series, rtol=1e-3, atol=1e-4)


# --- 6. WaveNet: gated dilated causal convs, mu-law, incremental generation -----------

def run_wavenet(torch, steps=2):
    nn = torch.nn
    F = torch.nn.functional
    mu = 255

    def mu_law_compand(x):
        return torch.sign(x) * torch.log1p(mu * torch.abs(x)) / math.log1p(mu)

    def mu_law_encode(x):
        y = mu_law_compand(x)
        return ((y + 1) / 2 * mu + 0.5).to(torch.int64)

    def mu_law_decode(q):
        y = 2 * (q.float() / mu) - 1
        return torch.sign(y) * (torch.pow(1 + mu, torch.abs(y)) - 1) / mu

    class ResidualLayer(nn.Module):
        def __init__(self, ch, skip, dilation):
            super().__init__()
            self.dilation = dilation
            self.filt = nn.Conv1d(ch, ch, 2, dilation=dilation)
            self.gate = nn.Conv1d(ch, ch, 2, dilation=dilation)
            self.res = nn.Conv1d(ch, ch, 1)
            self.skip = nn.Conv1d(ch, skip, 1)

        def forward(self, x):
            xp = F.pad(x, (self.dilation, 0))
            z = torch.tanh(self.filt(xp)) * torch.sigmoid(self.gate(xp))
            return x + self.res(z), self.skip(z)

    class WaveNet(nn.Module):
        def __init__(self, ch=8, skip=8, dilations=(1, 2, 4, 8)):
            super().__init__()
            self.embed = nn.Embedding(mu + 1, ch)
            self.layers = nn.ModuleList([ResidualLayer(ch, skip, d) for d in dilations])
            self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(),
                                     nn.Conv1d(skip, mu + 1, 1))
            self.receptive_field = sum(dilations) + 1

        def forward(self, q):
            x = self.embed(q).transpose(1, 2)
            skips = 0
            for layer in self.layers:
                x, s = layer(x)
                skips = skips + s
            return self.out(skips)

    audio = torch.tanh(data(torch, 40, 2, 48) * 0.5)
    q = mu_law_encode(audio)
    recon = mu_law_decode(q)
    model = init_params(torch, WaveNet(), seed=41)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(steps):
        logits = model(q[:, :-1])
        loss = F.cross_entropy(logits, q[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    model.eval()
    buf = q[:1, -model.receptive_field:].clone()
    generated = []
    with torch.no_grad():
        for i in range(6):
            nxt = model(buf)[:, :, -1].argmax(dim=1)
            generated.append(nxt.item())
            if i % 2 == 0:
                buf = torch.cat([buf[:, 1:], nxt[:, None]], dim=1)
            else:
                buf = torch.roll(buf, shifts=-1, dims=1)
                buf[:, -1] = nxt
    return {"companded": mu_law_compand(audio), "q": q, "recon": recon, "buf": buf, "losses": losses, "generated": generated,
            "out_bias": model.out[3].bias}


def test_wavenet():
    compare(run_wavenet, rtol=1e-3, atol=1e-4)
