"""framework.compile's compiler (framework/_inductor): guards and cache, tracing fallback,
fused Triton kernels for pointwise chains, autograd through fused groups."""
import numpy as np
import pytest

import framework as fw
import framework._inductor as inductor
import framework.nn as nn
import framework.nn.functional as F
from framework.profiler import DeviceType, ProfilerActivity, profile

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("error:framework.compile:UserWarning")


def chain(x, w, b, y):
    z = F.gelu(x * w + b) * fw.sigmoid(y)
    z = fw.tanh(z) - 0.5 * F.gelu(z, approximate="tanh")
    return F.silu(fw.relu(z).exp() / (1.0 + y.abs())) ** 2


def torch_chain(x, w, b, y):
    TF = torch.nn.functional
    z = TF.gelu(x * w + b) * torch.sigmoid(y)
    z = torch.tanh(z) - 0.5 * TF.gelu(z, approximate="tanh")
    return TF.silu(torch.relu(z).exp() / (1.0 + y.abs())) ** 2


def inputs(device, dtype, shape=(33, 40), seed=0):
    """x, w (broadcast along rows), b (a column) and y: 1320 elements, two blocks."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in (shape, shape[-1:], (shape[0], 1), shape)]
    fws = [fw.tensor(a, device=device).to(dtype) for a in arrays]
    ts = [torch.tensor(a).to(getattr(torch, str(dtype).split(".")[-1])) for a in arrays]
    return fws, ts


def kernels_launched(fn, *args):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        out = fn(*args)
    return out, [e.name for e in prof.events() if e.device_type == DeviceType.CUDA]


def fused_calls(compiled):
    gm = next(iter(compiled._compiled.cache.values()))
    return [n.target for n in gm.graph.nodes if isinstance(n.target, inductor.FusedCall)]


@pytest.mark.parametrize("dtype", [fw.float32, fw.bfloat16])
def test_pointwise_chain_matches_eager_and_torch(device, dtype):
    (x, w, b, y), ts = inputs(device, dtype)
    f = fw.compile(chain)
    first = f(x, w, b, y)          # traced: the graph runs unfused, recording shapes
    got = f(x, w, b, y)            # the cached graph (fused on cuda)
    assert got.dtype == dtype and got.device.type == device
    want = chain(x, w, b, y)
    np.testing.assert_array_equal(first.float().cpu().numpy(), want.float().cpu().numpy())
    # bfloat16: eager rounds each of the 13 results to 8 bits, the fused kernel only the
    # last one (float32 in registers), so it is closer to the float64 reference
    fused = device == "cuda" and dtype == fw.bfloat16
    tol = 1e-5 if dtype == fw.float32 else 5e-2
    np.testing.assert_allclose(got.float().cpu().numpy(), want.float().cpu().numpy(),
                               rtol=tol, atol=tol)
    ref = torch_chain(*[t.double() for t in ts]).numpy()
    tol = 1e-5 if dtype == fw.float32 else 8e-3 if fused else 5e-2
    np.testing.assert_allclose(got.float().cpu().numpy(), ref, rtol=tol, atol=tol)
    assert f._compiled.traces == 1


def test_chain_is_one_generated_kernel_on_cuda():
    (x, w, b, y), _ = inputs("cuda", fw.float32)
    f = fw.compile(chain)
    f(x, w, b, y)
    _, eager = kernels_launched(chain, x, w, b, y)
    out, compiled = kernels_launched(f, x, w, b, y)
    assert len(eager) >= 12
    assert len(compiled) == 1 and compiled[0].startswith("fused_")
    (call,) = fused_calls(f)
    assert call.source.count("@triton.jit") == 1 and call.source.count("tl.store") == 1
    assert call.source.count("tl.load") == 4          # each input read once
    np.testing.assert_allclose(out.cpu().numpy(), chain(x, w, b, y).cpu().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_cpu_runs_the_graph_unfused():
    (x, w, b, y), _ = inputs("cpu", fw.float32)
    f = fw.compile(chain)
    f(x, w, b, y)
    assert fused_calls(f) == []


def test_cache_hit_retrace_on_new_guard_and_limit(device):
    (x, w, b, y), _ = inputs(device, fw.float32)
    f = fw.compile(chain)
    before = inductor.counters["traces"]
    f(x, w, b, y)
    f(x, w, b, y)
    assert f._compiled.traces == 1 and inductor.counters["traces"] == before + 1
    (x2, w2, b2, y2), _ = inputs(device, fw.float32, shape=(5, 7))
    out = f(x2, w2, b2, y2)                                   # a new shape
    assert f._compiled.traces == 2
    np.testing.assert_allclose(out.cpu().numpy(), chain(x2, w2, b2, y2).cpu().numpy(),
                               rtol=1e-5, atol=1e-6)
    f(x.double(), w.double(), b.double(), y.double())         # a new dtype
    f(x.requires_grad_(), w, b, y)                            # a new requires_grad
    assert f._compiled.traces == 4
    with fw._dynamo.config.patch(cache_size_limit=4):
        with pytest.warns(UserWarning, match="recompile_limit"):
            out = f(x2[:3], w2, b2[:3], y2[:3])               # over the limit: eager
        assert f._compiled.traces == 4 and len(f._compiled.cache) == 4
        np.testing.assert_allclose(out.cpu().numpy(),
                                   chain(x2[:3], w2, b2[:3], y2[:3]).cpu().numpy(), rtol=1e-6)


def test_constant_arguments_are_guarded(device):
    def f(x, scale, flag):
        return (x * scale).sigmoid() if flag else (x - scale).exp()
    x = fw.tensor([[0.5, -1.0, 2.0]], device=device)
    g = fw.compile(f)
    for scale, flag in [(2.0, True), (2.0, True), (3.0, True), (2.0, False)]:
        np.testing.assert_allclose(g(x, scale, flag).cpu().numpy(),
                                   f(x, scale, flag).cpu().numpy(), rtol=1e-6)
    assert g._compiled.traces == 3


def data_dependent(x):
    if x.sum() > 0:
        return x.exp() * 2
    return x.neg() - 1


def test_data_dependent_control_flow_falls_back_to_eager(device):
    f = fw.compile(data_dependent)
    pos = fw.tensor([1.0, 2.0], device=device)
    with pytest.warns(UserWarning, match="runs eagerly"):
        out = f(pos)
    np.testing.assert_allclose(out.cpu().numpy(), np.exp([1.0, 2.0]) * 2, rtol=1e-6)
    out = f(-pos)                                            # eager for good, no warning
    np.testing.assert_allclose(out.cpu().numpy(), [-0.0, 1.0], rtol=1e-6)
    assert f._compiled.eager and f._compiled.traces == 0
    with pytest.raises(fw.fx.TraceError):
        fw.compile(data_dependent, fullgraph=True)(pos)


def test_custom_backend_gets_the_graph(device):
    seen = []

    def backend(gm, example_inputs):
        seen.append(([n.op for n in gm.graph.nodes], [tuple(t.shape) for t in example_inputs]))
        return gm.forward
    x = fw.ones(2, 3, device=device)
    g = fw.compile(lambda x: (x * 2).exp(), backend=backend)
    for _ in range(2):
        np.testing.assert_allclose(g(x).cpu().numpy(), np.exp(2 * np.ones((2, 3))), rtol=1e-6)
    assert seen == [(["placeholder", "call_function", "call_method", "output"], [(2, 3)])]


def test_eager_backend_and_disable_keep_the_model():
    assert fw.compile(chain, backend="eager") is chain
    assert fw.compile(chain, disable=True) is chain
    m = nn.Linear(2, 2)
    assert fw.compile(m, backend="eager")._compiled is None


def test_fused_group_gradients_equal_eager(device):
    (x, w, b, y), _ = inputs(device, fw.float32)
    leaves = [t.clone().requires_grad_() for t in (x, w, b, y)]
    f = fw.compile(chain)
    out = f(*leaves)
    out.sum().backward()
    grads = [t.grad.cpu().numpy() for t in leaves]
    ref = [t.detach().clone().requires_grad_() for t in leaves]
    chain(*ref).sum().backward()
    for g, r in zip(grads, ref):
        np.testing.assert_allclose(g, r.grad.cpu().numpy(), rtol=1e-5, atol=1e-6)
    if device == "cuda":
        assert len(fused_calls(f)) == 1 and out.grad_fn is not None


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.norm = nn.Linear(12, 20), nn.GELU(), nn.LayerNorm(20)
        self.fc2 = nn.Linear(20, 3)
        self.scale = nn.Parameter(fw.ones(20))

    def forward(self, x):
        h = self.act(self.fc1(x)) * self.scale + 0.1
        h = fw.sigmoid(h) * h - h.abs() * 0.5
        return self.fc2(self.norm(h))


def test_compiled_module_trains_like_eager(device):
    fw.manual_seed(0)
    eager = MLP().to(device)
    model = MLP().to(device)
    model.load_state_dict(eager.state_dict())
    compiled = fw.compile(model)
    assert list(compiled.state_dict())[1] == "_orig_mod.fc1.weight"
    x = fw.randn(9, 12, device=device)
    target = fw.randn(9, 3, device=device)
    losses = []
    for m in (eager, compiled):
        opt = fw.optim.SGD(m.parameters(), lr=0.1)
        run = []
        for _ in range(3):
            loss = F.mse_loss(m(x), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(),
                                   rtol=1e-5, atol=1e-6)
    assert compiled._compiled.traces == 1
    if device == "cuda":
        (call,) = fused_calls(compiled)
        assert call.source.count("_gelu(") == 1 and call.source.count("_sigmoid(") == 1
    compiled.eval()                                   # the training flag is guarded
    compiled(x)
    assert compiled._compiled.traces == 2


def test_dropout_is_not_fused(device):
    def f(x):
        return F.dropout(x.exp() * 2.0, p=0.5, training=True).sigmoid() + 1.0
    x = fw.randn(8, 160, device=device)
    g = fw.compile(f)
    fw.manual_seed(3)
    got = g(x)
    fw.manual_seed(3)
    want = f(x)
    np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), rtol=1e-6)
    fw.manual_seed(3)
    again = g(x)                                          # the cached graph, same stream
    np.testing.assert_allclose(again.cpu().numpy(), want.cpu().numpy(), rtol=1e-6)
    if device == "cuda":
        calls = fused_calls(g)
        assert len(calls) == 2 and all("dropout" not in c.source for c in calls)
        _, launched = kernels_launched(g, x)
        assert len(launched) >= 3 and sum(n.startswith("fused_") for n in launched) == 2


def test_verbose_prints_the_graph(capsys):
    (x, w, b, y), _ = inputs("cuda", fw.float32, shape=(2, 3))
    with fw._dynamo.config.patch(verbose=True):
        fw.compile(chain)(x, w, b, y)
    out = capsys.readouterr().out
    assert "chain traced, graph 1" in out and out.count("_inductor_trace_fused_") == 1


def test_force_eager_stance():
    f = fw.compile(chain)
    (x, w, b, y), _ = inputs("cpu", fw.float32)
    with fw.compiler.set_stance("force_eager"):
        f(x, w, b, y)
    assert f._compiled.traces == 0


def test_generated_source_lives_in_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("FW_INDUCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(inductor.codegen, "_modules", {})
    (x, w, b, y), _ = inputs("cuda", fw.float32, shape=(3, 5))
    f = fw.compile(chain)
    f(x, w, b, y)
    (call,) = fused_calls(f)
    files = list(tmp_path.glob("fused_*.py"))
    assert len(files) == 1 and files[0].read_text() == call.source


def mixed(x, y):
    h = fw.where(x > y, x * 2.0, fw.maximum(y, x.neg()))
    h = (h.half().float() + fw.minimum(x, y * 0.25)) * (y <= 0.1)
    return h.to(fw.float64).rsqrt().abs(), h > 0


def test_where_comparisons_casts(device):
    rng = np.random.default_rng(1)
    a, c = (rng.standard_normal((7, 150)).astype(np.float32) for _ in range(2))
    x, y = fw.tensor(a, device=device), fw.tensor(c, device=device)
    f = fw.compile(mixed)
    f(x, y)                       # traced (runs unfused)
    got, pos = f(x, y)            # fused on cuda
    want, want_pos = mixed(x, y)
    assert got.dtype == fw.float64 and pos.dtype == fw.bool
    np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(pos.cpu().numpy(), want_pos.cpu().numpy())
    if device == "cuda":
        (call,) = fused_calls(f)
        assert call.source.count("tl.store") == 2


def test_reset_and_is_compiling():
    seen = []

    def f(x):
        seen.append(fw.compiler.is_compiling())
        return x.exp() + 1
    g = fw.compile(f)
    x = fw.ones(3)
    g(x)
    g(x)
    assert seen == [True] and g._compiled.traces == 1 and not fw.compiler.is_compiling()
    fw.compiler.reset()
    g(x)
    assert seen == [True, True] and g._compiled.traces == 2


def test_in_place_ops_keep_their_order(device):
    def f(x, y):
        a = x.exp() * 2.0
        y.mul_(3.0)                   # a later read of y must see this
        return (a + y).sigmoid() - 1.0
    x = fw.tensor([[0.5, -1.0, 2.0]], device=device)
    y = fw.tensor([[1.0, 2.0, -3.0]], device=device)
    g = fw.compile(f)
    for _ in range(2):
        y0, y1 = y.clone(), y.clone()
        got, want = g(x, y0), f(x, y1)
        np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), rtol=1e-6)
        np.testing.assert_array_equal(y0.cpu().numpy(), y1.cpu().numpy())


def test_module_hooks_run_around_the_compiled_forward():
    m = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    calls = []
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    c = fw.compile(m)
    x = fw.ones(2, 3)
    for _ in range(2):
        np.testing.assert_allclose(c(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert calls == [(2, 3)] * 4 and c._compiled.traces == 1


def test_double_backward_through_a_fused_group(device):
    def f(x, w):
        return (fw.sigmoid(x * w) * x).exp()
    g = fw.compile(f)
    x = fw.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
    w = fw.tensor([1.5, 2.0, -0.5], device=device, requires_grad=True)
    got = []
    for fn in (g, g, f):                  # traced, cached (fused on cuda), eager
        (gx,) = fw.autograd.grad(fn(x, w).sum(), x, create_graph=True)
        (gw,) = fw.autograd.grad(gx.sum(), w)
        got.append(np.concatenate([gx.detach().cpu().numpy(), gw.cpu().numpy()]))
    np.testing.assert_allclose(got[1], got[2], rtol=1e-5)
    np.testing.assert_allclose(got[0], got[2], rtol=1e-6)
    tx = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    tw = torch.tensor([1.5, 2.0, -0.5], dtype=torch.float64, requires_grad=True)
    (tgx,) = torch.autograd.grad((torch.sigmoid(tx * tw) * tx).exp().sum(), tx,
                                 create_graph=True)
    (tgw,) = torch.autograd.grad(tgx.sum(), tw)
    np.testing.assert_allclose(got[1], np.concatenate([tgx.detach().numpy(), tgw.numpy()]),
                               rtol=1e-5)


def test_fused_ops_are_the_op_tables_pointwise_kernels():
    from framework._inductor.fuse import POINTWISE
    from framework._ops import dispatcher
    from framework.kernels import pointwise_ops
    tables = {"unary": pointwise_ops.UNARY, "binary": pointwise_ops.BINARY,
              "ternary": pointwise_ops.TERNARY}
    checked = 0
    for name, (fn, arity) in POINTWISE.items():
        op = dispatcher.ops().get(name)
        if op is None:   # gelu, silu, pow_scalar, casts: composites over the same kernels
            continue
        assert op.kind in tables, name
        assert tables[op.kind][op.kernel][0].__name__ == fn, name
        checked += 1
    assert checked >= 25
