"""Script sweep: training infrastructure recipes, part 2: optimizer features, weight
averaging (SWA/EMA), a complete research training script and torch.compile patterns
(part 1, test_script_training.py: AMP, data loading, learning-rate schedulers).

Each workload is tutorial-style PyTorch code run under the framework and under PyTorch.
"""
import copy
import os
import tempfile

import framework
from tests.scripts.script_harness import assert_same, compare, data, init_params, oracle


# ---------------------------------------------------------------------------------------
# 4. Optimizer features
# ---------------------------------------------------------------------------------------

def _net(torch):
    nn = torch.nn
    return init_params(torch, nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)))


def _loss(torch, model, seed=0):
    x, y = data(torch, 10 + seed, 5, 4), data(torch, 20 + seed, 5, 2)
    return torch.nn.functional.mse_loss(model(x), y)


def _optimizers(torch, foreach):
    O = torch.optim
    fe = {"foreach": foreach}
    return {
        "sgd_nesterov": lambda p: O.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                         weight_decay=0.01, **fe),
        "sgd_dampening": lambda p: O.SGD(p, lr=0.1, momentum=0.5, dampening=0.1,
                                          weight_decay=0.01, maximize=True, **fe),
        "adam_amsgrad": lambda p: O.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.01, **fe),
        "adamw": lambda p: O.AdamW(p, lr=0.01, weight_decay=0.1, **fe),
        "adamw_max": lambda p: O.AdamW(p, lr=0.01, weight_decay=0.1, maximize=True,
                                       amsgrad=True, **fe),
        "radam": lambda p: O.RAdam(p, lr=0.01, weight_decay=0.1,
                                   decoupled_weight_decay=True, **fe),
        "nadam": lambda p: O.NAdam(p, lr=0.01, weight_decay=0.1, momentum_decay=0.01, **fe),
        "nadam_dec": lambda p: O.NAdam(p, lr=0.01, weight_decay=0.1,
                                       decoupled_weight_decay=True, **fe),
        "adagrad": lambda p: O.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.01,
                                       initial_accumulator_value=0.1, **fe),
        "adamax": lambda p: O.Adamax(p, lr=0.01, weight_decay=0.01, **fe),
        "asgd": lambda p: O.ASGD(p, lr=0.01, t0=1, weight_decay=0.01, **fe),
        "rprop": lambda p: O.Rprop(p, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-4, 1), **fe),
        "rmsprop": lambda p: O.RMSprop(p, lr=0.01, centered=True, momentum=0.5,
                                       weight_decay=0.01, **fe),
        "adadelta": lambda p: O.Adadelta(p, lr=1.0, rho=0.8, weight_decay=0.01, **fe),
    }


def run_optimizers(torch, foreach):
    out = {}
    for name, make in _optimizers(torch, foreach).items():
        model = _net(torch)
        opt = make(model.parameters())
        for step in range(3):
            opt.zero_grad()
            _loss(torch, model, step).backward()
            opt.step()
        out[name] = list(model.parameters())
    return out


def run_sparse_adam(torch):
    nn = torch.nn
    emb = init_params(torch, nn.Embedding(7, 3, sparse=True))
    opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    for step in range(3):
        opt.zero_grad()
        idx = torch.tensor([[1, 2, 4], [4, 3, 1 + step]])
        emb(idx).pow(2).sum().backward()
        opt.step()
    return {"weight": emb.weight, "is_sparse": emb.weight.grad.is_sparse}


def run_optimizer_api(torch):
    nn = torch.nn
    out = {}
    model = _net(torch)
    opt = torch.optim.Adam([
        {"params": model[0].parameters()},
        {"params": [model[2].weight], "lr": 0.05, "betas": (0.8, 0.9)},
    ], lr=0.01)
    opt.add_param_group({"params": [model[2].bias], "weight_decay": 0.1})
    out["groups"] = [{k: g[k] for k in ("lr", "betas", "weight_decay", "eps")}
                     for g in opt.param_groups]
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kw: calls.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, args, kw: calls.append("post"))
    seen = []
    opt.register_state_dict_pre_hook(lambda o: seen.append(len(o.state)))

    def closure():
        opt.zero_grad()
        loss = _loss(torch, model)
        loss.backward()
        return loss

    out["closure_loss"] = opt.step(closure)
    h1.remove()
    h2.remove()
    opt.step(closure)
    out["calls"] = calls
    # a copy, as a checkpoint file gives: PyTorch's state_dict shares the step tensors,
    # which load_state_dict would share again with the fresh optimizer
    sd = copy.deepcopy(opt.state_dict())
    out["seen"] = seen
    out["sd_groups"] = [g["params"] for g in sd["param_groups"]]
    out["sd_step"] = [float(sd["state"][i]["step"]) for i in sorted(sd["state"])]
    # a fresh model and optimizer resume from the state dict and take identical steps
    model2 = _net(torch)
    model2.load_state_dict(model.state_dict())
    opt2 = torch.optim.Adam([{"params": model2[0].parameters()},
                             {"params": [model2[2].weight], "lr": 0.05}], lr=0.01)
    opt2.add_param_group({"params": [model2[2].bias]})
    opt2.load_state_dict(sd)
    for m, o in ((model, opt), (model2, opt2)):
        o.zero_grad()
        _loss(torch, m, 1).backward()
        o.step()
    out["resumed_equal"] = all(torch.equal(a, b) for a, b in
                               zip(model.parameters(), model2.parameters()))
    out["resumed"] = list(model2.parameters())
    opt.zero_grad(set_to_none=False)
    out["zeroed"] = [p.grad for p in model.parameters()]
    opt.zero_grad()
    out["none"] = [p.grad is None for p in model.parameters()]
    # error texts a script hits
    try:
        torch.optim.SGD(model.parameters(), lr=-1.0)
    except ValueError as e:
        out["bad_lr"] = str(e)
    try:
        opt.add_param_group({"params": [model[2].bias]})
    except ValueError as e:
        out["dup"] = str(e)
    return out


def test_optimizers_weight_decay_foreach_false():
    compare(run_optimizers, False, rtol=1e-5, atol=1e-6)


def test_optimizers_weight_decay_foreach_true():
    compare(run_optimizers, True, rtol=1e-5, atol=1e-6)


def test_sparse_adam_embedding():
    compare(run_sparse_adam, rtol=1e-5, atol=1e-6)


def test_optimizer_api():
    compare(run_optimizer_api, rtol=1e-5, atol=1e-6)


def run_capturable(torch, device="cpu"):
    model = _net(torch).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, capturable=device == "cuda",
                           differentiable=False)
    for step in range(3):
        opt.zero_grad()
        x, y = data(torch, 10 + step, 5, 4).to(device), data(torch, 20 + step, 5, 2)
        torch.nn.functional.mse_loss(model(x), y.to(device)).backward()
        opt.step()
    st = opt.state[model[0].weight]["step"]
    return {"params": [p.detach().cpu() for p in model.parameters()],
            "step": st.cpu(), "step_device": st.device.type}


def test_adam_capturable_cuda():
    want = run_capturable(oracle(), "cpu")
    got = run_capturable(framework, "cuda")
    want["step_device"] = "cuda"  # capturable keeps the step count on the params' device
    assert_same(got, want, 1e-5, 1e-6)


# ---------------------------------------------------------------------------------------
# 5. Weight averaging (SWA and EMA)
# ---------------------------------------------------------------------------------------

def run_swa(torch):
    nn = torch.nn
    swa_utils = torch.optim.swa_utils
    out = {}
    model = init_params(torch, nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4),
                                             nn.ReLU(), nn.Linear(4, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    swa_model = swa_utils.AveragedModel(model)
    ema_model = swa_utils.AveragedModel(
        model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=True)
    ema_single = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.8))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    swa_cos = swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="cos")
    xs = [data(torch, 30 + i, 6, 3) for i in range(4)]
    ys = [data(torch, 40 + i, 6, 1) for i in range(4)]
    lrs = []
    for epoch in range(6):
        for x, y in zip(xs, ys):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        if epoch >= 2:
            swa_model.update_parameters(model)
            ema_model.update_parameters(model)
            ema_single.update_parameters(model)
            swa_cos.step()
        else:
            sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    out["lrs"] = lrs
    out["n_averaged"] = swa_model.n_averaged
    out["swa"] = list(swa_model.module.parameters())
    out["ema"] = list(ema_model.module.parameters())
    out["ema_buffers"] = list(ema_model.module.buffers())
    out["ema_single"] = list(ema_single.module.parameters())
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.cat(xs)), batch_size=8)
    swa_utils.update_bn(loader, swa_model)
    out["bn_mean"] = swa_model.module[1].running_mean
    out["bn_var"] = swa_model.module[1].running_var
    swa_model.eval()
    out["pred"] = swa_model(xs[0])
    opt2 = torch.optim.SGD(model.parameters(), lr=0.5)
    swa_lin = swa_utils.SWALR(opt2, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    lin = []
    for _ in range(6):
        opt2.step()
        swa_lin.step()
        lin.append(swa_lin.get_last_lr())
    out["linear_lrs"] = lin
    return out


def test_swa_ema():
    compare(run_swa, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------
# 6. A complete training script as research repos write it
# ---------------------------------------------------------------------------------------

def run_training_script(torch, ckpt_dir):
    nn = torch.nn
    F = torch.nn.functional
    config = {"lr": 0.05, "epochs": 6, "accum_steps": 2, "batch_size": 4, "patience": 2,
              "seed": 0, "resume_at": 3}
    torch.manual_seed(config["seed"])
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision("high")
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, threads))
    torch.use_deterministic_algorithms(True)
    try:
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(5, 8)
                self.drop = nn.Dropout(0.0)
                self.fc2 = nn.Linear(8, 3)

            def forward(self, x):
                return self.fc2(self.drop(F.gelu(self.fc1(x))))

        x = data(torch, 50, 16, 5)
        y = data(torch, 51, 16, kind="int", high=3)
        xv, yv = data(torch, 52, 8, 5), data(torch, 53, 8, kind="int", high=3)
        train = torch.utils.data.TensorDataset(x, y)

        def build():
            model = init_params(torch, Net())
            opt = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=0.01)
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
            return model, opt, sched

        @torch.no_grad()
        def evaluate(model):
            model.eval()
            loss = F.cross_entropy(model(xv), yv).item()
            model.train()
            return loss

        def train_epochs(model, opt, sched, start, stop, log, best=float("inf"), bad=0):
            loader = torch.utils.data.DataLoader(train, batch_size=config["batch_size"])
            for epoch in range(start, stop):
                model.train()
                opt.zero_grad()
                for i, (xb, yb) in enumerate(loader):
                    loss = F.cross_entropy(model(xb), yb) / config["accum_steps"]
                    loss.backward()
                    if (i + 1) % config["accum_steps"] == 0:
                        opt.step()
                        opt.zero_grad()
                    log.append(loss.item())
                sched.step()
                val = evaluate(model)
                log.append(val)
                if val < best - 1e-4:
                    best, bad = val, 0
                else:
                    bad += 1
                    if bad >= config["patience"]:
                        log.append("early stop")
                        break
                if epoch + 1 == config["resume_at"]:
                    torch.save({"epoch": epoch + 1, "model": model.state_dict(),
                                "optimizer": opt.state_dict(),
                                "scheduler": sched.state_dict(), "best": best,
                                "bad": bad},
                               os.path.join(ckpt_dir, "ckpt.pt"))

        model, opt, sched = build()
        log = []
        train_epochs(model, opt, sched, 0, config["epochs"], log)
        ck = torch.load(os.path.join(ckpt_dir, "ckpt.pt"), map_location="cpu",
                        weights_only=True)
        model2, opt2, sched2 = build()
        model2.load_state_dict(ck["model"])
        opt2.load_state_dict(ck["optimizer"])
        sched2.load_state_dict(ck["scheduler"])
        log2 = []
        train_epochs(model2, opt2, sched2, ck["epoch"], config["epochs"], log2,
                     ck["best"], ck["bad"])
        model2.eval()
        with torch.inference_mode():
            pred = model2(xv)
            inf = pred.is_inference()
        return {"log": log, "resumed": log2, "tail_equal": log2 == log[-len(log2):],
                "pred": pred, "inference": inf, "epoch": ck["epoch"],
                "det": torch.are_deterministic_algorithms_enabled(),
                "precision": torch.get_float32_matmul_precision(),
                "benchmark": torch.backends.cudnn.benchmark}
    finally:
        torch.use_deterministic_algorithms(False)
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.benchmark = False


def test_training_script_resume():
    torch = oracle()
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        want = run_training_script(torch, d1)
        got = run_training_script(framework, d2)
    assert_same(got, want, 1e-4, 1e-5)
    assert got["tail_equal"] and len(got["resumed"]) > 0


# ---------------------------------------------------------------------------------------
# 7. torch.compile tutorial patterns (cpu)
# ---------------------------------------------------------------------------------------

def run_compile(torch, **kw):
    """``kw``: PyTorch's side passes backend="eager" (its inductor's C++ builds take a
    minute); the framework's side runs its default compiler."""
    nn = torch.nn
    F = torch.nn.functional
    out = {}
    torch._dynamo.reset()

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = nn.Linear(4, 8), nn.Linear(8, 2)

        def forward(self, x):
            return self.l2(F.relu(self.l1(x))).sin()

    model = init_params(torch, MLP())
    compiled = torch.compile(model, **kw)
    x = data(torch, 60, 3, 4)
    y = compiled(x)
    y.sum().backward()
    out["module"] = [y, model.l1.weight.grad]
    out["eager_equal"] = torch.allclose(y, model(x))
    out["sd_keys"] = list(compiled.state_dict())   # "_orig_mod." prefixed
    with torch.no_grad():
        out["no_grad"] = compiled(x * 2)
    out["backends"] = [b in torch._dynamo.list_backends() for b in ("inductor", "cudagraphs")]

    @torch.compile(**kw)
    def fn(a, b):
        return torch.tanh(a) * b + a.cos()

    a = data(torch, 61, 5).requires_grad_()
    out["fn"] = fn(a, data(torch, 62, 5))
    fn(a, data(torch, 62, 5)).sum().backward()
    out["fn_grad"] = a.grad

    dyn = torch.compile(lambda t: (t * 2).sum(-1), dynamic=True, **kw)
    out["dynamic"] = [dyn(data(torch, 63, n, 3)) for n in (2, 5, 7)]
    auto = torch.compile(model, mode="max-autotune-no-cudagraphs", **kw)
    out["autotune"] = auto(x)
    for backend in ("eager", "aot_eager"):
        out[backend] = torch.compile(fn, backend=backend)(a.detach(), a.detach())

    @torch.compiler.disable
    def opaque(t):
        return t + 1

    out["disabled"] = torch.compile(lambda t: opaque(t) * 3, **kw)(a.detach())

    def breaks(t):
        if t.sum().item() > 0:  # data-dependent control flow: a graph break
            return t + 1
        return t - 1

    try:
        torch.compile(breaks, fullgraph=True, **kw)(a.detach())
        out["fullgraph"] = "no error"
    except Exception as e:  # noqa: BLE001
        # PyTorch raises UserError (data-dependent branching), the framework Unsupported:
        # scripts catch their common bases
        out["fullgraph"] = [c.__name__ for c in type(e).__mro__][1:3]
        out["is_dynamo_exc"] = isinstance(e, torch._dynamo.exc.TorchDynamoException)

    # compiling the optimizer step, as the tutorial does
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    @torch.compile(fullgraph=False, **kw)
    def opt_step():
        opt.step()

    for _ in range(2):
        opt.zero_grad()
        F.mse_loss(model(x), data(torch, 64, 3, 2)).backward()
        opt_step()
    out["after_opt"] = list(model.parameters())
    torch._dynamo.reset()
    return out


def test_compile_patterns():
    want = run_compile(oracle(), backend="eager")
    got = run_compile(framework)
    assert_same(got, want, 1e-5, 1e-6)
