"""framework.compile's trace with example values (framework/_inductor/trace.py): shapes,
sizes, dtypes and devices are concrete while tracing (specialised, as the guard pins
them), data stays symbolic; the trace run is the first call's result, so random and
in-place ops run once per call."""
import math
import os
from dataclasses import dataclass

import numpy as np
import pytest

import framework as fw
import framework._inductor as inductor
import framework.nn as nn
import framework.nn.functional as F

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("error:framework.compile:UserWarning")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CFG = dict(vocab_size=32, block_size=8, n_layer=1, n_head=2, n_embd=16)


def gpt_namespace(lib, lib_nn, lib_F):
    """The model section of examples/train_gpt.py over ``lib`` (as bench/train.py does)."""
    with open(os.path.join(ROOT, "examples", "train_gpt.py")) as f:
        src = f.read()
    start, end = src.index("@dataclass\nclass GPTConfig"), src.index("# ---- the corpus")
    ns = {"torch": lib, "nn": lib_nn, "F": lib_F, "math": math, "dataclass": dataclass}
    exec(compile(src[start:end], "examples/train_gpt.py (model)", "exec"), ns)
    return ns


def gpts(device, **cfg):
    """(eager framework GPT, an identical one to compile, the same in PyTorch)."""
    ns = gpt_namespace(fw, nn, F)
    fw.manual_seed(0)
    config = ns["GPTConfig"](**{**CFG, **cfg})
    eager, other = ns["GPT"](config).to(device), ns["GPT"](config).to(device)
    other.load_state_dict(eager.state_dict())
    tns = gpt_namespace(torch, torch.nn, torch.nn.functional)
    ref = tns["GPT"](tns["GPTConfig"](**{**CFG, **cfg}))
    ref.load_state_dict({k: torch.tensor(v.detach().cpu().numpy())
                         for k, v in eager.state_dict().items()})
    return eager, other, ref


def batch(device, seed=0, shape=(2, 8)):
    rng = np.random.default_rng(seed)
    idx, tgt = (rng.integers(0, CFG["vocab_size"], shape) for _ in range(2))
    return (fw.tensor(idx, device=device), fw.tensor(tgt, device=device),
            torch.tensor(idx), torch.tensor(tgt))


def close(a, b, rtol=1e-5, atol=1e-6):
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b.detach().cpu().numpy()
    np.testing.assert_allclose(a.detach().cpu().numpy(), b, rtol=rtol, atol=atol)


def test_gpt_compiles_and_trains_like_eager(device):
    eager, model, ref = gpts(device)
    compiled = fw.compile(model)
    idx, tgt, tidx, ttgt = batch(device)
    want_logits, want_loss = ref(tidx, ttgt)
    for _ in range(2):                       # the trace run, then the cached graph
        logits, loss = compiled(idx, tgt)
        e_logits, e_loss = eager(idx, tgt)
        close(logits, e_logits, 0, 0)
        close(loss, e_loss, 0, 0)
        close(logits, want_logits, 1e-4, 1e-5)
        close(loss, want_loss, 1e-5)
    assert compiled._compiled.traces == 1 and not compiled._compiled.eager
    opts = [fw.optim.AdamW(m.parameters(), lr=1e-2) for m in (eager, model)]
    for step in range(2):
        losses = []
        for m, opt in zip((eager, compiled), opts):
            _, loss = m(idx, tgt)
            opt.zero_grad()
            loss.backward()
            losses.append(loss)
        close(losses[1], losses[0], 0, 0)
        for p, q in zip(model.parameters(), eager.parameters()):
            close(p.grad, q.grad, 1e-6, 1e-7)
        for opt in opts:
            opt.step()
    for p, q in zip(model.parameters(), eager.parameters()):
        close(p, q, 1e-6, 1e-7)
    assert compiled._compiled.traces == 1


def test_gpt_targets_none_is_another_graph(device):
    eager, model, _ = gpts(device)
    compiled = fw.compile(model)
    idx, tgt, _, _ = batch(device, seed=1)
    logits, loss = compiled(idx)
    assert loss is None
    close(logits, eager(idx)[0], 0, 0)
    logits, loss = compiled(idx, tgt)
    close(loss, eager(idx, tgt)[1], 0, 0)
    assert compiled._compiled.traces == 2
    graphs = list(compiled._compiled.cache.values())
    has_loss = ["cross_entropy" in gm.code for gm in graphs]
    assert has_loss == [False, True]
    assert compiled(idx)[1] is None and compiled._compiled.traces == 2
    # the sequence-length assert is baked in: a longer input fails as eager does
    long_idx = fw.zeros(1, 9, dtype=fw.int64, device=device)
    with pytest.raises(AssertionError, match="block size"):
        compiled(long_idx)


class Heads(nn.Module):
    def forward(self, x, heads=4):
        assert x.shape[-1] == 16, "the last dimension must be 16"
        B, T, C = x.size()
        assert x.dim() == 3 and len(x) == B and x.numel() == B * T * C
        assert x.dtype == fw.float32 and x.is_cuda == (x.device.type == "cuda")
        if x.requires_grad:
            x = x * 1.0
        h = x.view(B, T, heads, C // heads).transpose(1, 2)
        return (h.softmax(-1) * fw.arange(C // heads, device=x.device)).sum(-1)


def test_shape_asserts_are_traced_and_the_guard_retraces(device):
    m = Heads()
    g = fw.compile(m)
    rng = np.random.default_rng(2)
    for shape in [(2, 3, 16), (2, 3, 16), (1, 5, 16)]:
        a = rng.standard_normal(shape).astype(np.float32)
        got = g(fw.tensor(a, device=device))
        t = torch.tensor(a)
        h = t.view(shape[0], shape[1], 4, 4).transpose(1, 2)
        close(got, (h.softmax(-1) * torch.arange(4)).sum(-1), 1e-5)
    assert g._compiled.traces == 2
    gm = next(iter(g._compiled.cache.values()))
    # sizes were Python ints: no size/dim/getattr nodes, the view's shape is constant
    assert "size" not in gm.code and "getattr" not in gm.code
    assert ".view(2, 3, 4, 4)" in gm.code
    with pytest.raises(AssertionError, match="must be 16"):
        g(fw.zeros(2, 3, 8, device=device))
    assert not g._compiled.eager and g._compiled.traces == 2


def data_dependent(x):
    x = F.dropout(x, p=0.5, training=True)
    if x.sum() > 0:
        return x.exp() * 2
    return x.neg() - 1


def test_data_dependent_branch_falls_back_with_eager_random_draws(device):
    x = fw.linspace(0.1, 1.0, 40, device=device)
    f = fw.compile(data_dependent)
    fw.manual_seed(5)
    with pytest.warns(UserWarning, match="runs eagerly.*TraceError"):
        got = f(x)
    fw.manual_seed(5)
    close(got, data_dependent(x), 0, 0)
    assert f._compiled.eager and f._compiled.traces == 0
    with pytest.raises(fw.fx.TraceError):
        fw.compile(lambda x: x * x.max().item(), fullgraph=True)(x)
    with pytest.raises(fw.fx.TraceError):
        fw.compile(lambda x: fw.tensor(x.tolist()), fullgraph=True)(x)


def positives(x):
    p = x[x > 0]                         # its length depends on the data
    return p * p.shape[0]


def test_data_dependent_shape_is_not_specialised(device):
    f = fw.compile(positives)
    a = fw.tensor([1.0, -2.0, 3.0], device=device)
    with pytest.warns(UserWarning, match="runs eagerly"):
        close(f(a), torch.tensor([2.0, 6.0]), 0, 0)
    close(f(fw.tensor([1.0, 2.0, 3.0], device=device)), torch.tensor([3.0, 6.0, 9.0]), 0, 0)


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        noise = fw.randn(x.shape, device=x.device)   # no traced argument: still recorded
        return self.drop(self.fc(x)).sigmoid() + 0.1 * noise


def test_random_ops_draw_as_eager(device):
    fw.manual_seed(0)
    m = Noisy().to(device)
    g = fw.compile(m)
    x = fw.randn(5, 6, device=device)
    fw.manual_seed(7)
    got = [g(x) for _ in range(3)]        # trace run, then the cached graph twice
    fw.manual_seed(7)
    want = [m(x) for _ in range(3)]
    for a, b in zip(got, want):
        close(a, b, 0, 0)
    assert not np.array_equal(got[1].detach().cpu().numpy(), got[2].detach().cpu().numpy())
    assert g._compiled.traces == 1


def test_in_place_state_updates_run_once_per_call(device):
    fw.manual_seed(0)
    eager = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6)).to(device)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6)).to(device)
    model.load_state_dict(eager.state_dict())
    g = fw.compile(model)
    x = fw.randn(8, 4, device=device)
    for _ in range(2):
        close(g(x), eager(x), 1e-6, 1e-6)
        close(model[1].running_mean, eager[1].running_mean, 1e-6, 1e-7)
        close(model[1].running_var, eager[1].running_var, 1e-6, 1e-7)
        assert int(model[1].num_batches_tracked) == int(eager[1].num_batches_tracked)


def test_symbolic_trace_stays_symbolic():
    eager, _, _ = gpts("cpu")
    with pytest.raises(fw.fx.TraceError):
        fw.fx.symbolic_trace(eager)

    def f(x):
        return x + fw.arange(3)
    gm = fw.fx.symbolic_trace(f)           # a call without proxies is a constant there
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "get_attr", "call_function",
                                             "output"]


def fused_calls(compiled):
    gm = next(iter(compiled._compiled.cache.values()))
    return gm, [n.target for n in gm.graph.nodes if isinstance(n.target, inductor.FusedCall)]


def test_gpt_fused_groups_on_cuda():
    _, model, _ = gpts("cuda", n_layer=2)
    compiled = fw.compile(model)
    idx, tgt, _, _ = batch("cuda")
    compiled(idx, tgt)
    gm, calls = fused_calls(compiled)
    # the pointwise ops of this GPT sit between matmuls, layer norms and views: only the
    # GEMM epilogues fuse (gemm.py), c_fc + gelu and both c_proj + residual per layer
    assert len(calls) == 6 and all(c.__name__.startswith("gemm_") for c in calls)
    # the metadata fusion reads comes from the trace's example values, which are dropped
    for n in gm.graph.nodes:
        assert "example_value" not in n.meta and "val" not in n.meta
        if n.op.startswith("call_") and n.meta["type"] is fw.Tensor:
            assert n.meta["device"].type == "cuda" and n.meta["tensor_meta"].dtype is not None


class Gated(nn.Module):
    def forward(self, x):
        B, T, C = x.shape
        a, b = x.split(C // 2, dim=-1)
        return (a * fw.sigmoid(b) + 1.0).reshape(B, T * (C // 2))


def test_shape_specialised_code_fuses_on_cuda():
    g = fw.compile(Gated())
    a = np.random.default_rng(3).standard_normal((2, 5, 12)).astype(np.float32)
    x = fw.tensor(a, device="cuda")
    t = torch.tensor(a)
    want = (t[..., :6] * torch.sigmoid(t[..., 6:]) + 1.0).reshape(2, 30)
    for _ in range(2):
        close(g(x), want, 1e-6, 1e-6)
    _, calls = fused_calls(g)
    assert len(calls) == 1 and calls[0].source.count("_sigmoid(") == 1


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", fw.zeros(1))

    def forward(self, x):
        self.count.add_(1.0)                 # once per call, as eagerly
        return x * self.count


def test_buffer_updates_run_once_per_call(device):
    g = fw.compile(Counter().to(device))
    x = fw.ones(3, device=device)
    for k in (1.0, 2.0, 3.0):
        close(g(x), torch.full((3,), k), 0, 0)
    assert g._compiled.traces == 1


def test_custom_backend_first_call_draws_as_eager(device):
    def f(x):
        return F.dropout(x, p=0.5, training=True) * 2.0
    seen = []

    def backend(gm, example_inputs):
        seen.append(len(example_inputs))
        return gm.forward
    g = fw.compile(f, backend=backend)
    x = fw.ones(4, 50, device=device)
    fw.manual_seed(11)
    got = [g(x), g(x)]                   # the backend's callable runs both calls
    fw.manual_seed(11)
    for a in got:
        close(a, f(x), 0, 0)
    assert seen == [1]
