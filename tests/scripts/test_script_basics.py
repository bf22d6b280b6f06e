"""The PyTorch basics tutorials, run unchanged under the framework and under PyTorch.

Each workload is the official tutorial's code (Learning PyTorch with Examples, the
Quickstart, the tensors and autograd tutorials), shrunk to tiny sizes; data and weights
come from NumPy so both runs start alike. What is torch.nn really and the save/load
tutorial are in test_script_basics_nn.py.
"""
import math

import numpy as np
import pytest

from basics_support import compare_with_text, on as _on, oracle_on_one_thread  # noqa: F401
from script_harness import compare, data, init_params

pytestmark = pytest.mark.usefixtures("oracle_on_one_thread")


# 1. Learning PyTorch with Examples: sin(x) by a cubic polynomial ---------------------

def polynomial_tensors(torch, device=lambda torch: "cpu"):
    dtype = torch.float
    device = torch.device(device(torch))  # torch.device("cuda:0") to run on GPU
    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)
    a, b, c, d = (data(torch, s).to(device) for s in range(4))

    learning_rate = 1e-5
    losses = []
    for t in range(20):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        losses.append(loss)
        # Backprop to compute gradients of a, b, c, d with respect to loss
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    return losses, [a.item(), b.item(), c.item(), d.item()]


def polynomial_autograd(torch):
    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
    y = torch.sin(x)
    a, b, c, d = (data(torch, s).requires_grad_() for s in range(4))

    learning_rate = 1e-5
    losses = []
    for t in range(20):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            # both ways of clearing the gradients
            if t % 2:
                a.grad = None
                b.grad = None
                c.grad = None
                d.grad = None
            else:
                a.grad.zero_()
                b.grad.zero_()
                c.grad.zero_()
                d.grad.zero_()
    return losses, [p.detach() for p in (a, b, c, d)], [a.is_leaf, a.requires_grad, a.grad is None]


def polynomial_nn(torch, use_optim):
    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)

    model = torch.nn.Sequential(
        torch.nn.Linear(3, 1),
        torch.nn.Flatten(0, 1)
    )
    init_params(torch, model)
    loss_fn = torch.nn.MSELoss(reduction='sum')
    learning_rate = 1e-3 if use_optim else 1e-5
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate) if use_optim else None
    losses = []
    for t in range(20):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())
        if use_optim:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        else:
            model.zero_grad()
            loss.backward()
            with torch.no_grad():
                for param in model.parameters():
                    param -= learning_rate * param.grad
    linear_layer = model[0]
    result = (f'Result: y = {linear_layer.bias.item():.4f} + '
              f'{linear_layer.weight[:, 0].item():.4f} x + '
              f'{linear_layer.weight[:, 1].item():.4f} x^2 + '
              f'{linear_layer.weight[:, 2].item():.4f} x^3')
    return losses, xx.dtype == torch.float32, list(xx.shape), model.state_dict(), result


def polynomial_function(torch, device=lambda torch: "cpu", steps=20):
    calls = []  # the backward below runs, not one derived from forward

    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            calls.append(list(grad_output.shape))
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.float
    device = torch.device(device(torch))
    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 5e-6
    losses = []
    for t in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return losses, [a, b, c, d], calls


def polynomial_dynamic(torch):
    class DynamicNet(torch.nn.Module):
        def __init__(self, exps):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))
            self.e = torch.nn.Parameter(torch.randn(()))
            self.exps = iter(exps)  # stands in for random.randint(4, 6)

        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, next(self.exps)):
                y = y + self.e * x ** exp
            return y

        def string(self):
            return (f'y = {self.a.item():.4f} + {self.b.item():.4f} x + {self.c.item():.4f} '
                    f'x^2 + {self.d.item():.4f} x^3 + {self.e.item():.4f} x^4 ? + '
                    f'{self.e.item():.4f} x^5 ?')

    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    exps = np.random.default_rng(3).integers(4, 7, size=20).tolist()
    model = DynamicNet(exps)
    with torch.no_grad():  # the random init, fed from NumPy
        for i, p in enumerate(model.parameters()):
            p.copy_(data(torch, 10 + i) * 0.1)
    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    losses = []
    for t in range(20):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses, model.string(), dict(model.named_parameters())


@pytest.mark.parametrize("workload", ["autograd", "nn", "optim", "dynamic"])
def test_polynomial_fit(workload):
    run = {"autograd": polynomial_autograd,
           "nn": lambda torch: polynomial_nn(torch, False),
           "optim": lambda torch: polynomial_nn(torch, True),
           "function": polynomial_function, "dynamic": polynomial_dynamic}[workload]
    compare_with_text(run, rtol=2e-4, atol=1e-4)


def test_polynomial_fit_tensors():
    compare(polynomial_tensors, rtol=2e-4, atol=1e-4)


# the interpreter evaluates every branch of pow's special cases (sqrt of negatives in
# lanes that tl.where then discards) and NumPy warns about it
@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt")
def test_polynomial_fit_function(device):
    # a few steps on the (slow) simulated cuda device
    compare(polynomial_function, _on(device), steps=20 if device == "cpu" else 3,
            rtol=2e-4, atol=1e-4)


# 2. Quickstart: Dataset, DataLoader, a small classifier, train/test, save and reload ---

def quickstart(torch, device, path, epochs=3):
    nn = torch.nn
    from_device = device(torch)
    accel = (torch.accelerator.current_accelerator().type
             if torch.accelerator.is_available() else "cpu")
    device = from_device

    class SyntheticFashion(torch.utils.data.Dataset):
        """FashionMNIST's shape: 28x28 uint8 images and labels in [0, 10)."""

        def __init__(self, seed, n, transform=None, target_transform=None):
            rng = np.random.default_rng(seed)
            self.images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
            self.labels = rng.integers(0, 10, size=n).tolist()
            self.transform = transform
            self.target_transform = target_transform

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, idx):
            image, label = self.images[idx], self.labels[idx]
            if self.transform:
                image = self.transform(image)
            if self.target_transform:
                label = self.target_transform(label)
            return image, label

    def to_tensor(pic):  # torchvision's ToTensor: HxW uint8 -> 1xHxW float in [0, 1]
        return torch.from_numpy(pic).unsqueeze(0).to(torch.float32).div(255)

    training_data = SyntheticFashion(0, 24, transform=to_tensor)
    test_data = SyntheticFashion(1, 12, transform=to_tensor)
    one_hot = SyntheticFashion(1, 3, transform=to_tensor, target_transform=lambda y: torch.zeros(
        10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1))

    batch_size = 8
    train_dataloader = torch.utils.data.DataLoader(training_data, batch_size=batch_size,
                                                   shuffle=False)
    test_dataloader = torch.utils.data.DataLoader(test_data, batch_size=batch_size,
                                                  shuffle=False)
    shapes = []
    for X, y in test_dataloader:
        shapes.append([list(X.shape), str(X.dtype).split(".")[-1], list(y.shape),
                       str(y.dtype).split(".")[-1]])

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 16),
                nn.ReLU(),
                nn.Linear(16, 16),
                nn.ReLU(),
                nn.Linear(16, 10)
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = init_params(torch, NeuralNetwork()).to(device)
    structure = [f"Model structure: {model}\n\n"]
    for name, param in model.named_parameters():
        structure.append(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
    X = torch.rand(1, 28, 28, device=device)
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    structure += [list(logits.shape), pred_probab.sum().item(), y_pred.shape[0],
                  f"{logits.grad_fn}".split(" object at")[0],
                  [n.name() if n else None for n, _ in logits.grad_fn.next_functions]]
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    log = []

    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if batch % 2 == 0:
                loss, current = loss.item(), (batch + 1) * len(X)
                log.append(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        return test_loss, correct

    results = []
    for t in range(epochs):
        train(train_dataloader, model, loss_fn, optimizer)
        results.append(test(test_dataloader, model, loss_fn))

    torch.save(model.state_dict(), path)
    model2 = NeuralNetwork().to(device)
    missing = model2.load_state_dict(torch.load(path, weights_only=True))
    model2.eval()
    x, y = test_data[0][0], test_data[0][1]
    with torch.no_grad():
        x = x.to(device)
        pred = model2(x)
        predicted = pred[0].argmax(0).item()
    target = one_hot[0][1]
    return (accel in ("cpu", "cuda"), structure, shapes, log, results, str(missing), pred,
            predicted == pred.argmax(1)[0].item(), target, len(train_dataloader))


def test_quickstart(tmp_path):
    compare_with_text(quickstart, _on("cpu"), str(tmp_path / "model.pth"), rtol=1e-4,
                      atol=1e-5)


# 4. Tensors: the tutorial's tour ------------------------------------------------------

def tensors_tour(torch, device):
    device = device(torch)
    out = {}
    data_ = [[1, 2], [3, 4]]
    x_data = torch.tensor(data_)
    np_array = np.array(data_)
    x_np = torch.from_numpy(np_array)
    out["x_data"] = [x_data, str(x_data.dtype), f"Tensor: \n {x_data} \n"]

    # from_numpy and .numpy() share memory both ways
    np.multiply(np_array, 2, out=np_array)
    out["x_np_after_numpy_write"] = x_np.clone()
    x_np.add_(1)
    out["np_after_tensor_write"] = np_array.copy()
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    out["numpy_after_add_"] = n.copy()
    np.add(n, 1, out=n)
    out["tensor_after_np_add"] = t.clone()

    x_ones = torch.ones_like(x_data)
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    out["like"] = [x_ones, f"Ones Tensor: \n {x_ones} \n", list(x_rand.shape),
                   str(x_rand.dtype), bool(((x_rand >= 0) & (x_rand < 1)).all())]
    shape = (2, 3,)
    rand_tensor = torch.rand(shape)
    ones_tensor = torch.ones(shape)
    zeros_tensor = torch.zeros(shape)
    out["shapes"] = [list(rand_tensor.shape), ones_tensor, zeros_tensor,
                     f"Ones Tensor: \n {ones_tensor} \n", f"Zeros Tensor: \n {zeros_tensor}"]

    tensor = torch.rand(3, 4)
    out["attributes"] = [f"Shape of tensor: {tensor.shape}",
                         f"Datatype of tensor: {tensor.dtype}",
                         f"Device tensor is stored on: {tensor.device}"]

    tensor = data(torch, 1, 4, 4)
    if torch.accelerator.is_available():
        tensor = tensor.to(torch.accelerator.current_accelerator())
    tensor = tensor.to(device)
    out["device"] = tensor.device.type == device
    out["first_row"] = tensor[0]
    out["first_column"] = tensor[:, 0]
    out["last_column"] = tensor[..., -1]
    tensor[:, 1] = 0
    out["zeroed"] = [tensor, str(torch.ones(4, 4)[:, 1:3].mul(2))]
    out["tuple_and_range_index"] = [tensor[(0, 2), 1:], tensor[range(1, 3), (0, 3)]]
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    out["cat"] = t1
    out["stack"] = torch.stack([tensor, tensor], dim=1)

    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    out["arith"] = [y1, y2, y3, z1, z2, z3]

    agg = tensor.sum()
    agg_item = agg.item()
    out["agg"] = [agg_item, isinstance(agg_item, float),
                  f"{torch.tensor(agg_item).round(decimals=3).item():.3f} {type(agg_item)}"]

    print(f"{tensor} \n")
    tensor.add_(5)
    out["add_"] = [tensor.clone(), f"{tensor.cpu()}"]
    out["t_"] = tensor[:2].clone().t_()
    tgt = torch.zeros(4, 4, device=device)
    out["copy_"] = tgt.copy_(tensor[0])
    out["numpy_bridge_shares"] = tensor.cpu().numpy().sum()
    return out


def test_tensors_tour(device):
    compare_with_text(tensors_tour, _on(device), rtol=1e-5, atol=1e-5)


# 5. Automatic differentiation with torch.autograd -------------------------------------

def autograd_tutorial(torch):
    out = {}
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = data(torch, 1, 5, 3).requires_grad_(True)
    b = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        b.copy_(data(torch, 2, 3))
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    # the tutorial prints them: f"Gradient function for z = {z.grad_fn}"; the framework's
    # loss node is its composite's last op (MeanBackward0), so only its presence is compared
    out["grad_fn_names"] = [z.grad_fn.name(), f"{z.grad_fn}".split(" object at")[0],
                            loss.grad_fn is not None]
    nexts = z.grad_fn.next_functions
    out["next_functions"] = [len(nexts), nexts[1][0].name(), nexts[1][0].variable is b,
                             nexts[0][0] is not None, f"{nexts[1][0]}".split(" object at")[0]]
    # printed tensors show the node of the indexing's last view op
    out["indexing_nodes"] = [f"{t.grad_fn}".split(" object at")[0] for t in (
        w[:2], w[1], w[:, 0], w[..., -1], w[None], w[0, None], w[:], w[:, :], w[[0, 1]])]
    loss.backward()
    out["grads"] = [w.grad, b.grad, loss]
    out["leaf"] = [w.is_leaf, z.is_leaf, x.requires_grad, z.requires_grad]

    z = torch.matmul(x, w) + b
    a = z.requires_grad
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    z_det = (torch.matmul(x, w) + b).detach()
    out["no_grad"] = [a, z.requires_grad, z_det.requires_grad, z.grad_fn is None]

    # Tensor gradients and Jacobian products
    inp = torch.eye(4, 5, requires_grad=True)
    out_ = (inp + 1).pow(2).t()
    out_.backward(torch.ones_like(out_), retain_graph=True)
    first = inp.grad.clone()
    out_.backward(torch.ones_like(out_), retain_graph=True)
    second = inp.grad.clone()
    inp.grad.zero_()
    out_.backward(torch.ones_like(out_), retain_graph=True)
    out["accumulation"] = [first, second, inp.grad]
    # a vector-Jacobian product with a non-uniform vector
    v = data(torch, 3, 5, 4)
    inp.grad = None
    out_.backward(v)
    out["vjp_arg"] = inp.grad
    try:
        out_.backward(v)
        out["second_backward"] = "no error"
    except RuntimeError as e:
        out["second_backward"] = str(e).split(".")[0]

    # requires_grad_ on a tensor built without it; torch.autograd.grad
    q = data(torch, 4, 3)
    out["before"] = q.requires_grad
    q.requires_grad_()
    s = (q ** 3).sum()
    (g,) = torch.autograd.grad(s, q, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), q)
    out["autograd_grad"] = [g, gg, g.requires_grad]

    F = torch.autograd.functional

    def f(x):
        return x.sin() * x.sum()

    def scalar(x):
        return (x.exp() * x).sum()

    p = data(torch, 5, 3)
    vec = data(torch, 6, 3)
    out["jacobian"] = F.jacobian(f, p)
    out["hessian"] = F.hessian(scalar, p)
    out["vjp"] = F.vjp(f, p, vec)
    out["jvp"] = F.jvp(f, p, vec)
    out["hvp"] = F.hvp(scalar, p, vec)
    out["vhp"] = F.vhp(scalar, p, vec)
    pair = F.jacobian(lambda a, b: a * b.sum(), (p, vec))
    out["jacobian_pair"] = list(pair)
    return out


def test_autograd_tutorial():
    compare_with_text(autograd_tutorial, rtol=1e-5, atol=1e-5)
