"""Convolutional networks of the research-code zoo, written as their reference repositories
write them (torchvision's ResNet and MobileNetV2, an EfficientNet/MobileNetV3
squeeze-excitation block, ConvNeXt with timm's DropPath); each ``run(torch, ...)`` trains a
tiny copy for two steps.
"""
import math

from script_harness import data, init_params


def grads(model):
    """Every parameter's gradient, by name."""
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def _std_ok(torch, pairs, tol=0.1):
    """A random init drawn by the other library cannot be matched: check its spread, over
    all the (weight, expected std) pairs at once."""
    z = torch.cat([(w.detach() / std).flatten() for w, std in pairs])
    return bool(abs(float(z.std()) - 1.0) < tol)


# 1. torchvision's ResNet ---------------------------------------------------------------

def resnet(torch, bottleneck, zero_init_residual, amp=False):
    nn = torch.nn
    F = torch.nn.functional

    def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
        """3x3 convolution with padding"""
        return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride,
                         padding=dilation, groups=groups, bias=False, dilation=dilation)

    def conv1x1(in_planes, out_planes, stride=1):
        """1x1 convolution"""
        return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
                     base_width=64, dilation=1, norm_layer=None):
            super().__init__()
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            self.conv1 = conv3x3(inplanes, planes, stride)
            self.bn1 = norm_layer(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(planes, planes)
            self.bn2 = norm_layer(planes)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x):
            identity = x
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            out = self.relu(out)
            return out

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
                     base_width=64, dilation=1, norm_layer=None):
            super().__init__()
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            width = int(planes * (base_width / 64.0)) * groups
            self.conv1 = conv1x1(inplanes, width)
            self.bn1 = norm_layer(width)
            self.conv2 = conv3x3(width, width, stride, groups, dilation)
            self.bn2 = norm_layer(width)
            self.conv3 = conv1x1(width, planes * self.expansion)
            self.bn3 = norm_layer(planes * self.expansion)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            out = self.relu(out)
            return out

    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes=5, zero_init_residual=False,
                     width=4):
            super().__init__()
            self._norm_layer = nn.BatchNorm2d
            self.inplanes = width
            self.dilation = 1
            self.groups = 1
            self.base_width = 64
            self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3,
                                   bias=False)
            self.bn1 = self._norm_layer(self.inplanes)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(block, width, layers[0])
            self.layer2 = self._make_layer(block, width * 2, layers[1], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(width * 2 * block.expansion, num_classes)

            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            if zero_init_residual:
                for m in self.modules():
                    if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                        nn.init.constant_(m.bn3.weight, 0)
                    elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                        nn.init.constant_(m.bn2.weight, 0)

        def _make_layer(self, block, planes, blocks, stride=1):
            norm_layer = self._norm_layer
            downsample = None
            if stride != 1 or self.inplanes != planes * block.expansion:
                downsample = nn.Sequential(
                    conv1x1(self.inplanes, planes * block.expansion, stride),
                    norm_layer(planes * block.expansion),
                )
            layers = []
            layers.append(block(self.inplanes, planes, stride, downsample, self.groups,
                                self.base_width, self.dilation, norm_layer))
            self.inplanes = planes * block.expansion
            for _ in range(1, blocks):
                layers.append(block(self.inplanes, planes, groups=self.groups,
                                    base_width=self.base_width, dilation=self.dilation,
                                    norm_layer=norm_layer))
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.conv1(x)
            x = self.bn1(x)
            x = self.relu(x)
            x = self.maxpool(x)
            x = self.layer1(x)
            x = self.layer2(x)
            x = self.avgpool(x)
            x = torch.flatten(x, 1)
            x = self.fc(x)
            return x

    block = Bottleneck if bottleneck else BasicBlock
    model = ResNet(block, [2, 1], zero_init_residual=zero_init_residual)
    # kaiming_normal_(mode="fan_out"): std = sqrt(2 / (out_channels * kh * kw))
    convs = [m.weight for m in model.modules() if isinstance(m, nn.Conv2d)]
    out = {"kaiming": _std_ok(torch, [(w, math.sqrt(2.0 / (w.shape[0] * w[0, 0].numel())))
                                      for w in convs])}
    last_bn = model.layer1[0].bn3 if bottleneck else model.layer1[0].bn2
    out["zero_init"] = last_bn.weight.abs().sum().item()
    # the convolutions and fc get the same weights in both; batch norm keeps its init
    layers = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    for seed, m in enumerate(layers):
        init_params(torch, m, seed=seed)

    x = data(torch, 1, 4, 3, 16, 16)
    y = data(torch, 2, 4, kind="int", high=5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9,
                                weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss()
    model.train()
    losses = []
    for step in range(2):
        # torchvision's reference train.py with --amp (bfloat16 on the cpu)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=amp):
            output = model(x)
            loss = criterion(output, y)
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            out["dtypes"] = [output.dtype == (torch.bfloat16 if amp else torch.float32),
                             loss.dtype == torch.float32]
            out["logits"] = output.detach().float()
            out["grads"] = grads(model)
        optimizer.step()
        losses.append(loss.item())
    out["losses"] = losses
    out["state"] = dict(model.state_dict())
    model.eval()
    with torch.no_grad():
        out["eval"] = F.softmax(model(x), dim=1)
    return out


# 2. torchvision's MobileNetV2, and an EfficientNet / MobileNetV3 squeeze-excitation block -

def _make_divisible(v, divisor, min_value=None):
    """Round the channel count to a multiple of ``divisor``, never down by more than 10%."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _train(torch, model, x, y, lr=0.05, steps=2):
    """The usual loop: cross-entropy, SGD with momentum; outputs and gradients of step 0."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    out, losses = {}, []
    for step in range(steps):
        output = model(x)
        loss = torch.nn.functional.cross_entropy(output, y)
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            out["output"] = output.detach()
            out["grads"] = grads(model)
        optimizer.step()
        losses.append(loss.item())
    out["losses"] = losses
    out["state"] = dict(model.state_dict())
    return out


def mobilenet_v2(torch):
    nn = torch.nn

    class ConvBNReLU(nn.Sequential):
        def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1,
                     norm_layer=None):
            padding = (kernel_size - 1) // 2
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            super().__init__(
                nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups,
                          bias=False),
                norm_layer(out_planes),
                nn.ReLU6(inplace=True),
            )

    class InvertedResidual(nn.Module):
        def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
            super().__init__()
            self.stride = stride
            assert stride in [1, 2]
            if norm_layer is None:
                norm_layer = nn.BatchNorm2d
            hidden_dim = int(round(inp * expand_ratio))
            self.use_res_connect = self.stride == 1 and inp == oup
            layers = []
            if expand_ratio != 1:
                layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1,
                                         norm_layer=norm_layer))
            layers.extend([
                # dw
                ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                           norm_layer=norm_layer),
                # pw-linear
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                norm_layer(oup),
            ])
            self.conv = nn.Sequential(*layers)
            self.out_channels = oup

        def forward(self, x):
            if self.use_res_connect:
                return x + self.conv(x)
            return self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self, num_classes=5, width_mult=0.25, round_nearest=8, dropout=0.2):
            super().__init__()
            input_channel = 32
            last_channel = 64
            inverted_residual_setting = [
                # t, c, n, s
                [1, 16, 1, 1],
                [6, 24, 2, 2],
                [6, 32, 2, 2],
            ]
            input_channel = _make_divisible(input_channel * width_mult, round_nearest)
            self.last_channel = _make_divisible(last_channel * max(1.0, width_mult),
                                                round_nearest)
            features = [ConvBNReLU(3, input_channel, stride=2)]
            for t, c, n, s in inverted_residual_setting:
                output_channel = _make_divisible(c * width_mult, round_nearest)
                for i in range(n):
                    stride = s if i == 0 else 1
                    features.append(InvertedResidual(input_channel, output_channel, stride,
                                                     expand_ratio=t))
                    input_channel = output_channel
            features.append(ConvBNReLU(input_channel, self.last_channel, kernel_size=1))
            self.features = nn.Sequential(*features)
            self.classifier = nn.Sequential(
                nn.Dropout(p=dropout),
                nn.Linear(self.last_channel, num_classes),
            )
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out")
                    if m.bias is not None:
                        nn.init.zeros_(m.bias)
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.ones_(m.weight)
                    nn.init.zeros_(m.bias)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.zeros_(m.bias)

        def forward(self, x):
            x = self.features(x)
            x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
            x = torch.flatten(x, 1)
            x = self.classifier(x)
            return x

    # dropout cannot draw the same mask in both libraries: off for the compared run
    model = MobileNetV2(dropout=0.0)
    out = {"linear_init": _std_ok(torch, [(model.classifier[1].weight, 0.01)], 0.2),
           "res": [getattr(m, "use_res_connect", False) for m in model.features],
           "channels": [_make_divisible(c * 0.75, 8) for c in (16, 24, 32, 96, 320)]}
    # the same convolution and classifier weights in both; batch norm keeps its ones/zeros
    layers = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    for seed, m in enumerate(layers):
        init_params(torch, m, seed=seed)
    model.train()
    x = data(torch, 1, 4, 3, 16, 16)
    y = data(torch, 2, 4, kind="int", high=5)
    out.update(_train(torch, model, x, y))
    model.eval()
    with torch.no_grad():  # inputs larger than the running statistics saw: ReLU6 caps them
        out["eval"] = model(x * 10)
    return out


def squeeze_excitation(torch):
    nn = torch.nn

    class SqueezeExcitation(nn.Module):
        def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU,
                     scale_activation=nn.Sigmoid):
            super().__init__()
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
            self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
            self.activation = activation()
            self.scale_activation = scale_activation()

        def _scale(self, input):
            scale = self.avgpool(input)
            scale = self.fc1(scale)
            scale = self.activation(scale)
            scale = self.fc2(scale)
            return self.scale_activation(scale)

        def forward(self, input):
            scale = self._scale(input)
            return input * scale

    class MBConv(nn.Module):
        """EfficientNet's block (SiLU + SE(SiLU, Sigmoid)) or MobileNetV3's (Hardswish +
        SE(ReLU, Hardsigmoid))."""

        def __init__(self, cin, cout, expand, stride, v3):
            super().__init__()
            act = nn.Hardswish if v3 else nn.SiLU
            hidden = _make_divisible(cin * expand, 8)
            squeeze = max(1, cin // 4) if not v3 else _make_divisible(hidden // 4, 8)
            self.use_res_connect = stride == 1 and cin == cout
            self.block = nn.Sequential(
                nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act(),
                nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                nn.BatchNorm2d(hidden), act(),
                SqueezeExcitation(hidden, squeeze,
                                  activation=nn.ReLU if v3 else nn.SiLU,
                                  scale_activation=nn.Hardsigmoid if v3 else nn.Sigmoid),
                nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout),
            )

        def forward(self, x):
            result = self.block(x)
            if self.use_res_connect:
                result += x
            return result

    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.Hardswish(inplace=True),
        MBConv(8, 8, 4, 1, v3=False), MBConv(8, 16, 4, 2, v3=True),
        MBConv(16, 16, 3, 1, v3=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))
    init_params(torch, model)
    model.train()
    x = data(torch, 1, 4, 3, 12, 12)
    y = data(torch, 2, 4, kind="int", high=5)
    out = _train(torch, model, x, y)
    model.eval()
    with torch.no_grad():
        out["eval"] = model(x)
    return out


# 3. ConvNeXt (facebookresearch/ConvNeXt), with timm's DropPath -------------------------

def convnext(torch, drop_path_rate, train_drop_path):
    nn = torch.nn
    F = torch.nn.functional
    trunc_normal_ = torch.nn.init.trunc_normal_  # timm.models.layers.trunc_normal_
    draws = iter(range(100, 200))

    def drop_path(x, drop_prob: float = 0., training: bool = False):
        if drop_prob == 0. or not training:
            return x
        keep_prob = 1 - drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)  # work with diff dim tensors
        # timm's torch.rand(shape) draw, fed from NumPy so both libraries drop alike
        random_tensor = keep_prob + data(torch, next(draws), *shape, kind="uniform").to(
            dtype=x.dtype, device=x.device)
        random_tensor.floor_()  # binarize
        output = x.div(keep_prob) * random_tensor
        return output

    class DropPath(nn.Module):
        """Drop paths (Stochastic Depth) per sample (when applied in main path of
        residual blocks)."""

        def __init__(self, drop_prob=None):
            super().__init__()
            self.drop_prob = drop_prob

        def forward(self, x):
            return drop_path(x, self.drop_prob, self.training)

    class LayerNorm(nn.Module):
        """LayerNorm that supports two data formats: channels_last (default) or
        channels_first."""

        def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last"):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(normalized_shape))
            self.bias = nn.Parameter(torch.zeros(normalized_shape))
            self.eps = eps
            self.data_format = data_format
            if self.data_format not in ["channels_last", "channels_first"]:
                raise NotImplementedError
            self.normalized_shape = (normalized_shape, )

        def forward(self, x):
            if self.data_format == "channels_last":
                return F.layer_norm(x, self.normalized_shape, self.weight, self.bias,
                                    self.eps)
            elif self.data_format == "channels_first":
                u = x.mean(1, keepdim=True)
                s = (x - u).pow(2).mean(1, keepdim=True)
                x = (x - u) / torch.sqrt(s + self.eps)
                x = self.weight[:, None, None] * x + self.bias[:, None, None]
                return x

    class Block(nn.Module):
        def __init__(self, dim, drop_path=0., layer_scale_init_value=1e-6):
            super().__init__()
            self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
            self.norm = LayerNorm(dim, eps=1e-6)
            self.pwconv1 = nn.Linear(dim, 4 * dim)
            self.act = nn.GELU()
            self.pwconv2 = nn.Linear(4 * dim, dim)
            self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim)),
                                      requires_grad=True) if layer_scale_init_value > 0 \
                else None
            self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()

        def forward(self, x):
            input = x
            x = self.dwconv(x)
            x = x.permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
            x = self.norm(x)
            x = self.pwconv1(x)
            x = self.act(x)
            x = self.pwconv2(x)
            if self.gamma is not None:
                x = self.gamma * x
            x = x.permute(0, 3, 1, 2)  # (N, H, W, C) -> (N, C, H, W)
            x = input + self.drop_path(x)
            return x

    class ConvNeXt(nn.Module):
        def __init__(self, in_chans=3, num_classes=5, depths=(2, 1, 1), dims=(8, 16, 24),
                     drop_path_rate=0., layer_scale_init_value=1e-6, head_init_scale=1.):
            super().__init__()
            self.downsample_layers = nn.ModuleList()
            stem = nn.Sequential(
                nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4),
                LayerNorm(dims[0], eps=1e-6, data_format="channels_first")
            )
            self.downsample_layers.append(stem)
            for i in range(len(dims) - 1):
                downsample_layer = nn.Sequential(
                    LayerNorm(dims[i], eps=1e-6, data_format="channels_first"),
                    nn.Conv2d(dims[i], dims[i + 1], kernel_size=2, stride=2),
                )
                self.downsample_layers.append(downsample_layer)

            self.stages = nn.ModuleList()
            dp_rates = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
            cur = 0
            for i in range(len(dims)):
                stage = nn.Sequential(
                    *[Block(dim=dims[i], drop_path=dp_rates[cur + j],
                            layer_scale_init_value=layer_scale_init_value)
                      for j in range(depths[i])]
                )
                self.stages.append(stage)
                cur += depths[i]

            self.norm = nn.LayerNorm(dims[-1], eps=1e-6)  # final norm layer
            self.head = nn.Linear(dims[-1], num_classes)

            self.apply(self._init_weights)
            self.head.weight.data.mul_(head_init_scale)
            self.head.bias.data.mul_(head_init_scale)

        def _init_weights(self, m):
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                trunc_normal_(m.weight, std=.02)
                nn.init.constant_(m.bias, 0)

        def forward_features(self, x):
            for i in range(len(self.stages)):
                x = self.downsample_layers[i](x)
                x = self.stages[i](x)
            return self.norm(x.mean([-2, -1]))  # global average pooling, (N, C, H, W) -> (N, C)

        def forward(self, x):
            x = self.forward_features(x)
            x = self.head(x)
            return x

    model = ConvNeXt(drop_path_rate=drop_path_rate, head_init_scale=0.5)
    ws = [m.weight for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    out = {"trunc_normal": _std_ok(torch, [(w, 0.02) for w in ws[:-1]])
           and _std_ok(torch, [(ws[-1], 0.01)], 0.3),  # the head, scaled by 0.5
           "head_bias": model.head.bias.detach().clone(),
           "gamma": model.stages[0][0].gamma.detach().clone(),
           "dp_rates": [getattr(b.drop_path, "drop_prob", 0.0)
                        for s in model.stages for b in s]}
    init_params(torch, model)  # overwrite the truncated-normal draw
    x = data(torch, 1, 4, 3, 32, 32)
    y = data(torch, 2, 4, kind="int", high=5)
    if train_drop_path:
        model.train()
        out.update(_train(torch, model, x, y))
    else:
        model.eval()
        out["eval"] = model(x)
        out["eval"].sum().backward()
        out["grads"] = grads(model)
    return out


def drop_path_bernoulli(torch):
    """timm's newer DropPath draws with ``bernoulli_``: compared by statistics."""
    torch.manual_seed(0)
    x = torch.ones(4000, 3, 2)
    keep_prob = 0.75
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    random_tensor.div_(keep_prob)
    out = x * random_tensor
    kept = (out[:, 0, 0] != 0).float()
    same_per_sample = bool((out == out[:, :1, :1]).all())
    values = sorted(set(round(v, 4) for v in out.flatten().tolist()))
    return [abs(kept.mean().item() - keep_prob) < 0.03, same_per_sample, values,
            tuple(random_tensor.shape)]
