"""torch.func tutorials, run under the framework and under PyTorch: per-sample gradients,
model ensembling (with its meta-device base model), Jacobians/Hessians, the neural tangent
kernel and a MAML inner/outer loop, each written as the tutorials write them. Forward-mode
AD, custom autograd.Function and hooks are in test_script_autograd_extending.py.
"""
import copy
import functools

from func_support import compare_on
from script_harness import compare, data, init_params


# ---------------------------------------------------------------- 1. per-sample gradients
def per_sample_grads(torch):
    nn, F = torch.nn, torch.nn.functional
    functional_call, vmap, grad = torch.func.functional_call, torch.func.vmap, torch.func.grad

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 3, 3, 1)
            self.fc1 = nn.Linear(3 * 3 * 3, 4)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            return F.log_softmax(self.fc1(x), dim=1)

    model = init_params(torch, SimpleCNN())
    batch = data(torch, 1, 4, 1, 8, 8)
    targets = data(torch, 2, 4, kind="int", high=4)

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    def compute_grad(sample, target):
        sample, target = sample.unsqueeze(0), target.unsqueeze(0)
        loss = loss_fn(model(sample), target)
        return torch.autograd.grad(loss, list(model.parameters()))

    per_sample_loop = [compute_grad(batch[i], targets[i]) for i in range(batch.shape[0])]
    per_sample_loop = [torch.stack(shards) for shards in zip(*per_sample_loop)]

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return loss_fn(predictions, targets)

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, batch, targets)
    same = [torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
            for per_sample_grad, ft_per_sample_grad in
            zip(per_sample_loop, ft_per_sample_grads.values())]
    return {"loop": per_sample_loop, "func": ft_per_sample_grads, "same": same,
            "requires_grad": [g.requires_grad for g in ft_per_sample_grads.values()]}


def test_per_sample_grads():
    got = compare(per_sample_grads)
    assert all(got["same"])


# ---------------------------------------------------------------- 2. model ensembling
def ensembling(torch, device="cpu"):
    nn, F = torch.nn, torch.nn.functional
    stack_module_state = torch.func.stack_module_state
    functional_call, vmap = torch.func.functional_call, torch.func.vmap

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.fc2 = nn.Linear(8, 5)
            self.fc3 = nn.Linear(5, 3)

        def forward(self, x):
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    num_models = 3
    models = [init_params(torch, SimpleMLP(), seed=i).to(device) for i in range(num_models)]
    minibatches = data(torch, 5, num_models, 4, 2, 3).to(device)
    minibatch = minibatches[0]
    predictions_diff_minibatch_loop = [model(mb) for model, mb in zip(models, minibatches)]
    predictions2_loop = [model(minibatch) for model in models]

    params, buffers = stack_module_state(models)
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to('meta')

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    predictions1_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    predictions2_vmap = vmap(fmodel)(params, buffers, minibatches)
    ok1 = torch.allclose(predictions1_vmap, torch.stack(predictions2_loop), atol=1e-3, rtol=1e-5)
    ok2 = torch.allclose(predictions2_vmap, torch.stack(predictions_diff_minibatch_loop),
                         atol=1e-3, rtol=1e-5)
    # the stacked state is made of fresh leaves: a loss on the ensemble trains them
    predictions2_vmap.sum().backward()
    return {"p1": predictions1_vmap, "p2": predictions2_vmap, "ok": [ok1, ok2],
            "shapes": {k: list(v.shape) for k, v in params.items()},
            "leaf": [v.is_leaf and v.requires_grad for v in params.values()],
            "grads": {k: v.grad for k, v in params.items()},
            "meta": str(next(base_model.parameters()).device)}


def test_ensembling(device):
    got = compare_on(ensembling, device, text=["meta"])
    assert got["ok"] == [True, True]


# ---------------------------------------------------------------- 3. Jacobians and Hessians
def jacobians_hessians(torch):
    nn, F = torch.nn, torch.nn.functional
    jacrev, jacfwd, vmap = torch.func.jacrev, torch.func.jacfwd, torch.func.vmap
    hessian, functional_call = torch.func.hessian, torch.func.functional_call
    D, N = 4, 3
    weight = data(torch, 10, D, D)
    bias = data(torch, 11, D)
    x = data(torch, 12, D)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    out = {}
    out["jacrev_x"] = jacrev(predict, argnums=2)(weight, bias, x)
    out["jacfwd_x"] = jacfwd(predict, argnums=2)(weight, bias, x)
    out["jacrev_wb"] = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    out["jacfwd_wb"] = jacfwd(predict, argnums=(0, 1))(weight, bias, x)
    # the autograd.functional comparison of the tutorial
    out["ag_jac"] = torch.autograd.functional.jacobian(lambda x: predict(weight, bias, x), x)
    # the Jacobian row by row: vmap over vjp_fn, and autograd.grad with batched cotangents
    unit_vectors = torch.eye(D)
    _, vjp_fn = torch.func.vjp(functools.partial(predict, weight, bias), x)
    ft_jacobian, = vmap(vjp_fn)(unit_vectors)
    out["vmap_vjp"] = ft_jacobian
    xr = x.clone().requires_grad_()
    yr = predict(weight, bias, xr)
    out["grads_batched"] = torch.autograd.grad(yr, xr, unit_vectors, is_grads_batched=True)
    # per-row Jacobians of a batch, two ways
    xs = data(torch, 13, N, D)
    out["vmap_jac"] = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xs)
    out["batch_jac"] = jacrev(lambda xs: predict(weight, bias, xs).sum(0))(xs).movedim(1, 0)
    # Hessians
    out["hess"] = hessian(predict, argnums=2)(weight, bias, x)
    out["hess_fr"] = jacfwd(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    out["hess_rr"] = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    out["ag_hess"] = torch.autograd.functional.hessian(lambda x: predict(weight, bias, x).sum(),
                                                       x)

    # has_aux: the output travels beside its Jacobian
    def f_aux(x):
        y = x.sin()
        return y, y.detach() * 2

    jac, aux = jacrev(f_aux, has_aux=True)(x)
    out["aux"] = [jac, aux]

    # the Jacobian of a model with respect to its parameters dict
    model = init_params(torch, nn.Sequential(nn.Linear(D, 3), nn.Tanh(), nn.Linear(3, 2)))
    params = {k: v.detach() for k, v in model.named_parameters()}
    jac_p = jacrev(lambda p, x: functional_call(model, p, (x,)))(params, x)
    out["jac_params"] = jac_p
    out["shapes"] = {k: list(v.shape) for k, v in jac_p.items()}
    return out


def test_jacobians_hessians():
    compare(jacobians_hessians, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- 4. neural tangent kernel
def ntk(torch):
    nn, F = torch.nn, torch.nn.functional
    func = torch.func

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(2, 3, (3, 3))
            self.conv2 = nn.Conv2d(3, 2, (3, 3))
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            x = self.conv1(x)
            x = x.relu()
            x = self.conv2(x)
            x = x.relu()
            x = F.adaptive_avg_pool2d(x, (1, 1))
            x = x.flatten(1)
            return self.fc(x)

    net = init_params(torch, CNN()).eval()
    x_train = data(torch, 20, 3, 2, 6, 6)
    x_test = data(torch, 21, 2, 2, 6, 6)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return func.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute='full'):
        jac1 = func.vmap(func.jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = jac1.values()
        jac1 = [j.flatten(2) for j in jac1]
        jac2 = func.vmap(func.jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = jac2.values()
        jac2 = [j.flatten(2) for j in jac2]
        if compute == 'full':
            einsum_expr = 'Naf,Mbf->NMab'
        elif compute == 'trace':
            einsum_expr = 'Naf,Maf->NM'
        elif compute == 'diagonal':
            einsum_expr = 'Naf,Maf->NMa'
        result = torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)])
        return result.sum(0)

    def empirical_ntk_ntk_vps(func_, params, x1, x2, compute='full'):
        def get_ntk(x1, x2):
            def func_x1(params):
                return func_(params, x1)

            def func_x2(params):
                return func_(params, x2)

            output, vjp_fn = func.vjp(func_x1, params)

            def get_ntk_slice(vec):
                vjps = vjp_fn(vec)
                _, jvps = func.jvp(func_x2, (params,), vjps)
                return jvps

            basis = torch.eye(output.numel(), dtype=output.dtype,
                              device=output.device).view(output.numel(), -1)
            return func.vmap(get_ntk_slice)(basis)

        result = func.vmap(func.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
        if compute == 'full':
            return result
        if compute == 'trace':
            return torch.einsum('NMKK->NM', result)

    full = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'full')
    trace = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'trace')
    diag = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, 'diagonal')
    full_vps = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, 'full')
    trace_vps = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, 'trace')
    return {"full": full, "trace": trace, "diag": diag, "full_vps": full_vps,
            "trace_vps": trace_vps,
            "agree": torch.allclose(full, full_vps, atol=1e-4, rtol=1e-4)}


def test_ntk():
    got = compare(ntk, rtol=1e-4, atol=1e-5)
    assert got["agree"]


# ---------------------------------------------------------------- 8. MAML
def maml(torch, device="cpu"):
    nn, F = torch.nn, torch.nn.functional
    functional_call = torch.func.functional_call
    model = init_params(torch, nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1)))
    model = model.to(device)
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    inner_lr, n_inner = 0.1, 2
    tasks = [(data(torch, 70 + i, 5, 1), data(torch, 80 + i, 5, 1), data(torch, 90 + i, 5, 1),
              data(torch, 100 + i, 5, 1)) for i in range(2)]
    losses = []
    for step in range(2):
        meta_opt.zero_grad()
        outer_loss = 0.0
        for x_s, y_s, x_q, y_q in tasks:
            x_s, y_s, x_q, y_q = (t.to(device) for t in (x_s, y_s, x_q, y_q))
            params = dict(model.named_parameters())
            for _ in range(n_inner):
                loss = F.mse_loss(functional_call(model, params, (x_s,)), y_s)
                grads = torch.autograd.grad(loss, params.values(), create_graph=True)
                params = {n: p - inner_lr * g for (n, p), g in zip(params.items(), grads)}
            q_loss = F.mse_loss(functional_call(model, params, (x_q,)), y_q)
            outer_loss = outer_loss + q_loss
        outer_loss = outer_loss / len(tasks)
        outer_loss.backward()
        losses.append(outer_loss.item())
        grads = {k: p.grad.clone() for k, p in model.named_parameters()}
        meta_opt.step()
    return {"losses": losses, "grads": grads, "state": model.state_dict()}


def test_maml():
    compare_on(maml)


# ---------------------------------------------------------------- the meta device (ensembling)
def meta_module(torch, device="cpu"):
    nn = torch.nn
    model = init_params(torch, nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)))
    meta = copy.deepcopy(model).to("meta")
    w = meta[0].weight
    out = {"info": [list(w.shape), w.is_meta, w.requires_grad, type(w).__name__,
                    str(w.device), str(meta[1].running_mean.dtype).split(".")[-1],
                    w.view(6).shape[0], w[1:].shape[0], w.t().stride()],
           "repr": repr(meta[0].bias).replace("framework.", "torch.")
           + repr(torch.empty(2, 1, dtype=torch.float64, device="meta")).replace(
               "framework.", "torch.")}
    try:
        meta[0].weight.cpu()
    except NotImplementedError as e:
        out["copy_out"] = str(e)
    # the original module is untouched, and the meta copy can be materialized anew
    out["original"] = model(data(torch, 110, 4, 3))
    empty = meta.to_empty(device="cpu")
    out["to_empty"] = [str(p.device) + str(list(p.shape)) for p in empty.parameters()]
    return out


def test_meta_module():
    compare_on(meta_module, text=["info", "repr", "copy_out", "to_empty"])
