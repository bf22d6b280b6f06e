"""Vision tutorials and models, run unchanged under the framework and under PyTorch:
classification and its tools.

Each workload is the official tutorial's code (CIFAR-10 classifier, transfer learning,
spatial transformer, FGSM), shrunk to tiny images; data, weights and noise come from NumPy.
The generative ones (DCGAN, VAE, style transfer, DDPM) are in test_script_vision_gen.py.
"""
import copy
import os
import tempfile

import numpy as np
import pytest

import framework
from script_harness import assert_same, compare, data, init_params


def _on(device):
    """The framework side runs on ``device``; PyTorch (a CPU build) stays on cpu."""
    return lambda torch: "cpu" if torch is not framework else device


# 1. Training a classifier (CIFAR-10 tutorial) ------------------------------------------

def classifier(torch, device="cpu"):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(4, 6, 3)
            self.fc1 = nn.Linear(6 * 1 * 1, 12)
            self.fc2 = nn.Linear(12, 10)
            self.fc3 = nn.Linear(10, 4)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = torch.flatten(x, 1)  # flatten all dimensions except batch
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    classes = ('plane', 'car', 'bird', 'cat')
    net = init_params(torch, Net()).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    images = data(torch, 1, 12, 3, 10, 10)
    targets = data(torch, 2, 12, kind="int", high=4)
    dataset = torch.utils.data.TensorDataset(images, targets)
    trainloader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=False)

    # show some training labels
    dataiter = iter(trainloader)
    images, labels = next(dataiter)
    shown = ' '.join(f'{classes[labels[j]]:5s}' for j in range(4))

    losses = []
    for epoch in range(2):
        running_loss = 0.0
        for i, batch in enumerate(trainloader, 0):
            inputs, labels = batch[0].to(device), batch[1].to(device)
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            if i % 2 == 1:
                losses.append(running_loss / 2)
                running_loss = 0.0

    # save the trained model and load it back into a new Net
    with tempfile.TemporaryDirectory() as tmp:
        PATH = os.path.join(tmp, 'cifar_net.pth')
        torch.save(net.state_dict(), PATH)
        net = Net().to(device)
        net.load_state_dict(torch.load(PATH, weights_only=True))

    correct_pred = {classname: 0 for classname in classes}
    total_pred = {classname: 0 for classname in classes}
    correct = total = 0
    with torch.no_grad():
        for batch in trainloader:
            images, labels = batch[0].to(device), batch[1].to(device)
            outputs = net(images)
            _, predicted = torch.max(outputs, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
            for label, prediction in zip(labels, predicted):
                if label == prediction:
                    correct_pred[classes[label]] += 1
                total_pred[classes[label]] += 1
    accuracy = {c: 100 * float(correct_pred[c]) / max(total_pred[c], 1) for c in classes}
    return {shown: 1}, losses, correct, total, accuracy, outputs, net.state_dict()


def test_classifier():
    compare(classifier)


# 2. Transfer learning (finetuning / fixed feature extractor) ---------------------------

def transfer_learning(torch):
    nn, optim = torch.nn, torch.optim
    lr_scheduler = torch.optim.lr_scheduler

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.inplanes = 4
            self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(4, 1)
            self.layer2 = self._make_layer(8, 1, stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8 * BasicBlock.expansion, num_classes)

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                    nn.BatchNorm2d(planes))
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes
            for _ in range(1, blocks):
                layers.append(BasicBlock(self.inplanes, planes))
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer2(self.layer1(x))
            x = torch.flatten(self.avgpool(x), 1)
            return self.fc(x)

    model_conv = init_params(torch, ResNet())
    for param in model_conv.parameters():
        param.requires_grad = False
    num_ftrs = model_conv.fc.in_features
    model_conv.fc = nn.Linear(num_ftrs, 2)
    init_params(torch, model_conv.fc, seed=3)
    criterion = nn.CrossEntropyLoss()
    optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.1, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=1, gamma=0.1)

    images = {'train': data(torch, 4, 8, 3, 8, 8), 'val': data(torch, 5, 4, 3, 8, 8)}
    targets = {'train': data(torch, 6, 8, kind="int", high=2),
               'val': data(torch, 7, 4, kind="int", high=2)}
    dataloaders = {x: torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images[x], targets[x]), batch_size=4)
        for x in ['train', 'val']}
    dataset_sizes = {x: len(images[x]) for x in ['train', 'val']}

    best_model_wts = copy.deepcopy(model_conv.state_dict())
    best_acc = 0.0
    history, lrs = [], []
    for epoch in range(2):
        for phase in ['train', 'val']:
            if phase == 'train':
                model_conv.train()
            else:
                model_conv.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer_conv.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model_conv(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer_conv.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                exp_lr_scheduler.step()
                lrs.append(exp_lr_scheduler.get_last_lr()[0])
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            history.append((epoch_loss, epoch_acc.item(), epoch_acc.dtype == torch.float64,
                            outputs.requires_grad))
            if phase == 'val' and epoch_acc >= best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model_conv.state_dict())
    model_conv.load_state_dict(best_model_wts)
    frozen = [p.grad is None for n, p in model_conv.named_parameters() if 'fc' not in n]
    return history, lrs, frozen, model_conv.state_dict()


def test_transfer_learning():
    compare(transfer_learning)


# 3. Spatial transformer network --------------------------------------------------------

def spatial_transformer(torch):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim

    class Net(nn.Module):
        def __init__(self, p=0.5):
            super().__init__()
            self.p = p
            self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
            self.conv2 = nn.Conv2d(4, 5, kernel_size=3)
            self.conv2_drop = nn.Dropout2d(p)
            self.fc1 = nn.Linear(5 * 2 * 2, 6)
            self.fc2 = nn.Linear(6, 3)
            # Spatial transformer localization-network
            self.localization = nn.Sequential(
                nn.Conv2d(1, 4, kernel_size=3),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True),
                nn.Conv2d(4, 5, kernel_size=3),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True))
            # Regressor for the 3 * 2 affine matrix
            self.fc_loc = nn.Sequential(
                nn.Linear(5 * 2 * 2, 8),
                nn.ReLU(True),
                nn.Linear(8, 3 * 2))

        def init_identity(self):
            # Initialize the weights/bias with identity transformation
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0],
                                                        dtype=torch.float))

        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 5 * 2 * 2)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size(), align_corners=False)
            return F.grid_sample(x, grid, align_corners=False)

        def forward(self, x):
            # transform the input
            x = self.stn(x)
            # Perform the usual forward pass
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 5 * 2 * 2)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, p=self.p, training=self.training)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    # Dropout draws cannot match across libraries: the compared training runs with p=0.
    model = init_params(torch, Net(p=0.0))
    x = data(torch, 50, 4, 1, 16, 16)
    target = data(torch, 51, 4, kind="int", high=3)
    # The tutorial's identity init: the transformer starts as the identity map.
    model.init_identity()
    with torch.no_grad():
        identity_out = model.stn(x)
    # A non-trivial affine map for the compared training, so that the sampler is exercised.
    init_params(torch, model.fc_loc, seed=52)
    with torch.no_grad():
        model.fc_loc[2].bias.add_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        output = model(x)
        loss = F.nll_loss(output, target)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
    grads = {n: p.grad for n, p in model.named_parameters()}
    # The tutorial's test loop, with dropout on (p=0.5) but the model in eval mode.
    model_eval = Net()
    model_eval.load_state_dict(model.state_dict())
    with torch.no_grad():
        model_eval.eval()
        test_loss = 0
        correct = 0
        output = model_eval(x)
        test_loss += F.nll_loss(output, target, size_average=False).item()
        pred = output.max(1, keepdim=True)[1]
        correct += pred.eq(target.view_as(pred)).sum().item()
        transformed = model_eval.stn(x)
    return identity_out, x, losses, grads, test_loss, correct, output, transformed


@pytest.mark.filterwarnings("ignore:size_average and reduce args")  # the tutorial's own
def test_spatial_transformer():
    identity_out, x = compare(spatial_transformer)[:2]
    np.testing.assert_allclose(identity_out.numpy(), x.numpy(), rtol=1e-5, atol=1e-5)
    # Dropout2d in train mode (the tutorial's conv2_drop) zeroes whole channels, scales by 2.
    out = framework.nn.Dropout2d()(framework.ones(16, 8, 2, 2)).numpy().reshape(128, 4)
    assert set(np.unique(out)) <= {0.0, 2.0} and (out.min(1) == out.max(1)).all()
    assert 32 < (out[:, 0] == 0).sum() < 96


# 4. FGSM adversarial example -----------------------------------------------------------

def fgsm(torch, device="cpu"):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 3, 3, 1)
            self.fc1 = nn.Linear(3 * 3 * 3, 5)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = torch.flatten(x, 1)
            return F.log_softmax(self.fc1(x), dim=1)

    def fgsm_attack(image, epsilon, data_grad):
        sign_data_grad = data_grad.sign()
        perturbed_image = image + epsilon * sign_data_grad
        perturbed_image = torch.clamp(perturbed_image, 0, 1)
        return perturbed_image

    def denorm(batch, mean=[0.1307], std=[0.3081]):
        if isinstance(mean, list):
            mean = torch.tensor(mean).to(device)
        if isinstance(std, list):
            std = torch.tensor(std).to(device)
        return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)

    model = init_params(torch, Net()).to(device)
    model.eval()
    images = (data(torch, 60, 4, 1, 8, 8, kind="uniform") - 0.1307) / 0.3081
    targets = data(torch, 61, 4, kind="int", high=5)
    test_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, targets), batch_size=1)
    results = []
    for epsilon in [0, 0.1]:
        correct = 0
        adv_examples = []
        for data_, target in test_loader:
            data_, target = data_.to(device), target.to(device)
            data_.requires_grad = True
            output = model(data_)
            init_pred = output.max(1, keepdim=True)[1]
            loss = F.nll_loss(output, target)
            model.zero_grad()
            loss.backward()
            data_grad = data_.grad.data
            data_denorm = denorm(data_)
            perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
            perturbed_data_normalized = (perturbed_data - 0.1307) / 0.3081
            output = model(perturbed_data_normalized)
            final_pred = output.max(1, keepdim=True)[1]
            if final_pred.item() == target.item():
                correct += 1
            adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
            adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        final_acc = correct / float(len(test_loader))
        results.append((epsilon, final_acc, adv_examples))
    # The tutorial's denormalization with per-channel (3, 1, 1) statistics.
    mean = torch.tensor([0.485, 0.456, 0.406]).to(device)
    std = torch.tensor([0.229, 0.224, 0.225]).to(device)
    rgb = data(torch, 62, 3, 4, 4, kind="uniform").to(device)
    return results, rgb * std.view(-1, 1, 1) + mean.view(-1, 1, 1)


def test_fgsm(device):
    compare(lambda torch: fgsm(torch, _on(device)(torch)))


# 5. ImageNet-example training idioms, mixup/cutmix and a model EMA (timm) ---------------

def imagenet_idioms(torch):
    nn = torch.nn

    def accuracy(output, target, topk=(1,)):
        """Computes the accuracy over the k top predictions for the specified values of k"""
        with torch.no_grad():
            maxk = max(topk)
            batch_size = target.size(0)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            res = []
            for k in topk:
                correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
                res.append(correct_k.mul_(100.0 / batch_size))
            return res

    class ModelEmaV3(nn.Module):
        def __init__(self, model, decay=0.9):
            super().__init__()
            self.module = copy.deepcopy(model)
            self.module.eval()
            self.decay = decay

        @torch.no_grad()
        def update(self, model):
            ema_lerp_values, model_lerp_values = [], []
            for ema_v, model_v in zip(self.module.state_dict().values(),
                                      model.state_dict().values()):
                if ema_v.is_floating_point():
                    ema_lerp_values.append(ema_v)
                    model_lerp_values.append(model_v)
                else:
                    ema_v.copy_(model_v)
            torch._foreach_lerp_(ema_lerp_values, model_lerp_values, weight=1. - self.decay)

    def make():
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))

    model = init_params(torch, make())
    model_ema = ModelEmaV3(model)
    swa = init_params(torch, make(), seed=5)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    x = data(torch, 3, 4, 3, 6, 6)
    y = data(torch, 4, 4, kind="int", high=3)
    index = torch.tensor([2, 0, 3, 1])  # torch.randperm(batch_size), fed
    lam = 0.7  # np.random.beta(alpha, alpha), fed
    log = []
    for epoch in range(3):
        # adjust_learning_rate: decay by 10 every epoch
        for param_group in optimizer.param_groups:
            param_group['lr'] = 0.1 * (0.1 ** epoch)
        if epoch == 0:  # mixup
            images = lam * x + (1 - lam) * x[index, :]
        else:  # cutmix: paste a box from the permuted batch
            images = x.clone()
            images[:, :, 1:4, 2:5] = x[index, :, 1:4, 2:5]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=epoch == 2):
            output = model(images)
            loss = lam * criterion(output, y) + (1 - lam) * criterion(output, y[index])
        acc1, acc2 = accuracy(output, y, topk=(1, 2))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model_ema.update(model)
        # a hand-written weight average with the other _foreach ops
        with torch.no_grad():
            swa_params = list(swa.parameters())
            torch._foreach_mul_(swa_params, 0.5)
            torch._foreach_add_(swa_params, list(model.parameters()), alpha=0.5)
        log.append((loss.item(), acc1, acc2, output.dtype == torch.bfloat16))
    grad_norms = torch._foreach_norm([p.grad for p in model.parameters()])
    return log, grad_norms, model.state_dict(), model_ema.module.state_dict(), swa.state_dict()


def test_imagenet_idioms():
    compare(imagenet_idioms, rtol=1e-3, atol=1e-4)


def test_foreach_functions():
    # PyTorch's private multi-tensor functions, as EMA and hand-written optimizer code calls them
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (torch, framework):
        a = [data(lib, 1, 2, 3), data(lib, 2, 5)]
        b = [data(lib, 3, 2, 3), data(lib, 4, 5)]
        out = [lib._foreach_add(a, b, alpha=2), lib._foreach_sub(a, [1.0, 2.0]),
               lib._foreach_div(a, lib.tensor(4.0)), lib._foreach_pow(2.0, b),
               lib._foreach_maximum(a, b), lib._foreach_addcdiv(a, a, b, [0.5, 2.0]),
               lib._foreach_norm(a, 1), lib._foreach_sqrt(lib._foreach_abs(b))]
        c = [t.clone() for t in a]
        assert lib._foreach_addcmul_(c, a, b, value=0.5) is c
        assert lib._foreach_exp_(c) is c
        out.append(c)
        for bad in ([], a[:1]):
            with pytest.raises(RuntimeError, match="Tensor list"):
                lib._foreach_mul_(a, bad)
        with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
            lib._foreach_mul(a, [1.0, 2.0, 3.0])
        with pytest.raises(RuntimeError, match="can't be cast"):
            lib._foreach_add_([lib.ones(2, dtype=lib.int64)], 1.5)
        results[lib.__name__] = out
    assert_same(results["framework"], results["torch"])
    assert isinstance(results["framework"][0], tuple)
