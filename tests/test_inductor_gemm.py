"""framework.compile's matmul epilogue fusion (framework/_inductor/gemm.py): a matmul and
the pointwise ops after it (bias, activation, scaling, residual add, cast) as one generated
Triton GEMM kernel; and the guard on grad mode."""
import os
import sys

import numpy as np
import pytest

import framework as fw
import framework.nn as nn
import framework.nn.functional as F
from tests.test_inductor import fused_calls, kernels_launched

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("error:framework.compile:UserWarning")

# eager GEMM's tolerance against a float64 reference (tests/test_linalg.py's RTOL)
RTOL = {fw.float32: 1e-5, fw.bfloat16: 1.6e-2}


def gemm_names(compiled):
    return [c.__name__ for c in fused_calls(compiled) if c.__name__.startswith("gemm_")]


def to64(t):
    return torch.tensor(t.detach().float().cpu().numpy(), dtype=torch.float64)


def close(got, want, dtype, scale=1.0):
    tol = RTOL[dtype]
    np.testing.assert_allclose(got.detach().float().cpu().numpy(),
                               want.detach().float().cpu().numpy() if isinstance(want, fw.Tensor)
                               else want.numpy(), rtol=tol, atol=tol * scale)


class MLP(nn.Module):
    """GPT's MLP with its residual: x + c_proj(gelu(c_fc(x)))."""

    def __init__(self, k, n):
        super().__init__()
        self.c_fc, self.gelu, self.c_proj = nn.Linear(k, n), nn.GELU(), nn.Linear(n, k)

    def forward(self, x):
        return x + self.c_proj(self.gelu(self.c_fc(x)))


@pytest.mark.parametrize("dtype", [fw.float32, fw.bfloat16])
def test_linear_gelu_and_residual_epilogues(device, dtype):
    # M = 33 rows (3 x 11), K = 40, N = 48: partial tiles along every dim
    fw.manual_seed(0)
    m = MLP(40, 48).to(device=device, dtype=dtype)
    x = fw.randn(3, 11, 40, device=device, dtype=dtype, requires_grad=True)
    f = fw.compile(m)
    f(x)
    got = f(x)
    want = m(x)
    assert got.dtype == dtype and got.requires_grad
    close(got, want, dtype, 4.0)
    TF = torch.nn.functional
    p = {k: to64(v) for k, v in m.named_parameters()}
    ref = to64(x) + TF.linear(TF.gelu(TF.linear(to64(x), p["c_fc.weight"], p["c_fc.bias"])),
                              p["c_proj.weight"], p["c_proj.bias"])
    close(got, ref, dtype, 4.0)
    # backward: the group's ops recomputed eagerly, gradients as eager's
    g = fw.randn(3, 11, 40, device=device, dtype=dtype)
    got.backward(g)
    grads = [x.grad] + [q.grad for q in m.parameters()]
    x.grad = None
    m.zero_grad()
    want.backward(g)
    for a, b in zip(grads, [x.grad] + [q.grad for q in m.parameters()]):
        close(a, b, dtype, 8.0)
    if device == "cuda":
        assert len(gemm_names(f)) == 2   # c_fc + gelu, c_proj + bias + residual
        _, eager = kernels_launched(m, x)
        _, compiled = kernels_launched(f, x)
        assert len(compiled) == 2 and all(k.startswith("gemm_") for k in compiled)
        assert len(eager) >= 4
    else:
        assert fused_calls(f) == []


def forms(x2, w, wt, b, x3, r):
    y1 = fw.relu(fw.mm(x2, wt)) * 0.5
    y2 = F.silu(fw.addmm(b, x2, wt))
    y3 = x3 @ wt + r
    y4 = F.gelu(F.linear(x3, w), approximate="tanh").to(fw.bfloat16)
    y5 = x2.matmul(wt).sigmoid() - b
    return y1, y2, y3, y4, y5


def torch_forms(x2, w, wt, b, x3, r):
    TF = torch.nn.functional
    return (torch.relu(x2 @ wt) * 0.5, TF.silu(b + x2 @ wt), x3 @ wt + r,
            TF.gelu(TF.linear(x3, w), approximate="tanh"), torch.sigmoid(x2 @ wt) - b)


def test_matmul_forms_fuse_on_cuda_with_a_transposed_weight():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in ((33, 40), (48, 40), (48,), (3, 11, 40), (3, 11, 48))]
    x2, w, b, x3, r = (fw.tensor(a, device="cuda") for a in arrays)
    wt = w.t()   # (40, 48), column-major: what nn.Linear's weight.t() gives
    f = fw.compile(forms)
    f(x2, w, wt, b, x3, r)
    got = f(x2, w, wt, b, x3, r)
    assert len(gemm_names(f)) == 5 and len(fused_calls(f)) == 5
    want = forms(x2, w, wt, b, x3, r)
    ref = torch_forms(*[torch.tensor(a, dtype=torch.float64)
                        for a in (arrays[0], arrays[1], arrays[1].T, *arrays[2:])])
    assert got[3].dtype == fw.bfloat16
    for g, e, t in zip(got, want, ref):
        dt = fw.bfloat16 if g.dtype == fw.bfloat16 else fw.float32
        close(g, e, dt, 8.0)
        close(g, t, dt, 8.0)


def test_rows_that_do_not_flatten_run_eagerly(device):
    def f(x, w, b):
        return F.gelu(F.linear(x, w, b)) * 2.0

    fw.manual_seed(2)
    x, w, b = fw.randn(3, 11, 40, device=device), fw.randn(48, 40, device=device), fw.randn(
        48, device=device)
    g = fw.compile(f)
    g(x, w, b)
    xt = fw.randn(11, 3, 40, device=device).transpose(0, 1)   # leading dims not one run
    got = g(xt, w, b)
    assert g._compiled.traces == 1
    close(got, f(xt, w, b), fw.float32, 8.0)
    assert len(gemm_names(g)) == (1 if device == "cuda" else 0)


def _tiny_gpt():
    """The demo's GPT at one small layer on cuda, and a batch of token ids."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
    from train_gpt import GPT, GPTConfig
    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_head=2, n_embd=32)
    fw.manual_seed(0)
    m = GPT(cfg).to("cuda")
    return m, fw.randint(0, 64, (2, 16), device="cuda")


def test_gpt_mlp_and_projections_fuse():
    m, idx = _tiny_gpt()
    f = fw.compile(m)
    f(idx, idx)
    logits, loss = f(idx, idx)
    # c_fc + gelu; attention's and the MLP's c_proj + bias + residual (dropout 0: identity)
    assert len(gemm_names(f)) == 3
    want, wloss = m(idx, idx)
    close(logits, want, fw.float32, 4.0)
    loss.backward()
    grads = {k: p.grad.clone() for k, p in m.named_parameters()}
    m.zero_grad()
    wloss.backward()
    for k, p in m.named_parameters():
        close(grads[k], p.grad, fw.float32, 10.0)


def grads_of(out, g, params):
    out.backward(g)
    grads = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    return grads


@pytest.mark.parametrize("dtype", [fw.bfloat16, fw.float16])
def test_autocast_linear_epilogues_are_eager_autocast(dtype):
    # under autocast the float32 weight and bias are rounded to dtype as the kernel loads
    # them, the product taken in dtype and each 16-bit value rounded as eager stores it: on
    # the simulated GPU (the eager GEMM's tile order) the bits are eager autocast's
    fw.manual_seed(3)
    m = MLP(40, 48).to("cuda")
    x = fw.randn(3, 11, 40, device="cuda", requires_grad=True)
    f = fw.compile(m)
    params = [x, *m.parameters()]
    with fw.autocast(device_type="cuda", dtype=dtype):
        f(x)
        got = f(x)
        want = m(x)
        _, launched = kernels_launched(f, x)
    assert len(gemm_names(f)) == 2 and len(launched) == 2
    assert got.dtype == want.dtype == fw.float32   # x + bfloat16: the residual promotes
    np.testing.assert_array_equal(got.detach().cpu().numpy(), want.detach().cpu().numpy())
    g = fw.randn(3, 11, 40, device="cuda")
    # backward: the group recomputed in the traced autocast state (backward runs with
    # autocast off), so the float32 gradients are eager autocast's
    for a, b in zip(grads_of(got, g, params), grads_of(want, g, params)):
        assert a.dtype == b.dtype == fw.float32
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())
    # torch's autocast (on cpu: the same casts) within the 16-bit dtype's tolerance
    tx = torch.tensor(x.detach().cpu().numpy(), requires_grad=True)
    tp = {k: torch.tensor(v.detach().cpu().numpy(), requires_grad=True)
          for k, v in m.named_parameters()}
    TF = torch.nn.functional
    with torch.autocast("cpu", dtype=getattr(torch, dtype.name)):
        ref = tx + TF.linear(TF.gelu(TF.linear(tx, tp["c_fc.weight"], tp["c_fc.bias"])),
                             tp["c_proj.weight"], tp["c_proj.bias"])
    close(got, ref.detach(), fw.bfloat16, 4.0)


def autocast_forms(x, w, wt, b):
    return F.gelu(F.linear(x, w, b)) * 3.0 + 1.0, fw.relu(fw.addmm(b, x[0], wt)) - 0.5


def test_autocast_matmul_forms_round_each_16_bit_value():
    # bfloat16 epilogue values rounded as eager rounds each op's result (gelu's, then the
    # product's): eager's bits; addmm casts its float32 bias and operands as linear does
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((2, 11, 40), (48, 40), (48,))]
    x, w, b = (fw.tensor(a, device="cuda") for a in arrays)
    f = fw.compile(autocast_forms)
    with fw.autocast(device_type="cuda", dtype=fw.bfloat16):
        f(x, w, w.t(), b)
        got = f(x, w, w.t(), b)
        want = autocast_forms(x, w, w.t(), b)
    assert len(gemm_names(f)) == 2
    for a, e in zip(got, want):
        assert a.dtype == e.dtype == fw.bfloat16
        np.testing.assert_array_equal(a.float().cpu().numpy(), e.float().cpu().numpy())
    tx, tw, tb = (torch.tensor(a) for a in arrays)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ref = (torch.nn.functional.gelu(torch.nn.functional.linear(tx, tw, tb)) * 3.0 + 1.0,
               torch.relu(torch.addmm(tb, tx[0], tw.t())) - 0.5)
    for a, t in zip(got, ref):
        close(a, t.float(), fw.bfloat16, 8.0)


def test_gpt_fuses_under_autocast():
    m, idx = _tiny_gpt()
    f = fw.compile(m)
    with fw.autocast(device_type="cuda", dtype=fw.bfloat16):
        f(idx, idx)
        logits, loss = f(idx, idx)
        want, wloss = m(idx, idx)
    # per layer: c_fc + gelu, and attention's and the MLP's c_proj + bias + residual
    assert len(gemm_names(f)) == 3
    assert logits.dtype == want.dtype == fw.bfloat16
    np.testing.assert_array_equal(logits.detach().float().cpu().numpy(),
                                  want.detach().float().cpu().numpy())
    assert loss.item() == wloss.item()
    params = list(m.parameters())
    for a, b in zip(grads_of(loss, None, params), grads_of(wloss, None, params)):
        assert a.dtype == fw.float32
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())


@pytest.mark.skipif(not os.environ.get("FW_COMPILE_CHECK"), reason="compile check only")
@pytest.mark.parametrize("dtype", [fw.float32, fw.bfloat16])
def test_gemm_kernels_compile_with_the_gpu_configs_on_cuda(monkeypatch, dtype):
    # on a GPU the generated kernels are autotuned over the eager GEMM's tensor-core
    # configs: the biggest tile compiled for sm_90 here (tests/compile_check.py), values
    # checked (every config compiles: 5 minutes on 2 cores, too long for CI)
    from framework.kernels import linalg
    fw.manual_seed(0)
    m = MLP(40, 48).to(device="cuda", dtype=dtype)
    x = fw.randn(3, 11, 40, device="cuda", dtype=dtype)
    f = fw.compile(m)
    f(x)
    want = m(x)
    precision = fw.get_float32_matmul_precision()
    fw.set_float32_matmul_precision("high")   # float32 as TF32 tensor-core dots
    try:
        for cfg in linalg._DOT_CONFIGS[:1]:
            monkeypatch.setattr(linalg, "_SIM_DOT_CONFIG", cfg)
            close(f(x), want, fw.bfloat16, 4.0)
    finally:
        fw.set_float32_matmul_precision(precision)


def grad_mode_program(T):
    def f(x):
        y = x * 2
        branch = y + 1 if y.requires_grad else y - 1
        return branch * (2 if T.is_grad_enabled() else 3)
    return f


def test_grad_mode_is_guarded(device):
    # what the trace read of the grad mode is baked into its graph: each mode is its own
    # graph, as TorchDynamo guards on it (torch.compile's results are eager torch's)
    x = fw.ones(4, device=device, requires_grad=True)
    g = fw.compile(grad_mode_program(fw))
    tx, tf = torch.ones(4, requires_grad=True), grad_mode_program(torch)
    for mode in ("no_grad", "grad", "inference", "grad"):
        fctx, tctx = {"no_grad": (fw.no_grad, torch.no_grad),
                      "inference": (fw.inference_mode, torch.inference_mode)}.get(
                          mode, (fw.enable_grad, torch.enable_grad))
        with fctx():
            got = g(x)
        with tctx():
            want = tf(tx)
        np.testing.assert_array_equal(got.detach().cpu().numpy(), want.detach().numpy())
        assert got.requires_grad == want.requires_grad
        assert got.is_inference() == want.is_inference()
    assert g._compiled.traces == 3
