"""Script sweep: nn utilities and tooling tutorials, part 1: parametrizations, pruning and
dynamic quantization (part 2, test_script_tooling_runtime.py: torch.fx, profiler,
torch.utils.benchmark, checkpointing, channels-last).

Each workload is tutorial-style PyTorch code run under the framework and under PyTorch.
"""
import importlib
import io

from tests.scripts.script_harness import compare, data, init_params


def _submodule(torch, name):
    """``import torch.<name>`` as a script would, in whichever library ``torch`` is."""
    return importlib.import_module(f"{torch.__name__}.{name}")


# ---------------------------------------------------------------------------------------
# 1. Parametrizations tutorial
# ---------------------------------------------------------------------------------------

def run_parametrizations(torch):
    nn = torch.nn
    parametrize = torch.nn.utils.parametrize
    out = {}

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    layer = init_params(torch, nn.Linear(3, 3))
    parametrize.register_parametrization(layer, "weight", Symmetric())
    A = layer.weight
    out["sym"] = A
    out["sym_is_sym"] = bool(torch.allclose(A, A.T))
    out["is_param"] = (parametrize.is_parametrized(layer),
                       parametrize.is_parametrized(layer, "weight"),
                       parametrize.is_parametrized(layer, "bias"))
    out["original"] = layer.parametrizations.weight.original
    out["keys"] = sorted(layer.state_dict().keys())
    out["names"] = sorted(n for n, _ in layer.named_parameters())
    out["type"] = type(layer).__name__

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return torch.matrix_exp(X)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

    # Stacking: skew-symmetric then exponential gives an orthogonal matrix.
    layer_orth = init_params(torch, nn.Linear(3, 3), seed=1)
    parametrize.register_parametrization(layer_orth, "weight", Skew())
    parametrize.register_parametrization(layer_orth, "weight", MatrixExponential())
    Q = layer_orth.weight
    out["orth_err"] = float(torch.dist(Q.T @ Q, torch.eye(3)).detach())
    out["orth_w"] = Q
    out["stack_len"] = len(layer_orth.parametrizations.weight)
    out["stack_keys"] = sorted(layer_orth.state_dict().keys())

    # Parametrization with right_inverse: assigning to weight goes through it.
    class Symmetric2(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    layer2 = nn.Linear(3, 3)
    parametrize.register_parametrization(layer2, "weight", Symmetric2())
    X = data(torch, 2, 3, 3)
    with torch.no_grad():
        layer2.weight = X + X.T
    out["ri_weight"] = layer2.weight
    out["ri_original"] = layer2.parametrizations.weight.original

    # A parametrization that changes shape; right_inverse returns two tensors.
    class PruneCols(nn.Module):
        def forward(self, X, Y):
            return X + Y

        def right_inverse(self, Z):
            return Z, torch.zeros_like(Z)

    layer3 = init_params(torch, nn.Linear(4, 2), seed=3)
    parametrize.register_parametrization(layer3, "weight", PruneCols())
    out["orig0"] = layer3.parametrizations.weight.original0
    out["orig1"] = layer3.parametrizations.weight.original1
    out["two_keys"] = sorted(layer3.state_dict().keys())

    # Caching: weight computed once inside the context.
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return 2 * X

    layer4 = init_params(torch, nn.Linear(3, 2), seed=4)
    parametrize.register_parametrization(layer4, "weight", Counting())
    x = data(torch, 5, 4, 3)
    calls.clear()
    with parametrize.cached():
        y1 = layer4(x)
        y2 = layer4(x)
    out["cached_calls"] = len(calls)
    calls.clear()
    y3 = layer4(x)
    y4 = layer4(x)
    out["uncached_calls"] = len(calls)
    out["cached_y"] = y1 + y2 + y3 + y4

    # Gradients flow through the parametrization to the original.
    layer.zero_grad()
    layer(data(torch, 6, 2, 3)).pow(2).sum().backward()
    out["sym_grad"] = layer.parametrizations.weight.original.grad

    # Removing: keep the parametrized value, or restore the original.
    w_before = layer.weight.detach().clone()
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
    out["removed_keep"] = (layer.weight, parametrize.is_parametrized(layer),
                           type(layer.weight).__name__, type(layer).__name__)
    out["removed_keep_eq"] = bool(torch.equal(layer.weight, w_before))
    orig = layer_orth.parametrizations.weight.original.detach().clone()
    parametrize.remove_parametrizations(layer_orth, "weight", leave_parametrized=False)
    out["removed_orig"] = layer_orth.weight
    out["removed_orig_eq"] = bool(torch.equal(layer_orth.weight, orig))
    return out


def run_builtin_parametrizations(torch):
    nn = torch.nn
    P = torch.nn.utils.parametrizations
    parametrize = torch.nn.utils.parametrize
    out = {}

    # orthogonal: the weight is orthogonal whatever the original.
    lin = init_params(torch, nn.Linear(4, 3), seed=10)
    P.orthogonal(lin)
    W = lin.weight
    out["orth_WWt"] = W @ W.T
    out["orth_keys"] = sorted(lin.state_dict().keys())
    x = data(torch, 11, 2, 4)
    lin(x).sum().backward()
    out["orth_grad_shape"] = tuple(lin.parametrizations.weight.original.grad.shape)

    # weight_norm: weight = g * v / ||v||, with original0 = g, original1 = v.
    lin2 = init_params(torch, nn.Linear(4, 3), seed=12)
    w0 = lin2.weight.detach().clone()
    P.weight_norm(lin2)
    out["wn_keys"] = sorted(lin2.state_dict().keys())
    out["wn_g"] = lin2.parametrizations.weight.original0
    out["wn_v"] = lin2.parametrizations.weight.original1
    out["wn_w"] = lin2.weight
    out["wn_same"] = bool(torch.allclose(lin2.weight, w0, atol=1e-6))
    with torch.no_grad():
        lin2.parametrizations.weight.original0.mul_(2.0)
    out["wn_scaled"] = lin2.weight
    y = lin2(x)
    y.pow(2).sum().backward()
    out["wn_grads"] = (lin2.parametrizations.weight.original0.grad,
                       lin2.parametrizations.weight.original1.grad)

    # spectral_norm: after many power iterations sigma_max(weight) ~ 1.
    lin3 = init_params(torch, nn.Linear(5, 4), seed=13)
    P.spectral_norm(lin3, n_power_iterations=30)
    sn = lin3.parametrizations.weight[0]
    out["sn_keys"] = sorted(lin3.state_dict().keys())
    out["sn_shapes"] = (tuple(sn._u.shape), tuple(sn._v.shape))
    # Overwrite the random power-iteration start so both libraries agree.
    with torch.no_grad():
        sn._u.copy_(data(torch, 14, 4))
        sn._v.copy_(data(torch, 15, 5))
        sn._u.div_(sn._u.norm())
        sn._v.div_(sn._v.norm())
    lin3.train()
    Wsn = lin3.weight
    out["sn_w"] = Wsn
    out["sn_sigma"] = float(torch.linalg.matrix_norm(Wsn.detach(), ord=2))
    lin3.eval()
    out["sn_w_eval"] = lin3.weight
    out["sn_params"] = sorted(n for n, _ in lin3.named_parameters())
    parametrize.remove_parametrizations(lin3, "weight")
    out["sn_removed"] = sorted(lin3.state_dict().keys())
    return out


def test_parametrizations():
    got = compare(run_parametrizations, rtol=1e-4, atol=1e-5)
    assert got["sym_is_sym"] and got["orth_err"] < 1e-5
    assert got["cached_calls"] == 1 and got["uncached_calls"] == 2


def test_builtin_parametrizations():
    got = compare(run_builtin_parametrizations, rtol=1e-4, atol=1e-5)
    assert abs(got["sn_sigma"] - 1.0) < 1e-3


# ---------------------------------------------------------------------------------------
# 2. Pruning tutorial
# ---------------------------------------------------------------------------------------

def run_pruning(torch):
    nn = torch.nn
    F = torch.nn.functional
    prune = _submodule(torch, "nn.utils.prune")  # import torch.nn.utils.prune as prune
    out = {}

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 3, 3)
            self.conv2 = nn.Conv2d(3, 4, 3)
            self.fc1 = nn.Linear(4 * 2 * 2, 6)
            self.fc2 = nn.Linear(6, 3)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.relu(self.conv2(x))
            x = x.view(-1, int(x.nelement() / x.shape[0]))
            return self.fc2(F.relu(self.fc1(x)))

    model = init_params(torch, LeNet())
    x = data(torch, 20, 2, 1, 10, 10)
    module = model.conv1
    out["params0"] = [n for n, _ in module.named_parameters()]
    out["buffers0"] = [n for n, _ in module.named_buffers()]

    # random_unstructured: compare the mask's sparsity and weight == weight_orig * mask.
    prune.random_unstructured(module, name="weight", amount=0.3)
    out["params1"] = [n for n, _ in module.named_parameters()]
    out["buffers1"] = [n for n, _ in module.named_buffers()]
    out["rand_zeros"] = int((module.weight_mask == 0).sum())
    out["rand_prod"] = bool(torch.equal(module.weight, module.weight_orig * module.weight_mask))
    out["hooks"] = [type(h).__name__ for h in module._forward_pre_hooks.values()]
    out["is_pruned"] = (prune.is_pruned(model), prune.is_pruned(model.fc1))
    out["type_weight"] = type(module.weight).__name__

    # l1_unstructured on the bias: the 3 smallest (amount=3) entries go.
    prune.l1_unstructured(module, name="bias", amount=3)
    out["bias_mask"] = module.bias_mask
    out["hooks2"] = len(module._forward_pre_hooks)

    # l1_unstructured with a fraction, then ln_structured on top: a PruningContainer.
    prune.l1_unstructured(model.conv2, name="weight", amount=0.3)
    out["conv2_mask1"] = model.conv2.weight_mask
    prune.ln_structured(model.conv2, name="weight", amount=0.5, n=2, dim=0)
    out["conv2_mask2"] = model.conv2.weight_mask
    hook = [h for h in model.conv2._forward_pre_hooks.values()][-1]
    out["container"] = (type(hook).__name__, [type(m).__name__ for m in hook])
    out["conv2_weight"] = model.conv2.weight
    out["sd_keys"] = sorted(model.state_dict().keys())

    # prune.remove makes it permanent: weight is a Parameter again, no hook, no buffer.
    prune.remove(model.conv2, "weight")
    out["removed"] = ([n for n, _ in model.conv2.named_parameters()],
                      [n for n, _ in model.conv2.named_buffers()],
                      len(model.conv2._forward_pre_hooks),
                      type(model.conv2.weight).__name__)
    out["removed_w"] = model.conv2.weight

    # Global pruning over several layers.
    model2 = init_params(torch, LeNet(), seed=1)
    parameters_to_prune = (
        (model2.conv1, "weight"), (model2.conv2, "weight"),
        (model2.fc1, "weight"), (model2.fc2, "weight"))
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured,
                              amount=0.2)
    out["global_sparsity"] = [
        float(torch.sum(m.weight == 0)) / float(m.weight.nelement())
        for m, _ in parameters_to_prune]
    total = sum(float(torch.sum(m.weight == 0)) for m, _ in parameters_to_prune)
    out["global_total"] = total
    out["global_masks"] = [m.weight_mask for m, _ in parameters_to_prune]

    # A custom pruning method: the tutorial's FooBarPruningMethod.
    class FooBarPruningMethod(prune.BasePruningMethod):
        """Prune every other entry in a tensor"""
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    def foobar_unstructured(module, name):
        FooBarPruningMethod.apply(module, name)
        return module

    foobar_unstructured(model2.fc2, name="bias")
    out["foobar"] = model2.fc2.bias_mask

    # The pruned models still train: forward, backward, a step.
    opt = torch.optim.SGD(model2.parameters(), lr=0.1)
    losses = []
    for step in range(2):
        opt.zero_grad()
        loss = model2(x).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out["losses"] = losses
    out["grad_masked"] = model2.fc1.weight_orig.grad
    # The random mask is a buffer the hook reads: overwrite it to compare outputs.
    with torch.no_grad():
        model.conv1.weight_mask.copy_((data(torch, 21, 3, 1, 3, 3) > 0).float())
    out["y"] = model(x)
    return out


def test_pruning():
    got = compare(run_pruning, rtol=1e-4, atol=1e-5)
    assert got["rand_zeros"] == 8 and got["rand_prod"]  # round(0.3 * 27) entries


# ---------------------------------------------------------------------------------------
# 3. Dynamic quantization
# ---------------------------------------------------------------------------------------

def _print_size_of_model(torch, model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    size = buf.tell()
    buf.seek(0)
    return size, torch.load(buf)


def run_dynamic_quant(torch):
    nn = torch.nn
    out = {}

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.relu = nn.ReLU()
            self.fc2 = nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    model = init_params(torch, MLP()).eval()
    x = data(torch, 80, 5, 8)
    qmodel = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    out["modules"] = [type(m).__name__ for m in qmodel.modules()]
    out["float_unchanged"] = type(model.fc1).__name__
    w = qmodel.fc1.weight()
    out["qweight"] = (str(w.dtype).split(".")[-1], w.q_scale(), w.q_zero_point(),
                      w.int_repr(), str(qmodel.fc2).split("(")[0])
    with torch.no_grad():
        out["y"] = qmodel(x)
        out["y_float"] = model(x)
    size_f, _ = _print_size_of_model(torch, model)
    size_q, sd = _print_size_of_model(torch, qmodel)
    out["sizes_positive"] = size_f > 0 and size_q > 0
    q2 = torch.ao.quantization.quantize_dynamic(
        init_params(torch, MLP(), seed=5).eval(), {nn.Linear}, dtype=torch.qint8)
    q2.load_state_dict(sd)
    with torch.no_grad():
        out["reloaded"] = q2(x)
    return out


def run_dynamic_quant_lstm(torch):
    nn = torch.nn

    class LSTMModel(nn.Module):
        """The word language model of the tutorial, tiny."""

        def __init__(self, ntoken=7, ninp=4, nhid=3, nlayers=2):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers)
            self.decoder = nn.Linear(nhid, ntoken)

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.encoder(input), hidden)
            return self.decoder(output), hidden

    model = init_params(torch, LSTMModel()).eval()
    q = torch.ao.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    tokens = data(torch, 81, 5, 2, kind="int", high=7)
    hidden = (torch.zeros(2, 2, 3), torch.zeros(2, 2, 3))
    with torch.no_grad():
        y, (h, c) = q(tokens, hidden)
    # bidirectional, batch_first, no initial state
    bi = init_params(torch, nn.LSTM(4, 3, 2, batch_first=True, bidirectional=True), seed=7)
    qbi = torch.ao.quantization.quantize_dynamic(nn.Sequential(bi).eval(), {nn.LSTM},
                                                 dtype=torch.qint8)
    xb = data(torch, 82, 2, 5, 4) * 3
    with torch.no_grad():
        yb, (hb, cb) = qbi[0](xb)
        yb_float = bi(xb)[0]
    nnqd = torch.ao.nn.quantized.dynamic
    return {"types": [repr(q.rnn), repr(qbi), repr(q.decoder).split("(")[0],
                      isinstance(q.rnn, nnqd.LSTM), isinstance(q.decoder, nnqd.Linear)],
            "y": y, "h": h, "c": c, "bi": (yb, hb, cb),
            "quant_err": float((yb - yb_float).abs().max())}


def test_dynamic_quantization():
    got = compare(run_dynamic_quant, rtol=1e-4, atol=1e-5)
    assert got["qweight"][0] == "qint8"


def test_dynamic_quantization_lstm():
    # fbgemm's integer arithmetic is reproduced: agreement far below the quantization error
    got = compare(run_dynamic_quant_lstm, rtol=1e-5, atol=1e-6)
    assert got["quant_err"] > 1e-4
