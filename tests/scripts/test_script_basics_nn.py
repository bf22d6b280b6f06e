"""What is torch.nn really and the save/load tutorial, run unchanged under the framework
and under PyTorch (tiny sizes; data and weights from NumPy)."""
import io
import math
import pickle

import numpy as np
import pytest

import framework
from basics_support import compare_with_text, on as _on, oracle_on_one_thread  # noqa: F401
from script_harness import compare, data, init_params

pytestmark = pytest.mark.usefixtures("oracle_on_one_thread")


# 3. What is torch.nn really? ------------------------------------------------------------

def _mnist_arrays():
    """MNIST's layout, as the tutorial's pickle gives it: flattened float32 images in [0, 1)
    and int64 labels, as NumPy arrays."""
    rng = np.random.default_rng(7)
    x_train = rng.random((40, 784), dtype=np.float32)
    y_train = rng.integers(0, 10, size=40)
    x_valid = rng.random((20, 784), dtype=np.float32)
    y_valid = rng.integers(0, 10, size=20)
    return x_train, y_train, x_valid, y_valid


def nn_from_scratch(torch):
    """The first half: manual weights, log_softmax, nll and accuracy by hand, then
    F.cross_entropy."""
    F = torch.nn.functional
    x_train, y_train, x_valid, y_valid = map(torch.tensor, _mnist_arrays())
    n, c = x_train.shape
    out = [[n, c], y_train.min(), y_train.max()]

    weights = torch.from_numpy(np.random.default_rng(8).standard_normal(
        (784, 10)).astype(np.float32)) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 16
    xb = x_train[0:bs]
    preds = model(xb)
    out += [preds[0], list(preds.shape), type(preds.grad_fn).__name__ is not None]

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll
    yb = y_train[0:bs]
    out.append(loss_func(preds, yb))

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    out.append(accuracy(preds, yb))

    lr = 0.5
    epochs = 2
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    out += [loss_func(model(xb), yb), accuracy(model(xb), yb), weights, bias]

    loss_func = F.cross_entropy

    def model(xb):
        return xb @ weights + bias

    out += [loss_func(model(xb), yb), accuracy(model(xb), yb)]
    return out


def nn_refactored(torch):
    """The refactoring: nn.Module with nn.Parameter, nn.Linear, optim, TensorDataset,
    DataLoader, fit(); each stage trains from the same start."""
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    x_train, y_train, x_valid, y_valid = map(torch.tensor, _mnist_arrays())
    n, c = x_train.shape
    bs, lr, epochs = 16, 0.5, 2
    loss_func = F.cross_entropy
    results = {}

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    model = init_params(torch, Mnist_Logistic())
    results["logistic_before"] = loss_func(model(x_train[0:bs]), y_train[0:bs])

    def fit():
        for epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = loss_func(pred, yb)

                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= p.grad * lr
                    model.zero_grad()

    fit()
    results["logistic_after"] = loss_func(model(x_train[0:bs]), y_train[0:bs])

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    model = init_params(torch, Mnist_Logistic())
    fit()
    results["linear_after"] = loss_func(model(x_train[0:bs]), y_train[0:bs])

    def get_model():
        model = init_params(torch, Mnist_Logistic())
        return model, optim.SGD(model.parameters(), lr=lr)

    model, opt = get_model()
    train_ds = TensorDataset(x_train, y_train)
    train_dl = DataLoader(train_ds, batch_size=bs)
    for epoch in range(epochs):
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
    results["dataloader_after"] = loss_func(model(xb), yb)

    valid_ds = TensorDataset(x_valid, y_valid)

    def get_data(train_ds, valid_ds, bs):
        # shuffle=True in the tutorial: its order cannot match across libraries
        return (
            DataLoader(train_ds, batch_size=bs, shuffle=False),
            DataLoader(valid_ds, batch_size=bs * 2),
        )

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    val_losses = []

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(
                    *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
                )
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            val_losses.append(val_loss)

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    model, opt = get_model()
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    results["fit_val_losses"] = val_losses
    # shuffle=True still visits every sample once per epoch
    seen = torch.cat([yb for _, yb in DataLoader(train_ds, batch_size=bs, shuffle=True)])
    results["shuffled_labels"] = seen.sort().values
    return results


def nn_cnn(torch, device):
    """The CNN stages: Conv2d stride 2 with F.avg_pool2d, nn.Sequential with a Lambda
    module, WrappedDataLoader, nn.AdaptiveAvgPool2d, SGD with momentum."""
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    dev = torch.device(device(torch))
    x_train, y_train, x_valid, y_valid = map(torch.tensor, _mnist_arrays())
    train_ds = TensorDataset(x_train, y_train)
    valid_ds = TensorDataset(x_valid, y_valid)
    bs, lr, epochs = 16, 0.1, 1
    loss_func = F.cross_entropy
    val_losses = []

    def get_data(train_ds, valid_ds, bs):
        return (DataLoader(train_ds, batch_size=bs, shuffle=False),
                DataLoader(valid_ds, batch_size=bs * 2))

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(
                    *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
                )
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            val_losses.append(val_loss)

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    model = init_params(torch, Mnist_CNN())
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, 28, 28)

    model = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AvgPool2d(4),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    init_params(torch, model)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)

    def preprocess(x, y):
        return x.view(-1, 1, 28, 28).to(dev), y.to(dev)

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield (self.func(*b))

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)

    model = nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    init_params(torch, model)
    model.to(dev)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)
    return val_losses, len(train_dl), model.state_dict()


def test_nn_tutorial_from_scratch():
    compare(nn_from_scratch, rtol=1e-4, atol=1e-5)


def test_nn_tutorial_refactored():
    compare(nn_refactored, rtol=1e-4, atol=1e-5)


def test_nn_tutorial_cnn():
    compare(nn_cnn, _on("cpu"), rtol=1e-4, atol=1e-5)


# 6. Saving and loading models ---------------------------------------------------------

def _the_model_class(torch):
    """The tutorial's TheModelClass for one library, defined at module level (as
    ``torch.save(model)`` needs, to pickle it by name) under its own name."""
    nn, F = torch.nn, torch.nn.functional

    class TheModelClass(nn.Module):
        def __init__(self):
            super(TheModelClass, self).__init__()
            self.conv1 = nn.Conv2d(3, 4, 3)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(4, 6, 3)
            self.fc1 = nn.Linear(6 * 1 * 1, 12)
            self.fc2 = nn.Linear(12, 8)
            self.fc3 = nn.Linear(8, 4)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x.view(-1, 6 * 1 * 1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    name = f"TheModelClass_{torch.__name__}"
    TheModelClass.__name__ = TheModelClass.__qualname__ = name
    globals()[name] = TheModelClass
    return TheModelClass


def save_load(torch, tmp_dir):
    nn, optim = torch.nn, torch.optim
    TheModelClass = _the_model_class(torch)
    PATH = f"{tmp_dir}/{torch.__name__}_model.pt"
    out = {}

    model = init_params(torch, TheModelClass())
    optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    x = data(torch, 1, 2, 3, 10, 10)
    target = data(torch, 2, 2, kind="int", high=4)
    loss = nn.functional.cross_entropy(model(x), target)
    loss.backward()
    optimizer.step()

    # the printed state_dicts: names in registration order, sizes, optimizer's layout
    out["model_state_dict"] = [f"{k}\t{model.state_dict()[k].size()}"
                               for k in model.state_dict()]
    osd = optimizer.state_dict()
    out["optimizer_state_dict"] = [list(osd), osd["param_groups"], sorted(osd["state"]),
                                   osd["state"][0]["momentum_buffer"]]

    # state_dict, then load_state_dict into a fresh model
    torch.save(model.state_dict(), PATH)
    model2 = TheModelClass()
    result = model2.load_state_dict(torch.load(PATH, weights_only=True))
    model2.eval()
    out["state_dict_reload"] = [list(result.missing_keys), list(result.unexpected_keys),
                                model2(x)]

    # the entire model (weights_only=False: its class is pickled by name)
    torch.save(model, PATH)
    whole = torch.load(PATH, weights_only=False)
    whole.eval()
    out["whole_model"] = [type(whole) is TheModelClass, whole(x)]
    try:
        torch.load(PATH)  # weights_only=True by default: the class is refused
        out["weights_only_default"] = "loaded"
    except pickle.UnpicklingError as e:
        out["weights_only_default"] = str(e).split(".")[0]

    # a general checkpoint, resumed into a new model and optimizer
    torch.save({
        'epoch': 3,
        'model_state_dict': model.state_dict(),
        'optimizer_state_dict': optimizer.state_dict(),
        'loss': loss,
    }, PATH)
    model3 = TheModelClass()
    optimizer3 = optim.SGD(model3.parameters(), lr=0.5, momentum=0.1)
    checkpoint = torch.load(PATH, weights_only=True)
    model3.load_state_dict(checkpoint['model_state_dict'])
    optimizer3.load_state_dict(checkpoint['optimizer_state_dict'])
    epoch = checkpoint['epoch']
    loss3 = checkpoint['loss']
    model3.train()
    nn.functional.cross_entropy(model3(x), target).backward()
    optimizer3.step()
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), target).backward()
    optimizer.step()
    out["checkpoint"] = [epoch, loss3, loss3.requires_grad, optimizer3.param_groups[0]["lr"],
                         model3.state_dict(), model.state_dict()]

    # warm-starting a different model with strict=False
    class Wider(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3)
            self.fc4 = nn.Linear(4, 2)

    modelB = Wider()
    torch.save(model.state_dict(), PATH)
    keys = modelB.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
    out["strict_false"] = [keys.missing_keys, keys.unexpected_keys, modelB.conv1.weight,
                           str(keys).replace("torch.", "")]
    try:
        Wider().load_state_dict(model.state_dict())
        out["strict_error"] = "loaded"
    except RuntimeError as e:
        out["strict_error"] = str(e)

    # map_location, and an in-memory buffer
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    sd = torch.load(buffer, map_location=torch.device('cpu'), weights_only=True)
    buffer.seek(0)
    sd2 = torch.load(buffer, map_location=lambda storage, loc: storage)
    out["bytesio"] = [sd, list(sd2), sd["fc3.bias"].device.type,
                      sd["fc1.weight"].requires_grad]
    return out


def test_save_load(tmp_path):
    compare_with_text(save_load, str(tmp_path), rtol=1e-5, atol=1e-6)


def test_save_load_map_location_device(tmp_path):
    """A checkpoint saved from one device loads onto the other through map_location."""
    nn = framework.nn
    path = str(tmp_path / "m.pt")
    for src, dst in (("cpu", "cuda"), ("cuda", "cpu")):
        if "cuda" in (src, dst) and not framework.cuda.is_available():
            continue
        model = init_params(framework, nn.Linear(3, 2)).to(src)
        framework.save({"model": model.state_dict()}, path)
        sd = framework.load(path, map_location=dst)["model"]
        assert sd["weight"].device.type == dst
        np.testing.assert_array_equal(sd["weight"].cpu().numpy(),
                                      model.weight.detach().cpu().numpy())
        # a dict maps saved location tags, which name the device index
        sd = framework.load(path, map_location={"cuda:0" if src == "cuda" else src: dst})["model"]
        assert sd["bias"].device.type == dst
