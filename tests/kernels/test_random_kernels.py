"""framework/kernels/random.py (Triton, run by the interpreter on torch CPU tensors) gives the
same bits as native/random.cpp: one random stream for the CPU and the GPU."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
from triton.runtime.interpreter import InterpretedFunction  # noqa: E402

if not isinstance(tl.randint4x, InterpretedFunction):
    # Triton decides at import whether its kernels compile or interpret; these run on CPU
    # tensors, so they need the interpreter (`make test` sets it where there is no GPU).
    pytest.skip("needs TRITON_INTERPRET=1 from the start of the run", allow_module_level=True)

from framework import _C  # noqa: E402
import framework.kernels.random as K  # noqa: E402

CODES = {torch.bool: 0, torch.uint8: 1, torch.int8: 2, torch.int16: 3, torch.int32: 4,
         torch.int64: 5, torch.float16: 6, torch.bfloat16: 7, torch.float32: 8, torch.float64: 9}
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
N = 2500  # three program blocks, the last one masked
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # float16 infs
SEEDS = [(0, 0), (1234567, 77), (2**40 + 5, 2**33 - 3)]


@triton.jit
def tlrand(out, n, seed, offset, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + i, tl.rand(seed, offset + i), mask=i < n)


def cpu_fill(dtype, seed, offset, kind, a, b, n=N):
    out = torch.empty(n, dtype=dtype)
    _C.random_fill(CODES[dtype], out.data_ptr(), [n], [1], seed, offset, kind, a, b)
    return out


def bits(t):
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    return t.view(ints[t.element_size()])


def assert_same(gpu, cpu, ulps=0):
    if ulps == 0:
        assert torch.equal(bits(gpu), bits(cpu)), int((bits(gpu) != bits(cpu)).sum())
    else:  # exp from libm and from NumPy may differ in the last bit
        diff = (bits(gpu) - bits(cpu)).abs()
        assert diff.max() <= ulps
        assert (diff == 0).float().mean() > 0.9


@pytest.mark.parametrize("seed,offset", SEEDS)
def test_philox_words_match(seed, offset):
    g = torch.empty((N, 4), dtype=torch.int32)
    K.philox_words(g, N, seed, offset)
    c = np.empty((N, 4), np.uint32)
    _C.philox_words(c.ctypes.data, N, seed, offset)
    assert np.array_equal(g.numpy().view(np.uint32), c)


@pytest.mark.parametrize("seed,offset", SEEDS)
def test_float32_uniform_is_tl_rand(seed, offset):
    # (tl.randn is not reproduced: it uses the device's float32 log/cos; see the kernel file)
    u = torch.empty(N, dtype=torch.float32)
    tlrand[(3,)](u, N, seed, offset, BLOCK=1024)
    assert_same(u, cpu_fill(torch.float32, seed, offset, K.UNIFORM, 0.0, 1.0))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind,a,b", [
    (0, 0.0, 1.0), (0, -2.0, 5.0), (1, 0.0, 1.0), (1, 3.0, 0.5), (2, 0.0, 1 / 0.7),
    (3, 1.0, 2.0), (4, 0.1, 0.6), (5, 0.0, 1 / np.log1p(-0.3)),
])
def test_random_fill_matches(dtype, kind, a, b):
    for seed, offset in SEEDS[1:]:
        g = torch.empty(N, dtype=dtype)
        K.random_fill(g, seed, offset, kind, a, b)
        # only log_normal_ uses the device's exp (its float64 may differ in the last bit)
        ulps = 1 if kind == K.LOG_NORMAL and dtype == torch.float64 else 0
        assert_same(g, cpu_fill(dtype, seed, offset, kind, a, b), ulps=ulps)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8, torch.bool])
def test_geometric_int_matches(dtype):
    g = torch.empty(N, dtype=dtype)
    K.random_fill(g, 5, 6, K.GEOMETRIC, 0.0, 1 / np.log1p(-0.2))
    assert torch.equal(g, cpu_fill(dtype, 5, 6, K.GEOMETRIC, 0.0, 1 / np.log1p(-0.2)))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool,
                                   torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("low,rng", [(0, 2), (-5, 10), (0, 2**32), (-(2**40), 2**41),
                                     (-(2**63), 0)])
def test_random_int_matches(dtype, low, rng):
    seed, offset = 99, 2**32 + 7
    g = torch.empty(N, dtype=dtype)
    K.random_int(g, seed, offset, low, rng)
    c = torch.empty(N, dtype=dtype)
    _C.random_int(CODES[dtype], c.data_ptr(), [N], [1], seed, offset, low, rng)
    assert torch.equal(bits(g), bits(c))


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64, torch.bfloat16])
def test_bernoulli_matches(dtype):
    g = torch.empty(N, dtype=dtype)
    K.bernoulli_scalar(g, 3, 4, 0.37)
    c = torch.empty(N, dtype=dtype)
    _C.bernoulli_scalar(CODES[dtype], c.data_ptr(), [N], [1], 3, 4, 0.37)
    assert torch.equal(g, c)
    for pdt in FLOATS:
        p = torch.linspace(0, 1, N, dtype=torch.float64).to(pdt)
        K.bernoulli_tensor(g, p, (1,), 3, 4)
        _C.bernoulli_tensor(CODES[dtype], c.data_ptr(), [N], [1], CODES[pdt], p.data_ptr(), [1],
                            3, 4)
        assert torch.equal(g, c)


def test_strided_outputs_and_broadcast_p():
    """The launchers fill strided views (through a contiguous buffer) in logical order, as the
    CPU kernels do, and read a broadcast p."""
    base = torch.zeros(40, 70, dtype=torch.float32)
    view = base.t()[::3]  # (24, 40), non-contiguous
    K.random_fill(view, 9, 10, K.NORMAL, 0.0, 1.0)
    c = torch.zeros(40, 70, dtype=torch.float32)
    cv = c.t()[::3]
    _C.random_fill(8, cv.data_ptr(), list(cv.shape), list(cv.stride()), 9, 10, K.NORMAL, 0.0, 1.0)
    assert torch.equal(base, c)
    p = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)
    g = torch.empty(500, 3, dtype=torch.int64)
    K.bernoulli_tensor(g, p, (0, 1), 2, 0)
    h = torch.empty(500, 3, dtype=torch.int64)
    _C.bernoulli_tensor(5, h.data_ptr(), [500, 3], [3, 1], 9, p.data_ptr(), [0, 1], 2, 0)
    assert torch.equal(g, h)


@pytest.mark.parametrize("n", [1, 7, 2500])
def test_randperm_matches(n):
    g = torch.empty(n, dtype=torch.int64)
    K.randperm(g, 17, 3)
    c = torch.empty(n, dtype=torch.int64)
    _C.randperm(5, c.data_ptr(), n, 17, 3)
    assert torch.equal(g, c)


@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_multinomial_matches(replacement, dtype):
    probs = torch.tensor([[0.1, 0.0, 2.0, 0.7, 0.2], [1.0, 1.0, 1.0, 1.0, 1.0],
                          [0.0, 0.0, 0.5, 0.0, 0.5]], dtype=dtype).t().contiguous().t()  # strided
    n = 40 if replacement else 2
    g = torch.empty(3, n, dtype=torch.int64)
    K.multinomial(g, probs, n, replacement, 23, 1000)
    c = torch.empty(3, n, dtype=torch.int64)
    rs, cs = probs.stride()
    _C.multinomial(CODES[dtype], probs.data_ptr(), 3, 5, rs, cs, n, replacement, c.data_ptr(),
                   23, 1000)
    assert torch.equal(g, c)
