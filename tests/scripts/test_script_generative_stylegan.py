"""StyleGAN research code, run unchanged under the framework and under PyTorch: equalized
learning rate, modulated/demodulated grouped convolution, noise injection, blur, minibatch
stddev and path-length regularisation (StyleGAN2), then rosinality's native upfirdn2d and
fused leaky ReLU, whose custom double backward carries the R1 penalty.

Shrunk to 8x8 images and two steps; data, weights and noise come from NumPy. Other GAN
idioms are in test_script_generative.py.
"""
import math

from script_harness import compare, data, init_params


# StyleGAN2 generator pieces -----------------------------------------------------------

def stylegan(torch):
    nn, F = torch.nn, torch.nn.functional
    B, C, w_dim = 2, 3, 4

    class EqualLinear(nn.Module):
        def __init__(self, in_dim, out_dim, bias_init=0.0, lr_mul=1.0):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(out_dim, in_dim).div_(lr_mul))
            self.bias = nn.Parameter(torch.zeros(out_dim).fill_(bias_init))
            self.scale = (1 / math.sqrt(in_dim)) * lr_mul
            self.lr_mul = lr_mul

        def forward(self, x):
            out = F.linear(x, self.weight * self.scale, bias=self.bias * self.lr_mul)
            return F.leaky_relu(out, 0.2) * math.sqrt(2)

    class Blur(nn.Module):
        def __init__(self, channels):
            super().__init__()
            k = torch.tensor([1., 3., 3., 1.])
            k = k[None, :] * k[:, None]
            k = k / k.sum()
            self.register_buffer("kernel", k[None, None].repeat(channels, 1, 1, 1))
            self.channels = channels

        def forward(self, x):
            x = F.pad(x, (2, 1, 2, 1), mode="reflect")
            return F.conv2d(x, self.kernel, groups=self.channels)

    class NoiseInjection(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(1, channels, 1, 1))

        def forward(self, image, noise):
            return image + self.weight * noise

    class ModulatedConv2d(nn.Module):
        def __init__(self, in_ch, out_ch, k, style_dim, demodulate=True):
            super().__init__()
            self.scale = 1 / math.sqrt(in_ch * k * k)
            self.weight = nn.Parameter(torch.randn(1, out_ch, in_ch, k, k))
            self.modulation = EqualLinear(style_dim, in_ch, bias_init=1)
            self.demodulate, self.in_ch, self.out_ch, self.k = demodulate, in_ch, out_ch, k

        def forward(self, x, style):
            batch, in_ch, height, width = x.shape
            style = self.modulation(style).view(batch, 1, in_ch, 1, 1)
            weight = self.scale * self.weight * style
            if self.demodulate:
                demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
                weight = weight * demod.view(batch, self.out_ch, 1, 1, 1)
            weight = weight.view(batch * self.out_ch, in_ch, self.k, self.k)
            x = x.reshape(1, batch * in_ch, height, width)
            out = F.conv2d(x, weight, padding=1, groups=batch)
            return out.view(batch, self.out_ch, height, width)

    class MinibatchStd(nn.Module):
        def forward(self, x, group=2):
            b, c, h, w = x.shape
            y = x.view(group, -1, 1, c, h, w)
            std = torch.sqrt(y.var(0, unbiased=False) + 1e-8)
            std = std.mean([2, 3, 4], keepdim=True).squeeze(2)
            std = std.repeat(group, 1, h, w)
            return torch.cat([x, std], 1)

    class Synthesis(nn.Module):
        def __init__(self):
            super().__init__()
            self.mapping = nn.Sequential(EqualLinear(w_dim, w_dim, lr_mul=0.01),
                                         EqualLinear(w_dim, w_dim, lr_mul=0.01))
            self.const = nn.Parameter(torch.randn(1, C, 4, 4))
            self.conv1 = ModulatedConv2d(C, C, 3, w_dim)
            self.noise1 = NoiseInjection(C)
            self.bias1 = nn.Parameter(torch.zeros(1, C, 1, 1))
            self.blur = Blur(C)
            self.conv2 = ModulatedConv2d(C, C, 3, w_dim)
            self.to_rgb = ModulatedConv2d(C, 2, 3, w_dim, demodulate=False)

        def forward(self, z, noise):
            w = self.mapping(z / torch.sqrt(z.pow(2).mean(1, keepdim=True) + 1e-8))
            x = self.const.repeat(z.shape[0], 1, 1, 1)
            x = self.conv1(x, w)
            x = self.noise1(x, noise[0])
            x = F.leaky_relu(x + self.bias1, 0.2) * math.sqrt(2)
            x = F.interpolate(x, scale_factor=2, mode="nearest")
            x = self.blur(x)
            x = self.conv2(x, w)
            return self.to_rgb(x, w), w

    G = init_params(torch, Synthesis(), seed=30)
    with torch.no_grad():
        G.noise1.weight.fill_(0.1)
    D = init_params(torch, nn.Sequential(nn.Conv2d(2, 3, 3, 2, 1)), seed=31)
    mbstd = MinibatchStd()
    head = init_params(torch, nn.Linear(4 * 4 * 4, 1), seed=32)
    opt = torch.optim.Adam(list(G.parameters()) + list(D.parameters())
                           + list(head.parameters()), lr=2e-3, betas=(0.0, 0.99))
    log = []
    for step in range(2):
        z = data(torch, 40 + step, B, w_dim)
        noise = [data(torch, 50 + step, B, 1, 4, 4)]
        fake, w = G(z, noise)
        logits = head(mbstd(D(fake)).flatten(1))
        lossG = F.softplus(-logits).mean()
        # path-length regularisation
        pl_noise = data(torch, 60 + step, *fake.shape) / math.sqrt(fake.shape[2] * fake.shape[3])
        grad, = torch.autograd.grad(outputs=(fake * pl_noise).sum(), inputs=w,
                                    create_graph=True)
        path_lengths = torch.sqrt(grad.pow(2).sum(1))
        pl_penalty = (path_lengths - path_lengths.mean().detach()).pow(2).mean()
        loss = lossG + 2.0 * pl_penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append([lossG.item(), pl_penalty.item()])
    return log, fake, G.state_dict(), G.blur.kernel.sum()


def test_stylegan():
    compare(stylegan, rtol=1e-3, atol=1e-5)


# rosinality's stylegan2-pytorch: native upfirdn2d, fused leaky ReLU, R1 --------------

def rosinality_disc_r1(torch):
    nn, F = torch.nn, torch.nn.functional
    Function = torch.autograd.Function

    def upfirdn2d_native(input, kernel, up_x, up_y, down_x, down_y,
                         pad_x0, pad_x1, pad_y0, pad_y1):
        _, channel, in_h, in_w = input.shape
        input = input.reshape(-1, in_h, in_w, 1)
        _, in_h, in_w, minor = input.shape
        kernel_h, kernel_w = kernel.shape
        out = input.view(-1, in_h, 1, in_w, 1, minor)
        out = F.pad(out, [0, 0, 0, up_x - 1, 0, 0, 0, up_y - 1])
        out = out.view(-1, in_h * up_y, in_w * up_x, minor)
        out = F.pad(out, [0, 0, max(pad_x0, 0), max(pad_x1, 0), max(pad_y0, 0), max(pad_y1, 0)])
        out = out[:, max(-pad_y0, 0): out.shape[1] - max(-pad_y1, 0),
                  max(-pad_x0, 0): out.shape[2] - max(-pad_x1, 0), :]
        out = out.permute(0, 3, 1, 2)
        out = out.reshape([-1, 1, in_h * up_y + pad_y0 + pad_y1, in_w * up_x + pad_x0 + pad_x1])
        w = torch.flip(kernel, [0, 1]).view(1, 1, kernel_h, kernel_w)
        out = F.conv2d(out, w)
        out = out.reshape(-1, minor, in_h * up_y + pad_y0 + pad_y1 - kernel_h + 1,
                          in_w * up_x + pad_x0 + pad_x1 - kernel_w + 1)
        out = out.permute(0, 2, 3, 1)
        out = out[:, ::down_y, ::down_x, :]
        out_h = (in_h * up_y + pad_y0 + pad_y1 - kernel_h + down_y) // down_y
        out_w = (in_w * up_x + pad_x0 + pad_x1 - kernel_w + down_x) // down_x
        return out.view(-1, channel, out_h, out_w)

    class FusedLeakyReLUFunctionBackward(Function):
        @staticmethod
        def forward(ctx, grad_output, out, negative_slope, scale):
            ctx.save_for_backward(out)
            ctx.negative_slope, ctx.scale = negative_slope, scale
            grad_input = grad_output * torch.where(out >= 0, 1.0, negative_slope) * scale
            grad_bias = grad_input.sum([0, 2, 3]).detach()
            return grad_input, grad_bias

        @staticmethod
        def backward(ctx, gradgrad_input, gradgrad_bias):
            out, = ctx.saved_tensors
            gradgrad_out = (gradgrad_input * torch.where(out >= 0, 1.0, ctx.negative_slope)
                            * ctx.scale)
            return gradgrad_out, None, None, None

    class FusedLeakyReLUFunction(Function):
        @staticmethod
        def forward(ctx, input, bias, negative_slope, scale):
            out = F.leaky_relu(input + bias.view(1, -1, 1, 1), negative_slope) * scale
            ctx.save_for_backward(out)
            ctx.negative_slope, ctx.scale = negative_slope, scale
            return out

        @staticmethod
        def backward(ctx, grad_output):
            out, = ctx.saved_tensors
            grad_input, grad_bias = FusedLeakyReLUFunctionBackward.apply(
                grad_output, out, ctx.negative_slope, ctx.scale)
            return grad_input, grad_bias, None, None

    class FusedLeakyReLU(nn.Module):
        def __init__(self, channel):
            super().__init__()
            self.bias = nn.Parameter(torch.zeros(channel))

        def forward(self, input):
            return FusedLeakyReLUFunction.apply(input, self.bias, 0.2, 2 ** 0.5)

    class Blur(nn.Module):
        def __init__(self, kernel, pad):
            super().__init__()
            k = torch.tensor(kernel, dtype=torch.float32)
            k = k[None, :] * k[:, None]
            self.register_buffer("kernel", k / k.sum())
            self.pad = pad

        def forward(self, input):
            return upfirdn2d_native(input, self.kernel, 1, 1, 1, 1,
                                    self.pad[0], self.pad[1], self.pad[0], self.pad[1])

    class Disc(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv0 = nn.Conv2d(2, 3, 3, padding=1, bias=False)
            self.act0 = FusedLeakyReLU(3)
            self.blur = Blur([1, 3, 3, 1], (2, 2))
            self.conv1 = nn.Conv2d(3, 3, 3, stride=2, bias=False)
            self.act1 = FusedLeakyReLU(3)
            self.fc = nn.Linear(3 * 4 * 4, 1)

        def forward(self, x):
            x = self.act0(self.conv0(x))
            x = self.act1(self.conv1(self.blur(x)))
            return self.fc(x.flatten(1))

    D = init_params(torch, Disc(), seed=600)
    d_reg_every = 16
    d_reg_ratio = d_reg_every / (d_reg_every + 1)
    d_optim = torch.optim.Adam(D.parameters(), lr=2e-3 * d_reg_ratio,
                               betas=(0 ** d_reg_ratio, 0.99 ** d_reg_ratio))
    log = []
    for step in range(2):
        real_img = data(torch, 610 + step, 2, 2, 8, 8)
        fake_img = data(torch, 620 + step, 2, 2, 8, 8)
        d_loss = F.softplus(D(fake_img)).mean() + F.softplus(-D(real_img)).mean()
        D.zero_grad()
        d_loss.backward()
        d_optim.step()
        # lazy R1 regularisation, through the custom double backward
        real_img.requires_grad = True
        real_pred = D(real_img)
        grad_real, = torch.autograd.grad(outputs=real_pred.sum(), inputs=real_img,
                                         create_graph=True)
        r1_loss = grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()
        D.zero_grad()
        (10 / 2 * r1_loss * d_reg_every + 0 * real_pred[0]).backward()
        d_optim.step()
        log.append([d_loss.item(), r1_loss.item()])
    # upsampling and downsampling through upfirdn2d, with a kernel that is not symmetric
    k = torch.tensor([[1., 2., 1.], [0., 1., 3.]])
    x = data(torch, 630, 1, 2, 4, 4)
    up = upfirdn2d_native(x, k, 2, 2, 1, 1, 1, 1, 2, 0)
    down = upfirdn2d_native(x, k, 1, 1, 2, 2, 0, -1, 1, 1)
    return log, D.state_dict(), up, down


def test_rosinality_disc_r1():
    compare(rosinality_disc_r1, rtol=1e-3, atol=1e-5)
