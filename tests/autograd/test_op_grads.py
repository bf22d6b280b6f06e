"""Gradients of every differentiable op call in op_grads.CASES: first and second
derivatives against PyTorch (where installed) and against finite differences (gradcheck,
always), on cpu and cuda."""
import numpy as np
import pytest

import framework as fw
from tests.helpers import torch_grad
from op_grads import CASES, P, U

torch = pytest.importorskip("torch")

# ops whose backward uses an op without a derivative: first order only, and the second
# order must raise rather than be wrong
# ops whose backward is a kernel without a derivative (as PyTorch's fused attention)
NO_SECOND_ORDER = {"_fused_sdpa"}
# torch 2.13's gradient is wrong: as_strided_scatter's input gradient is the complement of
# the right one (it keeps the overwritten window and zeroes the rest)
TORCH_GRAD_WRONG = {"as_strided_scatter"}


def _inputs(T, shapes, domain, seed, device):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if domain == P:
            a = rng.uniform(0.5, 2.0, s)
        elif domain == U:
            a = rng.uniform(-0.9, 0.9, s)
        else:
            a = rng.uniform(0.3, 2.0, s) * rng.choice([-1.0, 1.0], s)
        t = T.tensor(a, dtype=T.float64)
        if T is fw:
            t = t.to(device)
        out.append(t.requires_grad_())
    return out


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "numpy") else np.asarray(t)


@pytest.mark.parametrize("name,fn,shapes,domain", CASES, ids=[c[0] for c in CASES])
def test_grad_matches_torch(name, fn, shapes, domain, device):
    xs = _inputs(fw, shapes, domain, 1, device)
    ts = _inputs(torch, shapes, domain, 1, "cpu")
    with fw.device(device):       # factories inside the cases make tensors on `device`
        out = fn(fw, *xs)
    tout = fn(torch, *ts)
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=1e-9, atol=1e-12)
    if name in TORCH_GRAD_WRONG:
        return      # forward only: finite differences check our gradients (below)
    w = np.random.default_rng(2).uniform(-1, 1, tuple(tout.shape))
    gw, tw = fw.tensor(w, device=device), torch.tensor(w)
    with fw.device(device):
        g = fw.autograd.grad((out * gw).sum(), xs, create_graph=True)
    tg = torch_grad(torch, name, (tout * tw).sum(), ts, create_graph=True)
    for a, b in zip(g, tg):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=1e-7, atol=1e-10)
    if name in NO_SECOND_ORDER:
        with pytest.raises(RuntimeError, match="is not implemented"):
            fw.autograd.grad(sum(a.sum() for a in g), xs)
        return
    # second order: d/dx of sum(grad * v), with create_graph through our formulas
    vs = [np.random.default_rng(3 + i).uniform(-1, 1, tuple(b.shape)) for i, b in
          enumerate(tg)]
    s = sum((a * fw.tensor(v, device=device)).sum() for a, v in zip(g, vs))
    ts_ = sum((b * torch.tensor(v)).sum() for b, v in zip(tg, vs))
    try:
        tgg = torch.autograd.grad(ts_, ts, allow_unused=True) if ts_.requires_grad else \
            (None,) * len(ts)
    except RuntimeError as e:
        if "not implemented" in str(e):
            return      # torch has no second derivative to compare with
        raise
    gg = fw.autograd.grad(s, xs, allow_unused=True) if s.requires_grad else (None,) * len(xs)
    for a, b in zip(gg, tgg):
        ref = np.zeros(1) if b is None else b.detach().numpy(force=True)
        got = np.zeros(1) if a is None else _np(a)
        if a is None or b is None:
            assert np.allclose(got, 0) and np.allclose(ref, 0), f"{name}: second derivative"
            continue
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9)

SMALL = {"mul", "div", "exp", "matmul", "sum_dim", "cat", "getitem_adv", "logsumexp", "gelu",
         "index_add"}
# piecewise ops: finite differences straddle their kinks (or ties) at these inputs
NOT_SMOOTH = {"remainder", "fmod", "frac", "abs", "clamp", "clamp_min", "maximum", "minimum",
              "relu", "relu6", "hardtanh", "hardsigmoid", "hardswish", "leaky_relu", "elu",
              "celu", "selu", "threshold", "amax", "amin", "max_dim", "min_dim_keep", "max_all",
              "norm_p1", "sort", "topk", "kthvalue", "median_dim", "cummax", "cummin", "msort",
              "mode", "nanmedian", "median_all", "aminmax", "fmax", "fmin", "copysign", "where",
              "masked_fill", "masked_select", "masked_scatter", "ceil", "floor", "trunc", "round",
              "fix", "sign", "sgn", "eigh_values", "eigvalsh", "max_binary",
              "min_binary", "max_other_kw", "min_other_kw", "scatter_reduce_amax", "scatter_reduce_amax_noself",
              "scatter_reduce_amin", "scatter_reduce_amin_noself", "max_pool1d", "max_pool2d",
              "max_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}
# cases whose inputs are pinned to fixed values (op_grads.pinned)
PINNED = {name for name, *_ in CASES if "ties" in name or "zeros" in name} | {
    "scatter_reduce_", "scatter_reduce_amax_"}


# left out of finite differences on simulated cuda for time (each takes over 2 s in Triton's
# interpreter): the LAPACK decompositions (their forward runs on the host for both devices),
# batched GEMMs and the mean/prod scatter reductions; all are checked against torch on cuda
# and by finite differences on cpu, and matmul, bmm and scatter_reduce sum stay in
CUDA_SLOW = {"addbmm", "baddbmm", "kron", "tensordot", "linalg_qr", "linalg_qr_complete",
             "linalg_qr_wide", "qr", "qr_complete_wide", "linalg_svd", "linalg_svd_full_tall",
             "linalg_svd_full_wide", "linalg_svd_u", "linalg_svd_vh", "svd", "svd_full_wide",
             "lstsq_residuals", "lstsq_vector", "lstsq_wide", "pinv_low_rank", "pinv_wide",
             "scatter_reduce_mean", "scatter_reduce_mean_", "scatter_reduce_mean_noself",
             "scatter_reduce_prod", "scatter_reduce_prod_noself",
             # GEMM tiles in the interpreter (10-20 s each); tests/kernels/test_conv_gemm.py
             # and tests/nn/test_fused_linear.py run gradcheck on their own small shapes
             "_conv_gemm", "_conv_gemm_input", "_conv_gemm_weight", "_fused_linear",
             # several kernels per gradcheck column (3-15 s each); the plain cases stay in
             "native_group_norm_stats", "clamp_tensor", "clamp_min_tensor", "clamp_max_tensor",
             "logcumsumexp_large", "ldexp_other", "index_fill_tensor_value", "meshgrid_list",
             # complex cases: four real launches or more per op, and eig on the host; the
             # complex ops' plain cases stay in (tests/test_complex.py compares with torch)
             "complex_reductions", "complex_addcmul_addcdiv", "complex_baddbmm", "complex_pow",
             "complex_kron_vecdot", "complex_einsum", "complex_hyperbolic", "linalg.eig",
             "linalg.eigvals", "stft", "istft", "hfftn", "ihfft"}


def _gradcheck_cases(device):
    skip = NOT_SMOOTH | PINNED | (CUDA_SLOW if device != "cpu" else set())
    return [pytest.param(*c, id=c[0]) for c in CASES if c[0] not in skip]


@pytest.mark.parametrize("name,fn,shapes,domain", _gradcheck_cases("cpu"))
def test_gradcheck_every_op_cpu(name, fn, shapes, domain):
    """Finite differences (float64) for every smooth case, first and second order."""
    xs = _inputs(fw, shapes, domain, 4, "cpu")
    assert fw.autograd.gradcheck(lambda *a: fn(fw, *a), xs)
    if name not in NO_SECOND_ORDER:
        assert fw.autograd.gradgradcheck(lambda *a: fn(fw, *a), xs)


@pytest.mark.parametrize("name,fn,shapes,domain", _gradcheck_cases("cuda"))
def test_gradcheck_every_op_cuda(name, fn, shapes, domain):
    """Finite differences on simulated cuda: first order for every smooth case (but the
    slowest, above), second order for a sample."""
    if not fw.cuda.is_available():
        pytest.skip("needs cuda or TRITON_INTERPRET=1")
    xs = _inputs(fw, shapes, domain, 4, "cuda")
    with fw.device("cuda"):
        assert fw.autograd.gradcheck(lambda *a: fn(fw, *a), xs)
        if name in SMALL:
            assert fw.autograd.gradgradcheck(lambda *a: fn(fw, *a), xs)


def test_every_derivative_is_exercised():
    """Each op with derivative formulas in ops.yaml appears in the graph of some case."""
    import yaml
    from framework._ops.dispatcher import OPS_YAML
    from framework.autograd.record import OpNode
    seen = set()
    for name, fn, shapes, domain in CASES:
        out = fn(fw, *_inputs(fw, shapes, domain, 1, "cpu"))
        stack = [o.grad_fn for o in (out if isinstance(out, tuple) else (out,))]
        while stack:
            node = stack.pop()
            if node is None:
                continue
            if isinstance(node, OpNode):
                seen.add(node._d.op_name)
            stack.extend(e[0] for e in node.next_functions if e is not None)
    with open(OPS_YAML) as f:
        rows = yaml.safe_load(f)
    # in-place random fills have zero derivatives and are used on leaves
    exempt = {"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
              "log_normal_", "cauchy_"}
    # positive(x) returns x itself (as torch does), which keeps its own history
    exempt.add("positive")
    # random draws: poisson's derivative is zero, binomial's not implemented (as torch's);
    # tests/test_random_counts.py::test_gradients checks both
    exempt |= {"poisson", "binomial"}
    # grouped_mm takes no float64 (as torch's): tests/test_grouped_mm.py::test_gradients
    # checks both operands' first and second derivatives against torch in float32
    exempt.add("grouped_mm")
    have = {r["func"].split("(")[0].rsplit(".", 1)[-1] for r in rows
            if isinstance(r.get("derivatives"), dict)}
    missing = sorted(have - seen - exempt)
    assert not missing, f"ops with derivatives but no gradient test: {missing}"
