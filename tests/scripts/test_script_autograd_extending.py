"""Advanced autograd tutorials, run under the framework and under PyTorch: forward-mode AD
(dual tensors, modules, a custom Function's jvp), custom autograd.Function patterns (the
double-backward tutorial, non-differentiable outputs, once_differentiable, torch.func over
Functions) and autograd hooks (saved-tensor hooks, tensor, module, multi-grad and node
hooks), each written as the tutorials write them.
"""
import numpy as np

from func_support import compare_on
from script_harness import compare, data, init_params


# ---------------------------------------------------------------- 5. forward-mode AD
def forward_ad(torch):
    nn = torch.nn
    fwAD = torch.autograd.forward_ad    # the tutorial's `import torch.autograd.forward_ad as fwAD`
    out = {}

    def fn(x, y):
        return x ** 2 + y ** 2

    primal = data(torch, 30, 3, 4)
    tangent = data(torch, 31, 3, 4)
    y = data(torch, 32, 3, 4)
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input, y)
        jvp = fwAD.unpack_dual(dual_output).tangent
        out["fn"] = [fwAD.unpack_dual(dual_output).primal, jvp]
        out["no_tangent"] = fwAD.unpack_dual(y).tangent is None
    out["after"] = fwAD.unpack_dual(dual_output).tangent is None

    # modules: dual parameters through functional_call
    model = init_params(torch, nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)))
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: data(torch, 33 + i, *p.shape) for i, (name, p) in
                enumerate(params.items())}
    inp = data(torch, 40, 3, 4)
    with fwAD.dual_level():
        dual_params = {}
        for name, p in params.items():
            dual_params[name] = fwAD.make_dual(p, tangents[name])
        o = torch.func.functional_call(model, dual_params, (inp,))
        out["module_jvp"] = fwAD.unpack_dual(o).tangent

    # the same with torch.func.jvp
    def fmodel(params):
        return torch.func.functional_call(model, params, (inp,))

    p_detached = {k: v.detach() for k, v in params.items()}
    out["func_jvp"] = torch.func.jvp(fmodel, (p_detached,), (tangents,))

    # a custom Function with a jvp staticmethod
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

        @staticmethod
        def backward(ctx, gO):
            return gO * torch.exp(ctx.saved_for_bw)

    x = data(torch, 41, 5)
    t = data(torch, 42, 5)
    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x, t)
        dual_out = Fn.apply(dual_x)
        out["custom_jvp"] = fwAD.unpack_dual(dual_out).tangent

    # the tutorial checks the custom jvp with gradcheck in forward mode
    class BadJvp(Fn):
        @staticmethod
        def jvp(ctx, gI):
            return gI * 3

    p64 = data(torch, 43, 3, 3, dtype=torch.float64).requires_grad_()
    kw = dict(check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False,
              check_batched_grad=False)
    out["gradcheck_fwd"] = [torch.autograd.gradcheck(Fn.apply, (p64,), **kw),
                            torch.autograd.gradcheck(BadJvp.apply, (p64,),
                                                     raise_exception=False, **kw),
                            torch.autograd.gradcheck(torch.sin, (p64,), check_forward_ad=True)]

    # ctx.save_for_forward, and an input without a tangent (zeros are passed for it)
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_forward(x, y)
            return x * y

        @staticmethod
        def jvp(ctx, x_t, y_t):
            x, y = ctx.saved_tensors
            return x_t * y + y_t * x

        @staticmethod
        def backward(ctx, gO):
            raise RuntimeError("backward is not used by forward-mode AD")

    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x, t)
        z = Mul.apply(dual_x, x.flip(0)).sin() + dual_x
        out["mul_jvp"] = fwAD.unpack_dual(z).tangent

    # finite differences agree with the jvp of fn
    eps = 1e-3
    fd = (fn(primal.double() + eps * tangent.double(), y.double())
          - fn(primal.double() - eps * tangent.double(), y.double())) / (2 * eps)
    out["fd_close"] = torch.allclose(fd.float(), jvp, atol=1e-3, rtol=1e-3)
    return out


def test_forward_ad():
    got = compare(forward_ad)
    assert got["fd_close"] and got["no_tangent"] and got["after"]


# ---------------------------------------------------------------- 6. custom autograd.Function
def custom_functions(torch):
    Function = torch.autograd.Function
    once_differentiable = torch.autograd.function.once_differentiable
    out = {}

    # saving inputs (new style: forward + setup_context)
    class Square(Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return grad_out * 2 * x

    # saving outputs
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            result = torch.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            result, = ctx.saved_tensors
            return result * grad_out

    # saving intermediate results: returned as outputs so that double backward works
    class Sinh(Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        return Sinh.apply(x)[0]

    x = data(torch, 50, 3, 4, dtype=torch.float64).requires_grad_()
    out["gc"] = [torch.autograd.gradcheck(Square.apply, x),
                 torch.autograd.gradgradcheck(Square.apply, x),
                 torch.autograd.gradcheck(Exp.apply, x),
                 torch.autograd.gradgradcheck(Exp.apply, x),
                 torch.autograd.gradcheck(sinh, x),
                 torch.autograd.gradgradcheck(sinh, x)]
    y = sinh(x)
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    gg, = torch.autograd.grad(g.sum(), x)
    out["sinh"] = [y, g, gg]

    # mark_non_differentiable, needs_input_grad, set_materialize_grads
    class SortWithIdx(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.set_materialize_grads(False)
            ctx.needs = ctx.needs_input_grad
            values, idx = torch.sort(x * scale, dim=-1)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            ctx.scale = scale
            return values, idx

        @staticmethod
        @once_differentiable
        def backward(ctx, g_values, g_idx):
            idx, = ctx.saved_tensors
            if g_values is None:
                return None, None
            grad_x = None
            if ctx.needs_input_grad[0]:
                grad_x = torch.zeros_like(g_values).scatter(-1, idx, g_values) * ctx.scale
            return grad_x, None

    a = data(torch, 51, 2, 5).requires_grad_()
    values, idx = SortWithIdx.apply(a, 3.0)
    (values * torch.arange(5.0)).sum().backward()
    out["sort"] = [values, idx, a.grad, idx.requires_grad, values.requires_grad]
    w = torch.arange(5.0).requires_grad_()
    try:
        g, = torch.autograd.grad((SortWithIdx.apply(a, 3.0)[0] * w).sum(), a,
                                 create_graph=True)
        g.sum().backward()
        out["once_err"] = "none"
    except RuntimeError as e:
        out["once_err"] = "trying to differentiate twice" in str(e)

    # torch.func over a Function: generate_vmap_rule and a vmap staticmethod
    class MyCube(Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            result = x ** 3
            dx = 3 * x ** 2
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    class NumpyMul(Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * y, grad_output * x

        @staticmethod
        def vmap(info, in_dims, x, y):
            x_bdim, y_bdim = in_dims
            x = x.movedim(x_bdim, -1) if x_bdim is not None else x.unsqueeze(-1)
            y = y.movedim(y_bdim, -1) if y_bdim is not None else y.unsqueeze(-1)
            result = NumpyMul.apply(x, y)
            return result.movedim(-1, 0), 0

    # the "Extending torch.func" tutorial: a Function over NumPy, differentiated by grad
    def to_numpy(tensor):
        return tensor.cpu().numpy()

    class NumpySort(Function):
        @staticmethod
        def forward(x, dim):
            device = x.device
            x = to_numpy(x)
            ind = np.argsort(x, axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            result = np.take_along_axis(x, ind, axis=dim)
            return (torch.tensor(result, device=device), torch.tensor(ind, device=device),
                    torch.tensor(ind_inv, device=device))

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    class NumpyTake(Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            device = x.device
            x = to_numpy(x)
            ind = to_numpy(ind)
            return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim

        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
            return result, None, None, None

    def numpy_sort(x, dim=-1):
        result, _, _ = NumpySort.apply(x, dim)
        return result

    xs = data(torch, 52, 3, 4)
    out["numpy_sort"] = [numpy_sort(xs),
                         torch.func.grad(lambda x: (numpy_sort(x) * torch.arange(4.0)).sum())(xs),
                         torch.autograd.gradcheck(numpy_sort, xs.double().requires_grad_())]
    func = torch.func
    out["grad_cube"] = func.grad(lambda x: MyCube.apply(x)[0].sum())(xs)
    out["ggrad_cube"] = func.vmap(func.grad(func.grad(lambda x: MyCube.apply(x)[0])))(
        xs.flatten())
    out["vmap_mul"] = func.vmap(NumpyMul.apply, in_dims=(0, None))(xs, xs[0])
    out["grad_mul"] = func.grad(lambda x, y: NumpyMul.apply(x, y).sum(), argnums=(0, 1))(
        xs, xs.flip(0))
    return out


def test_custom_functions():
    got = compare(custom_functions)
    assert all(got["gc"]) and got["once_err"] is True


# ---------------------------------------------------------------- 7. autograd hooks
def hooks(torch, device="cpu"):
    nn = torch.nn
    out = {}

    # saved_tensors_hooks that count and copy
    counts = {"pack": 0, "unpack": 0}

    def pack_hook(x):
        counts["pack"] += 1
        return x.clone()

    def unpack_hook(x):
        counts["unpack"] += 1
        return x

    a = data(torch, 60, 5).requires_grad_()
    b = torch.ones(5, requires_grad=True) * 2
    with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
        z = y.sin()
    z.sum().backward()
    out["saved_hooks"] = [dict(counts), a.grad]
    # what a node saved, and hooks on one saved tensor
    x = data(torch, 66, 5).requires_grad_()
    y = x.pow(2)
    out["saved_self"] = [x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self,
                         y.grad_fn._saved_exponent]
    e = x.exp()
    out["saved_result"] = [e.equal(e.grad_fn._saved_result), e is e.grad_fn._saved_result]
    raw_log = []

    def raw_pack(t):
        raw_log.append("pack")
        return t * 2

    def raw_unpack(t):
        raw_log.append("unpack")
        return t / 2

    y.grad_fn._raw_saved_self.register_hooks(raw_pack, raw_unpack)
    y.sum().backward()
    out["raw"] = x.grad
    out["raw_log"] = raw_log
    try:
        y.grad_fn._saved_self
    except RuntimeError as err:
        out["freed"] = "after they have already been freed" in str(err)
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        w = (a * a).exp().sum()
    out["save_on_cpu"] = torch.autograd.grad(w, a)

    # tensor hooks, retain_grad
    x = data(torch, 61, 4).requires_grad_()
    h = x * 3
    h.retain_grad()
    handle = h.register_hook(lambda g: g * 2)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    (h ** 2).sum().backward()
    handle.remove()
    out["tensor_hooks"] = [x.grad, h.grad, seen]

    # module hooks
    model = init_params(torch, nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)))
    log = []

    def fwd_pre(mod, args):
        log.append("pre")
        return (args[0] * 2,)

    def fwd_kw(mod, args, kwargs, output):
        log.append("fwd")
        return output + 1

    def bwd_pre(mod, grad_output):
        log.append("bwd_pre")
        return (grad_output[0] * 0.5,)

    def bwd(mod, grad_input, grad_output):
        log.append("bwd")
        out["bwd_shapes"] = [list(g.shape) for g in grad_input if g is not None]

    handles = [model[0].register_forward_pre_hook(fwd_pre),
               model[2].register_forward_hook(fwd_kw, with_kwargs=True),
               model[2].register_full_backward_pre_hook(bwd_pre),
               model[2].register_full_backward_hook(bwd)]
    inp = data(torch, 62, 6, 4).requires_grad_()
    o = model(inp)
    o.pow(2).sum().backward()
    out["module"] = [o, inp.grad, {k: p.grad for k, p in model.named_parameters()}]
    out["log"] = log
    for hd in handles:
        hd.remove()
    out["removed"] = model(inp)

    # a multi-grad hook fires once every listed tensor's gradient is known
    t1 = data(torch, 63, 3).requires_grad_()
    t2 = data(torch, 64, 3).requires_grad_()
    fired = []

    def multi(grads):
        fired.append([g.clone() if g is not None else None for g in grads])

    torch.autograd.graph.register_multi_grad_hook((t1, t2), multi)
    (t1 * t2 * 2).sum().backward()
    out["multi"] = fired

    # hooks on graph nodes
    p = data(torch, 65, 3).requires_grad_()
    q = p.exp()
    node_log = []

    def node_prehook(grad_outputs):
        node_log.append("prehook")
        return (grad_outputs[0] * 10,)

    def node_hook(grad_inputs, grad_outputs):
        node_log.append("hook")
        return (grad_inputs[0] + 1,)

    out["next"] = [(type(n).__name__ if n is not None else None, nr)
                   for n, nr in (x * 2).grad_fn.next_functions]
    q.grad_fn.register_prehook(node_prehook)
    q.grad_fn.register_hook(node_hook)
    q.sum().backward()
    out["node"] = p.grad
    out["node_log"], out["node_name"] = node_log, q.grad_fn.name()
    return out


def test_hooks():
    got = compare_on(hooks, text=["log", "node_log", "node_name", "raw_log", "next"])
    assert got["freed"] and got["saved_self"][:2] == [True, True]
