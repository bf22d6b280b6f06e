"""framework.compile's row-reduction fusion (framework/_inductor): pointwise ops, a
reduction over the last dim and the ops that combine the reduced values with the rows
(RMSNorm, softmax, log-softmax, layer norm written by hand) as one generated kernel."""
import numpy as np
import pytest

import framework as fw
from framework._inductor import codegen, fuse
from tests.test_inductor import fused_calls, kernels_launched

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("error:framework.compile:UserWarning")


def rmsnorm(x, w):
    return x * fw.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def softmax(x, w):
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True) * w


def log_softmax(x, w):
    z = x * w
    m = fw.amax(z, dim=-1, keepdim=True)
    return z - m - (z - m).exp().sum(-1, keepdim=True).log()


def layernorm(x, w):
    mu = x.mean(-1, keepdim=True)
    var = fw.var(x, -1, keepdim=True, unbiased=False)
    return (x - mu) / fw.sqrt(var + 1e-5) * w + 0.5


def logsumexp(x, w):   # keepdim=False: the reduced value is the output
    return (x * w).exp().sum(-1).log()


def std_scale(x, w):
    return x / x.std(-1, keepdim=True) + x.amin(-1, keepdim=True) * w


CASES = {
    "rmsnorm": (rmsnorm, lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True)
                                                          + 1e-6) * w),
    "softmax": (softmax, lambda x, w: torch.softmax(x, -1) * w),
    "log_softmax": (log_softmax, lambda x, w: torch.log_softmax(x * w, -1)),
    "layernorm": (layernorm, lambda x, w: torch.nn.functional.layer_norm(
        x, x.shape[-1:], eps=1e-5) * w + 0.5),
    "logsumexp": (logsumexp, lambda x, w: torch.logsumexp(x * w, -1)),
    "std_scale": (std_scale, lambda x, w: x / x.std(-1, keepdim=True)
                  + x.amin(-1, keepdim=True) * w),
}


def inputs(device, dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (shape, shape[-1:])]
    fws = [fw.tensor(a, device=device).to(dtype) for a in arrays]
    ts = [torch.tensor(a).to(getattr(torch, str(dtype).split(".")[-1])) for a in arrays]
    return fws, ts


def row_kernels(compiled):
    return [c for c in fused_calls(compiled) if isinstance(c.kernel, codegen.RowKernel)]


@pytest.mark.parametrize("dtype", [fw.float32, fw.bfloat16])
@pytest.mark.parametrize("case", sorted(CASES))
def test_row_group_matches_eager_and_torch(device, case, dtype):
    fn, tfn = CASES[case]
    shape = (2, 3, 37) if case in ("rmsnorm", "softmax", "layernorm") else (5, 100)
    (x, w), (tx, tw) = inputs(device, dtype, shape)
    f = fw.compile(fn)
    f(x, w)                     # traced
    got = f(x, w)               # the cached graph: one row kernel on cuda
    want = fn(x, w)
    assert got.dtype == dtype and got.shape == want.shape and got.device.type == device
    if device == "cuda":
        assert len(row_kernels(f)) == 1
    ref = tfn(tx.double(), tw.double()).numpy()
    # bfloat16: eager rounds every intermediate to 8 bits, the fused kernel none
    tol = 2e-5 if dtype == fw.float32 else 6e-2
    np.testing.assert_allclose(got.float().cpu().numpy(), want.float().cpu().numpy(),
                               rtol=tol, atol=tol)
    tol = 2e-5 if dtype == fw.float32 else 2e-2
    np.testing.assert_allclose(got.float().cpu().numpy(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", sorted(CASES))
def test_row_group_is_one_kernel_on_cuda(case):
    fn = CASES[case][0]
    (x, w), _ = inputs("cuda", fw.float32, (3, 100))
    f = fw.compile(fn)
    f(x, w)
    _, eager = kernels_launched(fn, x, w)
    out, compiled = kernels_launched(f, x, w)
    assert len(eager) >= 4
    assert len(compiled) == 1 and compiled[0].startswith("fused_")
    (call,) = row_kernels(f)
    src = call.source
    assert src.count("@triton.jit") == 1 and src.count("tl.store") == 1
    assert src.count("tl.load") == 2          # x and w, each row read once
    np.testing.assert_allclose(out.cpu().numpy(), fn(x, w).cpu().numpy(),
                               rtol=2e-5, atol=2e-5)


def test_reduced_value_is_stored_only_when_used_outside():
    (x, w), _ = inputs("cuda", fw.float32, (4, 37))

    def fn(x, w):
        s = x.exp().sum(-1, keepdim=True)
        return x.exp() / s * w, s

    f = fw.compile(fn)
    f(x, w)
    out, s = f(x, w)
    (call,) = row_kernels(f)
    assert call.source.count("tl.store") == 2
    ref = torch.tensor(x.cpu().numpy()).double().exp().sum(-1, keepdim=True).numpy()
    assert s.shape == (4, 1)
    np.testing.assert_allclose(s.cpu().numpy(), ref, rtol=1e-5)


def test_row_longer_than_the_block_limit_stays_eager(monkeypatch):
    monkeypatch.setattr(fuse, "MAX_ROW", 64)
    (x, w), _ = inputs("cuda", fw.float32, (3, 100))
    f = fw.compile(softmax)
    f(x, w)
    out, launched = kernels_launched(f, x, w)
    assert row_kernels(f) == [] and len(launched) > 1
    np.testing.assert_array_equal(out.cpu().numpy(), softmax(x, w).cpu().numpy())


def test_masked_lanes_are_neutral():
    # rows of 37 in blocks of 64: the 27 masked lanes hold 1 (the loads' `other`), which
    # an unmasked sum, max or min would count
    x = fw.tensor(np.full((4, 37), -3.0, np.float32), device="cuda")
    w = fw.ones(37, device="cuda")

    def fn(x, w):
        return x.sum(-1, keepdim=True) * w, x.amax(-1, keepdim=True) * w, \
            (-x).amin(-1, keepdim=True) * w, x.mean(-1, keepdim=True) * w

    f = fw.compile(fn)
    f(x, w)
    s, mx, mn, mean = f(x, w)
    assert len(row_kernels(f)) == 1
    np.testing.assert_array_equal(s.cpu().numpy(), np.full((4, 37), -111.0))
    np.testing.assert_array_equal(mx.cpu().numpy(), np.full((4, 37), -3.0))
    np.testing.assert_array_equal(mn.cpu().numpy(), np.full((4, 37), 3.0))
    np.testing.assert_array_equal(mean.cpu().numpy(), np.full((4, 37), -3.0))


def test_nan_in_a_row_propagates_as_eager():
    # the interpreter's max is NumPy's, which keeps NaN anyway; a GPU's max.f32 drops it
    a = np.random.default_rng(0).standard_normal((3, 37)).astype(np.float32)
    a[1, 5] = np.nan
    x, w = fw.tensor(a, device="cuda"), fw.ones(37, device="cuda")
    f = fw.compile(softmax)
    f(x, w)
    got = f(x, w).cpu().numpy()
    assert len(row_kernels(f)) == 1
    np.testing.assert_array_equal(np.isnan(got), np.isnan(softmax(x, w).cpu().numpy()))
    assert np.isnan(got[1]).all() and not np.isnan(got[[0, 2]]).any()


def test_rows_that_are_not_one_run_fall_back_to_eager():
    (x, w), _ = inputs("cuda", fw.float32, (2, 3, 37))
    f = fw.compile(rmsnorm)
    f(x, w)
    f(x, w)
    assert len(row_kernels(f)) == 1
    # the same shape, leading dims swapped in memory: rows 37 apart, but not in order
    xt = fw.tensor(np.ascontiguousarray(x.cpu().numpy().transpose(1, 0, 2)),
                   device="cuda").transpose(0, 1)
    assert codegen.row_strides(xt, (2, 3, 37)) is None
    np.testing.assert_allclose(f(xt, w).cpu().numpy(), rmsnorm(x, w).cpu().numpy(),
                               rtol=1e-6, atol=1e-6)
    # a strided last dim is read in place
    xs = fw.tensor(np.repeat(x.cpu().numpy(), 2, axis=-1), device="cuda")[..., ::2]
    assert codegen.row_strides(xs, (2, 3, 37)) == (74, 2)
    np.testing.assert_allclose(f(xs, w).cpu().numpy(), rmsnorm(x, w).cpu().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_other_reductions_stay_eager():
    (x, w), _ = inputs("cuda", fw.float32, (6, 8))
    for fn in (lambda x, w: x.exp().sum(0, keepdim=True) * w,       # not the last dim
               lambda x, w: x.exp().sum() * w,                      # every dim
               lambda x, w: x.exp().sum(-1, keepdim=True, dtype=fw.float64) * w):
        f = fw.compile(fn)
        f(x, w)
        got = f(x, w)
        assert row_kernels(f) == []
        np.testing.assert_allclose(got.cpu().numpy(), fn(x, w).cpu().numpy(), rtol=1e-6)


@pytest.mark.parametrize("case", ["rmsnorm", "layernorm", "log_softmax"])
def test_row_group_gradients_equal_eager(device, case):
    fn = CASES[case][0]
    (x, w), _ = inputs(device, fw.float32, (3, 37))
    f = fw.compile(fn)
    leaves = [t.clone().requires_grad_() for t in (x, w)]
    f(*leaves)
    out = f(*leaves)
    (out * out).sum().backward()
    ref = [t.detach().clone().requires_grad_() for t in (x, w)]
    r = fn(*ref)
    (r * r).sum().backward()
    for g, t in zip(leaves, ref):
        np.testing.assert_allclose(g.grad.cpu().numpy(), t.grad.cpu().numpy(),
                                   rtol=1e-5, atol=1e-5)
    if device == "cuda":
        assert len(row_kernels(f)) == 1 and out.grad_fn is not None


class RMSNorm(fw.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = fw.nn.Parameter(fw.ones(dim) * 1.5)

    def forward(self, x):
        h = x @ x.transpose(-1, -2)                     # an eager op before the group
        h = h * fw.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        e = (h - h.amax(-1, keepdim=True)).exp()
        return (e / e.sum(-1, keepdim=True)) @ x        # and after


def test_module_with_parameters_trains_through_row_groups(device):
    (x, _), _ = inputs(device, fw.float32, (2, 6, 6))
    m = RMSNorm(6).to(device)
    f = fw.compile(m)
    f(x)
    out = f(x)
    out.sum().backward()
    got = m.weight.grad.cpu().numpy()
    m.weight.grad = None
    want = m(x)
    want.sum().backward()
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().cpu().numpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, m.weight.grad.cpu().numpy(), rtol=1e-4, atol=1e-5)
    if device == "cuda":
        assert len(row_kernels(f)) == 1
