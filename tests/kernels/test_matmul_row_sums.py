"""The GEMM's row sums (``matmul(..., row_sums=)``, a linear layer's bias gradient computed
beside its weight gradient): on both backends, against NumPy float64 rounded to the
product's dtype, with the product itself still right in the tiles that also sum (the first
column of tiles runs its own loop), across tile edges, split-K, strided operands and
operands wider than the product's dtype (rounded on load, as autocast's casts)."""
import numpy as np
import pytest

import framework as fw
from framework import _cpu
from framework.kernels import linalg as K

from helpers import launched_kernels, to_np

# a value's spacing relative to itself, at most (one ulp of the product's dtype)
ULP = {"bfloat16": 2.0 ** -7, "float16": 2.0 ** -10, "float32": 2.0 ** -23}
BACKENDS = [pytest.param("cpu", id="cpu"),
            pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(
                not fw.cuda.is_available(), reason="needs cuda or TRITON_INTERPRET=1"))]


def _rounded(x, dtype):
    """float64 values rounded to ``dtype`` (through the framework's own cpu conversion)."""
    return to_np(fw.tensor(x, dtype=fw.float64).to(getattr(fw, dtype)).double())


def _operand(rng, shape, dtype, device, transposed):
    """A (rows, cols) tensor of ``dtype`` on ``device``, stored column-major if asked (the
    weight gradient's a: the output gradient transposed)."""
    x = rng.standard_normal(shape) * 2
    if transposed:
        return fw.tensor(np.ascontiguousarray(x.T), dtype=getattr(fw, dtype),
                         device=device).t()
    return fw.tensor(x, dtype=getattr(fw, dtype), device=device)


def _run(device, m, n, k, a_dtype, compute, sums_dtype, transposed=True, out_dtype="float32"):
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    a = _operand(rng, (m, k), a_dtype, device, transposed)
    b = _operand(rng, (k, n), "float32", device, False)
    out = fw.full((m, n), float("nan"), dtype=getattr(fw, out_dtype), device=device)
    sums = fw.full((m,), float("nan"), dtype=getattr(fw, sums_dtype), device=device)
    backend = K if device == "cuda" else _cpu.linalg
    backend.matmul(out, a, a._stride, b, b._stride, 0, 1, None, None,
                   None if compute == out_dtype else getattr(fw, compute), sums)
    ar = _rounded(to_np(a.double()), compute)   # the operands as the product sees them
    br = _rounded(to_np(b.double()), compute)
    want_sums = _rounded(ar.sum(1), compute)
    got = to_np(sums.double())
    # float32 sums of the rounded values (within k float32 roundings of the exact sum),
    # rounded once to the product's dtype (one ulp more), and values of that dtype
    err = np.abs(got - want_sums)
    bound = ULP[compute] * np.abs(want_sums) + k * 2.0 ** -24 * np.abs(ar).sum(1)
    assert (err <= bound).all(), (err - bound).max()
    np.testing.assert_array_equal(got, _rounded(got, compute))
    want = ar @ br
    np.testing.assert_allclose(to_np(out.double()), want, rtol=2 * ULP[compute],
                               atol=2 * ULP[compute] * np.abs(ar).sum(1).max())
    return got, want_sums


@pytest.mark.parametrize("device", BACKENDS)
@pytest.mark.parametrize("compute", ["bfloat16", "float16"])
@pytest.mark.parametrize("m,n,k,a_dtype,sums_dtype,transposed", [
    (70, 40, 45, "bfloat16", "float32", True),   # edges in every dim, several tile columns
    (33, 3, 64, "float32", "float32", True),     # a wider than the product: rounded on load
    (16, 70, 9, "bfloat16", "bfloat16", False),  # row-major a, sums of the product's dtype
    (1, 1, 1, "float32", "float32", True),
])
def test_row_sums(device, compute, m, n, k, a_dtype, sums_dtype, transposed):
    a_dtype = compute if a_dtype == "bfloat16" else a_dtype
    sums_dtype = compute if sums_dtype == "bfloat16" else sums_dtype
    _run(device, m, n, k, a_dtype, compute, sums_dtype, transposed)


@pytest.mark.parametrize("device", BACKENDS)
def test_row_sums_float32(device):
    _run(device, 40, 35, 50, "float32", "float32", "float32", out_dtype="float32")


@pytest.mark.parametrize("device", BACKENDS)
@pytest.mark.parametrize("compute", ["bfloat16", "float16"])
def test_row_sums_split_k(device, compute, monkeypatch):
    """Each split sums its part of K into the workspace after the product's parts; the
    split-K reduction's extra programs add them up and round once."""
    monkeypatch.setattr(K, "_SPLIT_MIN_K", 64)
    monkeypatch.setattr(K, "_SPLIT_CHUNK", 32)
    monkeypatch.setattr(K, "_MAX_TILE", 32)
    assert K._splits(70, 5, 130, 1)[1] == 3
    _run(device, 70, 5, 130, compute, compute, "float32")


def test_row_sums_need_a_single_matrix():
    a = fw.ones(2, 3, 4, device="cuda" if fw.cuda.is_available() else "cpu")
    if a.device.type != "cuda":
        pytest.skip("the cuda launcher's check")
    out = fw.empty(2, 3, 5, device="cuda")
    b = fw.ones(2, 4, 5, device="cuda")
    with pytest.raises(RuntimeError, match="row sums of a float32 product of 2 matrices"):
        K.matmul(out, a, a._stride, b, b._stride, 0, 1, None, None, None,
                 fw.empty(3, device="cuda"))


@pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda (or its simulator)")
def test_autocast_linear_backward_is_two_launches(monkeypatch):
    """Under autocast a linear layer's backward launches the two GEMMs alone: the bias
    gradient rides in the weight gradient's."""
    rng = np.random.default_rng(9)
    x, w, b = (fw.tensor(rng.standard_normal(s), dtype=fw.float32, device="cuda",
                         requires_grad=True) for s in ((3, 20, 24), (40, 24), 40))
    with fw.autocast(device_type="cuda", dtype=fw.bfloat16):
        y = fw.nn.functional.linear(x, w, b)
    assert y.grad_fn.name() == "AutocastLinearBackward0"
    g = fw.tensor(rng.standard_normal((3, 20, 40)), dtype=fw.bfloat16, device="cuda")
    y.backward(g, retain_graph=True)  # compiles and tunes first, where kernels compile
    first = b.grad.clone()
    x.grad = w.grad = b.grad = None
    names = launched_kernels(monkeypatch)
    y.backward(g)
    assert sorted(names) == ["_mm_kernel", "_mm_kernel"]
    np.testing.assert_array_equal(to_np(b.grad), to_np(first))
    gr = _rounded(to_np(g.double()).reshape(-1, 40).sum(0), "bfloat16")
    np.testing.assert_allclose(to_np(b.grad.double()), gr, rtol=ULP["bfloat16"])
