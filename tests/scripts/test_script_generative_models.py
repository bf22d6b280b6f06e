"""Generative-model research code, run unchanged under the framework and under PyTorch:
diffusion and score-model extras (DDIM, classifier-free guidance, v-prediction, EDM,
Karras/Euler/Heun, model EMA, AdaGN, attention), Glow flows and autoregressive models
(PixelCNN, MADE).

Each workload is a research repo's idiom shrunk to 8x8 images and two or three steps;
data, weights and noise come from NumPy. GANs, StyleGAN, VQ-VAE and Gumbel-softmax are
in test_script_generative.py.
"""
import math

import numpy as np

from script_harness import compare, data, init_params


# 1. Score-based / diffusion extras -----------------------------------------------------

def diffusion_unet(torch):
    """A tiny conditional eps/v-model: AdaGN, SiLU, attention, null label for CFG."""
    nn, F = torch.nn, torch.nn.functional

    class AdaGNBlock(nn.Module):
        def __init__(self, ch, emb_dim):
            super().__init__()
            self.norm = nn.GroupNorm(2, ch, affine=False)
            self.emb = nn.Linear(emb_dim, 2 * ch)
            self.conv = nn.Conv2d(ch, ch, 3, padding=1)

        def forward(self, x, emb):
            scale, shift = self.emb(F.silu(emb))[:, :, None, None].chunk(2, dim=1)
            h = self.norm(x) * (1 + scale) + shift
            return x + self.conv(F.silu(h))

    class Attention(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.norm = nn.GroupNorm(2, ch)
            self.qkv = nn.Conv2d(ch, 3 * ch, 1)
            self.proj = nn.Conv2d(ch, ch, 1)

        def forward(self, x):
            B, C, H, W = x.shape
            q, k, v = self.qkv(self.norm(x)).chunk(3, dim=1)
            q, k, v = (t.reshape(B, C, H * W).transpose(1, 2) for t in (q, k, v))
            h = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None])[:, 0]
            return x + self.proj(h.transpose(1, 2).reshape(B, C, H, W))

    class Net(nn.Module):
        def __init__(self, num_classes=3, ch=4, emb_dim=8):
            super().__init__()
            self.emb_dim = emb_dim
            self.label_emb = nn.Embedding(num_classes + 1, emb_dim)  # last row: null label
            self.null_label = num_classes
            self.time_mlp = nn.Sequential(nn.Linear(emb_dim, emb_dim), nn.SiLU(),
                                          nn.Linear(emb_dim, emb_dim))
            self.inp = nn.Conv2d(2, ch, 3, padding=1)
            self.block = AdaGNBlock(ch, emb_dim)
            self.attn = Attention(ch)
            self.out = nn.Conv2d(ch, 2, 3, padding=1)

        def forward(self, x, t, y):
            half = self.emb_dim // 2
            freqs = torch.exp(-math.log(10000) * torch.arange(half, device=x.device) / half)
            args = t.float()[:, None] * freqs[None]
            temb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
            emb = self.time_mlp(temb) + self.label_emb(y)
            return self.out(F.silu(self.attn(self.block(self.inp(x), emb))))

    return init_params(torch, Net(), seed=100)


def diffusion_training(torch):
    F = torch.nn.functional
    device = "cpu"
    T, B = 10, 4
    betas = torch.linspace(1e-4, 0.2, T, dtype=torch.float64)
    alphas_cumprod = torch.cumprod(1.0 - betas, dim=0).float().to(device)
    model = diffusion_unet(torch).to(device)
    ema = diffusion_unet(torch).to(device)
    ema.load_state_dict(model.state_dict())
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    log = []
    for step in range(2):
        x0 = data(torch, 110 + step, B, 2, 8, 8).to(device)
        y = data(torch, 120 + step, B, kind="int", high=3).to(device)
        # drop labels for classifier-free guidance training
        drop = torch.tensor(np.random.default_rng(step).random(B) < 0.5, device=device)
        y = torch.where(drop, torch.full_like(y, model.null_label), y)
        t = torch.from_numpy(np.random.default_rng(130 + step).integers(0, T, size=B)).to(device)
        noise = data(torch, 140 + step, B, 2, 8, 8).to(device)
        a = alphas_cumprod[t].view(-1, 1, 1, 1)
        x_t = torch.sqrt(a) * x0 + torch.sqrt(1 - a) * noise
        v_target = a.sqrt() * noise - (1 - a).sqrt() * x0
        loss = F.mse_loss(model(x_t, t, y), v_target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            for p_ema, p in zip(ema.parameters(), model.parameters()):
                p_ema.copy_(p_ema * 0.9 + p * (1 - 0.9))
            for b_ema, b in zip(ema.buffers(), model.buffers()):
                b_ema.copy_(b)
        log.append(loss.item())
    return log, model.state_dict(), ema.state_dict()


def test_diffusion_training():
    compare(diffusion_training, rtol=1e-3, atol=1e-5)


def ddim_cfg_sampling(torch):
    T, steps, w, eta = 10, 3, 2.0, 0.0
    model = diffusion_unet(torch).eval()
    betas = torch.linspace(1e-4, 0.2, T)
    alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
    timesteps = list(range(0, T, T // steps))[::-1]
    x = data(torch, 150, 2, 2, 8, 8)
    y = torch.tensor([0, 2])
    null = torch.full_like(y, model.null_label)
    traj = []
    with torch.no_grad():
        for i, t in enumerate(timesteps):
            t_prev = timesteps[i + 1] if i + 1 < len(timesteps) else -1
            a_t = alphas_cumprod[t]
            a_prev = alphas_cumprod[t_prev] if t_prev >= 0 else torch.tensor(1.0)
            tt = torch.full((x.shape[0],), t, dtype=torch.long)
            eps_cond, eps_uncond = model(torch.cat([x, x]), torch.cat([tt, tt]),
                                         torch.cat([y, null])).chunk(2)
            eps = eps_uncond + w * (eps_cond - eps_uncond)
            x0_pred = (x - torch.sqrt(1 - a_t) * eps) / torch.sqrt(a_t)
            x0_pred = x0_pred.clamp(-1, 1)
            sigma = eta * torch.sqrt((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev))
            dir_xt = torch.sqrt(1 - a_prev - sigma ** 2) * eps
            x = torch.sqrt(a_prev) * x0_pred + dir_xt
            traj.append(x.clone())
    return traj, timesteps


def test_ddim_cfg_sampling():
    compare(ddim_cfg_sampling, rtol=1e-3, atol=1e-5)


def edm(torch):
    """EDM (Karras et al. 2022): preconditioning, sigma schedule, Heun sampler, DSM loss."""
    nn, F = torch.nn, torch.nn.functional
    sigma_data, sigma_min, sigma_max, rho = 0.5, 0.002, 80.0, 7.0

    class Denoiser(nn.Module):
        def __init__(self):
            super().__init__()
            self.F = diffusion_unet(torch)

        def forward(self, x, sigma, y):
            sigma = sigma.reshape(-1, 1, 1, 1)
            c_skip = sigma_data ** 2 / (sigma ** 2 + sigma_data ** 2)
            c_out = sigma * sigma_data / (sigma ** 2 + sigma_data ** 2).sqrt()
            c_in = 1 / (sigma_data ** 2 + sigma ** 2).sqrt()
            c_noise = sigma.log() / 4
            F_x = self.F(c_in * x, c_noise.flatten(), y)
            return c_skip * x + c_out * F_x.to(torch.float32)

    D = Denoiser()
    opt = torch.optim.Adam(D.parameters(), lr=1e-3)
    log = []
    for step in range(2):
        x0 = data(torch, 160 + step, 3, 2, 8, 8)
        y = torch.tensor([0, 1, 2])
        rnd_normal = data(torch, 170 + step, 3, 1, 1, 1)
        sigma = (rnd_normal * 1.2 - 1.2).exp()
        weight = (sigma ** 2 + sigma_data ** 2) / (sigma * sigma_data) ** 2
        n = data(torch, 180 + step, 3, 2, 8, 8) * sigma.view(-1, 1, 1, 1)
        loss = (weight * ((D(x0 + n, sigma, y) - x0) ** 2)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(loss.item())

    # Karras schedule and a Heun (2nd order) sampler
    num_steps = 3
    step_indices = torch.arange(num_steps, dtype=torch.float64)
    t_steps = (sigma_max ** (1 / rho) + step_indices / (num_steps - 1)
               * (sigma_min ** (1 / rho) - sigma_max ** (1 / rho))) ** rho
    t_steps = torch.cat([t_steps, torch.zeros_like(t_steps[:1])])
    y = torch.tensor([1, 2])
    x_next = data(torch, 190, 2, 2, 8, 8).to(torch.float64) * t_steps[0]
    with torch.no_grad():
        for i, (t_cur, t_next) in enumerate(zip(t_steps[:-1], t_steps[1:])):
            x_cur = x_next
            sig = t_cur.float().expand(2)
            d_cur = (x_cur - D(x_cur.float(), sig, y).to(torch.float64)) / t_cur
            x_next = x_cur + (t_next - t_cur) * d_cur  # Euler step
            if i < num_steps - 1:
                sig = t_next.float().expand(2)
                d_prime = (x_next - D(x_next.float(), sig, y).to(torch.float64)) / t_next
                x_next = x_cur + (t_next - t_cur) * (0.5 * d_cur + 0.5 * d_prime)
    return log, t_steps, x_next


def test_edm():
    compare(edm, rtol=1e-4, atol=1e-5)


def score_matching_lerp_ema(torch):
    """Noise-conditional score network with per-sample sigma, EMA through torch.lerp."""
    nn = torch.nn
    sigmas = torch.exp(torch.linspace(math.log(1.0), math.log(0.01), 5))
    net = init_params(torch, nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.SiLU(),
                                           nn.Conv2d(4, 2, 3, padding=1)), seed=200)
    ema = [p.detach().clone() for p in net.parameters()]
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    log = []
    for step in range(3):
        x = data(torch, 201 + step, 4, 2, 8, 8)
        labels = torch.from_numpy(np.random.default_rng(step).integers(0, 5, size=4))
        used_sigmas = sigmas[labels].view(x.shape[0], *([1] * len(x.shape[1:])))
        z = data(torch, 210 + step, *x.shape)
        perturbed = x + z * used_sigmas
        target = -1 / (used_sigmas ** 2) * (perturbed - x)
        scores = net(perturbed) / used_sigmas
        loss = (0.5 * ((scores - target) ** 2).sum(dim=(1, 2, 3)) * used_sigmas.squeeze() ** 2)
        loss = loss.mean(dim=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for e, p in zip(ema, net.parameters()):
                e.lerp_(p, 0.1)
            lerped = torch.lerp(ema[0], net[0].weight, torch.full_like(ema[0], 0.3))
        log.append(loss.item())
    return log, ema, lerped


def test_score_matching_lerp_ema():
    compare(score_matching_lerp_ema, rtol=1e-3, atol=1e-5)


# 2. Glow -------------------------------------------------------------------------------

def glow(torch):
    nn, F = torch.nn, torch.nn.functional
    logabs = lambda x: torch.log(torch.abs(x))

    def squeeze(x):
        B, C, H, W = x.shape
        x = x.view(B, C, H // 2, 2, W // 2, 2).permute(0, 1, 3, 5, 2, 4)
        return x.reshape(B, C * 4, H // 2, W // 2)

    def unsqueeze(x):
        B, C, H, W = x.shape
        x = x.view(B, C // 4, 2, 2, H, W).permute(0, 1, 4, 2, 5, 3)
        return x.reshape(B, C // 4, H * 2, W * 2)

    class ActNorm(nn.Module):
        def __init__(self, in_channel):
            super().__init__()
            self.loc = nn.Parameter(torch.zeros(1, in_channel, 1, 1))
            self.scale = nn.Parameter(torch.ones(1, in_channel, 1, 1))
            self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

        def initialize(self, input):
            with torch.no_grad():
                flatten = input.permute(1, 0, 2, 3).contiguous().view(input.shape[1], -1)
                mean = flatten.mean(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
                std = flatten.std(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
                self.loc.data.copy_(-mean)
                self.scale.data.copy_(1 / (std + 1e-6))

        def forward(self, input):
            _, _, height, width = input.shape
            if self.initialized.item() == 0:
                self.initialize(input)
                self.initialized.fill_(1)
            logdet = height * width * torch.sum(logabs(self.scale))
            return self.scale * (input + self.loc), logdet

        def reverse(self, output):
            return output / self.scale - self.loc

    class InvConv2d(nn.Module):
        def __init__(self, weight):
            super().__init__()
            self.weight = nn.Parameter(weight.unsqueeze(2).unsqueeze(3))

        def forward(self, input):
            _, C, height, width = input.shape
            out = F.conv2d(input, self.weight)
            logdet = (height * width
                      * torch.linalg.slogdet(self.weight.squeeze().double())[1].float())
            return out, logdet

        def reverse(self, output):
            return F.conv2d(output, self.weight.squeeze().inverse().unsqueeze(2).unsqueeze(3))

    class InvConv2dLU(nn.Module):
        def __init__(self, weight):
            super().__init__()
            w_p, w_l, w_u = torch.linalg.lu(weight)
            w_s = torch.diag(w_u)
            w_u = torch.triu(w_u, 1)
            u_mask = torch.triu(torch.ones_like(w_u), 1)
            l_mask = u_mask.T
            self.register_buffer("w_p", w_p)
            self.register_buffer("u_mask", u_mask)
            self.register_buffer("l_mask", l_mask)
            self.register_buffer("s_sign", torch.sign(w_s))
            self.register_buffer("l_eye", torch.eye(l_mask.shape[0]))
            self.w_l = nn.Parameter(w_l)
            self.w_s = nn.Parameter(logabs(w_s))
            self.w_u = nn.Parameter(w_u)

        def calc_weight(self):
            weight = self.w_p @ (self.w_l * self.l_mask + self.l_eye) @ (
                (self.w_u * self.u_mask) + torch.diag_embed(self.s_sign * torch.exp(self.w_s)))
            return weight.unsqueeze(2).unsqueeze(3)

        def forward(self, input):
            _, _, height, width = input.shape
            out = F.conv2d(input, self.calc_weight())
            return out, height * width * torch.sum(self.w_s)

        def reverse(self, output):
            weight = self.calc_weight()
            return F.conv2d(output, weight.squeeze().inverse().unsqueeze(2).unsqueeze(3))

    class AffineCoupling(nn.Module):
        def __init__(self, C):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(C // 2, 4, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(4, C, 3, padding=1))

        def forward(self, input):
            in_a, in_b = input.chunk(2, 1)
            log_s, t = self.net(in_a).chunk(2, 1)
            s = torch.sigmoid(log_s + 2)
            out_b = (in_b + t) * s
            logdet = torch.sum(torch.log(s).view(input.shape[0], -1), 1)
            return torch.cat([in_a, out_b], 1), logdet

        def reverse(self, output):
            out_a, out_b = output.chunk(2, 1)
            log_s, t = self.net(out_a).chunk(2, 1)
            s = torch.sigmoid(log_s + 2)
            return torch.cat([out_a, out_b / s - t], 1)

    class Flow(nn.Module):
        def __init__(self, C, weight, lu):
            super().__init__()
            self.actnorm = ActNorm(C)
            self.invconv = InvConv2dLU(weight) if lu else InvConv2d(weight)
            self.coupling = AffineCoupling(C)

        def forward(self, x):
            out, logdet = self.actnorm(x)
            out, det1 = self.invconv(out)
            out, det2 = self.coupling(out)
            return out, logdet + det1 + det2

        def reverse(self, out):
            return self.actnorm.reverse(self.invconv.reverse(self.coupling.reverse(out)))

    C = 8  # a 2-channel 8x8 image squeezed to 8 channels at 4x4
    rng = np.random.default_rng(300)
    weights = [torch.tensor(np.linalg.qr(rng.standard_normal((C, C)))[0], dtype=torch.float32)
               for _ in range(2)]
    flows = nn.ModuleList([Flow(C, weights[0], lu=False), Flow(C, weights[1], lu=True)])
    for i, f in enumerate(flows):
        init_params(torch, f.coupling, seed=310 + i)
    opt = torch.optim.Adam(flows.parameters(), lr=1e-2)
    n_bins, n_pixel = 2.0 ** 5, 2 * 8 * 8
    log = []
    for step in range(2):
        x = data(torch, 320 + step, 4, 2, 8, 8, kind="uniform") - 0.5
        x = x + data(torch, 330 + step, *x.shape, kind="uniform") / n_bins
        out, logdet = squeeze(x), 0
        for f in flows:
            out, det = f(out)
            logdet = logdet + det
        log_p = (-0.5 * (out ** 2 + math.log(2 * math.pi))).view(x.shape[0], -1).sum(1)
        ll = -math.log(n_bins) * n_pixel + logdet + log_p
        bpd = (-ll / (math.log(2) * n_pixel)).mean()
        opt.zero_grad()
        bpd.backward()
        opt.step()
        log.append([bpd.item(), logdet.mean().item()])
        if step == 0:
            act_init = [flows[0].actnorm.loc.clone(), flows[0].actnorm.initialized.item()]
    with torch.no_grad():
        out = squeeze(x)
        for f in flows:
            out, _ = f(out)
        rec = out
        for f in reversed(flows):
            rec = f.reverse(rec)
        rec = unsqueeze(rec)
    return log, act_init, flows.state_dict(), (rec - x).abs().max() < 1e-4, rec


def test_glow():
    compare(glow, rtol=1e-3, atol=1e-5)


# 3. Autoregressive image models --------------------------------------------------------

def pixelcnn(torch):
    nn, F = torch.nn, torch.nn.functional

    class MaskedConv2d(nn.Conv2d):
        def __init__(self, mask_type, *args, **kwargs):
            super().__init__(*args, **kwargs)
            assert mask_type in {'A', 'B'}
            self.register_buffer('mask', self.weight.data.clone())
            _, _, kH, kW = self.weight.size()
            self.mask.fill_(1)
            self.mask[:, :, kH // 2, kW // 2 + (mask_type == 'B'):] = 0
            self.mask[:, :, kH // 2 + 1:] = 0

        def forward(self, x):
            self.weight.data *= self.mask
            return super().forward(x)

    C, fm = 1, 4
    net = nn.Sequential(
        MaskedConv2d('A', C, fm, 5, 1, 2, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d('B', fm, fm, 3, 1, 1, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        nn.Conv2d(fm, 256 * C, 1))
    init_params(torch, net, seed=400)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    log = []
    for step in range(2):
        target = data(torch, 410 + step, 2, C, 8, 8, kind="int", high=256)
        x = target.float() / 255.0
        B, _, H, W = x.shape
        logits = net(x)
        loss = F.cross_entropy(logits.view(B, 256, C, H, W), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(loss.item())
    # causality: the output at a pixel ignores that pixel and the ones after it
    net.eval()
    x = data(torch, 420, 1, C, 8, 8, kind="uniform").requires_grad_(True)
    net(x)[0, :, 3, 4].sum().backward()
    blind = x.grad[0, 0].flatten()[3 * 8 + 4:].abs().sum()
    # sampling, pixel by pixel, with the categorical draws fed from NumPy
    sample = torch.zeros(1, C, 4, 4)
    u = np.random.default_rng(430).random((4, 4))
    with torch.no_grad():
        for i in range(4):
            for j in range(4):
                probs = F.softmax(net(sample)[:, :, i, j], dim=1)
                cdf = torch.cumsum(probs, dim=1)
                k = int((cdf[0] < float(u[i, j])).sum().item())
                sample[:, :, i, j] = min(k, 255) / 255.0
    return log, net[0].mask, net[3].mask, net[0].weight, blind, x.grad, sample


def test_pixelcnn():
    got = compare(pixelcnn, rtol=1e-3, atol=1e-5)
    assert got[4].item() == 0


def made(torch):
    nn, F = torch.nn, torch.nn.functional

    class MaskedLinear(nn.Linear):
        def __init__(self, in_features, out_features, bias=True):
            super().__init__(in_features, out_features, bias)
            self.register_buffer('mask', torch.ones(out_features, in_features))

        def set_mask(self, mask):
            self.mask.data.copy_(mask.T.to(self.mask.dtype))

        def forward(self, input):
            return F.linear(input, self.mask * self.weight, self.bias)

    nin, hidden = 4, [6, 6]
    sizes = [nin] + hidden + [nin]
    layers = []
    for h0, h1 in zip(sizes, sizes[1:]):
        layers += [MaskedLinear(h0, h1), nn.ReLU()]
    net = nn.Sequential(*layers[:-1])
    rng = np.random.default_rng(500)
    m = {-1: torch.arange(nin)}
    for l in range(len(hidden)):
        m[l] = torch.from_numpy(rng.integers(int(m[l - 1].min()), nin - 1, size=hidden[l]))
    masks = [m[l - 1][:, None] <= m[l][None, :] for l in range(len(hidden))]
    masks.append(m[len(hidden) - 1][:, None] < m[-1][None, :])
    for layer, mask in zip([l for l in net.modules() if isinstance(l, MaskedLinear)], masks):
        layer.set_mask(mask)
    init_params(torch, net, seed=501)
    opt = torch.optim.Adagrad(net.parameters(), lr=0.1)
    log = []
    for step in range(2):
        x = data(torch, 510 + step, 5, nin, kind="int", high=2).float()
        logits = net(x)
        loss = F.binary_cross_entropy_with_logits(logits, x, reduction='sum') / x.shape[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(loss.item())
    # the Jacobian is strictly lower triangular: output d depends on inputs < d only
    jac = torch.autograd.functional.jacobian(net, data(torch, 520, nin))
    return log, [mk.int() for mk in masks], jac, torch.triu(jac).abs().sum() == 0


def test_made():
    got = compare(made, rtol=1e-3, atol=1e-5)
    assert got[3].item()


def pixelcnn_pp_loss(torch):
    """PixelCNN++'s discretized mixture of logistics: loss, gradient and sampling."""
    nn, F = torch.nn, torch.nn.functional
    nr_mix = 3

    def log_sum_exp(x):
        axis = len(x.size()) - 1
        m, _ = torch.max(x, dim=axis)
        m2, _ = torch.max(x, dim=axis, keepdim=True)
        return m + torch.log(torch.sum(torch.exp(x - m2), dim=axis))

    def log_prob_from_logits(x):
        axis = len(x.size()) - 1
        m, _ = torch.max(x, dim=axis, keepdim=True)
        return x - m - torch.log(torch.sum(torch.exp(x - m), dim=axis, keepdim=True))

    def discretized_mix_logistic_loss_1d(x, l):
        x = x.permute(0, 2, 3, 1)
        l = l.permute(0, 2, 3, 1)
        xs, ls = [int(y) for y in x.size()], [int(y) for y in l.size()]
        logit_probs = l[:, :, :, :nr_mix]
        l = l[:, :, :, nr_mix:].contiguous().view(xs + [nr_mix * 2])
        means = l[:, :, :, :, :nr_mix]
        log_scales = torch.clamp(l[:, :, :, :, nr_mix:2 * nr_mix], min=-7.)
        x = x.contiguous()
        x = x.unsqueeze(-1) + torch.zeros(xs + [nr_mix], device=x.device, requires_grad=False)
        centered_x = x - means
        inv_stdv = torch.exp(-log_scales)
        plus_in = inv_stdv * (centered_x + 1. / 255.)
        cdf_plus = torch.sigmoid(plus_in)
        min_in = inv_stdv * (centered_x - 1. / 255.)
        cdf_min = torch.sigmoid(min_in)
        log_cdf_plus = plus_in - F.softplus(plus_in)
        log_one_minus_cdf_min = -F.softplus(min_in)
        cdf_delta = cdf_plus - cdf_min
        mid_in = inv_stdv * centered_x
        log_pdf_mid = mid_in - log_scales - 2. * F.softplus(mid_in)
        inner_inner_cond = (cdf_delta > 1e-5).float()
        inner_inner_out = (inner_inner_cond * torch.log(torch.clamp(cdf_delta, min=1e-12))
                           + (1. - inner_inner_cond) * (log_pdf_mid - np.log(127.5)))
        inner_cond = (x > 0.999).float()
        inner_out = inner_cond * log_one_minus_cdf_min + (1. - inner_cond) * inner_inner_out
        cond = (x < -0.999).float()
        log_probs = cond * log_cdf_plus + (1. - cond) * inner_out
        log_probs = torch.sum(log_probs, dim=3) + log_prob_from_logits(logit_probs)
        return -torch.sum(log_sum_exp(log_probs))

    net = init_params(torch, nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ELU(),
                                           nn.Conv2d(4, 3 * nr_mix, 1)), seed=700)
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    log = []
    for step in range(2):
        # 8-bit pixels rescaled to [-1, 1], a few of them at the edges
        x = data(torch, 710 + step, 2, 1, 4, 4, kind="int", high=256).float() / 127.5 - 1.
        x[:, :, 0, 0], x[:, :, 0, 1] = -1., 1.
        loss = discretized_mix_logistic_loss_1d(x, net(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(loss.item())
    # sampling: gumbel-max over the mixture, then a logistic draw, both fed from NumPy
    l = net(x).detach().permute(0, 2, 3, 1)
    ls = [int(y) for y in l.size()]
    logit_probs = l[:, :, :, :nr_mix]
    l = l[:, :, :, nr_mix:].contiguous().view(ls[:-1] + [1, nr_mix * 2])
    rng = np.random.default_rng(720)
    temp = torch.tensor(rng.uniform(1e-5, 1. - 1e-5, size=logit_probs.shape),
                        dtype=torch.float32)
    temp = logit_probs.data - torch.log(- torch.log(temp))
    _, argmax = temp.max(dim=3)
    one_hot = F.one_hot(argmax, nr_mix).float().unsqueeze(3)
    means = torch.sum(l[:, :, :, :, :nr_mix] * one_hot, dim=4)
    log_scales = torch.clamp(torch.sum(l[:, :, :, :, nr_mix:2 * nr_mix] * one_hot, dim=4),
                             min=-7.)
    u = torch.tensor(rng.uniform(1e-5, 1. - 1e-5, size=means.shape), dtype=torch.float32)
    sample = torch.clamp(torch.clamp(means + torch.exp(log_scales) * (torch.log(u)
                                     - torch.log(1. - u)), min=-1.), max=1.)
    return log, net.state_dict(), argmax, sample.permute(0, 3, 1, 2)


def test_pixelcnn_pp_loss():
    # log(sigmoid(a) - sigmoid(b)) cancels: float32 rounding grows in the gradient
    compare(pixelcnn_pp_loss, rtol=1e-3, atol=1e-4)
