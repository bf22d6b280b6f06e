"""framework/kernels/linalg.py: the Triton batched strided GEMM against NumPy float64 (and
the CPU launcher for integer wrap-around), on cuda tensors (simulated under
TRITON_INTERPRET=1): layouts, slices, broadcast batches, odd sizes, K == 0, alpha/beta,
a separate C operand (addmm's bias, read in the epilogue), every dtype, errors, and the
float32 matmul precision setting."""
import warnings

import numpy as np
import pytest

import framework as fw
from framework import _cpu
from framework.kernels import linalg as K
from helpers import launched_kernels

pytestmark = pytest.mark.skipif(not fw.cuda.is_available(),
                                reason="needs cuda or TRITON_INTERPRET=1")

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
TOL = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-6, "float64": 1e-13}


@pytest.fixture(autouse=True)
def _default_precision():
    yield
    fw.set_float32_matmul_precision("highest")


def cuda(arr, dtype):
    """A cuda tensor of ``arr`` (NumPy) in ``dtype``."""
    return fw.tensor(arr).to(getattr(fw, dtype)).to("cuda")


def host(t):
    return t.cpu().double().numpy()


def strides(t, shape):
    """t's strides broadcast to ``shape`` (0 on broadcast dims)."""
    off = len(shape) - t.dim()
    return tuple([0] * off + [s if n == m else 0 for n, s, m in
                              zip(t._shape, t._stride, shape[off:])])


def run(out, a, b, beta=0.0, alpha=1.0, c=None, launcher=K):
    batch = tuple(out._shape[:-2])
    kw = {} if c is None else {"c": c, "c_stride": strides(c, tuple(out._shape))}
    launcher.matmul(out, a, strides(a, batch + tuple(a._shape[-2:])), b,
                    strides(b, batch + tuple(b._shape[-2:])), beta, alpha, **kw)
    return out


def operand(rng, shape, dtype, transposed=False):
    """A cuda tensor of ``shape``, stored transposed (column-major) if asked."""
    if dtype in FLOATS:
        arr = rng.standard_normal(shape)
    else:
        arr = rng.integers(-20, 20, shape)
    if transposed:
        return cuda(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype).mT
    return cuda(arr, dtype)


def check(got, ref, dtype):
    tol = TOL[dtype]
    scale = max(1.0, float(np.abs(ref).max()) if ref.size else 1.0)
    np.testing.assert_allclose(host(got), ref, rtol=tol, atol=tol * scale)


def empty(shape, dtype, transposed=False):
    if transposed:
        return fw.empty(shape[:-2] + shape[-2:][::-1], dtype=getattr(fw, dtype),
                        device="cuda").mT
    return fw.empty(shape, dtype=getattr(fw, dtype), device="cuda")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ta,tb,tc", [(False, False, False), (True, False, False),
                                      (False, True, True), (True, True, False)])
def test_layouts_odd_sizes(dtype, ta, tb, tc):
    rng = np.random.default_rng(0)
    m, n, k = 37, 45, 50  # two tiles each way, the last ones masked
    a, b = operand(rng, (m, k), dtype, ta), operand(rng, (k, n), dtype, tb)
    out = run(empty((m, n), dtype, tc), a, b)
    check(out, host(a) @ host(b), dtype)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (1, 7, 3), (5, 1, 70), (3, 2, 1), (16, 16, 16),
                                   (1, 1, 100), (32, 64, 64), (64, 45, 32), (40, 32, 16)])
def test_shapes(dtype, m, n, k):
    rng = np.random.default_rng(1)
    a, b = operand(rng, (m, k), dtype), operand(rng, (k, n), dtype)
    out = run(empty((m, n), dtype), a, b)
    ref = host(a) @ host(b)
    if dtype == "int32":
        assert np.array_equal(host(out), ref)
    else:
        check(out, ref, dtype)


def test_sliced_operands():
    rng = np.random.default_rng(2)
    a = operand(rng, (40, 90), "float32")[3::2, 1::3]  # (19, 30), strides (180, 3)
    b = operand(rng, (60, 50), "float32").mT[5:35:1, ::2]  # (30, 30)
    base = fw.zeros((25, 70), device="cuda")
    out = base[2:21, 7:67:2]  # (19, 30), strides (70, 2)
    run(out, a, b)
    check(out, host(a) @ host(b), "float32")
    assert host(base)[:2].sum() == 0 and host(base)[:, :7].sum() == 0  # nothing outside


@pytest.mark.parametrize("dtype", ["float16", "float64", "int64"])
def test_broadcast_batch(dtype):
    rng = np.random.default_rng(3)
    a = operand(rng, (3, 1, 9, 20), dtype)
    b = operand(rng, (1, 4, 20, 11), dtype, transposed=True)
    out = run(empty((3, 4, 9, 11), dtype), a, b)
    ref = np.matmul(host(a), host(b))
    if dtype == "int64":
        assert np.array_equal(host(out), ref)
    else:
        check(out, ref, dtype)


def test_batch_dims_that_do_not_merge():
    rng = np.random.default_rng(4)
    a = operand(rng, (2, 3, 4, 7, 5), "float32").permute(2, 0, 1, 3, 4)  # (4, 2, 3, 7, 5)
    b = operand(rng, (4, 2, 3, 5, 6), "float32")
    out = empty((3, 2, 4, 7, 6), "float32").permute(2, 1, 0, 3, 4)  # (4, 2, 3, 7, 6)
    run(out, a, b)
    check(out, np.matmul(host(a), host(b)), "float32")


def test_rows_folded_when_b_is_broadcast():
    # (B, M, K) @ (K, N): one (B*M, K) GEMM; also with M == 1
    rng = np.random.default_rng(5)
    for m in (7, 1):
        a = operand(rng, (6, m, 33), "bfloat16")
        b = operand(rng, (33, 19), "bfloat16")
        out = run(empty((6, m, 19), "bfloat16"), a, b)
        check(out, np.matmul(host(a), host(b)), "bfloat16")


def test_batch_chunks(monkeypatch):
    monkeypatch.setattr(K, "_GRID_Z", 2)  # 5 matrices in 3 launches
    rng = np.random.default_rng(6)
    a, b = operand(rng, (5, 3, 4), "float32"), operand(rng, (5, 4, 2), "float32")
    out = run(empty((5, 3, 2), "float32"), a, b)
    check(out, np.matmul(host(a), host(b)), "float32")


def test_int64_offsets(monkeypatch):
    monkeypatch.setattr(K, "_MAX_TILE", 2**31)  # every extent counts as >= 2**31
    rng = np.random.default_rng(7)
    for dtype in ("float16", "int16"):
        a = operand(rng, (2, 18, 40), dtype, transposed=True)
        b = operand(rng, (2, 40, 21), dtype)
        out = run(empty((2, 18, 21), dtype), a, b)
        ref = np.matmul(host(a), host(b))
        if dtype == "int16":
            assert np.array_equal(host(out), ref)
        else:
            check(out, ref, dtype)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_alpha_beta(dtype):
    rng = np.random.default_rng(8)
    a, b = operand(rng, (2, 17, 35), dtype), operand(rng, (35, 18), dtype)
    c = operand(rng, (2, 17, 18), dtype)
    c0 = host(c)
    beta, alpha = (0.5, -2.0) if dtype in FLOATS else (3, -2)
    run(c, a, b, beta, alpha)
    ref = beta * c0 + alpha * np.matmul(host(a), host(b))
    if dtype in FLOATS:
        check(c, ref, dtype)
    else:  # int64 arithmetic, wrapped to the dtype
        assert np.array_equal(c.cpu().numpy(), ref.astype(np.int64).astype(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_beta_zero_does_not_read_out(dtype):
    rng = np.random.default_rng(9)
    a, b = operand(rng, (20, 40), dtype), operand(rng, (40, 24), dtype)
    out = cuda(np.full((20, 24), np.nan), dtype)
    run(out, a, b, 0.0, 3.0)
    check(out, 3.0 * (host(a) @ host(b)), dtype)


@pytest.mark.filterwarnings("ignore:invalid value")  # the interpreter computes inf * 0
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int32"])
def test_k_zero(dtype):
    a = fw.empty((2, 5, 0), dtype=getattr(fw, dtype), device="cuda")
    b = fw.empty((2, 0, 3), dtype=getattr(fw, dtype), device="cuda")
    nan = 0 if dtype == "int32" else np.nan
    out = cuda(np.full((2, 5, 3), nan), dtype)
    run(out, a, b)
    assert np.array_equal(host(out), np.zeros((2, 5, 3)))
    out = cuda(np.arange(30).reshape(2, 5, 3), dtype)
    run(out, a, b, 2, float("inf") if dtype != "int32" else 7)
    assert np.array_equal(host(out), 2 * np.arange(30).reshape(2, 5, 3))


def test_empty_outputs_launch_nothing():
    for shape, k in (((0, 4), 3), ((4, 0), 3), ((0, 2, 2), 2)):
        out = fw.empty(shape, device="cuda")
        a = fw.empty(shape[:-1] + (k,), device="cuda")
        b = fw.empty(shape[:-2] + (k, shape[-1]), device="cuda")
        run(out, a, b)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_wraparound_matches_cpu(dtype):
    rng = np.random.default_rng(10)
    info = np.iinfo(dtype)
    a_np = rng.integers(info.min, info.max, (2, 9, 37), endpoint=True)
    b_np = rng.integers(info.min, info.max, (37, 10), endpoint=True)
    a, b = cuda(a_np, dtype), cuda(b_np, dtype)
    c_np = rng.integers(info.min, info.max, (2, 9, 10), endpoint=True)
    out = cuda(c_np, dtype)
    run(out, a, b, 5, 3)
    cpu_out = fw.tensor(c_np).to(getattr(fw, dtype))
    _cpu.linalg.matmul(cpu_out, a.cpu(), a._stride, b.cpu(), (0,) + b._stride, 5, 3)
    assert np.array_equal(out.cpu().numpy(), cpu_out.numpy())
    # and NumPy's wrapping int64 arithmetic, cut to the dtype
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = (5 * c_np.astype(np.int64) + 3 * np.matmul(a_np.astype(np.int64),
                                                         b_np.astype(np.int64)))
    assert np.array_equal(out.cpu().numpy(), ref.astype(dtype))


def test_errors():
    a = fw.ones((3, 4), device="cuda")
    b = fw.ones((4, 5), device="cuda")
    out = fw.empty((3, 5), device="cuda")
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        K.matmul(out.bool(), a.bool(), a._stride, b.bool(), b._stride)
    with pytest.raises(RuntimeError, match="negative strides"):
        K.matmul(out, a, (-4, 1), b, b._stride)
    with pytest.raises(RuntimeError, match="internal overlap"):
        K.matmul(fw.empty(5, device="cuda").expand(3, 5), a, a._stride, b, b._stride)
    with pytest.raises(RuntimeError, match="internal overlap"):
        K.matmul(fw.empty((1, 3, 5), device="cuda").expand(2, 3, 5), a.expand(2, 3, 4),
                 (0, 4, 1), b, (0, 5, 1))
    with pytest.raises(RuntimeError, match="strides per operand"):
        K.matmul(out, a, (4, 1, 1), b, b._stride)


# ---- float32 precision --------------------------------------------------------------------

def test_precision_state():
    assert fw.get_float32_matmul_precision() == "highest"
    assert fw.backends.cuda.matmul.allow_tf32 is False
    fw.backends.cuda.matmul.allow_tf32 = True
    assert fw.get_float32_matmul_precision() == "high"
    fw.set_float32_matmul_precision("medium")
    assert fw.backends.cuda.matmul.allow_tf32 is True
    fw.set_float32_matmul_precision("highest")
    assert fw.backends.cuda.matmul.allow_tf32 is False
    with pytest.warns(UserWarning, match="not one of"):
        fw.set_float32_matmul_precision("low")
    assert fw.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="expects a str"):
        fw.set_float32_matmul_precision(1)
    with pytest.raises(RuntimeError, match="expects a bool"):
        fw.backends.cuda.matmul.allow_tf32 = 1
    with pytest.raises(AttributeError, match="Unknown attribute"):
        fw.backends.cuda.matmul.allow_fp16 = True


def test_highest_is_ieee_float32():
    # 1 + 2**-20 needs float32's mantissa: TF32 (10 bits) would round it to 1
    eps = 2.0**-20
    a = cuda(np.full((16, 32), 1 + eps), "float32")
    b = cuda(np.full((32, 16), 1 + eps), "float32")
    out = run(empty((16, 16), "float32"), a, b)
    ref = 32 * (1 + eps) ** 2
    assert np.all(np.abs(host(out) - ref) <= 4 * 32 * 2.0**-24)
    assert np.all(host(out) > 32 * (1 + eps))


@pytest.mark.parametrize("bview", ["contiguous", "sliced", "column-major"])
def test_tf32_row_major_b_copied_k_major(monkeypatch, bview):
    # TF32 products copy a row-major B to column-major first (16-byte tile loads on a GPU);
    # lowered threshold so that the path runs at test sizes, with B at an offset too
    monkeypatch.setattr(K, "_TF32_KMAJOR_MIN_M", 1)
    copies = []
    k_major = K._k_major
    monkeypatch.setattr(K, "_k_major", lambda *a: copies.append(a[1:]) or k_major(*a))
    fw.set_float32_matmul_precision("high")
    rng = np.random.default_rng(4)
    a = operand(rng, (37, 45), "float32")
    full = rng.standard_normal((47, 70))
    if bview == "sliced":
        b = cuda(full, "float32")[1:46, 3:67]
        ref_b = full[1:46, 3:67]
    elif bview == "column-major":
        b = operand(rng, (45, 64), "float32", transposed=True)
        ref_b = host(b)
    else:
        b = cuda(full[:45, :64], "float32")
        ref_b = full[:45, :64]
    out = run(empty((37, 64), "float32"), a, b)
    ref = host(a) @ ref_b
    assert np.abs(host(out) - ref).max() <= 3e-3 * np.abs(ref).max()   # TF32's rounding
    assert copies == ([] if bview == "column-major" else [(45, 64, b._stride[0])])


@pytest.mark.parametrize("precision,expected", [("highest", "ieee"), ("high", "tf32"),
                                                ("medium", "tf32")])
def test_precision_reaches_the_kernel(monkeypatch, precision, expected):
    seen = []
    kernel = K._mm

    class Spy:
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                seen.append((kwargs["PRECISION"], kwargs["MODE"]))
                meta = {} if "BLOCK_M" in kwargs else dict(K._SIM_DOT_CONFIG.kwargs)
                return kernel[grid](*args, **kwargs, **meta)
            return launch

    monkeypatch.setattr(K, "_mm", Spy())
    monkeypatch.setattr(K, "_PLANS", {})    # plans made earlier launch the real kernel
    fw.set_float32_matmul_precision(precision)
    rng = np.random.default_rng(11)
    for dtype in ("float32", "float16"):
        a, b = operand(rng, (3, 4), dtype), operand(rng, (4, 5), dtype)
        out = fw.empty((3, 5), dtype=getattr(fw, dtype), device="cuda")
        K.matmul(out, a, a._stride, b, b._stride)
    assert seen[0] == (expected, K.MODE_DOT)
    assert seen[1] == (None, K.MODE_DOT)  # float16: tl.dot's default


def test_tf32_result_within_tf32_error():
    fw.set_float32_matmul_precision("high")
    rng = np.random.default_rng(12)
    a, b = operand(rng, (20, 64), "float32"), operand(rng, (64, 24), "float32")
    out = run(empty((20, 24), "float32"), a, b)
    ref = host(a) @ host(b)
    # TF32 inputs carry 10 mantissa bits: relative error per product up to about 2**-10
    err = np.abs(host(out) - ref) / (np.abs(host(a)) @ np.abs(host(b)))
    assert err.max() <= 2.0**-10


# ---- autotuning helpers -------------------------------------------------------------------

class _Args:
    def __init__(self, itemsize):
        self.dtype = type("D", (), {"itemsize": itemsize})()


def test_prune_configs():
    def prune(itemsize, m, n, k, nbatch=1, precision=None):
        args = {"a": _Args(itemsize), "M": m, "N": n, "K": k, "nbatch": nbatch}
        kept = K._prune(K._DOT_CONFIGS, args, PRECISION=precision)
        assert kept
        return [(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"], c.num_stages)
                for c in kept]

    assert all(bm <= 64 and bn <= 64 and bk <= 32 for bm, bn, bk, _ in prune(2, 20, 30, 10))
    big16 = prune(2, 4096, 4096, 4096)
    assert (128, 256, 64, 3) in big16 and all(bm * bn >= 128 * 128 for bm, bn, _, _ in big16)
    tf32 = prune(4, 4096, 4096, 4096, precision="tf32")
    assert all(s * (bm + bn) * bk * 4 <= K._SMEM_LIMIT for bm, bn, bk, s in tf32)
    assert (128, 256, 32, 3) in tf32 and (128, 256, 64, 3) not in tf32
    ieee = prune(4, 4096, 4096, 4096, precision="ieee")
    assert ieee == [(128, 128, 32, 3)]  # 8 warps: 64 accumulators per thread
    assert all(bm <= 64 and bn <= 64 for bm, bn, _, _ in prune(2, 1, 1, 1))


def test_do_bench_quantiles():
    calls = []
    times = K._do_bench(lambda: calls.append(1), (0.5, 0.2, 0.8))
    assert len(times) == 3 and all(t >= 0 for t in times) and times[1] <= times[0] <= times[2]
    assert len(calls) >= 9


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_autotuned_path(monkeypatch, beta):
    # the GPU path: autotuner with pruning, Event timings and (beta != 0) restored outputs
    monkeypatch.setattr(fw.cuda, "is_simulated", lambda: False)
    rng = np.random.default_rng(13)
    a, b = operand(rng, (20, 24), "float16"), operand(rng, (24, 18), "float16")
    c = operand(rng, (20, 18), "float16")
    c0 = host(c)
    run(c, a, b, beta, 1.5)
    check(c, beta * c0 + 1.5 * (host(a) @ host(b)), "float16")
    tuner = K._tuned_restore if beta else K._tuned
    assert tuner.best_config.kwargs["BLOCK_M"] <= 64


@pytest.mark.parametrize("simulated", [True, False])
def test_planned_launch_skips_heuristics_and_autotuner(monkeypatch, simulated):
    """A product's second launch goes straight to the kernel with the config and heuristics
    the first one chose (the autotuner's on the GPU path); results stay right."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    monkeypatch.setattr(fw.cuda, "is_simulated", lambda: simulated)
    monkeypatch.setattr(K, "_PLANS", {})
    calls = []
    for cls in (Autotuner, Heuristics):
        monkeypatch.setattr(cls, "run", lambda self, *a, _run=cls.run, **k:
                            calls.append(type(self).__name__) or _run(self, *a, **k))
    rng = np.random.default_rng(31)
    for shape_a, shape_b in (((32, 64), (64, 32)), ((20, 24), (24, 18))):
        a, b = operand(rng, shape_a, "float16"), operand(rng, shape_b, "float16")
        for i in range(2):
            del calls[:]
            out = run(empty((shape_a[0], shape_b[1]), "float16"), a, b)
            check(out, host(a) @ host(b), "float16")
            if i == 0:   # (the autotuner's timing runs go through the heuristics too)
                assert calls[0] == ("Heuristics" if simulated else "Autotuner")
            else:
                assert calls == []
        plan = next(p for p in K._PLANS.values() if p.geometry[:3] == (shape_a[0], shape_b[1],
                                                                       shape_a[1]))
        even = shape_a[0] % plan.direct["BLOCK_M"] == 0
        assert plan.direct["EVEN_M"] == even and "num_warps" in plan.direct


def test_repeated_launch_goes_through_prepare(monkeypatch):
    """On a GPU, a plan's launches from its third on go through CachedKernel.prepare's
    launch, given the new call's out, a, b, c and row sums (the kernel's first five
    arguments); another alpha takes the usual launch."""
    monkeypatch.setattr(K, "_PLANS", {})
    rng = np.random.default_rng(5)
    shape_a, shape_b = (20, 24), (24, 18)
    run(empty((20, 18), "float32"), operand(rng, shape_a, "float32"),
        operand(rng, shape_b, "float32"))
    plan = next(iter(K._PLANS.values()))
    real, events = plan.kernel, []

    class Cached:   # CachedKernel's interface over the interpreted kernel
        def __getitem__(self, grid):
            events.append("launch")
            return real[grid]

        def prepare(self, args, kw):
            events.append("prepare")

            def go(grid, *tensors):
                events.append("go")
                real[grid](*tensors, *args[len(tensors):], **kw)
                return True
            return go

    monkeypatch.setattr(plan, "kernel", Cached())
    for _ in range(3):
        a, b = operand(rng, shape_a, "float32"), operand(rng, shape_b, "float32")
        out = run(empty((20, 18), "float32"), a, b)
        check(out, host(a) @ host(b), "float32")
    assert events == ["launch", "prepare", "go", "go"]
    out = run(empty((20, 18), "float32"), a, b, 0.0, 2.0)
    check(out, 2 * (host(a) @ host(b)), "float32")
    assert events[-1] == "launch"


# ---- split-K ------------------------------------------------------------------------------

def test_split_decision():
    assert K._splits(4096, 4096, 4096, 1) == (4096, 1)  # enough tiles
    assert K._splits(1, 1, 1000, 1) == (1000, 1)  # short K
    ksplit, splits = K._splits(16, 4096, 4096, 1)  # a small-batch linear layer
    assert splits == 4 and ksplit == 1024
    ksplit, splits = K._splits(1, 1, 10**6, 1)  # a long dot product
    assert splits == K._MAX_SPLITS and ksplit % K._MAX_TILE == 0
    assert (splits - 1) * ksplit < 10**6 <= splits * ksplit


@pytest.fixture
def small_splits(monkeypatch):
    """Split-K for small K (the interpreter is slow): K = 100 runs as 64 + 36."""
    monkeypatch.setattr(K, "_SPLIT_MIN_K", 64)
    monkeypatch.setattr(K, "_SPLIT_CHUNK", 32)
    monkeypatch.setattr(K, "_MAX_TILE", 32)
    assert K._splits(3, 5, 100, 2) == (64, 2)


@pytest.mark.parametrize("dtype", FLOATS + ["int8", "int64"])
def test_split_k(small_splits, dtype):
    rng = np.random.default_rng(14)
    a = operand(rng, (2, 3, 100), dtype, transposed=True)
    b = operand(rng, (1, 100, 5), dtype)
    out = empty((2, 3, 5), dtype, transposed=True)
    out.copy_(operand(rng, (2, 3, 5), dtype))
    c0 = host(out)
    beta, alpha = (0.5, 2.0) if dtype in FLOATS else (3, -2)
    run(out, a, b, beta, alpha)
    ref = beta * c0 + alpha * np.matmul(host(a), host(b))
    if dtype in FLOATS:
        check(out, ref, dtype)
    else:
        assert np.array_equal(out.cpu().numpy(), ref.astype(np.int64).astype(dtype))


def test_split_k_beta_zero_and_folded_rows(small_splits):
    rng = np.random.default_rng(15)
    a, b = operand(rng, (4, 1, 100), "float32"), operand(rng, (100, 3), "float32")
    out = cuda(np.full((4, 1, 3), np.nan), "float32")
    run(out, a, b)
    check(out, np.matmul(host(a), host(b)), "float32")


def test_split_k_default_threshold():
    rng = np.random.default_rng(16)
    a, b = operand(rng, (1, 2100), "float32"), operand(rng, (2100, 1), "float32")
    assert K._splits(1, 1, 2100, 1)[1] == 2
    out = run(empty((1, 1), "float32"), a, b)
    check(out, host(a) @ host(b), "float32")


# ---- a separate C operand (addmm's bias) --------------------------------------------------

def _c_operand(rng, kind, shape, dtype, nan=False):
    """C for an output of ``shape``: a row (bias), the full shape, or the full shape stored
    transposed; all NaN when ``nan`` (beta == 0 must not read it)."""
    cshape = shape[-1:] if kind == "row" else shape
    if nan:
        return cuda(np.full(cshape, np.nan), dtype)
    return operand(rng, cshape, dtype, transposed=kind == "T")


def _c_ref(c, a, b, beta, alpha, shape):
    prod = np.matmul(host(a), host(b))
    if beta == 0:
        return alpha * prod
    return beta * np.broadcast_to(host(c), shape) + alpha * prod


def _check_c(out, ref, dtype):
    if dtype in FLOATS:
        check(out, ref, dtype)
    else:  # int64 arithmetic, wrapped to the dtype
        assert np.array_equal(out.cpu().numpy(), ref.astype(np.int64).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "int32"])
@pytest.mark.parametrize("kind", ["row", "full", "T"])
@pytest.mark.parametrize("beta,alpha", [(0, 1), (1, 1), (0.5, 2)])
def test_c_operand(dtype, kind, beta, alpha):
    # out = beta * C + alpha * a @ b with C read through its own strides; out starts as NaN
    # (never read when C is given), across tile edges (33 x 40 with 32 x 32 tiles, K = 17)
    rng = np.random.default_rng(20)
    if dtype not in FLOATS and beta == 0.5:
        beta = 3
    a, b = operand(rng, (33, 17), dtype), operand(rng, (17, 40), dtype, transposed=True)
    c = _c_operand(rng, kind, (33, 40), dtype, nan=beta == 0 and dtype in FLOATS)
    nan = np.nan if dtype in FLOATS else 7
    ref = _c_ref(c, a, b, beta, alpha, (33, 40))
    for dev, launcher in (("cuda", K), ("cpu", _cpu.linalg)):
        out = cuda(np.full((33, 40), nan), dtype).to(dev)
        run(out, a.to(dev), b.to(dev), beta, alpha, c.to(dev), launcher)
        _check_c(out, ref, dtype)


@pytest.mark.parametrize("dtype", ["float16", "int64"])
def test_c_operand_batched(dtype):
    # a bias row over a batch (strides (0, 0, 1)): rows folded into one GEMM, and batches
    # that do not fold (b not broadcast) with a C broadcast over one batch dim
    rng = np.random.default_rng(21)
    a, b = operand(rng, (2, 3, 9, 20), dtype), operand(rng, (20, 11), dtype)
    c = operand(rng, (11,), dtype)
    out = run(empty((2, 3, 9, 11), dtype), a, b, 1, 2, c)
    _check_c(out, _c_ref(c, a, b, 1, 2, (2, 3, 9, 11)), dtype)
    b = operand(rng, (3, 20, 11), dtype, transposed=True)
    c = operand(rng, (3, 1, 11), dtype)
    out = run(empty((2, 3, 9, 11), dtype, transposed=True), a, b, 1, 1, c)
    _check_c(out, _c_ref(c, a, b, 1, 1, (2, 3, 9, 11)), dtype)


def test_c_that_is_out_reads_out():
    # C given as out itself (in-place addmm): the plain beta path, out read in place
    rng = np.random.default_rng(22)
    a, b = operand(rng, (20, 30), "float32"), operand(rng, (30, 24), "float32")
    out = operand(rng, (20, 24), "float32")
    ref = 0.5 * host(out) + host(a) @ host(b)
    run(out, a, b, 0.5, 1, out)
    check(out, ref, "float32")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
@pytest.mark.parametrize("kind", ["row", "T"])
@pytest.mark.parametrize("beta,alpha", [(0, 1), (0.5, 2)])
def test_c_split_k(small_splits, dtype, kind, beta, alpha):
    # the split-K reduction reads C through its own (collapsed) strides
    rng = np.random.default_rng(23)
    if dtype not in FLOATS and beta == 0.5:
        beta = 3
    a, b = operand(rng, (2, 3, 100), dtype, transposed=True), operand(rng, (100, 5), dtype)
    c = _c_operand(rng, kind, (2, 3, 5), dtype, nan=beta == 0 and dtype in FLOATS)
    out = cuda(np.full((2, 3, 5), np.nan if dtype in FLOATS else 7), dtype)
    run(out, a, b, beta, alpha, c)
    _check_c(out, _c_ref(c, a, b, beta, alpha, (2, 3, 5)), dtype)


def test_c_split_k_default_threshold():
    # M = N = 16, K = 4096: an nn.Linear of a small batch, split four ways
    assert K._splits(16, 16, 4096, 1) == (1024, 4)
    rng = np.random.default_rng(24)
    a, b = operand(rng, (16, 4096), "float32"), operand(rng, (4096, 16), "float32", True)
    c = operand(rng, (16,), "float32")
    out = run(empty((16, 16), "float32"), a, b, 1, 1, c)
    check(out, _c_ref(c, a, b, 1, 1, (16, 16)), "float32")


def test_c_autotuned_without_restore(monkeypatch):
    # out is not read when C is given: the plain autotuner, no save/restore of out
    monkeypatch.setattr(fw.cuda, "is_simulated", lambda: False)
    monkeypatch.setattr(K, "_tuned_restore", None)
    rng = np.random.default_rng(25)
    a, b = operand(rng, (20, 24), "float16"), operand(rng, (24, 18), "float16")
    c = operand(rng, (18,), "float16")
    out = run(empty((20, 18), "float16"), a, b, 0.5, 1.5, c)
    check(out, _c_ref(c, a, b, 0.5, 1.5, (20, 18)), "float16")


def test_linear_with_bias_is_one_launch(monkeypatch):
    rng = np.random.default_rng(26)
    x, w = operand(rng, (4, 6, 17), "float32"), operand(rng, (40, 17), "float32")
    bias = operand(rng, (40,), "float32")
    fw.nn.functional.linear(x, w, bias)  # compiles and tunes, on a GPU
    names = launched_kernels(monkeypatch)
    y = fw.nn.functional.linear(x, w, bias)
    assert names == ["_mm_kernel"]
    check(y, np.matmul(host(x), host(w).T) + host(bias), "float32")
