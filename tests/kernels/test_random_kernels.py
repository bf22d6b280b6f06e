"""framework/kernels/random.py on framework cuda tensors (Triton; Triton's interpreter under
TRITON_INTERPRET=1) gives the same bits as native/random.cpp (framework/_cpu/random.py): one
random stream for the CPU and the GPU."""
import numpy as np
import pytest
import triton
import triton.language as tl

import framework as fw
from framework import _C, _cpu
import framework.kernels.random as K
from helpers import to_np

pytestmark = [
    pytest.mark.skipif(not fw.cuda.is_available(), reason="needs cuda or TRITON_INTERPRET=1"),
    pytest.mark.filterwarnings("ignore:overflow encountered in cast"),  # float16 infs
]
DEV = "cuda"
FLOATS = [fw.float16, fw.bfloat16, fw.float32, fw.float64]
N = 2500  # three program blocks, the last one masked
SEEDS = [(0, 0), (1234567, 77), (2**40 + 5, 2**33 - 3)]


def _has_cuda_sort():
    try:
        import framework.kernels.sort  # noqa: F401
    except ImportError:
        return False
    return True


needs_sort = pytest.mark.skipif(not _has_cuda_sort(),
                                reason="sorts its keys with the cuda sort family (not here)")


@triton.jit
def tlrand(out, n, seed, offset, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + i, tl.rand(seed, offset + i), mask=i < n)


def pair(shape, dtype):
    """An uninitialised cuda tensor and a cpu tensor of the same shape and dtype."""
    return fw.empty(shape, dtype=dtype, device=DEV), fw.empty(shape, dtype=dtype)


def bits(t):
    """The element bit patterns of a tensor (bfloat16 through its exact float32 widening)."""
    a = np.ascontiguousarray(to_np(t))
    return a.view({1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[a.itemsize])


def assert_same(gpu, cpu, ulps=0):
    g, c = bits(gpu), bits(cpu)
    if ulps == 0:
        assert np.array_equal(g, c), int((g != c).sum())
    else:  # exp from libm and from NumPy may differ in the last bit
        diff = np.abs(g.astype(np.int64) - c.astype(np.int64))
        assert diff.max() <= ulps
        assert (diff == 0).mean() > 0.9


@pytest.mark.parametrize("seed,offset", SEEDS)
def test_philox_words_match(seed, offset):
    g = fw.empty((N, 4), dtype=fw.int32, device=DEV)
    K.philox_words(g, N, seed, offset)
    c = np.empty((N, 4), np.uint32)
    _C.philox_words(c.ctypes.data, N, seed, offset)
    assert np.array_equal(to_np(g).view(np.uint32), c)


@pytest.mark.parametrize("seed,offset", SEEDS)
def test_float32_uniform_is_tl_rand(seed, offset):
    # (tl.randn is not reproduced: it uses the device's float32 log/cos; see the kernel file)
    u, c = pair(N, fw.float32)
    tlrand[(3,)](u, N, seed, offset, BLOCK=1024)
    _cpu.random.random_fill(c, seed, offset, K.UNIFORM, 0.0, 1.0)
    assert_same(u, c)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("kind,a,b", [
    (0, 0.0, 1.0), (0, -2.0, 5.0), (1, 0.0, 1.0), (1, 3.0, 0.5), (2, 0.0, 1 / 0.7),
    (3, 1.0, 2.0), (4, 0.1, 0.6), (5, 0.0, 1 / np.log1p(-0.3)),
])
def test_random_fill_matches(dtype, kind, a, b):
    for seed, offset in SEEDS[1:]:
        g, c = pair(N, dtype)
        K.random_fill(g, seed, offset, kind, a, b)
        _cpu.random.random_fill(c, seed, offset, kind, a, b)
        # only log_normal_ uses the device's exp (its float64 may differ in the last bit)
        ulps = 1 if kind == K.LOG_NORMAL and dtype == fw.float64 else 0
        assert_same(g, c, ulps=ulps)


@pytest.mark.parametrize("dtype", [fw.int64, fw.int32, fw.int16, fw.uint8, fw.bool], ids=str)
def test_geometric_int_matches(dtype):
    g, c = pair(N, dtype)
    K.random_fill(g, 5, 6, K.GEOMETRIC, 0.0, 1 / np.log1p(-0.2))
    _cpu.random.random_fill(c, 5, 6, K.GEOMETRIC, 0.0, 1 / np.log1p(-0.2))
    assert np.array_equal(to_np(g), to_np(c))


@pytest.mark.parametrize("dtype", [fw.int64, fw.int32, fw.int8, fw.uint8, fw.bool, fw.float32,
                                   fw.float16, fw.bfloat16, fw.float64], ids=str)
@pytest.mark.parametrize("low,rng", [(0, 2), (-5, 10), (0, 2**32), (-(2**40), 2**41),
                                     (-(2**63), 0)])
def test_random_int_matches(dtype, low, rng):
    seed, offset = 99, 2**32 + 7
    g, c = pair(N, dtype)
    K.random_int(g, seed, offset, low, rng)
    _cpu.random.random_int(c, seed, offset, low, rng)
    assert_same(g, c)


@pytest.mark.parametrize("dtype", [fw.bool, fw.float32, fw.int64, fw.bfloat16], ids=str)
def test_bernoulli_matches(dtype):
    g, c = pair(N, dtype)
    K.bernoulli_scalar(g, 3, 4, 0.37)
    _cpu.random.bernoulli_scalar(c, 3, 4, 0.37)
    assert np.array_equal(to_np(g), to_np(c))
    for pdt in FLOATS:
        p = fw.tensor(np.linspace(0, 1, N), dtype=pdt)
        K.bernoulli_tensor(g, p.to(DEV), (1,), 3, 4)
        _cpu.random.bernoulli_tensor(c, p, (1,), 3, 4)
        assert np.array_equal(to_np(g), to_np(c))


def test_strided_outputs_and_broadcast_p():
    """The launchers fill strided views (through a contiguous buffer) in logical order, as the
    CPU kernels do, and read a broadcast p."""
    base = fw.zeros((40, 70), dtype=fw.float32, device=DEV)
    view = base.t()[::3]  # (24, 40), non-contiguous
    K.random_fill(view, 9, 10, K.NORMAL, 0.0, 1.0)
    c = fw.zeros((40, 70), dtype=fw.float32)
    _cpu.random.random_fill(c.t()[::3], 9, 10, K.NORMAL, 0.0, 1.0)
    assert_same(base, c)
    p = fw.tensor([0.1, 0.5, 0.9], dtype=fw.float64)
    g, h = pair((500, 3), fw.int64)
    K.bernoulli_tensor(g, p.to(DEV), (0, 1), 2, 0)
    _cpu.random.bernoulli_tensor(h, p, (0, 1), 2, 0)
    assert np.array_equal(to_np(g), to_np(h))


@needs_sort
@pytest.mark.parametrize("n", [1, 7, 2500])
def test_randperm_matches(n):
    g, c = pair(n, fw.int64)
    K.randperm(g, 17, 3)
    _cpu.random.randperm(c, 17, 3)
    assert np.array_equal(to_np(g), to_np(c))


@pytest.mark.parametrize("replacement", [True, pytest.param(False, marks=needs_sort)])
@pytest.mark.parametrize("dtype", [fw.float32, fw.float64, fw.bfloat16], ids=str)
def test_multinomial_matches(replacement, dtype):
    probs = fw.tensor([[0.1, 0.0, 2.0, 0.7, 0.2], [1.0, 1.0, 1.0, 1.0, 1.0],
                       [0.0, 0.0, 0.5, 0.0, 0.5]], dtype=dtype).t().contiguous().t()  # strided
    n = 40 if replacement else 2
    g, c = pair((3, n), fw.int64)
    K.multinomial(g, probs.to(DEV).t().contiguous().t(), n, replacement, 23, 1000)
    _cpu.random.multinomial(c, probs, n, replacement, 23, 1000)
    assert np.array_equal(to_np(g), to_np(c))
