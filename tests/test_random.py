"""Random ops and generators: reproducibility, distributions (with tolerances tight enough to
catch a wrong transform), shapes, dtypes, strided outputs and PyTorch's errors."""
import math
import warnings

import numpy as np
import pytest

import framework as fw
from helpers import FLOAT_DTYPES, to_np


def gen(device, seed=0):
    return fw.Generator(device=device).manual_seed(seed)


def normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


# ---- generators and seeding -----------------------------------------------------------

def test_manual_seed_reproduces_and_calls_do_not_overlap(device):
    fw.manual_seed(123)
    a = to_np(fw.rand(100, device=device))
    b = to_np(fw.rand(50, device=device))
    fw.manual_seed(123)
    whole = to_np(fw.rand(150, device=device))
    # each call takes the next counters: two calls equal one call of the summed size
    np.testing.assert_array_equal(np.concatenate([a, b]), whole)
    assert not np.array_equal(a[:50], b)


def test_generator_api(device):
    g = fw.Generator(device=device)
    assert g.initial_seed() == 67280421310721
    assert g.device == fw.device(device) or g.device.type == device
    assert g.manual_seed(7) is g and g.initial_seed() == 7
    state = g.get_state()
    assert state.dtype is fw.uint8 and tuple(state.shape) == (16,)
    x = to_np(fw.randn(10, generator=g, device=device))
    y = to_np(fw.randn(10, generator=g, device=device))
    g.set_state(state)
    np.testing.assert_array_equal(to_np(fw.randn(10, generator=g, device=device)), x)
    np.testing.assert_array_equal(to_np(fw.randn(10, generator=g, device=device)), y)
    s = g.seed()
    assert isinstance(s, int) and 0 <= s < 2**64 and g.initial_seed() == s
    assert fw.Generator(device=device).manual_seed(-1).initial_seed() == 2**64 - 1


def test_generator_does_not_touch_default(device):
    fw.manual_seed(5)
    ref = to_np(fw.rand(8, device=device))
    fw.manual_seed(5)
    fw.rand(100, generator=gen(device, 9), device=device)
    np.testing.assert_array_equal(to_np(fw.rand(8, device=device)), ref)


def test_global_state_functions():
    fw.manual_seed(42)
    assert fw.initial_seed() == 42
    state = fw.get_rng_state()
    a = to_np(fw.rand(5))
    fw.set_rng_state(state)
    np.testing.assert_array_equal(to_np(fw.rand(5)), a)
    with fw.random.fork_rng():
        fw.rand(10)
    np.testing.assert_array_equal(state.numpy()[:8], fw.get_rng_state().numpy()[:8])
    b = to_np(fw.rand(5))
    assert not np.array_equal(a, b)
    s = fw.seed()
    assert fw.initial_seed() == s
    assert fw.manual_seed(3) is fw.default_generator
    assert fw.random.manual_seed is fw.manual_seed


def test_generator_errors():
    g = fw.Generator()
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got str"):
        g.manual_seed("a")
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2**64)
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(fw.zeros(16))
    with pytest.raises(RuntimeError, match="RNG state size to be 3"):
        g.set_state(fw.zeros(3, dtype=fw.uint8))
    with pytest.raises(TypeError, match="expected a framework.Generator"):
        fw.rand(3, generator=5)
    fw.manual_seed(1.0)  # the module function accepts floats, as PyTorch's does
    assert fw.initial_seed() == 1


# ---- uniform and normal ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_rand_distribution(device, dtype):
    u = to_np(fw.rand(400, 500, generator=gen(device, 1), dtype=dtype, device=device))
    u = u.astype(np.float64)
    assert u.shape == (400, 500)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.003 and abs(u.var() - 1 / 12) < 0.002
    counts = np.histogram(u, bins=16, range=(0, 1))[0] / u.size
    assert np.abs(counts - 1 / 16).max() < 0.002
    # neighbours are independent
    flat = u.ravel()
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 0.01


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_randn_distribution(device, dtype):
    z = to_np(fw.randn(200_000, generator=gen(device, 2), dtype=dtype, device=device))
    z = z.astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    # the empirical CDF at a grid of points is the normal CDF (a Kolmogorov-style check)
    grid = np.linspace(-3, 3, 25)
    ecdf = np.searchsorted(np.sort(z), grid, side="right") / z.size
    assert np.abs(ecdf - normal_cdf(grid)).max() < 0.008
    assert np.abs(z).max() > 4


def test_factory_shapes_and_options(device):
    assert tuple(fw.rand((2, 3), device=device).shape) == (2, 3)
    assert tuple(fw.randn([], device=device).shape) == ()
    assert fw.rand(device=device).dim() == 0
    assert tuple(fw.randn(0, 4, device=device).shape) == (0, 4)
    assert fw.rand(3, device=device).dtype is fw.float32
    fw.set_default_dtype(fw.float64)
    try:
        assert fw.randn(2, device=device).dtype is fw.float64
    finally:
        fw.set_default_dtype(fw.float32)
    t = fw.rand(3, requires_grad=True, device=device)
    assert t.requires_grad
    out = fw.empty(0, dtype=fw.float64, device=device)
    r = fw.randn(2, 5, out=out, generator=gen(device, 4), device=device)
    assert r is out and tuple(out.shape) == (2, 5) and out.dtype is fw.float64
    np.testing.assert_array_equal(to_np(out), to_np(fw.randn(2, 5, generator=gen(device, 4),
                                                             dtype=fw.float64, device=device)))
    like = fw.rand_like(fw.zeros(3, 2, dtype=fw.float16, device=device))
    assert like.dtype is fw.float16 and tuple(like.shape) == (3, 2)
    like = fw.randn_like(fw.zeros(4, device=device), dtype=fw.float64)
    assert like.dtype is fw.float64


def test_factory_dtype_errors(device):
    msg = "\"check_uniform_bounds\" not implemented for 'Long'"
    with pytest.raises(NotImplementedError, match=msg):
        fw.rand(3, dtype=fw.int64, device=device)
    msg = "\"normal_kernel_cpu\" not implemented for 'Int'"
    with pytest.raises(NotImplementedError, match=msg):
        fw.randn(3, dtype=fw.int32, device=device)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        fw.rand_like(fw.zeros(2, dtype=fw.int64, device=device))
    with pytest.raises(RuntimeError, match="negative dimension"):
        fw.rand(-1, device=device)


# ---- integers -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [fw.int64, fw.int32, fw.int16, fw.int8, fw.uint8, fw.float32,
                                   fw.float16, fw.bfloat16])
def test_randint_range_and_uniformity(device, dtype):
    x = to_np(fw.randint(2, 12, (50_000,), generator=gen(device, 3), dtype=dtype, device=device))
    assert x.min() == 2 and x.max() == 11
    freq = np.bincount(x.astype(np.int64) - 2, minlength=10) / x.size
    assert np.abs(freq - 0.1).max() < 0.006


def test_randint_overloads(device):
    g = gen(device, 8)
    a = fw.randint(10, (3, 4), generator=g, device=device)
    assert a.dtype is fw.int64 and tuple(a.shape) == (3, 4) and to_np(a).max() < 10
    b = fw.randint(10, size=(5,), device=device)
    assert tuple(b.shape) == (5,) and to_np(b).min() >= 0
    c = fw.randint(low=-5, high=-2, size=(6,), device=device)
    assert to_np(c).min() >= -5 and to_np(c).max() < -2
    d = fw.randint(0, 2, (100,), dtype=fw.bool, device=device)
    assert d.dtype is fw.bool and 0 < to_np(d).sum() < 100
    big = to_np(fw.randint(-(2**62), 2**62, (1000,), device=device))
    assert big.min() < -(2**60) and big.max() > 2**60
    e = fw.randint_like(fw.zeros(3, 3, device=device), 4)
    assert e.dtype is fw.float32 and to_np(e).max() < 4
    f = fw.randint_like(fw.zeros(200, dtype=fw.int8, device=device), -3, 3)
    assert to_np(f).min() == -3 and to_np(f).max() == 2


def test_randint_errors(device):
    msg = "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"
    with pytest.raises(RuntimeError, match=msg):
        fw.randint(5, 5, (3,), device=device)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
        fw.randint(0, 300, (3,), dtype=fw.uint8, device=device)
    with pytest.raises(RuntimeError, match="from is out of bounds for signed char"):
        fw.randint(-300, 3, (3,), dtype=fw.int8, device=device)
    with pytest.raises(TypeError, match="randint"):
        fw.randint(3, device=device)
    with pytest.raises(TypeError, match="argument 'size'"):
        fw.randint(0, 3, device=device)
    with pytest.warns(UserWarning, match="out of bounds"):
        fw.randint(0, 2**30, (2,), dtype=fw.float32, device=device)


def test_randperm(device):
    for n in (0, 1, 5, 1000):
        p = to_np(fw.randperm(n, device=device))
        np.testing.assert_array_equal(np.sort(p), np.arange(n))
    assert fw.randperm(4, dtype=fw.float32, device=device).dtype is fw.float32
    g1, g2 = gen(device, 11), gen(device, 11)
    np.testing.assert_array_equal(to_np(fw.randperm(50, generator=g1, device=device)),
                                  to_np(fw.randperm(50, generator=g2, device=device)))
    # every position is equally likely to hold any value
    g = gen(device, 12)
    # (fewer draws on the slow simulated device: 500 keeps the bound above 3.5 sigma)
    draws = 500 if device == "cuda" and fw.cuda.is_simulated() else 2000
    firsts = np.array([to_np(fw.randperm(4, generator=g, device=device))[0]
                       for _ in range(draws)])
    tol = 0.04 if draws == 2000 else 0.08
    assert np.abs(np.bincount(firsts, minlength=4) / draws - 0.25).max() < tol
    out = fw.empty(10, dtype=fw.int32, device=device)[::2]
    r = fw.randperm(5, out=out, device=device)
    assert r is out and sorted(to_np(out).tolist()) == [0, 1, 2, 3, 4]


def test_randperm_errors(device):
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        fw.randperm(-1, device=device)
    with pytest.raises(NotImplementedError, match="\"randperm\" not implemented for 'Bool'"):
        fw.randperm(3, dtype=fw.bool, device=device)
    with pytest.raises(RuntimeError, match="int8_t without overflow"):
        fw.randperm(300, dtype=fw.int8, device=device)


# ---- normal overloads ----------------------------------------------------------------

def test_normal_overloads(device):
    g = gen(device, 6)
    mean = fw.tensor([0.0, 10.0, -5.0], device=device)
    std = fw.tensor([1.0, 3.0, 0.0], device=device)
    z = to_np(fw.normal(mean.expand(100_000, 3), std, generator=g))
    assert z.shape == (100_000, 3)
    np.testing.assert_allclose(z.mean(0), [0, 10, -5], atol=0.03)
    np.testing.assert_allclose(z.std(0), [1, 3, 0], atol=0.03)
    a = to_np(fw.normal(2.0, std.expand(50_000, 3), generator=g))
    np.testing.assert_allclose(a.mean(0), [2, 2, 2], atol=0.03)
    b = to_np(fw.normal(mean, 0.5, generator=g))
    assert b.shape == (3,)
    c = fw.normal(1.0, 2.0, (300, 300), generator=g, device=device, dtype=fw.float64)
    assert c.dtype is fw.float64 and abs(to_np(c).mean() - 1) < 0.02
    assert abs(to_np(c).std() - 2) < 0.02
    z0 = fw.normal(fw.zeros(2, 3, dtype=fw.float64, device=device), fw.ones(3, device=device))
    assert tuple(z0.shape) == (2, 3) and z0.dtype is fw.float64


def test_normal_tensor_overload_is_mean_plus_std_times_z(device):
    mean = fw.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    std = fw.tensor([0.5, 1.0, 2.0, 0.0], device=device)
    z = to_np(fw.randn(4, generator=gen(device, 9), device=device))
    got = to_np(fw.normal(mean, std, generator=gen(device, 9)))
    np.testing.assert_allclose(got, to_np(mean) + to_np(std) * z, rtol=1e-6)


def test_normal_errors(device):
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        fw.normal(0.0, -1.0, (3,), device=device)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        fw.normal(fw.zeros(3, device=device), -1.0)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        fw.normal(fw.zeros(3, device=device), fw.tensor([1.0, -1.0, 1.0], device=device))
    with pytest.raises(TypeError, match="normal"):
        fw.normal(0.0, 1.0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        fw.normal(fw.zeros(3, dtype=fw.int64, device=device), 1.0)
    with pytest.raises(RuntimeError, match="must match the size"):
        fw.normal(fw.zeros(2, 3, device=device), fw.ones(4, device=device))


# ---- bernoulli and multinomial --------------------------------------------------------

@pytest.mark.parametrize("dtype", [fw.float32, fw.float64, fw.float16])
def test_bernoulli(device, dtype):
    p = fw.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=dtype, device=device)
    x = to_np(fw.bernoulli(p.expand(40_000, 5), generator=gen(device, 1)))
    assert x.dtype == np.float64 or x.dtype == np.float32 or x.dtype == np.float16
    assert set(np.unique(x)) <= {0.0, 1.0}
    np.testing.assert_allclose(x.mean(0), [0, 0.1, 0.5, 0.9, 1], atol=0.008)
    y = to_np(fw.bernoulli(fw.zeros(40_000, dtype=dtype, device=device), 0.25))
    assert abs(y.mean() - 0.25) < 0.008
    assert abs(to_np(fw.zeros(40_000, device=device).bernoulli(0.7)).mean() - 0.7) < 0.008


def test_bernoulli_inplace(device):
    t = fw.zeros(20_000, 2, dtype=fw.int64, device=device)
    v = t._version
    t.bernoulli_(fw.tensor([0.2, 0.8], device=device), generator=gen(device, 2))
    assert t._version > v
    np.testing.assert_allclose(to_np(t).mean(0), [0.2, 0.8], atol=0.01)
    base = fw.zeros(4, 10_000, device=device)
    view = base.t()[::2]  # (5000, 4), non-contiguous
    view.bernoulli_(0.5)
    arr = to_np(base)
    assert abs(arr[:, ::2].mean() - 0.5) < 0.02 and (arr[:, 1::2] == 0).all()
    b = fw.zeros(1000, dtype=fw.bool, device=device).bernoulli_()
    assert 400 < to_np(b).sum() < 600


def test_bernoulli_errors(device):
    msg = "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"
    with pytest.raises(NotImplementedError, match=msg):
        fw.bernoulli(fw.zeros(3, dtype=fw.int64, device=device))
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1 to be true"):
        fw.bernoulli(fw.tensor([0.5, 1.5], device=device))
    msg = r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"
    with pytest.raises(RuntimeError, match=msg):
        fw.zeros(3, device=device).bernoulli_(1.5)
    msg = r"bernoulli_ expects p to be in \[0, 1\], but got p=1.3"
    with pytest.raises(RuntimeError, match=msg):
        fw.bernoulli(fw.zeros(3, device=device), 1.3)
    with pytest.raises(RuntimeError, match="Expected p_in >= 0"):
        fw.zeros(3, device=device).bernoulli_(fw.tensor([0.5, 2.0, 0.1], device=device))


def test_multinomial_with_replacement(device):
    p = fw.tensor([[1.0, 0.0, 3.0, 6.0], [0.0, 0.0, 0.0, 2.0]], device=device)
    s = to_np(fw.multinomial(p, 50_000, True, generator=gen(device, 3)))
    assert s.shape == (2, 50_000) and s.dtype == np.int64
    np.testing.assert_allclose(np.bincount(s[0], minlength=4) / 50_000, [0.1, 0, 0.3, 0.6],
                               atol=0.008)
    assert (s[1] == 3).all()
    p64 = fw.tensor([0.2, 0.8], dtype=fw.float64, device=device)
    one = fw.multinomial(p64, 7, replacement=True)
    assert tuple(one.shape) == (7,)


def test_multinomial_without_replacement(device):
    g = gen(device, 4)
    w = fw.tensor([4.0, 0.0, 2.0, 2.0], device=device)
    firsts, seconds = [], []
    # fewer draws on simulated cuda (the interpreter is slow), tolerances at ~3 sigma
    n = 4000 if device == "cpu" else 1200
    rows = to_np(fw.multinomial(w.expand(n, 4), 3, generator=g))
    for r in rows:
        assert sorted(r.tolist()) == [0, 2, 3]
    firsts = rows[:, 0]
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / n, [0.5, 0, 0.25, 0.25],
                               atol=1.9 / n ** 0.5)
    # after drawing 0 first, 2 and 3 are equally likely second
    seconds = rows[firsts == 0, 1]
    assert abs((seconds == 2).mean() - 0.5) < 3.2 / n ** 0.5
    full = to_np(fw.multinomial(fw.ones(50, device=device), 50))
    np.testing.assert_array_equal(np.sort(full), np.arange(50))
    assert tuple(fw.multinomial(fw.ones(0, 3, device=device), 1).shape) == (0, 1)
    out = fw.empty(1, dtype=fw.int64, device=device)
    r = fw.multinomial(fw.tensor([0.0, 1.0], device=device), 1, out=out)
    assert r is out and to_np(out).tolist() == [1]


@pytest.mark.parametrize("probs,n,rep,exc,msg", [
    ([1.0, 2.0], 3, False, RuntimeError, "cannot sample n_sample > prob_dist.size"),
    ([1.0, 2.0], 0, True, RuntimeError, "cannot sample n_sample <= 0 samples"),
    ([1.0, -2.0], 1, False, RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ([1.0, float("nan")], 1, True, RuntimeError, "probability tensor contains"),
    ([0.0, 0.0], 1, False, RuntimeError,
     r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
])
def test_multinomial_errors(device, probs, n, rep, exc, msg):
    with pytest.raises(exc, match=msg):
        fw.multinomial(fw.tensor(probs, device=device), n, rep)


def test_multinomial_type_errors(device):
    msg = "multinomial only supports floating-point dtypes for input, got: Long"
    with pytest.raises(RuntimeError, match=msg):
        fw.multinomial(fw.tensor([1, 2], device=device), 1)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        fw.multinomial(fw.ones(2, 2, 2, device=device), 1)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        fw.multinomial(fw.tensor(1.0, device=device), 1)


# ---- in-place samplers ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_uniform_inplace_strided(device, dtype):
    base = fw.zeros(300, 400, dtype=dtype, device=device)
    view = base.t()[:, ::2]  # (400, 150), non-contiguous
    v = base._version
    assert view.uniform_(-3, 5, generator=gen(device, 7)) is view
    assert base._version > v
    arr = to_np(base).astype(np.float64)
    got = arr[::2, :].T
    assert got.min() >= -3 and got.max() <= 5
    assert abs(got.mean() - 1) < 0.04 and abs(got.var() - 64 / 12) < 0.1
    assert (arr[1::2, :] == 0).all()
    # the view is filled in its logical (row-major) order, like a contiguous output
    ref = fw.empty(400, 150, dtype=dtype, device=device).uniform_(-3, 5, generator=gen(device, 7))
    np.testing.assert_array_equal(to_np(view), to_np(ref))


def test_normal_inplace(device):
    t = fw.empty(100_000, device=device).normal_(3.0, 0.5, generator=gen(device, 1))
    a = to_np(t)
    assert abs(a.mean() - 3) < 0.01 and abs(a.std() - 0.5) < 0.01
    assert to_np(fw.zeros(5, device=device).normal_(2.0, 0.0)).tolist() == [2.0] * 5


def test_random_inplace_variants(device):
    t = fw.empty(20_000, dtype=fw.int8, device=device)
    a = to_np(t.random_(generator=gen(device, 1)))
    assert a.min() == 0 and a.max() == 127
    a = to_np(t.random_(5))
    assert a.min() == 0 and a.max() == 4
    a = to_np(t.random_(-4, 4))
    assert a.min() == -4 and a.max() == 3
    a = to_np(t.random_(100, None))
    assert a.min() == 100 and a.max() == 127
    f = to_np(fw.empty(20_000, dtype=fw.float16, device=device).random_())
    assert f.min() >= 0 and f.max() <= 2048 and f.max() > 1900 and (f == np.round(f)).all()
    b = to_np(fw.empty(1000, dtype=fw.bool, device=device).random_())
    assert 400 < b.sum() < 600
    full = to_np(fw.empty(10_000, dtype=fw.int64, device=device).random_(-(2**63), None))
    assert (full < 0).mean() == pytest.approx(0.5, abs=0.03)


def test_exponential_geometric_lognormal_cauchy(device):
    big = fw.empty(200_000, dtype=fw.float64, device=device)
    e = to_np(big.exponential_(2.5, generator=gen(device, 1)))
    assert e.min() >= 0 and abs(e.mean() - 0.4) < 0.004 and abs(e.var() - 0.16) < 0.005
    assert abs((e > 0.4).mean() - math.exp(-1)) < 0.004
    g = to_np(fw.empty(200_000, device=device).geometric_(0.3, generator=gen(device, 2)))
    assert g.min() == 1 and (g == np.round(g)).all() and abs(g.mean() - 1 / 0.3) < 0.03
    assert abs((g == 1).mean() - 0.3) < 0.005 and abs((g == 3).mean() - 0.3 * 0.49) < 0.005
    gi = fw.empty(1000, dtype=fw.int32, device=device).geometric_(0.5)
    assert gi.dtype is fw.int32 and to_np(gi).min() >= 1
    ln = to_np(big.log_normal_(0.5, 0.25, generator=gen(device, 3)))
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.003
    assert abs(np.log(ln).std() - 0.25) < 0.003
    c = to_np(big.cauchy_(1.0, 2.0, generator=gen(device, 4)))
    assert abs(np.median(c) - 1.0) < 0.03
    assert abs((np.abs(c - 1.0) < 2.0).mean() - 0.5) < 0.005


def test_inplace_errors(device):
    f, i = fw.zeros(3, device=device), fw.zeros(3, dtype=fw.int64, device=device)
    msg = r"uniform_ expects to return a \[from, to\) range, but found from=2 > to=1"
    with pytest.raises(RuntimeError, match=msg):
        f.uniform_(2, 1)
    msg = "\"check_uniform_bounds\" not implemented for 'Long'"
    with pytest.raises(NotImplementedError, match=msg):
        i.uniform_()
    msg = "\"normal_kernel_cpu\" not implemented for 'Long'"
    with pytest.raises(NotImplementedError, match=msg):
        i.normal_()
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        f.normal_(0, -1)
    msg = "exponential_ expects lambda > 0.0, but found lambda=-1"
    with pytest.raises(RuntimeError, match=msg):
        f.exponential_(-1)
    with pytest.raises(RuntimeError, match="dtype must be a floating point but you specified Long"):
        i.exponential_()
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\), but got p=1"):
        f.geometric_(1.0)
    with pytest.raises(NotImplementedError, match="\"geometric_cpu\" not implemented for 'Bool'"):
        fw.zeros(3, dtype=fw.bool, device=device).geometric_(0.5)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0, but found std=0"):
        f.log_normal_(1, 0)
    with pytest.raises(NotImplementedError, match="\"log_normal_cpu\" not implemented for 'Long'"):
        i.log_normal_()
    with pytest.raises(RuntimeError, match="cauchy_ expects sigma > 0.0, but found sigma=-1"):
        f.cauchy_(0, -1)
    with pytest.raises(RuntimeError, match="you specified long int"):
        i.cauchy_()
    msg = "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"
    with pytest.raises(RuntimeError, match=msg):
        f.random_(5, 2)
    with pytest.raises(RuntimeError, match="to - 1 is out of bounds for signed char"):
        fw.zeros(3, dtype=fw.int8, device=device).random_(0, 300)


def test_empty_and_zero_d_outputs(device):
    assert to_np(fw.empty(0, device=device).normal_()).size == 0
    s = fw.empty((), device=device).uniform_(generator=gen(device, 5))
    assert s.dim() == 0 and 0 <= s.item() < 1
    assert s.item() == to_np(fw.rand(1, generator=gen(device, 5), device=device))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fw.randint(0, 5, (0,), device=device)


def test_same_numbers_on_every_device(device):
    """One stream for all devices: equal generator states give equal numbers."""
    for make in (lambda d, g: fw.rand(1000, generator=g, device=d),
                 lambda d, g: fw.randn(1000, dtype=fw.float16, generator=g, device=d),
                 lambda d, g: fw.randint(-50, 50, (1000,), generator=g, device=d),
                 lambda d, g: fw.empty(1000, dtype=fw.bfloat16, device=d).uniform_(
                     -1, 1, generator=g)):
        np.testing.assert_array_equal(to_np(make(device, gen(device, 77))),
                                      to_np(make("cpu", gen("cpu", 77))))


# ---- bad arguments, judged against PyTorch -------------------------------------------------

nan, inf = math.nan, math.inf
P_RANGE = "Expected p_in >= 0 && p_in <= 1"
BAD_PROBS = "probability tensor contains either `inf`, `nan` or element < 0"

RANDOM_CASES = [
    ("randperm_half", lambda m, d: m.randperm(3000, dtype=m.float16, device=d),
     "n cannot be greater than 2049 for Half type."),
    ("randperm_half_2050", lambda m, d: m.randperm(2050, dtype=m.float16, device=d), "2049"),
    ("randperm_half_2049", lambda m, d: m.randperm(2049, dtype=m.float16, device=d).shape,
     None),
    ("randperm_float", lambda m, d: m.randperm(2 ** 25, dtype=m.float32, device=d),
     "n cannot be greater than 2^24+1 for Float type."),
    ("randperm_int8", lambda m, d: m.randperm(300, dtype=m.int8, device=d), "int8_t"),
    ("randperm_float_n", lambda m, d: m.randperm(2.5), "must be int, not float"),
    ("randperm_str_n", lambda m, d: m.randperm("3"), "must be int, not str"),
    ("randperm_negative", lambda m, d: m.randperm(-1, device=d), "negative dimension -1"),
    ("randint_empty_range", lambda m, d: m.randint(5, 3, (2,), device=d),
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    ("randint_int8_range", lambda m, d: m.randint(0, 300, (2,), dtype=m.int8, device=d),
     "to - 1 is out of bounds for signed char"),
    ("randint_uint8_negative", lambda m, d: m.randint(-1, 3, (2,), dtype=m.uint8, device=d),
     "from is out of bounds for unsigned char"),
    ("randint_bool", lambda m, d: m.randint(0, 3, (2,), dtype=m.bool, device=d),
     "to - 1 is out of bounds for bool"),
    ("randint_2_63", lambda m, d: m.randint(0, 2 ** 63, (2,), device=d),
     "Overflow when unpacking long long"),
    ("randint_float_high", lambda m, d: m.randint(2.5, (2,)), "must be int, not float"),
    ("randint_str_high", lambda m, d: m.randint("a", (2,)), "must be int, not str"),
    ("randint_float_size", lambda m, d: m.randint(5, (2.5,)), "must be tuple of ints"),
    ("randint_size_number", lambda m, d: m.randint(3, 2.5), "must be tuple of ints"),
    ("randint_negative_size", lambda m, d: m.randint(3, (2, -1), device=d),
     "negative dimension -1"),
    ("rand_float_size", lambda m, d: m.rand(2.5), "must be tuple of ints"),
    ("randn_str_size", lambda m, d: m.randn("3"), "must be tuple of ints"),
    ("rand_storage_overflow", lambda m, d: m.rand(2 ** 62, device=d),
     "Storage size calculation overflowed with sizes=[4611686018427387904]"),
    ("randn_storage_overflow", lambda m, d: m.randn(2, 2 ** 62, device=d),
     "Storage size calculation overflowed"),
    ("rand_negative", lambda m, d: m.rand(-1, device=d), "negative dimension"),
    ("rand_int", lambda m, d: m.rand(2, dtype=m.int64, device=d),
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("multinomial_negative", lambda m, d: m.multinomial(m.tensor([0.2, -0.1], device=d), 1),
     BAD_PROBS),
    ("multinomial_inf", lambda m, d: m.multinomial(m.tensor([0.2, inf], device=d), 1),
     BAD_PROBS),
    ("multinomial_nan", lambda m, d: m.multinomial(m.tensor([0.2, nan], device=d), 1, True),
     BAD_PROBS),
    ("multinomial_too_many", lambda m, d: m.multinomial(m.tensor([0.2, 0.8], device=d), 3),
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ("multinomial_no_categories", lambda m, d: m.multinomial(m.zeros(0, device=d), 1),
     "cannot sample n_sample > prob_dist.size(-1)"),
    ("multinomial_no_categories_2d", lambda m, d: m.multinomial(m.zeros(2, 0, device=d), 1),
     "cannot sample n_sample > prob_dist.size(-1)"),
    ("multinomial_no_rows", lambda m, d: m.multinomial(m.zeros(0, 3, device=d), 1), None),
    ("multinomial_zero_sum", lambda m, d: m.multinomial(m.tensor([0.0, 0.0], device=d), 1),
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("multinomial_zero_categories_drawn",
     lambda m, d: m.multinomial(m.tensor([0.0, 1.0], device=d), 2), None),
    ("multinomial_zero_samples", lambda m, d: m.multinomial(m.ones(2, device=d), 0),
     "cannot sample n_sample <= 0 samples"),
    ("multinomial_float_samples", lambda m, d: m.multinomial(m.ones(2, device=d), 1.5),
     "must be int, not float"),
    ("multinomial_int", lambda m, d: m.multinomial(m.tensor([1, 2], device=d), 1),
     "multinomial only supports floating-point dtypes for input, got: Long"),
    ("multinomial_3d", lambda m, d: m.multinomial(m.ones(2, 2, 2, device=d), 1),
     "prob_dist must be 1 or 2 dim"),
    ("bernoulli_above_one", lambda m, d: m.bernoulli(m.tensor([0.5, 1.5], device=d)), P_RANGE),
    ("bernoulli_nan", lambda m, d: m.bernoulli(m.tensor([0.5, nan], device=d)), P_RANGE),
    ("bernoulli_negative", lambda m, d: m.bernoulli(m.tensor([-0.1], device=d)), P_RANGE),
    ("bernoulli_p", lambda m, d: m.bernoulli(m.ones(2, device=d), 1.5),
     "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    ("bernoulli_p_nan", lambda m, d: m.bernoulli(m.ones(2, device=d), nan), "got p=nan"),
    ("bernoulli_int", lambda m, d: m.bernoulli(m.tensor([1, 0], device=d)),
     "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"),
    ("bernoulli__p", lambda m, d: m.zeros(3, device=d).bernoulli_(-0.5), "got p=-0.5"),
    ("bernoulli__tensor", lambda m, d: m.zeros(3, device=d).bernoulli_(
        m.tensor([0.5, 2.0, 0.1], device=d)), P_RANGE),
    ("bernoulli__str", lambda m, d: m.zeros(3, device=d).bernoulli_("a"), None),
    ("normal_negative_std", lambda m, d: m.normal(0.0, -1.0, (2,), device=d),
     "normal expects std >= 0.0, but found std -1"),
    ("normal_nan_std", lambda m, d: m.normal(0.0, nan, (2,), device=d), "found std nan"),
    ("normal_tensor_mean", lambda m, d: m.normal(m.zeros(2, device=d), -1.0),
     "normal expects std >= 0.0"),
    ("normal_tensor_std", lambda m, d: m.normal(m.zeros(2, device=d),
                                                m.tensor([1.0, -1.0], device=d)),
     "normal expects all elements of std >= 0.0"),
    ("normal_tensor_std_nan", lambda m, d: m.normal(m.zeros(2, device=d),
                                                    m.tensor([1.0, nan], device=d)),
     "normal expects all elements of std >= 0.0"),
    ("normal_float_size", lambda m, d: m.normal(0.0, 1.0, (2.5,)), None),
    ("normal_int_size", lambda m, d: m.normal(0.0, 1.0, 2), None),
    ("normal_str_mean", lambda m, d: m.normal("a", 1.0, (2,)), None),
    ("normal__negative", lambda m, d: m.zeros(2, device=d).normal_(0, -1), "found std -1"),
    ("normal__nan", lambda m, d: m.zeros(2, device=d).normal_(0, nan), "found std nan"),
    ("uniform__reversed", lambda m, d: m.zeros(2, device=d).uniform_(1, 0),
     "uniform_ expects to return a [from, to) range, but found from=1 > to=0"),
    ("uniform__inf", lambda m, d: m.zeros(2, device=d).uniform_(0, inf),
     "to is out of bounds for float"),
    ("uniform__nan", lambda m, d: m.zeros(2, device=d).uniform_(nan, 1),
     "from is out of bounds for float"),
    ("uniform__huge", lambda m, d: m.zeros(2, device=d).uniform_(-1e308, 1e308),
     "from is out of bounds for float"),
    ("uniform__half", lambda m, d: m.zeros(2, dtype=m.float16, device=d).uniform_(0, 1e5),
     "to is out of bounds for c10::Half"),
    ("uniform__span", lambda m, d: m.zeros(2, device=d).uniform_(-3e38, 3e38),
     "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and "
     "from=-3e+38 which result in to-from to exceed the limit"),
    ("exponential__negative", lambda m, d: m.zeros(2, device=d).exponential_(-1),
     "exponential_ expects lambda > 0.0, but found lambda=-1"),
    ("exponential__nan", lambda m, d: m.zeros(2, device=d).exponential_(nan), "lambda=nan"),
    ("geometric__zero", lambda m, d: m.zeros(2, device=d).geometric_(0),
     "geometric_ expects p to be in (0, 1), but got p=0"),
    ("log_normal__zero", lambda m, d: m.zeros(2, device=d).log_normal_(0, 0),
     "log_normal_ expects std > 0.0, but found std=0"),
    ("cauchy__nan", lambda m, d: m.zeros(2, device=d).cauchy_(0, nan),
     "cauchy_ expects sigma > 0.0, but found sigma=nan"),
    ("random__empty_range", lambda m, d: m.zeros(2, device=d).random_(5, 3),
     "random_ expects 'from' to be less than 'to'"),
    ("random__int8", lambda m, d: m.zeros(2, dtype=m.int8, device=d).random_(0, 300),
     "to - 1 is out of bounds for signed char"),
    ("random__float_arg", lambda m, d: m.zeros(2, device=d).random_(2.5), None),
    ("random__uint8", lambda m, d: m.zeros(2, dtype=m.uint8, device=d).random_(-1, 3),
     "from is out of bounds for unsigned char"),
]


@pytest.mark.parametrize("case", RANDOM_CASES, ids=lambda c: c[0])
def test_bad_random_args_like_torch(case, device):
    pytest.importorskip("torch")
    from test_creation import like_torch
    _, fn, frag = case
    like_torch(fn, device, frag)
