"""Vision tutorials and models, run unchanged under the framework and under PyTorch:
generative models and image optimisation.

Each workload is the official tutorial's code (DCGAN, VAE, neural style transfer) or a
research repo's idiom (a DDPM U-Net step), shrunk to tiny images; data, weights and noise
come from NumPy. The classifiers are in test_script_vision.py.
"""
import math

import pytest

import framework
from script_harness import compare, data, init_params


# 1. DCGAN ------------------------------------------------------------------------------

def dcgan(torch):
    nn, optim = torch.nn, torch.optim
    nz, ngf, ndf, nc = 4, 4, 4, 3

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),  # 4x4
                nn.BatchNorm2d(ngf * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),  # 8x8
                nn.BatchNorm2d(ngf),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),  # 16x16
                nn.Tanh())

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),  # 8x8
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),  # 4x4
                nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
                nn.Sigmoid())

        def forward(self, input):
            return self.main(input)

    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    # The random init cannot match across libraries; check its statistics, then overwrite.
    conv_w = netG.main[0].weight
    init_stats = [abs(conv_w.std().item() - 0.02) < 0.01, abs(conv_w.mean().item()) < 0.01,
                  netD.main[3].bias.abs().sum().item() == 0]
    init_params(torch, netG, seed=10)
    init_params(torch, netD, seed=11)

    criterion = nn.BCELoss()
    fixed_noise = data(torch, 12, 4, nz, 1, 1)
    real_label, fake_label = 1., 0.
    optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))

    reals = data(torch, 13, 6, nc, 16, 16, kind="uniform") * 2 - 1
    dataloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(reals),
                                             batch_size=3)
    log = []
    for i, batch in enumerate(dataloader, 0):
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real_cpu = batch[0]
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = data(torch, 100 + i, b_size, nz, 1, 1)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        log.append((errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
    with torch.no_grad():
        fake = netG(fixed_noise).detach().cpu()
    return init_stats, log, fake, netG.state_dict(), netD.state_dict()


def test_dcgan():
    compare(dcgan)


# 2. VAE (examples/vae) -----------------------------------------------------------------

def vae(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 20)
            self.fc21 = nn.Linear(20, 4)
            self.fc22 = nn.Linear(20, 4)
            self.fc3 = nn.Linear(4, 20)
            self.fc4 = nn.Linear(20, 784)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar)
            return mu + eps * std  # eps: torch.randn_like(std), fed from NumPy

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 784))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD

    model = init_params(torch, VAE())
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    images = data(torch, 20, 6, 1, 28, 28, kind="uniform")
    train_loader = torch.utils.data.DataLoader(images, batch_size=3)
    model.train()
    losses = []
    for epoch in range(2):
        train_loss = 0
        for batch_idx, x in enumerate(train_loader):
            optimizer.zero_grad()
            eps = data(torch, 30 + batch_idx + 10 * epoch, x.size(0), 4)
            recon_batch, mu, logvar = model(x, eps)
            loss = loss_function(recon_batch, x, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
        losses.append(train_loss / len(train_loader.dataset))
    model.eval()
    with torch.no_grad():
        sample = model.decode(data(torch, 40, 2, 4)).cpu()
    return losses, sample.view(2, 1, 28, 28), model.state_dict()


def test_vae():
    compare(vae, rtol=1e-4, atol=1e-4)


# 3. Neural style transfer --------------------------------------------------------------

def style_transfer(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim

    class ContentLoss(nn.Module):
        def __init__(self, target):
            super().__init__()
            # a stated value, not a variable: detach it from the graph
            self.target = target.detach()

        def forward(self, input):
            self.loss = F.mse_loss(input, self.target)
            return input

    def gram_matrix(input):
        a, b, c, d = input.size()
        features = input.view(a * b, c * d)
        G = torch.mm(features, features.t())
        return G.div(a * b * c * d)

    class StyleLoss(nn.Module):
        def __init__(self, target_feature):
            super().__init__()
            self.target = gram_matrix(target_feature).detach()

        def forward(self, input):
            G = gram_matrix(input)
            self.loss = F.mse_loss(G, self.target)
            return input

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True),
                        nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True),
                        nn.MaxPool2d(2, 2),
                        nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(inplace=True),
                        nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(inplace=True))
    cnn = init_params(torch, cnn, seed=70).eval()
    mean = torch.tensor([0.485, 0.456, 0.406])
    std = torch.tensor([0.229, 0.224, 0.225])
    content_layers = ['conv_3']
    style_layers = ['conv_1', 'conv_2', 'conv_3']
    style_img = data(torch, 71, 1, 3, 8, 8, kind="uniform")
    content_img = data(torch, 72, 1, 3, 8, 8, kind="uniform")

    def get_style_model_and_losses(cnn, normalization_mean, normalization_std,
                                   style_img, content_img):
        normalization = Normalization(normalization_mean, normalization_std)
        content_losses, style_losses = [], []
        model = nn.Sequential(normalization)
        i = 0
        for layer in cnn.children():
            if isinstance(layer, nn.Conv2d):
                i += 1
                name = 'conv_{}'.format(i)
            elif isinstance(layer, nn.ReLU):
                name = 'relu_{}'.format(i)
                # the in-place version doesn't play well with the losses inserted below
                layer = nn.ReLU(inplace=False)
            elif isinstance(layer, nn.MaxPool2d):
                name = 'pool_{}'.format(i)
            elif isinstance(layer, nn.BatchNorm2d):
                name = 'bn_{}'.format(i)
            else:
                raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))
            model.add_module(name, layer)
            if name in content_layers:
                target = model(content_img).detach()
                content_loss = ContentLoss(target)
                model.add_module("content_loss_{}".format(i), content_loss)
                content_losses.append(content_loss)
            if name in style_layers:
                target_feature = model(style_img).detach()
                style_loss = StyleLoss(target_feature)
                model.add_module("style_loss_{}".format(i), style_loss)
                style_losses.append(style_loss)
        # trim off the layers after the last content and style losses
        for i in range(len(model) - 1, -1, -1):
            if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
                break
        model = model[:(i + 1)]
        return model, style_losses, content_losses

    input_img = content_img.clone()
    model, style_losses, content_losses = get_style_model_and_losses(
        cnn, mean, std, style_img, content_img)
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = optim.LBFGS([input_img])
    style_weight, content_weight = 1000, 1
    history = []
    run = [0]
    while run[0] <= 6:
        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0
            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss
            style_score *= style_weight
            content_score *= content_weight
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            history.append((style_score.item(), content_score.item()))
            return style_score + content_score
        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    # the layer names and their order (the harness compares dict keys as a set)
    names = {name: i for i, (name, _) in enumerate(model.named_children())}
    return names, history, input_img, gram_matrix(style_img)


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")  # the tutorial's own
def test_style_transfer():
    compare(style_transfer, rtol=1e-3, atol=1e-5)


def test_tensor_of_a_tensor_warns():
    # The style-transfer tutorial's Normalization calls torch.tensor(mean) on a tensor.
    src = framework.tensor([0.5, 0.25])
    with pytest.warns(UserWarning, match=r"sourceTensor.detach\(\).clone\(\)"):
        copy_ = framework.tensor(src)
    assert copy_.data_ptr() != src.data_ptr() and copy_.tolist() == [0.5, 0.25]


# 4. A DDPM training step on a tiny U-Net ------------------------------------------------

def ddpm(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim

    class SinusoidalPositionEmbeddings(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim

        def forward(self, time):
            half = self.dim // 2
            freqs = torch.exp(torch.arange(half, device=time.device)
                              * -(math.log(10000) / (half - 1)))
            emb = time[:, None] * freqs[None]
            return torch.cat((emb.sin(), emb.cos()), dim=-1)

    class Block(nn.Module):
        def __init__(self, dim_in, dim_out, time_dim, groups=2):
            super().__init__()
            self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_dim, dim_out))
            self.conv1 = WeightStandardizedConv2d(dim_in, dim_out, 3, padding=1)
            self.norm1 = nn.GroupNorm(groups, dim_out)
            self.conv2 = nn.Conv2d(dim_out, dim_out, 3, padding=1)
            self.norm2 = nn.GroupNorm(groups, dim_out)
            self.act = nn.SiLU()
            self.res_conv = nn.Conv2d(dim_in, dim_out, 1) if dim_in != dim_out \
                else nn.Identity()

        def forward(self, x, time_emb):
            h = self.act(self.norm1(self.conv1(x)))
            h = h + self.mlp(time_emb)[:, :, None, None]
            h = self.act(self.norm2(self.conv2(h)))
            return h + self.res_conv(x)

    class WeightStandardizedConv2d(nn.Conv2d):
        def forward(self, x):
            eps = 1e-5 if x.dtype == torch.float32 else 1e-3
            weight = self.weight
            mean = weight.mean(dim=(1, 2, 3), keepdim=True)
            var = torch.var(weight, dim=(1, 2, 3), keepdim=True, unbiased=False)
            normalized_weight = (weight - mean) * (var + eps).rsqrt()
            return F.conv2d(x, normalized_weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)

    class Attention(nn.Module):
        def __init__(self, dim, heads=2, dim_head=4):
            super().__init__()
            self.scale = dim_head ** -0.5
            self.heads = heads
            hidden_dim = dim_head * heads
            self.to_qkv = nn.Conv2d(dim, hidden_dim * 3, 1, bias=False)
            self.to_out = nn.Conv2d(hidden_dim, dim, 1)

        def forward(self, x):
            b, c, h, w = x.shape
            qkv = self.to_qkv(x).chunk(3, dim=1)
            # rearrange(t, "b (h c) x y -> b h c (x y)")
            q, k, v = map(lambda t: t.reshape(b, self.heads, -1, h * w), qkv)
            q = q * self.scale
            sim = torch.einsum("b h d i, b h d j -> b h i j", q, k)
            sim = sim - sim.amax(dim=-1, keepdim=True).detach()
            attn = sim.softmax(dim=-1)
            out = torch.einsum("b h i j, b h d j -> b h i d", attn, v)
            # rearrange(out, "b h (x y) d -> b (h d) x y")
            out = out.permute(0, 1, 3, 2).reshape(b, -1, h, w)
            return self.to_out(out)

    class Residual(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x, *args, **kwargs):
            return self.fn(x, *args, **kwargs) + x

    class PreNorm(nn.Module):
        def __init__(self, dim, fn):
            super().__init__()
            self.fn = fn
            self.norm = nn.GroupNorm(1, dim)

        def forward(self, x):
            return self.fn(self.norm(x))

    class Unet(nn.Module):
        def __init__(self, channels=1, dim=4, time_dim=8):
            super().__init__()
            self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(time_dim),
                                          nn.Linear(time_dim, time_dim), nn.GELU())
            self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)
            self.down = Block(dim, 2 * dim, time_dim)
            self.downsample = nn.Conv2d(2 * dim, 2 * dim, 4, 2, 1)
            self.mid = Block(2 * dim, 2 * dim, time_dim)
            self.mid_attn = Residual(PreNorm(2 * dim, Attention(2 * dim)))
            self.upsample = nn.Upsample(scale_factor=2, mode='nearest')
            self.up = Block(4 * dim, dim, time_dim)
            self.final_conv = nn.Conv2d(dim, channels, 1)

        def forward(self, x, time):
            t = self.time_mlp(time)
            x = self.init_conv(x)
            h = self.down(x, t)
            x = self.mid_attn(self.mid(self.downsample(h), t))
            x = self.upsample(x)
            # a second path through bilinear interpolation, as some repos' up blocks do
            x = x + F.interpolate(self.downsample(h), scale_factor=2, mode='bilinear',
                                  align_corners=False)
            x = torch.cat((x, h), dim=1)
            return self.final_conv(self.up(x, t))

    timesteps = 10

    def linear_beta_schedule(timesteps):
        beta_start, beta_end = 0.0001, 0.02
        return torch.linspace(beta_start, beta_end, timesteps)

    betas = linear_beta_schedule(timesteps)
    alphas = 1. - betas
    alphas_cumprod = torch.cumprod(alphas, axis=0)
    alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
    sqrt_recip_alphas = torch.sqrt(1.0 / alphas)
    sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
    sqrt_one_minus_alphas_cumprod = torch.sqrt(1. - alphas_cumprod)
    posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)

    def extract(a, t, x_shape):
        batch_size = t.shape[0]
        out = a.gather(-1, t.cpu())
        return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)

    def q_sample(x_start, t, noise):
        sqrt_alphas_cumprod_t = extract(sqrt_alphas_cumprod, t, x_start.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t,
                                                  x_start.shape)
        return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise

    model = init_params(torch, Unet())
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for step in range(2):
        batch = data(torch, 80 + step, 2, 1, 8, 8, kind="uniform") * 2 - 1
        t = data(torch, 90 + step, 2, kind="int", high=timesteps)
        noise = data(torch, 100 + step, 2, 1, 8, 8)  # torch.randn_like(x_start)
        optimizer.zero_grad()
        x_noisy = q_sample(batch, t, noise)
        predicted_noise = model(x_noisy, t)
        loss = F.mse_loss(noise, predicted_noise)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    # One reverse (sampling) step, with its noise (torch.randn_like(x)) fed from NumPy.
    @torch.no_grad()
    def p_sample(model, x, t, t_index, noise):
        betas_t = extract(betas, t, x.shape)
        sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x.shape)
        sqrt_recip_alphas_t = extract(sqrt_recip_alphas, t, x.shape)
        model_mean = sqrt_recip_alphas_t * (
            x - betas_t * model(x, t) / sqrt_one_minus_alphas_cumprod_t)
        if t_index == 0:
            return model_mean
        posterior_variance_t = extract(posterior_variance, t, x.shape)
        return model_mean + torch.sqrt(posterior_variance_t) * noise

    img = data(torch, 110, 2, 1, 8, 8)
    t = torch.full((2,), 5, dtype=torch.long)
    x_prev = p_sample(model, img, t, 5, data(torch, 111, 2, 1, 8, 8))
    x_last = p_sample(model, x_prev, torch.full((2,), 0, dtype=torch.long), 0, None)
    indexed = sqrt_alphas_cumprod[t]
    return (losses, x_prev, x_last, x_last.requires_grad, indexed, alphas_cumprod,
            posterior_variance, {n: p.grad for n, p in model.named_parameters()})


def test_ddpm():
    compare(ddpm, rtol=1e-4, atol=1e-5)
